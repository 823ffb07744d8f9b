//! What pods request, added up: a workload's at its resolved level, an instance's over its workloads. The
//! build summary shows these (its REQUESTS) and `kix capacity` builds on them; they depend on the plans
//! only, so the summary reads them without the rest of `capacity`.

use crate::derive::{InstancePlan, WorkloadPlan};
use kix_kube::requests::Requests;
use serde::Serialize;

/// Pods and what they request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Cost {
    pub replicas: u64,
    pub cpu_millicores: i64,
    pub memory_bytes: i64,
}

impl Cost {
    pub fn of(pod: Requests, replicas: u64) -> Cost {
        let all = pod.times(replicas);
        Cost { replicas, cpu_millicores: all.milli_cpu, memory_bytes: all.memory }
    }

    /// Both added up (saturating).
    pub fn plus(self, other: Cost) -> Cost {
        Cost {
            replicas: self.replicas.saturating_add(other.replicas),
            cpu_millicores: self.cpu_millicores.saturating_add(other.cpu_millicores),
            memory_bytes: self.memory_bytes.saturating_add(other.memory_bytes),
        }
    }
}

/// What one instance of a cluster takes at its resolved level (the build summary's REQUESTS).
pub fn instance_requests(instance: &InstancePlan) -> Cost {
    instance.workloads.iter().map(workload_requests).fold(Cost::default(), Cost::plus)
}

/// One workload's pods at its resolved level and their requests (a workload scaled to zero runs none).
pub fn workload_requests(workload: &WorkloadPlan) -> Cost {
    let replicas = if workload.scaled_to_zero { 0 } else { u64::from(workload.replicas) };
    Cost::of(workload.pod_requests.unwrap_or_default(), replicas)
}

/// The build summary's REQUESTS cell: `1500m cpu, 3Gi memory`.
pub fn requests_text(cost: &Cost) -> String {
    format!("{} cpu, {} memory", cpu(cost.cpu_millicores), memory(cost.memory_bytes))
}

/// `250m`, `2` CPUs.
pub fn cpu(milli: i64) -> String {
    kix_kube::quantity::milli_text(milli)
}

/// `512Mi`, `2Gi`, or bytes.
pub fn memory(bytes: i64) -> String {
    kix_kube::quantity::bytes_text(bytes)
}
