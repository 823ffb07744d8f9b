//! Kustomization files in a package directory: not resources, skipped, with a warning when
//! they ask for changes kix does not make.
//!
//! Upstream packages often ship a `kustomization.yaml` beside their manifests (ingress-nginx's
//! has neither apiVersion nor kind). kustomize recognises the file names `kustomization.yaml`,
//! `kustomization.yml` and `Kustomization` (kubernetes-sigs/kustomize
//! `api/konfig/general.go` `RecognizedKustomizationFileNames`) and the kinds `Kustomization` and
//! `Component` of group `kustomize.config.k8s.io` (`api/types/kustomization.go`). A document of
//! kind `Kustomization` in another group is something else (Flux's
//! `kustomize.toolkit.fluxcd.io` Kustomization is a custom resource to apply) and stays a resource.
//!
//! The fields of `types.Kustomization` that change what is emitted are listed in
//! [`TRANSFORMATIONS`]; kix applies none of them, so each one present is named in a K0112
//! warning. Operands (`resources`, `crds`, `bases`) and options (`sortOptions`,
//! `generatorOptions`, `configurations`, `openapi`, `helmGlobals`, `buildMetadata`,
//! `validators`) change nothing by themselves and are not reported.

use super::yaml_error::yaml_diagnostic;
use kix_diag::{Code, Diagnostic, Diagnostics, SourceFile};
use kix_kube::kind::api_group;
use kix_yaml::{self as yaml, Limits, Marks, Seg, Value};
use std::path::Path;

/// File names kustomize reads as a kustomization.
const FILE_NAMES: &[&str] = &["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// The group of kustomize's own kinds.
const GROUP: &str = "kustomize.config.k8s.io";

/// Fields of a Kustomization that change the objects kustomize emits (operators and generators of
/// `api/types/kustomization.go`), in the order that file declares them.
pub const TRANSFORMATIONS: &[&str] = &[
    "namePrefix",
    "nameSuffix",
    "namespace",
    "commonLabels",
    "labels",
    "commonAnnotations",
    "patchesStrategicMerge",
    "patchesJson6902",
    "patches",
    "images",
    "imageTags",
    "replacements",
    "replicas",
    "vars",
    "components",
    "configMapGenerator",
    "secretGenerator",
    "helmCharts",
    "helmChartInflationGenerator",
    "generators",
    "transformers",
    "inventory",
];

/// Whether a file is a kustomization by its name alone (whatever it holds).
pub fn is_kustomization_file(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|name| FILE_NAMES.contains(&name))
}

/// Whether a document is a kustomize Kustomization or Component: kind `Kustomization` or
/// `Component`, with kustomize's group or no apiVersion at all.
pub fn is_kustomization(value: &Value) -> bool {
    let kind = value.get("kind").and_then(Value::as_str);
    let api_version = value.get("apiVersion").and_then(Value::as_str);
    matches!(kind, Some("Kustomization" | "Component")) && api_version.is_none_or(|v| api_group(v) == GROUP)
}

/// Checks every document of a kustomization file (one that is not valid YAML is K0104, as any
/// package file would be); `own` is the package's `meta.namespace`. Returns the `namespace` the
/// first Kustomization that sets one supplies, which kix says when it refuses a ServiceAccount
/// subject that names no namespace (K0414; kustomize writes it only into such a subject named
/// `default`, or from a ServiceAccount it renders).
pub fn check_file(source: SourceFile, own: Option<&str>, diagnostics: &mut Diagnostics) -> Option<String> {
    let mut supplied = None;
    for parsed in yaml::parse_stream(source.text(), &Limits::PACKAGE) {
        match parsed {
            Ok(parsed) => {
                if is_kustomization(&parsed.value) || parsed.value.get("kind").is_none() {
                    let namespace = parsed.value.get("namespace").and_then(Value::as_str).filter(|ns| !ns.is_empty());
                    supplied = supplied.or(namespace.map(str::to_string));
                }
                check(&source, &parsed.value, &parsed.marks, own, diagnostics);
            }
            Err(error) => diagnostics.push(yaml_diagnostic(&source, &error)),
        }
    }
    supplied
}

