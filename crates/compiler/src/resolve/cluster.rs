//! Clusters: validate one cluster file (its name, capabilities, failure-domain
//! keys, node inventory and level; R1, R3, R14), then resolve its instances.
//!
//! A cluster whose own settings fail is absent from the model; an instance
//! that fails is absent from its cluster, the others still resolve so one run
//! reports every problem.

use super::instance::{ClusterContext, resolve_instance};
use super::inventory;
use super::model::{Cluster, Sourced};
use super::package::Packages;
use super::substrate::{FailureDomains, Substrate};
use crate::load::ClusterFile;
use kix_diag::{Code, Diagnostic, Diagnostics, Location, Subject};
use kix_kube::labels::{HOSTNAME as HOSTNAME_KEY, ZONE as ZONE_KEY};
use kix_kube::level::Level;
use kix_kube::names;
use std::sync::Arc;

/// Resolves one cluster file; `None` when its own settings are unusable (every reason reported).
pub fn resolve_cluster(
    file: ClusterFile,
    packages: &Packages,
    what_if: Option<(&str, Level)>,
    diagnostics: &mut Diagnostics,
) -> Option<Cluster> {
    let mut across = Diagnostics::default();
    let cluster = resolve_cluster_in_parts(file, packages, what_if, None, diagnostics, &mut across);
    diagnostics.extend(across);
    cluster
}

