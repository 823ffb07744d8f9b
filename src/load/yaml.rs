//! YAML documents: splitting multi-document files, parsing with limits, and
//! finding the line of a key so diagnostics can point into the user's file.
//!
//! Files are split at document markers (`---`, `...` at column 0) before
//! parsing, so every document knows the line it starts on. serde_yaml already
//! refuses duplicate keys, recursion deeper than 128 and runaway alias
//! expansion ("billion laughs"); kix adds a nesting cap of [`MAX_DEPTH`] and
//! reports all of these as located diagnostics.

use crate::diag::{Code, Diagnostic, Diagnostics, Location, SourceFile};
use serde_yaml::Value;
use std::rc::Rc;

/// Deepest nesting kix accepts in a document (real manifests stay under 20).
pub const MAX_DEPTH: usize = 64;

/// One Kubernetes object as the user wrote it.
#[derive(Clone, Debug)]
pub struct Document {
    pub source: Rc<SourceFile>,
    /// 1-based line of the document's first line in the file.
    pub start_line: usize,
    /// The document's text (for locating keys).
    text_range: std::ops::Range<usize>,
    pub value: Value,
}

impl Document {
    /// `apiVersion`, `kind` and `metadata.name`; checked present at parse time.
    pub fn api_version(&self) -> &str {
        self.value.get("apiVersion").and_then(Value::as_str).unwrap_or_default()
    }

    pub fn kind(&self) -> &str {
        self.value.get("kind").and_then(Value::as_str).unwrap_or_default()
    }

    pub fn name(&self) -> &str {
        self.value.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or_default()
    }

    /// The API group (`apps` of `apps/v1`, empty for the core group).
    pub fn group(&self) -> &str {
        api_group(self.api_version())
    }

    /// Where the document starts.
    pub fn location(&self) -> Location {
        self.source.locate_line(self.start_line, 1)
    }

    /// Where a key path (`["spec", "selector"]`) is written, falling back to the
    /// deepest ancestor found and then to the document start. Block-style YAML
    /// only; flow-style mappings fall back.
    pub fn locate(&self, path: &[&str]) -> Location {
        let text = &self.source.text[self.text_range.clone()];
        let mut best = None;
        let mut search_from = 0usize;
        let mut parent_indent: Option<usize> = None;
        let lines: Vec<&str> = text.lines().collect();
        'path: for key in path {
            let mut i = search_from;
            while i < lines.len() {
                let line = lines[i];
                let trimmed = line.trim_start();
                let indent = line.len() - trimmed.len();
                if !trimmed.is_empty() && !trimmed.starts_with('#') {
                    if let Some(parent) = parent_indent {
                        // Compact sequences (`containers:` then `- name:` at the same indent) stay inside.
                        let compact_item = indent == parent && trimmed.starts_with('-');
                        if indent <= parent && !compact_item && i > search_from {
                            break 'path;
                        }
                    }
                    // A key may open a sequence item (`- maxSkew: 0`): look past the dash.
                    let item = trimmed.trim_start_matches(['-', ' ']);
                    let key_indent = indent + (trimmed.len() - item.len());
                    let key_here = item.strip_prefix(key).is_some_and(|rest| rest.starts_with(':'))
                        || item.strip_prefix(&format!("\"{key}\"")).is_some_and(|rest| rest.starts_with(':'));
                    if key_here && parent_indent.is_none_or(|parent| key_indent > parent) {
                        best = Some((i, key_indent));
                        parent_indent = Some(key_indent);
                        search_from = i + 1;
                        continue 'path;
                    }
                }
                i += 1;
            }
            break;
        }
        match best {
            Some((i, indent)) => self.source.locate_line(self.start_line + i, indent + 1),
            None => self.location(),
        }
    }
}

