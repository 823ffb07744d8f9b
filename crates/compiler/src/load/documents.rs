//! The documents of a package's YAML files: every object with its real
//! position, so a diagnostic points at the exact key or list item.
//!
//! Files are parsed by [`kix_yaml::parse_stream`] within
//! [`Limits::PACKAGE`](kix_yaml::Limits::PACKAGE); each YAML document
//! keeps its position tree ([`Marks`]). A list (`v1 List`, or a typed one such
//! as `RoleBindingList`) stands for its items, each located at its own lines
//! (see [`kix_kube::list`]). YAML merge
//! keys (`<<: *defaults`) are applied by the loader, as kubectl applies them.
//! A kustomize `Kustomization` document is skipped (see [`super::kustomization`]).

use super::yaml_error::yaml_diagnostic;
use kix_diag::{Code, Diagnostic, Diagnostics, Location, SourceFile};
use kix_kube::list;
use kix_yaml::{self as yaml, Limits, Marks, Seg, Value};
use std::ops::ControlFlow;
use std::sync::Arc;

/// One Kubernetes object as the user wrote it.
#[derive(Clone, Debug)]
pub struct Document {
    pub source: Arc<SourceFile>,
    pub value: Value,
    /// Positions of every node of `value` in `source`.
    marks: Marks,
}

impl Document {
    /// `apiVersion`, `kind` and `metadata.name`; checked present at parse time.
    pub fn api_version(&self) -> &str {
        self.value.get("apiVersion").and_then(Value::as_str).unwrap_or_default()
    }

    pub fn kind(&self) -> &str {
        self.value.get("kind").and_then(Value::as_str).unwrap_or_default()
    }

    /// `metadata.name`, or where a linted manifest has none its `generateName` (see [`Naming`]).
    pub fn name(&self) -> &str {
        let metadata = self.value.get("metadata");
        let name = metadata.and_then(|m| m.get("name")).and_then(Value::as_str);
        name.or_else(|| metadata.and_then(|m| m.get("generateName")).and_then(Value::as_str)).unwrap_or_default()
    }

    /// The API group (`apps` of `apps/v1`, empty for the core group).
    pub fn group(&self) -> &str {
        kix_kube::kind::api_group(self.api_version())
    }

    /// The bytes of its file the object is written in (its source may be a window of the file).
    pub fn byte_range(&self) -> std::ops::Range<usize> {
        let base = self.source.offset_in_file();
        base + self.marks.span.start.offset as usize..base + self.marks.span.end.offset as usize
    }

    /// Where the object starts.
    pub fn location(&self) -> Location {
        let start = self.marks.span.start;
        self.source.locate_line(start.line as usize, start.column as usize)
    }

    /// Where a key path (`["spec", "selector"]`) is written: the key itself, or the deepest
    /// ancestor that exists, or the object's start.
    pub fn locate(&self, path: &[&str]) -> Location {
        let segments: Vec<Seg<'_>> = path.iter().map(|key| Seg::Key(key)).collect();
        self.locate_segments(&segments)
    }

    /// Like [`Document::locate`] for a field path as Kubernetes writes it: `spec.containers[1].name`.
    pub fn locate_field(&self, path: &str) -> Location {
        let mut segments = Vec::new();
        for part in path.split('.').filter(|p| !p.is_empty()) {
            let (key, indices) = part.split_once('[').map_or((part, ""), |(key, rest)| (key, rest));
            if !key.is_empty() {
                segments.push(Seg::Key(key));
            }
            for index in indices.split('[').filter_map(|i| i.trim_end_matches(']').parse().ok()) {
                segments.push(Seg::Index(index));
            }
        }
        self.locate_segments(&segments)
    }

    fn locate_segments(&self, segments: &[Seg<'_>]) -> Location {
        let start = self.marks.locate(segments).span.start;
        self.source.locate_line(start.line as usize, start.column as usize)
    }
}

/// Parses every document of one file; problems become diagnostics and the rest is kept.
pub fn parse_documents(source: SourceFile, diagnostics: &mut Diagnostics) -> Vec<Document> {
    parse_documents_named(source, Naming::Required, diagnostics)
}

/// Whether objects need a `metadata.name`: a package's do (kix's output is applied by name, with
/// `kubectl apply`, kustomize or Argo CD); manifests `kix lint` reads may instead have a
/// `generateName`, which `kubectl create` completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Naming {
    Required,
    OrGenerated,
}

/// [`parse_documents`], with the naming rule given.
pub fn parse_documents_named(source: SourceFile, naming: Naming, diagnostics: &mut Diagnostics) -> Vec<Document> {
    let mut documents = Vec::new();
    each_document_named(source, naming, diagnostics, |document| documents.push(document));
    documents
}

