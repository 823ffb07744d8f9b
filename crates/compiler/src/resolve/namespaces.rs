//! Namespace settings: a package's `meta.namespace` (the namespace its YAML
//! was written for) and `meta.keepNamespaces` (namespaces shared with the rest
//! of the cluster, such as `kube-system`, whose objects stay put), and an
//! instance's namespace checked against them.
//!
//! Every name is a DNS-1123 label (K0201), as a namespace's own name must be
//! (`ValidateNamespaceName` in kubernetes pkg/apis/core/validation). A
//! namespace cannot be both moved and kept (K0420): neither the package's own
//! namespace nor the instance's may be listed in `keepNamespaces`.

use super::model::{PackageNamespaces, Sourced};
use crate::load::package::RawMeta;
use kix_diag::{Code, Diagnostic, Diagnostics, Location, SourceFile, Subject};
use kix_kube::names;

/// Validates `meta.namespace` and `meta.keepNamespaces`; an invalid entry is reported and left out.
pub fn package_namespaces(
    meta: &RawMeta,
    manifest: &SourceFile,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) -> PackageNamespaces {
    let mut valid = |spanned: &toml::Spanned<String>, key: &str| {
        let value = spanned.get_ref();
        let from = manifest.locate(spanned.span());
        match names::dns1123_label(value) {
            Ok(()) => Some(Sourced { value: value.clone(), from }),
            Err(why) => {
                diagnostics.push(
                    Diagnostic::new(Code::InvalidName, format!("{key} `{value}` is not a valid namespace: {why}"))
                        .at(from)
                        .about(subject),
                );
                None
            }
        }
    };
    let own = meta.namespace.as_ref().and_then(|n| valid(n, "meta.namespace"));
    let mut keep: Vec<Sourced<String>> = Vec::new();
    for entry in meta.keep_namespaces.iter().flatten() {
        let Some(kept) = valid(entry, "meta.keepNamespaces entry") else { continue };
        if keep.iter().any(|k| k.value == kept.value) {
            continue;
        }
        keep.push(kept);
    }
    if let Some(own) = &own {
        if let Some(kept) = keep.iter().find(|k| k.value == own.value) {
            diagnostics.push(
                Diagnostic::new(
                    Code::KeptOwnNamespace,
                    format!(
                        "meta.keepNamespaces lists `{}`, the namespace the package is written for (meta.namespace): \
                         its objects move to each instance's namespace, so they cannot also stay",
                        own.value
                    ),
                )
                .at(kept.from.clone())
                .about(subject)
                .help("remove the entry from meta.keepNamespaces, or meta.namespace if the objects must stay"),
            );
        }
    }
    PackageNamespaces { own, keep }
}

/// An instance may not run in a namespace its package keeps (K0420).
pub fn check_instance_namespace(
    namespaces: &PackageNamespaces,
    namespace: &str,
    at: Location,
    subject: &Subject,
    diagnostics: &mut Diagnostics,
) -> bool {
    let Some(kept) = namespaces.keep.iter().find(|k| k.value == namespace) else { return true };
    let file = kept.from.path().display();
    let line = kept.from.line().map_or(String::new(), |l| format!(":{l}"));
    diagnostics.push(
        Diagnostic::new(
            Code::KeptOwnNamespace,
            format!(
                "instance namespace `{namespace}` is one its package keeps for objects shared with the rest of the \
                 cluster (meta.keepNamespaces, {file}{line})"
            ),
        )
        .at(at)
        .about(subject)
        .help("give the instance a namespace of its own (namespace = \"...\")"),
    );
    false
}

#[cfg(test)]
mod tests {
    use crate::testing::{TestTree, workload_yaml};
    use kix_diag::Code;

    fn compile(meta: &str, namespace: Option<&str>) -> crate::compile::Compiled {
        let instance_namespace = namespace.map_or(String::new(), |n| format!("namespace = \"{n}\"\n"));
        TestTree::new()
            .cluster(
                "c",
                &format!(
                    "availability = \"none\"\n{}[[instances]]\nname = \"app\"\npackage = \"p\"\n{instance_namespace}",
                    crate::testing::ALLOW_NAMESPACE
                ),
            )
            .package(
                "p",
                &format!("[meta]\nname = \"p\"\nversion = \"1.0.0\"\n{meta}"),
                &[("w.yaml", &workload_yaml("Deployment", "w", None, ""))],
            )
            .compile()
    }

    // Each setting with the code it gives (none: valid).
    #[test]
    fn namespace_settings_are_validated() {
        let cases: &[(&str, Option<&str>, &[Code])] = &[
            ("namespace = \"monitoring\"\nkeepNamespaces = [\"kube-system\"]\n", None, &[]),
            ("keepNamespaces = [\"kube-system\", \"kube-system\"]\n", None, &[]),
            ("namespace = \"Monitoring\"\n", None, &[Code::InvalidName]),
            ("keepNamespaces = [\"kube_system\"]\n", None, &[Code::InvalidName]),
            ("namespace = \"monitoring\"\nkeepNamespaces = [\"monitoring\"]\n", None, &[Code::KeptOwnNamespace]),
            ("keepNamespaces = [\"kube-system\"]\n", Some("kube-system"), &[Code::KeptOwnNamespace]),
            // The instance's namespace defaults to its name.
            ("keepNamespaces = [\"app\"]\n", None, &[Code::KeptOwnNamespace]),
            ("namespace = \"app\"\n", None, &[]),
        ];
        for (meta, namespace, codes) in cases {
            let compiled = compile(meta, *namespace);
            assert_eq!(compiled.codes(), codes.to_vec(), "{meta} {namespace:?}: {:?}", compiled.messages());
        }
    }
}
