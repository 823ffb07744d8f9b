//! Reading the commands' input files into objects, with diagnostics that point at the file.
//!
//! A missing file is `K0101`, malformed YAML `K0104` (with line and column),
//! a document that is not an object (or an object kix cannot read) `K0105`.
//!
//! A problem with one object (a node without a name, a node listed twice, a
//! taint or toleration effect that is not valid, a value kix cannot read)
//! points at that object: at the offending field where kix can tell which it is
//! (the `effect` of a taint or toleration), else where the object starts, its
//! item of a list included. Positions come from the YAML loader's marks
//! ([`kix_yaml::Marks`]), in block and flow style alike; files are read
//! within [`Limits::SNAPSHOT`].

use super::snapshot::{State, StateReader, read_clean};
use kix_diag::source::{self, MAX_SNAPSHOT_BYTES, ReadError};
use kix_diag::{Code, Diagnostic, Diagnostics, Location, SourceFile};
use kix_kube::list;
use kix_kube::taints::Effect;
use kix_kube::value::at;
use kix_yaml::{self as yaml, Limits, Marks, Seg, Value};
use std::path::Path;

/// What the model could not read, each problem located in its file: the one place sim builds
/// [`kix_diag`] diagnostics (the shared diagnostics type), so that nothing else of sim needs to.
/// The caller converts it with `Diagnostics::from` and prints it.
#[derive(Clone, Debug, Default)]
pub struct InputError(Diagnostics);

impl InputError {
    /// Adds a problem about object `index` of `file` (see [`LocatedObjects::not_an_object`]).
    pub fn object(&mut self, file: &LocatedObjects, index: usize, message: impl Into<String>) {
        self.0.push(file.not_an_object(index, message));
    }

    /// Adds a problem about a whole file.
    pub fn file(&mut self, path: &Path, message: impl Into<String>) {
        self.0.push(not_an_object(path, message));
    }

    /// The manifests given to `kix simulate` hold no Deployment or StatefulSet: nothing to place.
    pub fn no_workloads(&mut self, manifests: &[std::path::PathBuf]) {
        let files: Vec<String> = manifests.iter().map(|p| p.display().to_string()).collect();
        let at = manifests.first().map_or_else(|| Location::file(""), Location::file);
        self.0.push(
            Diagnostic::new(
                Code::NothingToSimulate,
                format!(
                    "{} hold{} no Deployment or StatefulSet to place",
                    files.join(", "),
                    if files.len() == 1 { "s" } else { "" }
                ),
            )
            .at(at),
        );
    }

