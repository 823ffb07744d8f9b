//! kix's own YAML layer: one data model ([`Value`]), one located loader ([`parse_stream`]) and one
//! emitter ([`emit`]), replacing serde_yaml (archived upstream, and only able to report positions
//! inside its error text).
//!
//! The contract, in the order a file goes through it:
//!
//! * **Limits first.** [`parse_stream`] refuses text longer than [`Limits::max_bytes`], nesting
//!   deeper than [`Limits::max_depth`] and alias expansion past [`Limits::max_alias_nodes`], each
//!   as a located [`YamlError`]. The tree is built from saphyr-parser's events with an explicit
//!   stack, so no input can overflow the native stack.
//! * **One entry per document.** A stream yields one `Result` per YAML document; documents holding
//!   only comments or `---` are skipped. A semantic error (duplicate key, bad merge, undefined
//!   alias, limits) fails that document only; a syntax error ends the stream, because the parser
//!   cannot resynchronise, but the documents before it are still returned.
//! * **Scalars resolve exactly as kubectl resolves them**: go-yaml v2's YAML 1.1 rules under
//!   sigs.k8s.io/yaml (`yes`, `on`, `y` are true; `0644` is the octal 420; see [`resolve`]), and
//!   mapping keys are made strings as sigs.k8s.io/yaml makes them for JSON (`5432:` is `"5432"`).
//!   `tests/conformance/kubectl-yaml.tsv` holds the cases with upstream's answers, run through the
//!   loader and the fast reader. Quoted and block scalars are strings. The core tags `!!str`, `!!int`, `!!bool`, `!!null` and `!!float`
//!   are honoured on scalars, `!!map` and `!!seq` on collections. Any other tag (a local tag such
//!   as `!Ref`) is dropped: the node is read as if it were untagged. serde_yaml kept such nodes as
//!   `Value::Tagged`; no Kubernetes reader gives them meaning, so kix's model has no such variant.
//! * **Positions are real.** Every node's span comes from the parser's marks and is kept in a
//!   [`Marks`] tree parallel to the value: keys, values and sequence items, through flow and block
//!   styles alike. Lines and columns are 1-based and count characters; offsets count bytes.
//! * **Merge keys** (a plain `<<`) are applied at load time as go-yaml v2, and so kubectl, applies
//!   them: entries in document order, a later one replacing an earlier one (see [`load`]).
//!
//! * **A fast path for snapshots.** [`fast_stream`] reads the block YAML that `kubectl get -o yaml`
//!   and kix write (block mappings and sequences, single-line plain and quoted scalars, single-line
//!   flow collections, comments) straight into [`Value`]s, several times faster than
//!   [`parse_stream`] and without positions. It gives up on the whole text at anything outside that
//!   subset (anchors, aliases, tags, merge keys, block or multi-line scalars, complex keys,
//!   directives, duplicate keys, the limits, ...), and the caller then reads it with
//!   [`parse_stream`], so errors are always the located loader's. For text it accepts, its documents
//!   are exactly [`parse_stream`]'s (`fast.rs` gives the subset and how that is tested).
//!
//! [`from_value`] turns a [`Value`] into any `serde` type (k8s-openapi structs included) and
//! reports the path where a field failed, e.g. `spec.replicas: invalid type: string "3", expected
//! i32`.

mod de;
pub mod emit;
mod fast;
mod load;
mod mapping;
mod marks;
mod number;
pub mod resolve;
mod ser;
mod tree;
mod value;

pub use de::{DeError, from_value};
pub use fast::{FastRead, check_against_loader, fast_stream, fast_stream_each};
pub use load::{ParsedDocument, free_of_control_characters, parse_stream, parse_stream_each};
pub use marks::{EntryMarks, KeyText, Located, Marks, MarksKind, Seg};
pub use number::Number;
pub use tree::{Mapping, Value};

use std::fmt;

/// A position in the source text. Fields are `u32` (inputs are capped far below 4 GiB by
/// [`Limits`]), which keeps the position tree half the size it would be with `usize`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Mark {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters (not bytes): what an editor shows.
    pub column: u32,
    /// 0-based byte offset into the text, for slicing it.
    pub offset: u32,
}

