//! Custom resources that run pods kix does not place (K0435, issue 18): a kind of a well-known
//! operator (`kix_kube::operators`), or a kind whose CustomResourceDefinition, shipped in the
//! package, declares a pod count or a pod template under `spec`. Found once per package here;
//! each instance at level pod or higher names them (`instance`), and verify lists them as
//! unverified. Also where a Rollout's `spec.workloadRef` is resolved to the Deployment whose
//! template it runs ([`template_refs`]).

use super::model::{UnmanagedCustom, UnmanagedWhy};
use crate::load::documents::Document;
use kix_kube::kind::WorkloadKind;
use kix_kube::operators::{crd_pod_field, operator_kind};
use kix_kube::workload::with_referenced_template;
use std::collections::{BTreeMap, BTreeSet};

/// Each Rollout whose `spec.workloadRef` names a Deployment of the package, by document index: the
/// Rollout with the Deployment's template (to read as a workload) and the Deployment's index.
pub fn template_refs(documents: &[Document]) -> BTreeMap<usize, (kix_yaml::Value, usize)> {
    documents
        .iter()
        .enumerate()
        .filter_map(|(index, document)| {
            Some((index, with_referenced_template(&document.value, documents.iter().map(|d| &d.value))?))
        })
        .collect()
}

/// The Deployments that only hold a Rollout's template: referenced by a workloadRef and scaled to zero
/// (the pattern Argo Rollouts documents). They run no pods of their own and are not workloads of the package.
pub fn template_holders(documents: &[Document]) -> BTreeSet<usize> {
    template_refs(documents)
        .into_values()
        .map(|(_, deployment)| deployment)
        .filter(|d| {
            kix_kube::value::at(&documents[*d].value, &["spec", "replicas"]).and_then(|r| r.as_u64()) == Some(0)
        })
        .collect()
}

/// The package's custom resources that run pods and are not placed (`placed`: the documents read as
/// workloads), in document order; `unreadable` are those of a profile's kind that could not be read
/// through it, with why.
pub fn unmanaged_custom(
    documents: &[Document],
    placed: &BTreeSet<usize>,
    mut unreadable: BTreeMap<usize, String>,
) -> Vec<UnmanagedCustom> {
    let refs = template_refs(documents);
    // (group, kind) of each shipped CRD that declares a pod field, with that field.
    let crd_fields: BTreeMap<(&str, &str), &'static str> = documents
        .iter()
        .filter(|d| d.group() == "apiextensions.k8s.io" && d.kind() == "CustomResourceDefinition")
        .filter_map(|d| {
            let spec = d.value.get("spec")?;
            let group = spec.get("group")?.as_str()?;
            let kind = spec.get("names")?.get("kind")?.as_str()?;
            Some(((group, kind), crd_pod_field(&d.value)?))
        })
        .collect();
    documents
        .iter()
        .enumerate()
        .filter_map(|(index, document)| {
            // A Rollout with its own template, or a resource read through a profile, is a workload kix places.
            if placed.contains(&index) || WorkloadKind::of(&document.value).is_some() || refs.contains_key(&index) {
                return None;
            }
            let (group, kind) = (document.group(), document.kind());
            let why = match (unreadable.remove(&index), operator_kind(group, kind)) {
                (Some(why), _) => UnmanagedWhy::Unreadable(why),
                (None, Some(_)) => UnmanagedWhy::Operator,
                (None, None) => UnmanagedWhy::CrdField(crd_fields.get(&(group, kind))?),
            };
            Some(UnmanagedCustom { document: index, kind: kind.to_string(), name: document.name().to_string(), why })
        })
        .collect()
}
