//! Reading the commands' input files into objects, with diagnostics that point at the file.
//!
//! A missing file is `K0101`, malformed YAML `K0104` (with line and column),
//! a document that is not an object (or an object kix cannot read) `K0105`.

use super::objects::{State, flatten_lists};
use crate::diag::{Code, Diagnostic, Diagnostics, Location, SourceFile};
use serde_yaml::Value;
use std::path::Path;

fn single(diagnostic: Diagnostic) -> Diagnostics {
    let mut d = Diagnostics::default();
    d.push(diagnostic);
    d
}

/// The largest state or manifest file the commands read (256 MiB): a snapshot of a
/// 5000-node cluster with its pods fits; anything larger is refused rather than risking memory.
pub const MAX_INPUT_BYTES: u64 = 256 * 1024 * 1024;

/// Reads a YAML stream; `v1 List`s are expanded into their items.
pub fn read_objects(path: &Path) -> Result<Vec<Value>, Diagnostics> {
    use std::io::Read;
    let cannot = |e: String| {
        single(Diagnostic::new(Code::Io, format!("cannot read {}: {e}", path.display())).at(Location::file(path)))
    };
    let file = std::fs::File::open(path).map_err(|e| cannot(e.to_string()))?;
    let mut bytes = Vec::new();
    file.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes).map_err(|e| cannot(e.to_string()))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(single(
            Diagnostic::new(
                Code::InputRefused,
                format!(
                    "{} is larger than kix's limit of {} MiB for state files",
                    path.display(),
                    MAX_INPUT_BYTES >> 20
                ),
            )
            .at(Location::file(path)),
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        single(
            Diagnostic::new(Code::InputRefused, format!("{} is not UTF-8 text: {e}", path.display()))
                .at(Location::file(path)),
        )
    })?;
    let source = SourceFile::new(path, text);
    let mut objects = Vec::new();
    for document in serde_yaml::Deserializer::from_str(&source.text) {
        match <Value as serde::Deserialize>::deserialize(document) {
            Ok(Value::Null) => {}
            Ok(value) => objects.push(value),
            Err(e) => {
                let location = match e.location() {
                    Some(l) => source.locate_line(l.line(), l.column()),
                    None => Location::file(path),
                };
                return Err(single(Diagnostic::new(Code::YamlSyntax, e.to_string()).at(location)));
            }
        }
    }
    flatten_lists(objects).map_err(|e| single(not_an_object(path, e)))
}

/// A `K0105` diagnostic at a file.
pub fn not_an_object(path: &Path, message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(Code::NotAnObject, message).at(Location::file(path))
}

/// Reads a state snapshot file.
pub fn read_state(path: &Path) -> Result<State, Diagnostics> {
    let objects = read_objects(path)?;
    State::from_objects_each(objects).map_err(|errors| {
        let mut diagnostics = Diagnostics::default();
        for e in errors {
            diagnostics.push(not_an_object(path, e));
        }
        diagnostics
    })
}