impl fmt::Display for Mark {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// The source range of one node: `start` inclusive, `end` exclusive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    pub start: Mark,
    pub end: Mark,
}

/// The bounds a stream is read within. Both presets share the depth; they differ in size, because
/// the inputs they guard differ by two orders of magnitude.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Deepest nesting of collections accepted. Real manifests stay under 20 levels.
    pub max_depth: usize,
    /// Most nodes that alias expansion (`*name`) may produce in one document: what stops a
    /// "billion laughs" document from expanding a few lines into gigabytes.
    pub max_alias_nodes: usize,
    /// Longest text accepted, in bytes.
    pub max_bytes: usize,
}

impl Limits {
    /// Package manifests written by people: 16 MiB is far above any real manifest and far below
    /// memory trouble; 64 levels of nesting is three times what Kubernetes objects need; 100,000
    /// nodes through aliases leaves room for generous use of anchors and merge keys while capping
    /// expansion at a few megabytes of values.
    pub const PACKAGE: Limits = Limits { max_depth: 64, max_alias_nodes: 100_000, max_bytes: 16 * 1024 * 1024 };

    /// Cluster snapshots (`kubectl get -o yaml` of a whole cluster): 256 MiB holds the objects of a
    /// 5,000-node cluster with room to spare. kubectl never writes aliases, so 1,000,000 expanded
    /// nodes is only a guard, not a budget anyone approaches.
    pub const SNAPSHOT: Limits = Limits { max_depth: 64, max_alias_nodes: 1_000_000, max_bytes: 256 * 1024 * 1024 };
}

/// What went wrong while reading YAML, as a stable kind callers can match on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum YamlErrorKind {
    /// The text is not YAML (unclosed quote or bracket, bad indentation, tabs, ...).
    Syntax,
    /// The same key twice in one mapping.
    DuplicateKey,
    /// `*name` without an earlier `&name` in the document.
    UndefinedAlias,
    /// Aliases expand past [`Limits::max_alias_nodes`].
    AliasLimit,
    /// Collections nested deeper than [`Limits::max_depth`].
    DepthLimit,
    /// The text is longer than [`Limits::max_bytes`].
    SizeLimit,
    /// A `<<` whose value is not a mapping or a sequence of mappings.
    InvalidMerge,
    /// A scalar whose explicit tag (`!!int`, `!!bool`, ...) does not fit its text.
    InvalidTaggedScalar,
    /// A prefixed integer (`0x`, `0o`, `0b`) wider than 64 bits.
    IntegerOutOfRange,
    /// A null or collection as a mapping key: sigs.k8s.io/yaml, and so kubectl, cannot make it a
    /// JSON key ("unsupported map key").
    UnsupportedKey,
}

/// One located YAML problem.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message} at line {} column {}", mark.line, mark.column)]
pub struct YamlError {
    pub kind: YamlErrorKind,
    pub mark: Mark,
    /// Plain English, without the position (that is in `mark`).
    pub message: String,
}

impl YamlError {
    pub(crate) fn new(kind: YamlErrorKind, mark: Mark, message: impl Into<String>) -> YamlError {
        YamlError { kind, mark, message: message.into() }
    }
}

/// Reads one YAML document (the first of the text; `Null` when there is none) within
/// [`Limits::PACKAGE`]: for tests and small inputs that need no positions.
pub fn from_str(text: &str) -> Result<Value, YamlError> {
    match parse_stream(text, &Limits::PACKAGE).into_iter().next() {
        Some(document) => document.map(|d| d.value),
        None => Ok(Value::Null),
    }
}

/// Reads every document of a stream within [`Limits::SNAPSHOT`] (empty ones skipped), without
/// positions; the first problem fails the whole stream.
pub fn from_str_all(text: &str) -> Result<Vec<Value>, YamlError> {
    let mut values = Vec::new();
    for document in parse_stream(text, &Limits::SNAPSHOT) {
        let value = document?.value;
        if !value.is_null() {
            values.push(value);
        }
    }
    Ok(values)
}
