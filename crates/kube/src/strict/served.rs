//! What Kubernetes 1.33 serves: one row per type k8s-openapi generates for 1.33 that implements
//! `k8s_openapi::Resource` (its `GROUP`, `VERSION` and `KIND` constants, never retyped strings),
//! each with the typed check of that type.
//!
//! The list holds every such type of the `v1_33` feature except the discovery documents of
//! `apimachinery` (`APIGroup`, `APIGroupList`, `APIResourceList`, `APIVersions`, `Status`), which
//! are answers of the server, not objects anyone applies. Alpha and beta versions that 1.33 knows
//! (served when their feature gate is on) count as served: a manifest for them is not a typo.
//! Regenerate it when the k8s-openapi feature moves:
//! list the files of k8s-openapi's `src/v1_33` that implement `Resource`.
//!
//! The one built-in group 1.33 no longer serves at all, `extensions` (its last kinds, Ingress and
//! NetworkPolicy, went in 1.22: the Kubernetes deprecated API migration guide), is known by name
//! so that its objects are refused instead of taken for custom resources.

use super::error::StrictError;
use super::typed::IsServed;
use k8s_openapi::Resource;
use kix_yaml::Value;

/// One served (group, version, kind) and its check.
pub struct Served {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    check: fn(&Value, IsServed) -> Vec<StrictError>,
}

impl Served {
    /// `apps/v1`, or `v1` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() { self.version.to_string() } else { format!("{}/{}", self.group, self.version) }
    }
}

macro_rules! served {
    ($($ty:ty),* $(,)?) => {
        /// Every built-in kind of Kubernetes 1.33, with its typed check.
        pub(crate) static SERVED: &[Served] = &[$(
            Served {
                group: <$ty as Resource>::GROUP,
                version: <$ty as Resource>::VERSION,
                kind: <$ty as Resource>::KIND,
                check: super::typed::check::<$ty>,
            }
        ),*];
    };
}