    pub fn extend(&mut self, other: InputError) {
        self.0.extend(other.0);
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<InputError> for Diagnostics {
    fn from(error: InputError) -> Diagnostics {
        error.0
    }
}

fn single(diagnostic: Diagnostic) -> InputError {
    let mut d = Diagnostics::default();
    d.push(diagnostic);
    InputError(d)
}

/// One object of an input file with the positions of its nodes.
#[derive(Clone, Debug)]
pub struct Located {
    pub value: Value,
    pub marks: Marks,
}

/// An input file's objects (lists expanded) with the text to point into.
#[derive(Clone, Debug)]
pub struct LocatedObjects {
    pub source: SourceFile,
    pub objects: Vec<Located>,
}

impl LocatedObjects {
    /// A `K0105` diagnostic about object `index`: at the field [`bad_field`] finds, else where the object starts.
    pub fn not_an_object(&self, index: usize, message: impl Into<String>) -> Diagnostic {
        let Some(object) = self.objects.get(index) else {
            return not_an_object(self.source.path(), message);
        };
        // The refused value itself, where there is one.
        let span = match bad_field(&object.value) {
            Some(path) => object.marks.sub(&path).map_or_else(|| object.marks.locate(&path).span, |m| m.span),
            None => object.marks.span,
        };
        let (start, end) = (span.start.offset as usize, span.end.offset as usize);
        Diagnostic::new(Code::NotAnObject, message.into()).at(self.source.locate(start..end))
    }
}

/// Reads a YAML stream (bounded, UTF-8) into objects with the positions of their nodes.
pub fn read_located(path: &Path) -> Result<LocatedObjects, InputError> {
    locate_objects(SourceFile::new(path, read_input(path)?))
}

/// Reads an input file's text (bounded, UTF-8).
fn read_input(path: &Path) -> Result<String, InputError> {
    source::read_text(path, MAX_SNAPSHOT_BYTES).map_err(|error| {
        let message = match &error {
            ReadError::TooLarge { .. } => {
                format!(
                    "{} is larger than kix's limit of {} MiB for state files",
                    path.display(),
                    MAX_SNAPSHOT_BYTES >> 20
                )
            }
            other => format!("{}: {other}", path.display()),
        };
        single(Diagnostic::new(error.code(), message).at(Location::file(path)))
    })
}

/// An input file's objects (lists expanded) with the positions of their nodes.
fn locate_objects(source: SourceFile) -> Result<LocatedObjects, InputError> {
    let path = source.path().to_path_buf();
    let path = path.as_path();
    let mut objects = Vec::new();
    for document in yaml::parse_stream(source.text(), &Limits::SNAPSHOT) {
        let document = document.map_err(|error| {
            let at = source.locate_line(error.mark.line as usize, error.mark.column as usize);
            single(Diagnostic::new(Code::YamlSyntax, error.message.clone()).at(at))
        })?;
        if document.value.is_null() {
            continue;
        }
        if !document.value.is_mapping() {
            return Err(single(not_an_object(path, "a document is not a mapping (a Kubernetes object)")));
        }
        let flat = list::flatten(document.value, document.marks).map_err(|error| {
            let at = source.locate(error.at.start.offset as usize..error.at.end.offset as usize);
            single(Diagnostic::new(Code::NotAnObject, error.to_string()).at(at))
        })?;
        for (value, marks) in flat {
            if !value.is_mapping() {
                return Err(single(not_an_object(path, "a document is not a mapping (a Kubernetes object)")));
            }
            objects.push(Located { value, marks });
        }
    }
    Ok(LocatedObjects { source, objects })
}

/// The field of an object that kix's readers refuse, when it is one kix can point at: a taint
/// effect (Nodes) or a toleration effect (Pods, workload templates) that is not valid.
fn bad_field(object: &Value) -> Option<Vec<Seg<'static>>> {
    let valid = |e: &str| Effect::parse(e).is_some();
    let lists: [&[&'static str]; 3] =
        [&["spec", "taints"], &["spec", "tolerations"], &["spec", "template", "spec", "tolerations"]];
    for path in lists {
        let tolerations = path.last() == Some(&"tolerations");
        for (index, entry) in at(object, path).and_then(Value::as_sequence).into_iter().flatten().enumerate() {
            let field = match entry.get("effect") {
                Some(Value::String(e)) if valid(e) || (tolerations && e.is_empty()) => continue,
                None | Some(Value::Null) if tolerations => continue,
                // A taint without an effect: point at the taint (its key).
                None | Some(Value::Null) => "key",
                Some(_) => "effect",
            };
            let mut segments: Vec<Seg<'static>> = path.iter().map(|key| Seg::Key(key)).collect();
            segments.extend([Seg::Index(index), Seg::Key(field)]);
            return Some(segments);
        }
    }
    None
}

/// A `K0105` diagnostic at a file.
pub fn not_an_object(path: &Path, message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(Code::NotAnObject, message.into()).at(Location::file(path))
}

/// Reads a state snapshot file (Nodes, Pods and PodDisruptionBudgets; pods in phase Succeeded or
/// Failed are left out, as the scheduler leaves them out); every object kix cannot read gets its
/// own located diagnostic.
///
/// A snapshot is first read one document at a time, each document converted and dropped at once
/// ([`read_clean`]): its generic tree never exists whole, which is most of the time and memory
/// of loading a big snapshot. On the first problem of any kind the file is read again whole, with
/// positions, and every problem is reported from there exactly as if there had been no first pass.
pub fn read_state(path: &Path) -> Result<State, InputError> {
    let text = read_input(path)?;
    if let Some(state) = read_clean(&text) {
        return Ok(state);
    }
    state_located(SourceFile::new(path, text))
}

/// [`read_state`] from the objects with their positions, every problem reported.
fn state_located(source: SourceFile) -> Result<State, InputError> {
    let file = locate_objects(source)?;
    let mut reader = StateReader::default();
    let mut errors = InputError::default();
    for (index, object) in file.objects.iter().enumerate() {
        if let Err(e) = reader.add(&object.value) {
            errors.object(&file, index, e);
        }
    }
    if errors.is_empty() { Ok(reader.finish()) } else { Err(errors) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn located(text: &str) -> LocatedObjects {
        let dir = std::env::temp_dir().join(format!("kix-input-{}-{}", std::process::id(), text.len()));
        std::fs::write(&dir, text).unwrap();
        let out = read_located(&dir).unwrap();
        let _ = std::fs::remove_file(&dir);
        out
    }

    fn line(file: &LocatedObjects, index: usize) -> Option<usize> {
        file.not_an_object(index, "x").location().and_then(|l| l.line())
    }

    #[test]
    fn objects_start_where_their_document_or_item_starts() {
        let file = located(
            "---\n# a\nkind: Node\n---\nkind: List\nitems:\n  - kind: Pod\n  - kind: Pod\n    x: |\n      - not an item\nother: 1\n",
        );
        assert_eq!(file.objects.len(), 3);
        assert_eq!((line(&file, 0), line(&file, 1), line(&file, 2)), (Some(3), Some(7), Some(8)));
    }

    #[test]
    fn flow_style_items_and_typed_lists_are_located_at_their_own_lines() {
        let file = located("kind: Node\n---\nkind: PodList\nitems: [{kind: Pod},\n  {kind: Pod}]\n");
        assert_eq!(file.objects.len(), 3);
        assert_eq!((line(&file, 1), line(&file, 2)), (Some(4), Some(5)));
    }

    #[test]
    fn the_streaming_read_gives_the_located_reads_state_or_leaves_the_problem_to_it() {
        let node = |name: &str| format!("kind: Node\nmetadata: {{name: {name}}}\n");
        let pod = "kind: Pod\nmetadata: {name: p}\nspec: {nodeName: b, containers: [{name: c}]}\n";
        let texts = [
            format!("{}---\n{}---\n{pod}", node("b"), node("a")),
            format!("kind: List\nitems:\n- {}", node("a").replace('\n', "\n  ")),
            format!("{}---\n# only a comment\n---\n{pod}---\nkind: ConfigMap\n", node("a")),
            // Outside the fast reader's subset (an anchor, a block scalar): the located loader reads them.
            format!("kind: Node\nmetadata: &m {{name: a}}\n---\n{pod}"),
            format!("{}---\nkind: ConfigMap\ndata:\n  x: |\n    text\n---\n{pod}", node("b")),
            // A problem anywhere: a node twice, a bad object, a bad list, not a mapping, bad YAML last.
            format!("{}---\n{}", node("a"), node("a")),
            format!("{}---\nkind: Node\n", node("a")),
            format!("{}---\nkind: List\nitems: 3\n", node("a")),
            format!("{}---\n- 1\n", node("a")),
            format!("{}---\nkind: Pod\nmetadata: {{name: [\n", node("a")),
        ];
        for (i, text) in texts.iter().enumerate() {
            let located = state_located(SourceFile::new("state.yaml", text.clone()));
            match read_clean(text) {
                Some(state) => assert_eq!(Some(state), located.ok(), "{text}"),
                None => assert!(located.is_err(), "{text}"),
            }
            assert_eq!(read_clean(text).is_some(), i < 5, "{text}");
            if i < 5 {
                assert_eq!(yaml::fast_stream(text, &Limits::SNAPSHOT).is_some(), i < 3, "{text}");
            }
        }
    }

    #[test]
    fn a_bad_taint_effect_is_pointed_at() {
        let file = located(
            "kind: Node\nmetadata: {name: n}\nspec:\n  taints:\n  - {key: a, effect: NoSchedule}\n  - {key: b, effect: Never}\n",
        );
        let location = file.not_an_object(0, "x").location().cloned().unwrap();
        assert_eq!((location.line(), location.column()), (Some(6), Some(22)));
    }
}
