//! Scenario "drain" of `kix verify`: each node holding a replica is cordoned and drained through
//! the eviction API, as `kubectl drain --ignore-daemonsets --delete-emptydir-data` does.

use super::objects::Pod;
use super::verify::{Budget, Scenario, ScenarioResult, World};
use crate::level::Level;

pub(super) fn drain(world: &World<'_>, w: usize, level: Level) -> ScenarioResult {
    let mut nodes: Vec<String> = world.owned(w).into_iter().map(|(_, n)| n).collect();
    nodes.sort();
    nodes.dedup();
    let mut findings = Vec::new();
    let mut pass = true;
    for node in nodes {
        let mut world = world.clone();
        world.cluster.cordon(&node, true);
        loop {
            // `kubectl drain --ignore-daemonsets` leaves DaemonSet and mirror pods in place.
            let pods: Vec<Pod> = world.cluster.pods_on(&node).into_iter().filter(|p| !p.drain_skips).cloned().collect();
            if pods.is_empty() {
                break;
            }
            let mut progress = false;
            let mut blocked = Vec::new();
            for pod in pods {
                let covering: Vec<&Budget> = world
                    .budgets
                    .iter()
                    .filter(|b| b.namespace == pod.namespace && b.selector.matches(&pod.labels))
                    .collect();
                let allowed = match covering.as_slice() {
                    [] => Ok(()),
                    [budget] => {
                        let (n, why) = world.disruptions_allowed(budget);
                        if n > 0 {
                            Ok(())
                        } else {
                            Err(format!(
                                "PodDisruptionBudget {}/{} allows no disruption ({why})",
                                budget.namespace, budget.name
                            ))
                        }
                    }
                    many => Err(format!(
                        "it is covered by {} PodDisruptionBudgets ({}): the eviction API refuses it",
                        many.len(),
                        many.iter().map(|b| b.name.as_str()).collect::<Vec<_>>().join(", ")
                    )),
                };
                match allowed {
                    Ok(()) => {
                        world.cluster.remove(&pod.namespace, &pod.name);
                        if let Some(owner) = world.owner_of(&pod) {
                            let replacement = world.replacement(owner, &pod);
                            if let Err(message) = world.schedule(replacement.clone())
                                && owner == w
                            {
                                // Evicted pods must reschedule from level pod up; below, it is downtime allowed.
                                if level >= Level::Pod {
                                    pass = false;
                                }
                                findings.push(format!(
                                    "drain of {node}: replacement {} of evicted {} stays Pending: {message}",
                                    replacement.name, pod.name
                                ));
                            }
                        }
                        progress = true;
                    }
                    Err(why) => blocked.push((pod, why)),
                }
            }
            if !progress {
                for (pod, why) in blocked {
                    if world.owner_of(&pod) == Some(w) {
                        pass = false;
                        findings.push(format!("drain of {node} is blocked: evicting {} fails: {why}", pod.name));
                    }
                }
                break;
            }
        }
    }
    ScenarioResult { scenario: Scenario::Drain, pass, findings }
}