use k8s_openapi::api;
served! {
    api::admissionregistration::v1::MutatingWebhookConfiguration,
    api::admissionregistration::v1::ValidatingAdmissionPolicy,
    api::admissionregistration::v1::ValidatingAdmissionPolicyBinding,
    api::admissionregistration::v1::ValidatingWebhookConfiguration,
    api::admissionregistration::v1alpha1::MutatingAdmissionPolicy,
    api::admissionregistration::v1alpha1::MutatingAdmissionPolicyBinding,
    api::admissionregistration::v1beta1::ValidatingAdmissionPolicy,
    api::admissionregistration::v1beta1::ValidatingAdmissionPolicyBinding,
    api::apiserverinternal::v1alpha1::StorageVersion,
    api::apps::v1::ControllerRevision,
    api::apps::v1::DaemonSet,
    api::apps::v1::Deployment,
    api::apps::v1::ReplicaSet,
    api::apps::v1::StatefulSet,
    api::authentication::v1::SelfSubjectReview,
    api::authentication::v1::TokenRequest,
    api::authentication::v1::TokenReview,
    api::authorization::v1::LocalSubjectAccessReview,
    api::authorization::v1::SelfSubjectAccessReview,
    api::authorization::v1::SelfSubjectRulesReview,
    api::authorization::v1::SubjectAccessReview,
    api::autoscaling::v1::HorizontalPodAutoscaler,
    api::autoscaling::v1::Scale,
    api::autoscaling::v2::HorizontalPodAutoscaler,
    api::batch::v1::CronJob,
    api::batch::v1::Job,
    api::certificates::v1::CertificateSigningRequest,
    api::certificates::v1alpha1::ClusterTrustBundle,
    api::certificates::v1beta1::ClusterTrustBundle,
    api::coordination::v1::Lease,
    api::coordination::v1alpha2::LeaseCandidate,
    api::coordination::v1beta1::LeaseCandidate,
    api::core::v1::Binding,
    api::core::v1::ComponentStatus,
    api::core::v1::ConfigMap,
    api::core::v1::Endpoints,
    api::core::v1::Event,
    api::core::v1::LimitRange,
    api::core::v1::Namespace,
    api::core::v1::Node,
    api::core::v1::PersistentVolume,
    api::core::v1::PersistentVolumeClaim,
    api::core::v1::Pod,
    api::core::v1::PodTemplate,
    api::core::v1::ReplicationController,
    api::core::v1::ResourceQuota,
    api::core::v1::Secret,
    api::core::v1::Service,
    api::core::v1::ServiceAccount,
    api::discovery::v1::EndpointSlice,
    api::events::v1::Event,
    api::flowcontrol::v1::FlowSchema,
    api::flowcontrol::v1::PriorityLevelConfiguration,
    api::networking::v1::Ingress,
    api::networking::v1::IngressClass,
    api::networking::v1::IPAddress,
    api::networking::v1::NetworkPolicy,
    api::networking::v1::ServiceCIDR,
    api::networking::v1beta1::IPAddress,
    api::networking::v1beta1::ServiceCIDR,
    api::node::v1::RuntimeClass,
    api::policy::v1::Eviction,
    api::policy::v1::PodDisruptionBudget,
    api::rbac::v1::ClusterRole,
    api::rbac::v1::ClusterRoleBinding,
    api::rbac::v1::Role,
    api::rbac::v1::RoleBinding,
    api::resource::v1alpha3::DeviceClass,
    api::resource::v1alpha3::DeviceTaintRule,
    api::resource::v1alpha3::ResourceClaim,
    api::resource::v1alpha3::ResourceClaimTemplate,
    api::resource::v1alpha3::ResourceSlice,
    api::resource::v1beta1::DeviceClass,
    api::resource::v1beta1::ResourceClaim,
    api::resource::v1beta1::ResourceClaimTemplate,
    api::resource::v1beta1::ResourceSlice,
    api::resource::v1beta2::DeviceClass,
    api::resource::v1beta2::ResourceClaim,
    api::resource::v1beta2::ResourceClaimTemplate,
    api::resource::v1beta2::ResourceSlice,
    api::scheduling::v1::PriorityClass,
    api::storage::v1::CSIDriver,
    api::storage::v1::CSINode,
    api::storage::v1::CSIStorageCapacity,
    api::storage::v1::StorageClass,
    api::storage::v1::VolumeAttachment,
    api::storage::v1alpha1::VolumeAttributesClass,
    api::storage::v1beta1::VolumeAttributesClass,
    api::storagemigration::v1alpha1::StorageVersionMigration,
    k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService,
}

/// Built-in groups Kubernetes 1.33 serves nothing of.
const REMOVED_GROUPS: &[&str] = &["extensions"];

/// The row of an `apiVersion` and `kind`, if Kubernetes 1.33 serves it.
pub fn lookup(api_version: &str, kind: &str) -> Option<&'static Served> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    SERVED.iter().find(|s| s.group == group && s.version == version && s.kind == kind)
}

/// The typed check of an object of `apiVersion` and `kind`: its problems, or `None` when
/// Kubernetes 1.33 does not serve that kind.
pub(super) fn typed_check(api_version: &str, kind: &str, object: &Value) -> Option<Vec<StrictError>> {
    lookup(api_version, kind)
        .map(|served| (served.check)(object, |api_version, kind| lookup(api_version, kind).is_some()))
}

/// Whether a group is Kubernetes' own (the core group is `""`): its kinds are all in [`SERVED`].
pub(crate) fn is_builtin_group(group: &str) -> bool {
    REMOVED_GROUPS.contains(&group) || SERVED.iter().any(|s| s.group == group)
}

/// Whether a kind is a list kind (`ConfigMapList`, `List`): lists stand for their items, which are
/// checked one by one.
pub(super) fn is_list_kind(kind: &str) -> bool {
    kind.ends_with("List")
}

/// Every `apiVersion` that serves a kind of this name, in table order.
pub(crate) fn serving(kind: &str) -> Vec<String> {
    SERVED.iter().filter(|s| s.kind == kind).map(Served::api_version).collect()
}

/// The kinds of one group.
pub(super) fn kinds_of(group: &str) -> Vec<&'static str> {
    SERVED.iter().filter(|s| s.group == group).map(|s| s.kind).collect()
}