/// The API group of an `apiVersion` (`apps` of `apps/v1`, empty for the core group's `v1`).
pub fn api_group(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

/// Splits a file into documents and parses each; problems become diagnostics.
pub fn parse_documents(source: SourceFile, diagnostics: &mut Diagnostics) -> Vec<Document> {
    let source = Rc::new(source);
    let mut documents = Vec::new();
    for (start_line, range) in split(&source.text) {
        let text = &source.text[range.clone()];
        if text.lines().all(|l| {
            let t = l.trim();
            t.is_empty() || t.starts_with('#') || t == "---" || t == "..." || t.starts_with("--- #")
        }) {
            continue;
        }
        let value: Value = match serde_yaml::from_str(text) {
            Ok(value) => value,
            Err(error) => {
                diagnostics.push(yaml_error(&source, start_line, text, &error));
                continue;
            }
        };
        let mut document = Document { source: Rc::clone(&source), start_line, text_range: range, value };
        if value_depth(&document.value) > MAX_DEPTH {
            diagnostics.push(
                Diagnostic::new(Code::InputRefused, format!("document is nested deeper than {MAX_DEPTH} levels"))
                    .at(document.location()),
            );
            continue;
        }
        if document.value.is_null() {
            continue;
        }
        // YAML merge keys (`<<: *defaults`), which kubectl applies, are applied here too.
        if let Err(error) = document.value.apply_merge() {
            diagnostics.push(
                Diagnostic::new(Code::YamlSyntax, format!("invalid YAML merge key: {error}")).at(document.location()),
            );
            continue;
        }
        // A `v1 List` (what `kubectl get -o yaml` prints) stands for its items.
        let is_list = document.value.get("kind").and_then(Value::as_str) == Some("List")
            && document.value.get("apiVersion").and_then(Value::as_str) == Some("v1");
        let objects = match document.value.get("items").and_then(Value::as_sequence) {
            Some(items) if is_list => items.clone(),
            _ if is_list => {
                diagnostics.push(
                    Diagnostic::new(Code::NotAnObject, "a v1 List needs an `items` list")
                        .at(document.locate(&["items"])),
                );
                continue;
            }
            _ => vec![std::mem::take(&mut document.value)],
        };
        for value in objects {
            let object = Document { value, ..document.clone() };
            if let Some((problem, path)) = object_problem(&object.value) {
                let at = if is_list { object.locate(&["items"]) } else { object.locate(path) };
                diagnostics.push(
                    Diagnostic::new(Code::NotAnObject, format!("document is not a Kubernetes object: {problem}"))
                        .at(at),
                );
                continue;
            }
            documents.push(object);
        }
    }
    documents
}

/// serde_yaml reports a duplicate key without a position: find the key's second
/// occurrence at one indentation (0-based line within the document, 1-based column).
fn duplicate_key_line(text: &str, message: &str) -> Option<(usize, usize)> {
    let key = message.split("duplicate entry with key \"").nth(1)?.split('"').next()?;
    let mut seen_at_indent = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start_matches([' ', '-']);
        let indent = line.len() - trimmed.len();
        let is_key = trimmed.strip_prefix(key).is_some_and(|rest| rest.starts_with(':'));
        if is_key {
            if seen_at_indent.contains(&indent) {
                return Some((index, indent + 1));
            }
            seen_at_indent.push(indent);
        }
    }
    None
}

