//! A pod's resource requests as the scheduler counts them: upstream's `PodRequests`
//! (staging/src/k8s.io/component-helpers/resource/helpers.go, `AggregateContainerRequests`): the
//! containers summed; each restartable init container (a sidecar, `restartPolicy: Always`) added to
//! that sum and to the running total of sidecars started before it; each plain init container as a
//! peak of its own request plus the sidecars started before it; the larger of the sum and the highest
//! peak, per resource; then `spec.overhead` added. The scheduler's NodeResourcesFit filter and kix's
//! capacity arithmetic both count this, and the scheduler model reads it through here.
//!
//! Only cpu and memory are counted (what kix and the model track). Pod-level `spec.resources`
//! (feature gate PodLevelResources, alpha in 1.32) and status-based resize (`UseStatusResources`) are
//! not read: kix counts templates, not running pods.

use crate::quantity;
use crate::value::at;
use kix_yaml::Value;

/// Milli-CPU and memory bytes, saturating.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Requests {
    pub milli_cpu: i64,
    pub memory: i64,
}

impl Requests {
    pub fn plus(self, other: Requests) -> Requests {
        Requests {
            milli_cpu: self.milli_cpu.saturating_add(other.milli_cpu),
            memory: self.memory.saturating_add(other.memory),
        }
    }

    /// Per resource, the larger of the two (upstream `maxResourceList`).
    pub fn max(self, other: Requests) -> Requests {
        Requests { milli_cpu: self.milli_cpu.max(other.milli_cpu), memory: self.memory.max(other.memory) }
    }

    /// `count` pods of this size.
    pub fn times(self, count: u64) -> Requests {
        let count = i64::try_from(count).unwrap_or(i64::MAX);
        Requests { milli_cpu: self.milli_cpu.saturating_mul(count), memory: self.memory.saturating_mul(count) }
    }
}

/// What the scheduler substitutes for a container that requests no cpu or memory when it scores
/// (pkg/scheduler/util/pod_resources.go, `GetNonzeroRequests`); `None` counts a missing request as 0,
/// as the fit filter does.
pub type Defaults = Option<Requests>;

/// Upstream `PodRequests` over a pod spec (see the module docs); `defaults` as [`Defaults`]. An error
/// names the field that is not a list or the quantity that is not one.
pub fn pod_requests(spec: &Value, defaults: Defaults) -> Result<Requests, String> {
    let mut sum = Requests::default();
    for c in list(at(spec, &["containers"]), "containers")? {
        sum = sum.plus(container_requests(c, defaults)?);
    }
    let mut sidecars = Requests::default();
    let mut init_peak = Requests::default();
    for c in list(at(spec, &["initContainers"]), "initContainers")? {
        let own = container_requests(c, defaults)?;
        if c.get("restartPolicy").and_then(Value::as_str) == Some("Always") {
            sum = sum.plus(own);
            sidecars = sidecars.plus(own);
            init_peak = init_peak.max(sidecars);
        } else {
            init_peak = init_peak.max(own.plus(sidecars));
        }
    }
    let mut total = sum.max(init_peak);
    if let Some(overhead) = at(spec, &["overhead"]) {
        total = total.plus(Requests {
            milli_cpu: read(overhead.get("cpu"), quantity::milli)?.unwrap_or(0),
            memory: read(overhead.get("memory"), quantity::units)?.unwrap_or(0),
        });
    }
    Ok(total)
}

fn container_requests(container: &Value, defaults: Defaults) -> Result<Requests, String> {
    let requests = at(container, &["resources", "requests"]);
    let cpu = read(requests.and_then(|r| r.get("cpu")), quantity::milli)?;
    let memory = read(requests.and_then(|r| r.get("memory")), quantity::units)?;
    Ok(Requests {
        milli_cpu: cpu.unwrap_or(defaults.map_or(0, |d| d.milli_cpu)),
        memory: memory.unwrap_or(defaults.map_or(0, |d| d.memory)),
    })
}

fn read(value: Option<&Value>, parse: fn(&str) -> Result<i64, quantity::QuantityError>) -> Result<Option<i64>, String> {
    let text = match value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => return Ok(None),
    };
    parse(&text).map(Some).map_err(|e| e.to_string())
}

fn list<'a>(value: Option<&'a Value>, what: &str) -> Result<&'a [Value], String> {
    match value {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Sequence(items)) => Ok(items),
        Some(_) => Err(format!("{what} must be a list")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Upstream's TestPodResourceRequests (helpers_test.go) cases about templates, carried over as
    /// data (`tests/pod_requests.yaml`): each a pod spec and the requests upstream expects (its resize
    /// and status cases concern running pods, which kix does not count).
    #[test]
    fn upstream_pod_requests_table() {
        let cases = kix_yaml::from_str(include_str!("../tests/pod_requests.yaml")).unwrap();
        let cases = cases.as_sequence().unwrap();
        assert!(cases.len() >= 8);
        for case in cases {
            let name = case.get("name").and_then(Value::as_str).unwrap();
            let expect = case.get("expect").unwrap();
            let want = |key: &str| expect.get(key).and_then(Value::as_i64).unwrap();
            let got = pod_requests(case.get("spec").unwrap(), None).unwrap();
            assert_eq!(got, Requests { milli_cpu: want("cpu_millicores"), memory: want("memory_bytes") }, "{name}");
        }
    }

    #[test]
    fn bad_quantities_and_shapes_are_errors() {
        let spec = kix_yaml::from_str("containers: [{resources: {requests: {cpu: lots}}}]").unwrap();
        assert!(pod_requests(&spec, None).unwrap_err().contains("lots"));
        let spec = kix_yaml::from_str("initContainers: 3").unwrap();
        assert_eq!(pod_requests(&spec, None).unwrap_err(), "initContainers must be a list");
    }
}
