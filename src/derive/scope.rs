//! Which objects live outside namespaces: well-known cluster-scoped kinds and
//! custom kinds the package's own CRDs declare `scope: Cluster`. Everything
//! else (custom resources included) is namespaced.

use crate::load::documents::Document;
use std::collections::BTreeSet;

/// Well-known cluster-scoped kinds, by (group, kind).
const CLUSTER_SCOPED: &[(&str, &str)] = &[
    ("", "Namespace"),
    ("", "Node"),
    ("", "PersistentVolume"),
    ("", "ComponentStatus"),
    ("rbac.authorization.k8s.io", "ClusterRole"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ("apiregistration.k8s.io", "APIService"),
    ("storage.k8s.io", "StorageClass"),
    ("storage.k8s.io", "CSIDriver"),
    ("storage.k8s.io", "CSINode"),
    ("storage.k8s.io", "VolumeAttachment"),
    ("storage.k8s.io", "VolumeAttributesClass"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("node.k8s.io", "RuntimeClass"),
    ("networking.k8s.io", "IngressClass"),
    ("networking.k8s.io", "IPAddress"),
    ("networking.k8s.io", "ServiceCIDR"),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
    ("certificates.k8s.io", "CertificateSigningRequest"),
    ("resource.k8s.io", "DeviceClass"),
];

/// Whether an object lives outside namespaces. Unknown kinds are taken as namespaced (as custom resources
/// usually are) unless a CRD in the same package says otherwise.
pub fn is_cluster_scoped(document: &Document, custom: &BTreeSet<(String, String)>) -> bool {
    let (group, kind) = (document.group(), document.kind());
    CLUSTER_SCOPED.contains(&(group, kind)) || custom.contains(&(group.to_string(), kind.to_string()))
}
