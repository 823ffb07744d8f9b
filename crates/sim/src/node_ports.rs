//! NodePorts: a pod that asks for a `hostPort` does not fit a node where a bound pod already
//! holds it (kubernetes/kubernetes `pkg/scheduler/framework/plugins/nodeports/node_ports.go`).
//!
//! Upstream's PreFilter collects the incoming pod's ports (`getContainerPorts`: its containers'
//! and its restartable init containers', the sidecars; plain init containers have finished before
//! the pod serves and take none) and skips the plugin when there are none; Filter asks the node's
//! `UsedPorts` (every pod bound there, terminating ones included, filed by `updateUsedPorts` from
//! the same containers) whether any wanted port conflicts, as `HostPortInfo.CheckConflict`
//! decides ([`HostPort::conflicts`]): same protocol and port, on the same address or on
//! `0.0.0.0` on either side. A conflict is `Unschedulable` (preemption of the holder could free
//! it), with upstream's `ErrReason`. The plugin scores nothing.
//!
//! How the ports are read from a pod spec is [`read_host_ports`]; where the filter runs in a cycle
//! is [`super::cluster`] (before NodeResourcesFit, the default profile's order).

use super::framework::Rejection;
use super::objects::{BIND_ALL_HOST_IP, HostPort, Pod};
use kix_kube::value::at;
use kix_yaml::Value;

/// `nodeports.ErrReason`.
pub const REASON_PORTS: &str = "node(s) didn't have free ports for the requested pod ports";

/// NodePorts' filter for one node, given the pods bound to it. Skipped (Ok) for a pod that asks
/// for no host port, as upstream's PreFilter returns `Skip`.
pub fn filter_ports<'a>(pod: &Pod, bound: impl IntoIterator<Item = &'a Pod>) -> Result<(), Rejection> {
    let wanted = &pod.spec.host_ports;
    if wanted.is_empty() {
        return Ok(());
    }
    for other in bound {
        if other.spec.host_ports.iter().any(|used| wanted.iter().any(|want| want.conflicts(used))) {
            return Err(Rejection::one(REASON_PORTS, false));
        }
    }
    Ok(())
}

/// The host ports of a pod spec: every `ports[].hostPort` above 0 of `containers` and of the
/// `initContainers` with `restartPolicy: Always` (upstream `schedutil.GetHostPorts`), with an
/// empty `hostIP` read as `0.0.0.0` and an empty protocol as `TCP`, sorted and without repeats.
pub fn read_host_ports(spec: &Value) -> Result<Vec<HostPort>, String> {
    let mut out = Vec::new();
    for field in ["containers", "initContainers"] {
        let containers = match at(spec, &[field]) {
            None | Some(Value::Null) => continue,
            Some(Value::Sequence(items)) => items,
            Some(_) => return Err(format!("{field} must be a list")),
        };
        for container in containers {
            if field == "initContainers" && at(container, &["restartPolicy"]).and_then(Value::as_str) != Some("Always")
            {
                continue;
            }
            let ports = match at(container, &["ports"]) {
                None | Some(Value::Null) => continue,
                Some(Value::Sequence(items)) => items,
                Some(_) => return Err(format!("{field}[].ports must be a list")),
            };
            for port in ports {
                let host_port = match at(port, &["hostPort"]) {
                    None | Some(Value::Null) => 0,
                    Some(v) => v.as_i64().ok_or_else(|| format!("{field}[].ports[].hostPort must be an integer"))?,
                };
                if host_port <= 0 {
                    continue;
                }
                let text = |key: &str, default: &str| match at(port, &[key]).and_then(Value::as_str) {
                    None | Some("") => default.to_string(),
                    Some(s) => s.to_string(),
                };
                out.push(HostPort {
                    protocol: text("protocol", "TCP"),
                    ip: text("hostIP", BIND_ALL_HOST_IP),
                    port: host_port,
                });
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ports(yaml: &str) -> Vec<HostPort> {
        read_host_ports(&kix_yaml::from_str(yaml).unwrap()).unwrap()
    }

    fn cluster_of(yaml: &str) -> crate::Cluster {
        crate::Cluster::new(&crate::State::from_yaml_str(yaml).unwrap())
    }

    fn pod(yaml: &str) -> crate::objects::Pod {
        crate::snapshot::parse_pod(&kix_yaml::from_str(yaml).unwrap(), "default").unwrap()
    }

    fn port(protocol: &str, ip: &str, port: i64) -> HostPort {
        HostPort { protocol: protocol.into(), ip: ip.into(), port }
    }

    #[test]
    fn ports_are_read_with_upstreams_defaults() {
        let spec = "containers:\n- name: a\n  ports:\n  - {containerPort: 80, hostPort: 4222}\n  - {containerPort: 81}\n  - {containerPort: 82, hostPort: 53, protocol: UDP, hostIP: 10.0.0.1}\n\
initContainers:\n- {name: init, ports: [{containerPort: 1, hostPort: 9000}]}\n- {name: side, restartPolicy: Always, ports: [{containerPort: 2, hostPort: 9001}]}\n";
        assert_eq!(
            ports(spec),
            vec![port("TCP", "0.0.0.0", 4222), port("TCP", "0.0.0.0", 9001), port("UDP", "10.0.0.1", 53)]
        );
        assert_eq!(ports("{}"), vec![]);
        let bad = read_host_ports(&kix_yaml::from_str("containers: [{name: a, ports: [{hostPort: x}]}]").unwrap());
        assert_eq!(bad.unwrap_err(), "containers[].ports[].hostPort must be an integer");
    }

    #[test]
    fn the_wildcard_address_conflicts_both_ways() {
        assert!(port("TCP", "0.0.0.0", 1).conflicts(&port("TCP", "127.0.0.1", 1)));
        assert!(port("TCP", "127.0.0.1", 1).conflicts(&port("TCP", "0.0.0.0", 1)));
        assert!(!port("TCP", "127.0.0.2", 1).conflicts(&port("TCP", "127.0.0.1", 1)));
        assert!(!port("UDP", "0.0.0.0", 1).conflicts(&port("TCP", "0.0.0.0", 1)));
        assert!(!port("TCP", "0.0.0.0", 2).conflicts(&port("TCP", "0.0.0.0", 1)));
    }

    #[test]
    fn a_taken_host_port_sends_the_pod_to_an_alike_node_on_both_paths() {
        // Two interchangeable nodes with the same usage: only the bound pod's port tells them apart.
        let mut c = cluster_of(
            "kind: List\nitems:\n- {kind: Node, metadata: {name: a}, status: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}}\n- {kind: Node, metadata: {name: b}, status: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}}\n",
        );
        let with_port = |name: &str| {
            pod(&format!(
                "kind: Pod\nmetadata: {{name: {name}}}\nspec: {{containers: [{{name: c, ports: [{{containerPort: 1, hostPort: 4222}}]}}]}}\n"
            ))
        };
        let plain = pod("kind: Pod\nmetadata: {name: plain}\n");
        c.bind(plain.clone(), "b").unwrap();
        c.bind(with_port("first"), "a").unwrap();
        let second = with_port("second");
        assert_eq!(c.cycle(&second).selected.as_deref(), Some("b"));
        assert_eq!(c.select(&second).as_deref(), Some("b"));
        c.bind(second, "b").unwrap();
        let third = with_port("third");
        assert_eq!(c.select(&third), None);
        assert_eq!(
            c.cycle(&third).failure_message(),
            "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports."
        );
        // A pod asking for no port is not filtered by the ports others hold.
        assert_eq!(c.select(&pod("kind: Pod\nmetadata: {name: q}\n")).as_deref(), Some("a"));
    }
}
