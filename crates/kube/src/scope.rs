//! Which objects live outside namespaces: well-known cluster-scoped kinds and custom kinds a
//! package's own CRDs declare `scope: Cluster`. Everything else (custom resources included) is
//! namespaced. Resolve reads it for every document of a package, derive and `kix init` too.

use std::collections::BTreeSet;

/// Well-known cluster-scoped kinds, by (kind, group), sorted so a lookup is a binary search (a fleet
/// asks for every object of every instance).
const CLUSTER_SCOPED: &[(&str, &str)] = &[
    ("APIService", "apiregistration.k8s.io"),
    ("CSIDriver", "storage.k8s.io"),
    ("CSINode", "storage.k8s.io"),
    ("CertificateSigningRequest", "certificates.k8s.io"),
    ("ClusterRole", "rbac.authorization.k8s.io"),
    ("ClusterRoleBinding", "rbac.authorization.k8s.io"),
    ("ComponentStatus", ""),
    ("CustomResourceDefinition", "apiextensions.k8s.io"),
    ("DeviceClass", "resource.k8s.io"),
    ("FlowSchema", "flowcontrol.apiserver.k8s.io"),
    ("IPAddress", "networking.k8s.io"),
    ("IngressClass", "networking.k8s.io"),
    ("MutatingAdmissionPolicy", "admissionregistration.k8s.io"),
    ("MutatingAdmissionPolicyBinding", "admissionregistration.k8s.io"),
    ("MutatingWebhookConfiguration", "admissionregistration.k8s.io"),
    ("Namespace", ""),
    ("Node", ""),
    ("PersistentVolume", ""),
    ("PriorityClass", "scheduling.k8s.io"),
    ("PriorityLevelConfiguration", "flowcontrol.apiserver.k8s.io"),
    ("RuntimeClass", "node.k8s.io"),
    ("ServiceCIDR", "networking.k8s.io"),
    ("StorageClass", "storage.k8s.io"),
    ("ValidatingAdmissionPolicy", "admissionregistration.k8s.io"),
    ("ValidatingAdmissionPolicyBinding", "admissionregistration.k8s.io"),
    ("ValidatingWebhookConfiguration", "admissionregistration.k8s.io"),
    ("VolumeAttachment", "storage.k8s.io"),
    ("VolumeAttributesClass", "storage.k8s.io"),
];

/// Whether an object of `kind` in API `group` lives outside namespaces. Unknown kinds are taken as
/// namespaced (as custom resources usually are) unless `custom`, the (group, kind) pairs a package's own
/// CRDs declare `scope: Cluster`, says otherwise.
pub fn is_cluster_scoped(group: &str, kind: &str, custom: &BTreeSet<(String, String)>) -> bool {
    CLUSTER_SCOPED.binary_search(&(kind, group)).is_ok()
        || (!custom.is_empty() && custom.iter().any(|(g, k)| g == group && k == kind))
}

#[cfg(test)]
mod tests {
    /// The table is sorted (the lookup's binary search depends on it) and holds each kind once.
    #[test]
    fn the_cluster_scoped_table_is_sorted() {
        assert!(super::CLUSTER_SCOPED.windows(2).all(|pair| pair[0] < pair[1]));
    }
}