/// [`resolve_cluster`], resolving only the instances `only` names (all without it: the cluster's own
/// settings are always resolved, and every entry's name checked), with the findings of the groups across
/// instances (`across`) apart from the others: a rebuild records them apart and compiles in part only
/// the instances whose package changed (issue 42, `crate::reuse::parts`).
pub fn resolve_cluster_in_parts(
    file: ClusterFile,
    packages: &Packages,
    what_if: Option<(&str, Level)>,
    only: Option<&dyn Fn(&str) -> bool>,
    diagnostics: &mut Diagnostics,
    across: &mut Diagnostics,
) -> Option<Cluster> {
    let ClusterFile { name, source, raw } = file;
    let source = Arc::new(source);
    let subject = Subject { cluster: Some(name.clone().into()), ..Subject::default() };
    let errors_before = diagnostics.count(kix_diag::Severity::Error);
    if let Err(why) = names::dns1123_label(&name) {
        diagnostics.push(
            Diagnostic::new(Code::InvalidName, format!("cluster name `{name}` (the file name) is not valid: {why}"))
                .at(Location::file(source.path())),
        );
    }

    // Capabilities (R1).
    let zones_raw = raw.capabilities.availability_zones.as_ref();
    let substrate = Substrate {
        multi_node: raw.capabilities.multi_node.as_ref().map(|m| *m.get_ref()),
        zones: zones_raw.map(|zones| zones.get_ref().iter().map(|z| z.get_ref().clone()).collect()),
    };
    check_capabilities(&name, &raw.capabilities, &substrate, &source, &subject, diagnostics);

    let domains = failure_domains(&raw.failure_domains, &source, &subject, diagnostics);

    // The node inventory `kix verify` simulates on.
    let inventory_valid = inventory::validate(&raw.node_pools, &substrate, &domains, &source, &subject, diagnostics);
    if inventory_valid {
        for (span, message) in inventory::missing_extra_keys(&raw.node_pools, &raw.failure_domains.extra) {
            diagnostics.push(
                Diagnostic::new(Code::ExtraKeyMissing, message)
                    .at(source.locate(span))
                    .about(&subject)
                    .help("give the pools' nodes the key with [nodePools.domains] (or labels), or remove it from failureDomains.extra"),
            );
        }
    }

    let allow = super::acknowledged::allowed_warnings(&raw.allow, &source, &subject, diagnostics);

    // The cluster's own level against its substrate (R3), recorded for the instances that inherit it.
    let level = Sourced { value: *raw.availability.get_ref(), from: source.locate(raw.availability.span()) };
    let check = super::support::check_support(&name, &substrate, &level, &subject, diagnostics);
    let inventory = if inventory_valid { inventory::expand(&raw.node_pools, &domains) } else { Vec::new() };
    let node_groups = if inventory_valid { inventory::node_groups(&raw.node_pools, &domains) } else { Vec::new() };
    let context = ClusterContext {
        name: &name,
        nodes: (!inventory.is_empty()).then_some(inventory.len()),
        source: &source,
        level: &level,
        check: &check,
        substrate: &substrate,
        subject: &subject,
        what_if,
    };
    let cluster_valid = diagnostics.count(kix_diag::Severity::Error) == errors_before;

    // Instances (R2, R4-R8, R13, R14).
    let mut instances = Vec::with_capacity(raw.instances.len());
    // Only looked up (every instance of a fleet's clusters): hashed with foldhash, sized once.
    let mut seen_names: std::collections::HashSet<&str, foldhash::fast::RandomState> =
        std::collections::HashSet::with_capacity_and_hasher(raw.instances.len(), Default::default());
    for raw_instance in &raw.instances {
        let instance_name = raw_instance.name.get_ref();
        if let Some(file) = kix_kube::kix_names::reserved_instance_name(instance_name) {
            diagnostics.push(
                Diagnostic::new(
                    Code::ReservedInstanceName,
                    format!(
                        "instance name `{instance_name}` is reserved: out/{name}/{file} is a file kix writes itself"
                    ),
                )
                .at(source.locate(raw_instance.name.span()))
                .about(&subject)
                .help("choose another instance name"),
            );
            continue;
        }
        if seen_names.contains(instance_name.as_str()) {
            diagnostics.push(
                Diagnostic::new(
                    Code::DuplicateInstance,
                    format!("instance `{instance_name}` is declared twice in cluster `{name}`"),
                )
                .at(source.locate(raw_instance.name.span()))
                .about(&subject),
            );
            continue;
        }
        let resolved = only.is_none_or(|only| only(instance_name));
        if let Some(instance) =
            resolved.then(|| resolve_instance(&context, raw_instance, packages, diagnostics)).flatten()
        {
            instances.push(instance);
        }
        if names::dns1123_label(instance_name).is_ok() {
            seen_names.insert(instance_name);
        }
    }
    let domains_counted =
        super::survival::Domains { zones: substrate.zones.as_ref().map(Vec::len), nodes: context.nodes };
    super::across::settle(&domains_counted, &mut instances, across);
    super::ceilings::report(&name, &instances, diagnostics);
    let multi_node_at = raw.capabilities.multi_node.as_ref().map(|m| source.locate(m.span()));
    let zones_at = raw.capabilities.availability_zones.as_ref().map(|z| source.locate(z.span()));
    let require_nodes = raw.verify.require_nodes.as_ref().filter(|r| *r.get_ref()).map(|r| source.locate(r.span()));
    let admission = raw.admission.as_ref().and_then(|raw| admission(raw, &source, &subject, diagnostics));
    let cluster_valid = cluster_valid && (raw.admission.is_none() || admission.is_some());
    cluster_valid.then(|| Cluster {
        name,
        source: Arc::clone(&source),
        level,
        substrate,
        multi_node_at,
        zones_at,
        domains,
        inventory,
        allow,
        instance_label: raw.instance_label,
        require_nodes,
        admission,
        storage: raw.storage.topology,
        node_groups,
        instances,
    })
}