/// [`parse_documents_named`] one document at a time: `each` gets the documents it returns, in order, each
/// as soon as it is read, so a caller that keeps only what it needs of each never holds the file's trees.
pub fn each_document_named(
    source: SourceFile,
    naming: Naming,
    diagnostics: &mut Diagnostics,
    each: impl FnMut(Document),
) {
    each_document_in(source, naming, diagnostics, each);
}

/// [`each_document_named`], saying whether the text read as YAML throughout (`false`: a YAML error was
/// reported, and the stream may have stopped there), which a reader of windows ([`super::streamed`])
/// needs to know.
pub(crate) fn each_document_in(
    source: SourceFile,
    naming: Naming,
    diagnostics: &mut Diagnostics,
    mut each: impl FnMut(Document),
) -> bool {
    let mut clean = true;
    let source = Arc::new(source);
    yaml::parse_stream_each(source.text(), &Limits::PACKAGE, |parsed| {
        match parsed {
            Ok(parsed) if parsed.value.is_null() => {}
            // A Kustomization is not a resource, wherever it is written (see `super::kustomization`).
            Ok(parsed) if super::kustomization::is_kustomization(&parsed.value) => {
                // A Kustomization inside another file is judged without the package's meta.namespace.
                super::kustomization::check(&source, &parsed.value, &parsed.marks, None, diagnostics);
            }
            Ok(parsed) => {
                let objects = match list::flatten(parsed.value, parsed.marks) {
                    Ok(objects) => objects,
                    Err(error) => {
                        let start = error.at.start;
                        diagnostics.push(
                            Diagnostic::new(Code::NotAnObject, format!("document is not a Kubernetes object: {error}"))
                                .at(source.locate_line(start.line as usize, start.column as usize)),
                        );
                        return ControlFlow::Continue(());
                    }
                };
                for (value, marks) in objects {
                    let document = Document { source: Arc::clone(&source), value, marks };
                    match object_problem(&document.value, naming) {
                        Some((problem, path)) => diagnostics.push(
                            Diagnostic::new(
                                Code::NotAnObject,
                                format!("document is not a Kubernetes object: {problem}"),
                            )
                            .at(document.locate(path)),
                        ),
                        None => each(document),
                    }
                }
            }
            Err(error) => {
                clean = false;
                diagnostics.push(yaml_diagnostic(&source, &error));
            }
        }
        ControlFlow::Continue(())
    });
    clean
}