/// What keeps a value from being a Kubernetes object, if anything, and the key path to point at.
fn object_problem(value: &Value) -> Option<(&'static str, &'static [&'static str])> {
    let Some(map) = value.as_mapping() else { return Some(("it is not a mapping", &[])) };
    if !map.get("apiVersion").is_some_and(Value::is_string) {
        return Some(("apiVersion is missing or not a string", &["apiVersion"]));
    }
    if !map.get("kind").is_some_and(Value::is_string) {
        return Some(("kind is missing or not a string", &["kind"]));
    }
    let Some(metadata) = map.get("metadata").and_then(Value::as_mapping) else {
        return Some(("metadata is missing or not a mapping", &["metadata"]));
    };
    match metadata.get("name").and_then(Value::as_str) {
        Some(name) if !name.is_empty() => None,
        _ => Some(("metadata.name is missing or not a string (generateName is not supported)", &["metadata", "name"])),
    }
}

/// One located diagnostic for a YAML parse error. libyaml reports where it noticed the problem
/// and, for unclosed constructs, where the construct started ("while parsing a flow mapping at
/// line 7"); the start is where the mistake is, so kix points there. Line numbers in the message
/// are the document's; kix turns them into the file's.
fn yaml_error(source: &SourceFile, start_line: usize, text: &str, error: &serde_yaml::Error) -> Diagnostic {
    let full = error.to_string();
    let file_line = |document_line: usize| start_line + document_line - 1;
    let (problem, context) = match full.split_once(", while ") {
        Some((problem, context)) => (problem.to_string(), Some(context.to_string())),
        None => (full.clone(), None),
    };
    let problem = problem.split(" at line ").next().unwrap_or(&problem).to_string();
    if problem.contains("repetition limit exceeded") {
        let alias_line = text.lines().position(|l| l.contains('*')).map_or(start_line, |i| start_line + i);
        return Diagnostic::new(
            Code::InputRefused,
            "YAML aliases expand past kix's limit (a \"billion laughs\" document); refused",
        )
        .at(source.locate_line(alias_line, 1));
    }
    if problem.contains("recursion limit exceeded") {
        return Diagnostic::new(Code::InputRefused, "YAML document is nested deeper than 128 levels; refused")
            .at(source.locate_line(start_line, 1));
    }
    if let Some((line, column)) = duplicate_key_line(text, &problem) {
        return Diagnostic::new(Code::YamlSyntax, format!("invalid YAML: {problem}"))
            .at(source.locate_line(start_line + line, column));
    }
    // Where the construct started, when libyaml says; else where it noticed.
    let context_at = context.as_deref().and_then(line_column);
    let (message, location) = match (context_at, &context) {
        (Some((line, column)), Some(context)) => {
            let what = context.split(" at line ").next().unwrap_or(context);
            (format!("invalid YAML: {problem} ({what} that starts here)"), source.locate_line(file_line(line), column))
        }
        _ => match error.location() {
            Some(at) => (format!("invalid YAML: {problem}"), source.locate_line(file_line(at.line()), at.column())),
            None => (format!("invalid YAML: {problem}"), source.locate_line(start_line, 1)),
        },
    };
    let tab_indented = location
        .snippet
        .as_deref()
        .is_some_and(|line| line.trim_end().starts_with(|c: char| c.is_whitespace()) && line.contains('\t'));
    if tab_indented {
        return Diagnostic::new(Code::YamlSyntax, "invalid YAML: tabs cannot be used for indentation")
            .at(location)
            .help("indent with spaces");
    }
    Diagnostic::new(Code::YamlSyntax, message).at(location)
}

/// The `line L column C` a libyaml message mentions.
fn line_column(text: &str) -> Option<(usize, usize)> {
    let rest = text.split(" at line ").nth(1)?;
    let (line, rest) = rest.split_once(" column ")?;
    let column: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some((line.trim().parse().ok()?, column.parse().ok()?))
}

fn value_depth(value: &Value) -> usize {
    // Iterative, so a deep document cannot overflow the stack here.
    let mut deepest = 0;
    let mut stack = vec![(value, 1usize)];
    while let Some((value, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        match value {
            Value::Sequence(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
            Value::Mapping(map) => stack.extend(map.values().map(|v| (v, depth + 1))),
            Value::Tagged(tagged) => stack.push((&tagged.value, depth + 1)),
            _ => {}
        }
    }
    deepest
}

/// Document ranges with their 1-based starting lines. A marker line (`---`,
/// optionally followed by a space and content, or `...`) ends the previous document.
fn split(text: &str) -> Vec<(usize, std::ops::Range<usize>)> {
    let mut documents = Vec::new();
    let mut start = 0;
    let mut start_line = 1;
    let mut offset = 0;
    for (index, line) in text.split_inclusive('\n').enumerate() {
        let bare = line.trim_end_matches(['\n', '\r']);
        let is_start = bare == "---" || bare.starts_with("--- ") || bare.starts_with("---\t");
        let is_end = bare == "..." || bare.starts_with("... ");
        if is_start || is_end {
            documents.push((start_line, start..offset));
            // The marker line belongs to the next document when it starts one with content (`--- |`).
            if is_start && bare.len() > 4 && !bare[4..].trim_start().starts_with('#') {
                start = offset;
                start_line = index + 1;
            } else {
                start = offset + line.len();
                start_line = index + 2;
            }
        }
        offset += line.len();
    }
    documents.push((start_line, start..text.len()));
    documents
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
        assert_eq!(documents[1].start_line, 8);
        assert_eq!(documents[1].name(), "b");
    }

    #[test]
    fn locates_nested_keys() {
        let (documents, _) = docs(
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: a}\n",
        );
        let location = documents[0].locate(&["spec", "selector"]);
        assert_eq!((location.line, location.column), (Some(8), Some(3)));
        let fallback = documents[0].locate(&["spec", "template", "spec"]);
        assert_eq!(fallback.line, Some(6));
    }

    #[test]
    fn locates_keys_inside_sequence_items() {
        let (documents, _) = docs(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  containers:\n  - name: c\n    image: x\n  topologySpreadConstraints:\n    - topologyKey: k\n      maxSkew: 0\n",
        );
        let location = documents[0].locate(&["spec", "topologySpreadConstraints", "maxSkew"]);
        assert_eq!((location.line, location.column), (Some(11), Some(7)));
        let location = documents[0].locate(&["spec", "containers", "image"]);
        assert_eq!((location.line, location.column), (Some(8), Some(5)));
    }

    #[test]
    fn lists_stand_for_their_items_and_merge_keys_apply() {
        let (documents, diagnostics) = docs(
            "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n---\ndefaults: &d {app: x}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels:\n    <<: *d\n    tier: web\n",
        );
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let names: Vec<&str> = documents.iter().map(Document::name).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(documents[2].value["metadata"]["labels"]["app"], "x");
        assert!(documents[2].value["metadata"]["labels"].get("<<").is_none());
    }

    #[test]
    fn syntax_errors_point_at_the_file_line() {
        let (_, diagnostics) = docs("apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n---\nkey: [unclosed\n");
        let diagnostic = diagnostics.iter().next().unwrap();
        assert_eq!(diagnostic.code, Code::YamlSyntax);
        // libyaml notices at the end of the stream (line 7); kix points where the sequence opened.
        let location = diagnostic.location.as_ref().unwrap();
        assert_eq!((location.line, location.column), (Some(6), Some(6)));
        assert!(diagnostic.message.contains("flow sequence that starts here"), "{}", diagnostic.message);
    }

    #[test]
    fn tabs_get_a_plain_message() {
        let (_, diagnostics) = docs("apiVersion: v1\nkind: Service\nmetadata:\n\tname: a\n");
        let diagnostic = diagnostics.iter().next().unwrap();
        assert_eq!(diagnostic.message, "invalid YAML: tabs cannot be used for indentation");
        assert_eq!(diagnostic.location.as_ref().unwrap().line, Some(4));
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
