//! [`Marks`]: where each node of a document was written, as a tree parallel to its [`Value`].
//!
//! Every node has a [`Span`]. A mapping keeps, per entry and in the value's entry order, the key's
//! text (for string keys), the key's span and the value's marks; a sequence keeps each item's
//! marks. Nodes produced by an alias carry the marks of what the anchor wrote (their root has the
//! alias's own span), and merged entries (`<<`) point where they were written.
//!
//! [`Marks::locate`] answers "where is `spec.template.spec.containers[0].image`?" with the deepest
//! node found along the path: the KEY of a `Seg::Key` (that is what a diagnostic underlines), the
//! item of a `Seg::Index`, and `exact: false` when the path left the document early.
//!
//! [`Value`]: super::Value

use super::Span;

/// One step of a path into a document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// The answer of [`Marks::locate`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Located {
    pub span: Span,
    /// Whether the whole path was found (else `span` is the deepest ancestor's).
    pub exact: bool,
}

/// The positions of one node and its children.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Marks {
    pub span: Span,
    pub kind: MarksKind,
}

/// The children of a node's [`Marks`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MarksKind {
    Scalar,
    Sequence(Vec<Marks>),
    Mapping(Vec<EntryMarks>),
}

/// One mapping entry's positions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryMarks {
    /// The key's text when it is a string (the only keys a path can name).
    pub key_text: Option<KeyText>,
    pub key: Span,
    pub value: Marks,
}

/// A key's text, kept inline when short (as nearly all Kubernetes keys are), so recording keys
/// for [`Marks::locate`] costs no allocation per key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyText {
    Inline { len: u8, bytes: [u8; KeyText::INLINE] },
    Heap(Box<str>),
}

impl KeyText {
    const INLINE: usize = 30;

    pub fn new(text: &str) -> KeyText {
        if text.len() <= KeyText::INLINE {
            let mut bytes = [0; KeyText::INLINE];
            bytes[..text.len()].copy_from_slice(text.as_bytes());
            KeyText::Inline { len: text.len() as u8, bytes }
        } else {
            KeyText::Heap(text.into())
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            // Always a whole `&str` copied in `new`, so always UTF-8.
            KeyText::Inline { len, bytes } => std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default(),
            KeyText::Heap(text) => text,
        }
    }
}

impl Marks {
    pub(crate) fn scalar(span: Span) -> Marks {
        Marks { span, kind: MarksKind::Scalar }
    }

    /// The marks of one entry's value, by key text.
    pub fn entry(&self, key: &str) -> Option<&EntryMarks> {
        match &self.kind {
            MarksKind::Mapping(entries) => {
                entries.iter().find(|e| e.key_text.as_ref().is_some_and(|k| k.as_str() == key))
            }
            _ => None,
        }
    }

    /// The marks of a sequence item.
    pub fn item(&self, index: usize) -> Option<&Marks> {
        match &self.kind {
            MarksKind::Sequence(items) => items.get(index),
            _ => None,
        }
    }

    /// The marks of the subtree at `path` (a List item, to make it its own document).
    pub fn sub(&self, path: &[Seg]) -> Option<&Marks> {
        path.iter().try_fold(self, |marks, seg| match *seg {
            Seg::Key(key) => marks.entry(key).map(|e| &e.value),
            Seg::Index(index) => marks.item(index),
        })
    }

    /// Where `path` is written: see the module docs.
    pub fn locate(&self, path: &[Seg]) -> Located {
        let mut marks = self;
        let mut span = self.span;
        for seg in path {
            match *seg {
                Seg::Key(key) => match marks.entry(key) {
                    Some(entry) => {
                        span = entry.key;
                        marks = &entry.value;
                    }
                    None => return Located { span, exact: false },
                },
                Seg::Index(index) => match marks.item(index) {
                    Some(item) => {
                        span = item.span;
                        marks = item;
                    }
                    None => return Located { span, exact: false },
                },
            }
        }
        Located { span, exact: true }
    }
}
