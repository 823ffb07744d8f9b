//! Well-known label, annotation and taint keys: one constant each.
//!
//! Follows `staging/src/k8s.io/api/core/v1/well_known_labels.go` and
//! `well_known_taints.go`, `staging/src/k8s.io/api/apps/v1/types.go`
//! (`DefaultDeploymentUniqueLabelKey`, `ControllerRevisionHashLabelKey`,
//! `StatefulSetPodNameLabel`, `PodIndexLabel`) and
//! `pkg/kubelet/types/pod_update.go` (`ConfigMirrorAnnotationKey`).

/// `LabelHostname`: the per-node topology key.
pub const HOSTNAME: &str = "kubernetes.io/hostname";
/// `LabelTopologyZone`: the zone topology key.
pub const ZONE: &str = "topology.kubernetes.io/zone";
/// `LabelOSStable`: set by every kubelet to its `GOOS` (`initialNode`, pkg/kubelet/kubelet_node_status.go).
pub const OS: &str = "kubernetes.io/os";
/// `LabelArchStable`: set by every kubelet to its `GOARCH`.
pub const ARCH: &str = "kubernetes.io/arch";
/// `LabelTopologyRegion`: set by the cloud provider when it reports a region.
pub const REGION: &str = "topology.kubernetes.io/region";
/// `LabelInstanceTypeStable`: set by the cloud provider when it reports an instance type.
pub const INSTANCE_TYPE: &str = "node.kubernetes.io/instance-type";
/// The deprecated beta labels the kubelet (`kubeletapis.LabelOS`, `LabelArch`) and the cloud
/// provider (`LabelFailureDomainBetaZone`, `LabelFailureDomainBetaRegion`, `LabelInstanceType`)
/// still set beside the stable ones.
pub const BETA_OS: &str = "beta.kubernetes.io/os";
pub const BETA_ARCH: &str = "beta.kubernetes.io/arch";
pub const BETA_ZONE: &str = "failure-domain.beta.kubernetes.io/zone";
pub const BETA_REGION: &str = "failure-domain.beta.kubernetes.io/region";
pub const BETA_INSTANCE_TYPE: &str = "beta.kubernetes.io/instance-type";
/// `LabelMetadataName`: the API server labels every namespace with its own name.
pub const NAMESPACE_NAME: &str = "kubernetes.io/metadata.name";
/// `TaintNodeUnschedulable`: the node lifecycle controller's taint on cordoned nodes.
pub const TAINT_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";
/// `TaintNodeNotReady`.
pub const TAINT_NOT_READY: &str = "node.kubernetes.io/not-ready";
/// `TaintNodeUnreachable`.
pub const TAINT_UNREACHABLE: &str = "node.kubernetes.io/unreachable";
/// `DefaultDeploymentUniqueLabelKey`: the Deployment controller's per-template label.
pub const POD_TEMPLATE_HASH: &str = "pod-template-hash";
/// The label the Argo Rollouts controller sets on a Rollout's pods in place of `pod-template-hash`
/// (argoproj/argo-rollouts `pkg/apis/rollouts/v1alpha1/types.go`: `DefaultRolloutUniqueLabelKey`).
pub const ROLLOUTS_POD_TEMPLATE_HASH: &str = "rollouts-pod-template-hash";
/// `ControllerRevisionHashLabelKey`: the StatefulSet controller's revision label.
pub const CONTROLLER_REVISION_HASH: &str = "controller-revision-hash";
/// `StatefulSetPodNameLabel`.
pub const STATEFULSET_POD_NAME: &str = "statefulset.kubernetes.io/pod-name";
/// `PodIndexLabel`: a StatefulSet pod's ordinal.
pub const POD_INDEX: &str = "apps.kubernetes.io/pod-index";
/// `ConfigMirrorAnnotationKey`: the annotation of a static pod's mirror pod.
pub const CONFIG_MIRROR: &str = "kubernetes.io/config.mirror";