/// A K0112 warning naming the transformations a Kustomization asks for, at the first of them, each
/// said for what kix does instead. Its `namespace: X` is no loss when the package's `meta.namespace`
/// (`own`) is X: kix moves the package's objects from X, and those without a namespace, to each
/// instance's namespace, which is X where the instance runs there, as kustomize would set it; so it is
/// not reported. Another `namespace` is said as what happens: the namespaced objects go to each
/// instance's namespace.
pub fn check(source: &SourceFile, value: &Value, marks: &Marks, own: Option<&str>, diagnostics: &mut Diagnostics) {
    let Some(map) = value.as_mapping() else { return };
    let namespace = map.get("namespace").and_then(Value::as_str).filter(|ns| !ns.is_empty());
    let moved = namespace.is_some() && namespace == own;
    let asked: Vec<&str> = map
        .keys()
        .filter_map(Value::as_str)
        .filter(|key| TRANSFORMATIONS.contains(key))
        .filter(|key| map.get(*key).is_some_and(|v| !is_empty(v)))
        .filter(|key| !(moved && *key == "namespace"))
        .collect();
    let Some(first) = asked.first() else { return };
    let others: Vec<&str> = asked.iter().copied().filter(|key| *key != "namespace").collect();
    let mut parts = Vec::new();
    if let Some(namespace) = namespace.filter(|_| asked.contains(&"namespace")) {
        parts.push(format!(
            "its namespace `{namespace}`: the package's namespaced objects go to each instance's namespace instead \
             (set meta.namespace = \"{namespace}\" if the YAML is written for it)"
        ));
    }
    if !others.is_empty() {
        parts.push(format!(
            "its {}, so the package's objects are emitted without {}",
            others.join(", "),
            if others.len() == 1 { "that change" } else { "these changes" }
        ));
    }
    let start = marks.locate(&[Seg::Key(first)]).span.start;
    diagnostics.push(
        Diagnostic::new(
            Code::KustomizationSkipped,
            format!("kustomization skipped: kix does not apply {}", parts.join("; nor ")),
        )
        .at(source.locate_line(start.line as usize, start.column as usize))
        .help("make the changes in the package's YAML files, or package the output of `kubectl kustomize` instead"),
    );
}

/// `null`, `""`, `[]` and `{}` ask for nothing.
fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Sequence(items) => items.is_empty(),
        Value::Mapping(map) => map.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warnings(text: &str) -> Vec<(String, Option<usize>)> {
        let mut diagnostics = Diagnostics::default();
        check_file(SourceFile::new("p/kustomization.yaml", text.to_string()), Some("own"), &mut diagnostics);
        diagnostics.iter().map(|d| (d.message.to_string(), d.location().and_then(|l| l.line()))).collect()
    }

    #[test]
    fn transformations_are_listed_in_file_order_at_the_first() {
        let cases: &[(&str, &[&str], Option<usize>)] = &[
            // external-dns: images only.
            (
                "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n\nimages:\n  - name: x\n    newTag: v1\nresources:\n  - a.yaml\n",
                &["images"],
                Some(4),
            ),
            // metrics-server: commonLabels.
            ("kind: Kustomization\ncommonLabels:\n  k8s-app: m\nresources: [a.yaml]\n", &["commonLabels"], Some(2)),
            // ingress-nginx: resources only, no apiVersion or kind: nothing to say.
            ("resources:\n  - deploy.yaml\n", &[], None),
            (
                "namePrefix: a-\nsortOptions: {order: legacy}\nreplicas: [{name: w, count: 3}]\nconfigMapGenerator: [{name: c}]\npatches: []\n",
                &["namePrefix", "replicas", "configMapGenerator"],
                Some(1),
            ),
            ("namespace: ''\ncrds: [c.yaml]\ngeneratorOptions: {disableNameSuffixHash: true}\n", &[], None),
        ];
        for (text, keys, line) in cases {
            let found = warnings(text);
            if keys.is_empty() {
                assert!(found.is_empty(), "{text}: {found:?}");
                continue;
            }
            assert_eq!(found.len(), 1, "{text}: {found:?}");
            let (message, at) = &found[0];
            assert!(message.contains(&format!("its {},", keys.join(", "))), "{message}");
            assert_eq!(at, line, "{text}");
        }
    }

    // The package's meta.namespace is `own` (see `warnings`): a kustomization setting it loses nothing.
    #[test]
    fn a_namespace_is_said_for_what_kix_does() {
        assert!(warnings("namespace: own\nresources: [a.yaml]\n").is_empty());
        let found = warnings("namespace: own\nimages: [{name: x, newTag: v1}]\n");
        assert_eq!(found.len(), 1);
        assert!(
            found[0].0.ends_with("its images, so the package's objects are emitted without that change"),
            "{found:?}"
        );
        assert_eq!(found[0].1, Some(2));
        let found = warnings("namespace: other\ncommonLabels: {a: b}\n");
        assert_eq!(
            found[0].0,
            "kustomization skipped: kix does not apply its namespace `other`: the package's namespaced objects go to \
             each instance's namespace instead (set meta.namespace = \"other\" if the YAML is written for it); nor its \
             commonLabels, so the package's objects are emitted without that change"
        );
    }

    #[test]
    fn kustomize_kinds_are_group_aware() {
        let read = |text: &str| is_kustomization(&kix_yaml::from_str(text).unwrap());
        assert!(read("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"));
        assert!(read("apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"));
        assert!(read("kind: Kustomization\n"));
        assert!(!read("apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: a}\n"));
        assert!(!read("apiVersion: v1\nkind: ConfigMap\n"));
        assert!(is_kustomization_file(Path::new("a/kustomization.yml")));
        assert!(is_kustomization_file(Path::new("Kustomization")));
        assert!(!is_kustomization_file(Path::new("a/Kustomization.yaml")));
    }
}