/// `[admission]`: each exempt name a user name the API server can authenticate (not empty, no spaces at its
/// ends), written once. `None` when one is not (each reason reported).
fn admission(
    raw: &crate::load::cluster::RawAdmission,
    source: &kix_diag::SourceFile,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) -> Option<super::model::Admission> {
    let mut exempt: Vec<String> = Vec::with_capacity(raw.exempt.len());
    let mut valid = true;
    for name in &raw.exempt {
        let text = name.get_ref();
        let problem = if text.trim().is_empty() {
            Some(format!("exempt user `{text}` is empty"))
        } else if text.trim() != text {
            Some(format!("exempt user `{text}` has spaces at its ends, which no authenticated user name has"))
        } else if exempt.iter().any(|seen| seen == text) {
            Some(format!("exempt user `{text}` is written twice"))
        } else {
            None
        };
        match problem {
            Some(message) => {
                valid = false;
                diagnostics.push(
                    Diagnostic::new(Code::AdmissionExemptInvalid, message)
                        .at(source.locate(name.span()))
                        .about(subject)
                        .help("write the user name as the API server authenticates it; a service account is `system:serviceaccount:<namespace>:<name>`"),
                );
            }
            None => exempt.push(text.clone()),
        }
    }
    valid.then(|| super::model::Admission {
        enforce: *raw.enforce.get_ref(),
        exempt,
        at: source.locate(raw.enforce.span()),
    })
}

/// R1: zones are label values, each declared once; a single node cannot span two zones.
fn check_capabilities(
    name: &str,
    raw: &crate::load::cluster::RawCapabilities,
    substrate: &Substrate,
    source: &kix_diag::SourceFile,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) {
    let zones = raw.availability_zones.as_ref().map(|z| z.get_ref().as_slice()).unwrap_or_default();
    // Duplicates by hashing: a cluster may declare 100,000 zones (issue 19).
    let mut seen = std::collections::HashSet::with_capacity(zones.len());
    for zone in zones {
        let value = zone.get_ref();
        let problem = match names::label_value(value) {
            Err(why) => Some(format!("zone `{value}` is not a valid label value: {why}")),
            Ok(()) if value.is_empty() => Some(format!("zone `{value}` is not a valid label value: must not be empty")),
            Ok(()) if !seen.insert(value.as_str()) => Some(format!("zone `{value}` is declared twice")),
            Ok(()) => None,
        };
        if let Some(message) = problem {
            diagnostics.push(Diagnostic::new(Code::InvalidZone, message).at(source.locate(zone.span())).about(subject));
        }
    }
    if substrate.multi_node == Some(false) && substrate.zone_count() >= 2 {
        let at = raw.multi_node.as_ref().map(|m| source.locate(m.span()));
        diagnostics.push(
            Diagnostic::new(
                Code::ContradictoryCapabilities,
                format!(
                    "cluster `{name}` is declared single-node (multiNode = false) but lists {} availability zones",
                    substrate.zone_count()
                ),
            )
            .at_opt(at)
            .about(subject),
        );
    }
}

/// R14: the failure-domain keys, defaulted and checked (each a valid label key, used once).
fn failure_domains(
    raw: &crate::load::cluster::RawFailureDomains,
    source: &kix_diag::SourceFile,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) -> FailureDomains {
    let domains = FailureDomains {
        node: raw.node.as_ref().map_or(HOSTNAME_KEY.to_string(), |k| k.get_ref().clone()),
        zone: raw.zone.as_ref().map_or(ZONE_KEY.to_string(), |k| k.get_ref().clone()),
        extra: raw.extra.iter().map(|k| k.get_ref().clone()).collect(),
    };
    let keyed = [(raw.node.as_ref(), domains.node.as_str()), (raw.zone.as_ref(), domains.zone.as_str())]
        .into_iter()
        .chain(raw.extra.iter().map(|k| (Some(k), k.get_ref().as_str())));
    let mut used_keys: Vec<&str> = Vec::new();
    for (spanned, key) in keyed {
        let at = spanned.map(|s| source.locate(s.span()));
        let message = if let Err(why) = names::label_key(key) {
            Some(format!("failure-domain key `{key}` is not a valid label key: {why}"))
        } else if used_keys.contains(&key) {
            Some(format!("failure-domain key `{key}` is used twice (each key becomes one spread constraint)"))
        } else {
            None
        };
        if let Some(message) = message {
            diagnostics.push(Diagnostic::new(Code::InvalidLabelKey, message).at_opt(at).about(subject));
        }
        used_keys.push(key);
    }
    domains
}