/// What keeps a value from being a Kubernetes object, if anything, and the key path to point at.
fn object_problem(value: &Value, naming: Naming) -> Option<(&'static str, &'static [&'static str])> {
    let Some(map) = value.as_mapping() else { return Some(("it is not a mapping", &[])) };
    if !map.get("apiVersion").is_some_and(Value::is_string) {
        return Some(("apiVersion is missing or not a string", &["apiVersion"]));
    }
    if !map.get("kind").is_some_and(Value::is_string) {
        return Some(("kind is missing or not a string", &["kind"]));
    }
    // A list (`kind: List`, `ConfigMapList`) without `items` and without a name: it was meant as a
    // list, and lists stand for their items (`kix_kube::list`), so say that rather than ask for metadata.
    let kind = map.get("kind").and_then(Value::as_str).unwrap_or_default();
    let named = map.get("metadata").and_then(|m| m.get("name")).is_some_and(Value::is_string);
    if kind.ends_with("List") && !named {
        return Some((
            "it is a list without `items` (a list stands for its items; write `items: []` for none)",
            &["kind"],
        ));
    }
    let Some(metadata) = map.get("metadata").and_then(Value::as_mapping) else {
        return Some(("metadata is missing or not a mapping", &["metadata"]));
    };
    let generated = metadata.get("generateName").and_then(Value::as_str).is_some_and(|g| !g.is_empty());
    match metadata.get("name").and_then(Value::as_str) {
        Some(name) if !name.is_empty() => None,
        _ if generated && naming == Naming::OrGenerated => None,
        _ if generated => Some((
            "metadata.name is missing: it has a generateName, which only `kubectl create` completes, and kix's output \
             is applied by name (kubectl apply, kustomize, Argo CD); give it a name",
            &["metadata", "generateName"],
        )),
        _ => Some(("metadata.name is missing or not a string", &["metadata", "name"])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(text: &str) -> (Vec<Document>, Diagnostics) {
        let mut diagnostics = Diagnostics::default();
        let documents = parse_documents(SourceFile::new("p/a.yaml", text.to_string()), &mut diagnostics);
        (documents, diagnostics)
    }

    #[test]
    fn splits_documents_and_keeps_start_lines() {
        let (documents, diagnostics) = docs(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n---\n# c\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
        );
        assert!(diagnostics.is_empty());
        assert_eq!(documents.len(), 2);
        assert_eq!(documents[1].location().line(), Some(8));
        assert_eq!(documents[1].name(), "b");
    }

    #[test]
    fn locates_nested_keys() {
        let (documents, _) = docs(
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: a}\n",
        );
        let location = documents[0].locate(&["spec", "selector"]);
        assert_eq!((location.line(), location.column()), (Some(8), Some(3)));
        let fallback = documents[0].locate(&["spec", "template", "spec"]);
        assert_eq!(fallback.line(), Some(6));
    }

    #[test]
    fn locates_keys_inside_sequence_items() {
        let (documents, _) = docs(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  containers:\n  - name: c\n    image: x\n  topologySpreadConstraints:\n    - topologyKey: k\n      maxSkew: 0\n",
        );
        let location = documents[0].locate_field("spec.topologySpreadConstraints[0].maxSkew");
        assert_eq!((location.line(), location.column()), (Some(11), Some(7)));
        let location = documents[0].locate_field("spec.containers[0].image");
        assert_eq!((location.line(), location.column()), (Some(8), Some(5)));
        // A key path that meets a list stops at the list's key.
        let location = documents[0].locate(&["spec", "containers", "image"]);
        assert_eq!((location.line(), location.column()), (Some(6), Some(3)));
    }

    #[test]
    fn lists_stand_for_their_items_and_merge_keys_apply() {
        let (documents, diagnostics) = docs(
            "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n---\ndefaults: &d {app: x}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels:\n    <<: *d\n    tier: web\n",
        );
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let names: Vec<&str> = documents.iter().map(Document::name).collect();
        assert_eq!(names, ["a", "b", "c"]);
        // Each item of a List is located at its own lines.
        let starts: Vec<Option<usize>> = documents.iter().map(|d| d.location().line()).collect();
        assert_eq!(starts, [Some(4), Some(7), Some(11)]);
        assert_eq!(documents[1].locate(&["metadata", "name"]).line(), Some(9));
        assert_eq!(documents[2].value["metadata"]["labels"]["app"], "x");
        assert!(documents[2].value["metadata"]["labels"].get("<<").is_none());
    }

    #[test]
    fn syntax_errors_point_at_the_file_line() {
        let (_, diagnostics) = docs("apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n---\nkey: [unclosed\n");
        let diagnostic = diagnostics.iter().next().unwrap();
        assert_eq!(diagnostic.code, Code::YamlSyntax);
        // The parser notices at the end of the stream (line 7); kix points where the sequence opened.
        let location = diagnostic.location().unwrap();
        assert_eq!((location.line(), location.column()), (Some(6), Some(6)));
        assert!(diagnostic.message.contains("unclosed flow sequence"), "{}", diagnostic.message);
    }

    #[test]
    fn tabs_get_a_plain_message() {
        let (_, diagnostics) = docs("apiVersion: v1\nkind: Service\nmetadata:\n\tname: a\n");
        let diagnostic = diagnostics.iter().next().unwrap();
        assert_eq!(diagnostic.message, "invalid YAML: tabs cannot be used for indentation");
        let location = diagnostic.location().unwrap();
        assert_eq!((location.line(), location.column()), (Some(4), Some(1)));
        // Told from the text at the error, not from saphyr's wording: a tab after the indentation
        // (inside a value) is not an indentation tab, whatever the error there is.
        let (_, diagnostics) = docs("apiVersion: v1\nkind: Service\nmetadata:\n  name: a\tb: c\n");
        let diagnostic = diagnostics.iter().next().unwrap();
        assert_eq!(diagnostic.code, Code::YamlSyntax);
        assert_ne!(diagnostic.message, "invalid YAML: tabs cannot be used for indentation");
        assert!(diagnostic.help.is_none());
    }

    #[test]
    fn field_paths_with_indices_point_at_the_item() {
        let (documents, _) = docs(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  containers:\n  - name: c\n  - name: d\n    image: {repo: x}\n",
        );
        let location = documents[0].locate_field("spec.containers[1].image.repo");
        assert_eq!((location.line(), location.column()), (Some(9), Some(13)));
        let location = documents[0].locate_field("spec.containers[1]");
        assert_eq!((location.line(), location.column()), (Some(8), Some(5)));
    }

    #[test]
    fn duplicate_keys_and_non_objects_are_refused() {
        let (_, diagnostics) = docs("apiVersion: v1\napiVersion: v2\nkind: X\nmetadata: {name: a}\n");
        assert_eq!(diagnostics.iter().next().unwrap().code, Code::YamlSyntax);
        let (_, diagnostics) = docs("- a\n- b\n");
        assert_eq!(diagnostics.iter().next().unwrap().code, Code::NotAnObject);
    }

    #[test]
    fn alias_bombs_are_refused() {
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x]\n");
        let mut previous = 'a';
        for name in 'b'..='k' {
            bomb.push_str(&format!("{name}: &{name} [*{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}]\n"));
            previous = name;
        }
        let (documents, diagnostics) = docs(&bomb);
        assert!(documents.is_empty());
        assert_eq!(diagnostics.iter().next().unwrap().code, Code::InputRefused, "{diagnostics:?}");
    }
}
