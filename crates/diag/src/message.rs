//! [`Message`], a diagnostic's message as it is kept: the text a finding wrote, in an allocation of
//! exactly its length, and a fixed tail from the program's text that is not copied at all.
//!
//! A lint of a large stream holds tens of thousands of findings until they are sorted and printed (issue
//! 20: 14,336 on a 15 MB file); most of a lint message is the same sentence for every finding of its
//! code, after the names of the objects it is about. Kept as one `String`, each message cost `format!`'s
//! buffer (grown by doubling, and under mimalloc a shrink to at least half is done in place, so
//! `shrink_to_fit` gives nothing back). Compared, ordered and printed as the one text it is: a message in
//! two parts equals, sorts and prints as the same text in one part.

use serde::{Serialize, Serializer};
use std::cmp::Ordering;
use std::fmt;

/// A diagnostic's message: `head`, then `tail`.
#[derive(Clone)]
pub struct Message {
    head: Box<str>,
    tail: &'static str,
}

impl Message {
    /// A message written whole: copied into an allocation of its length.
    pub fn new(text: &str) -> Message {
        Message { head: Box::from(text), tail: "" }
    }

    /// A message of a written part and a fixed sentence after it (`"PodDisruptionBudget `x`"`, `" has no
    /// unhealthyPodEvictionPolicy, ..."`), the sentence not copied.
    pub fn in_parts(head: &str, tail: &'static str) -> Message {
        Message { head: Box::from(head), tail }
    }

    /// The text borrowed whole, when it is one part (a message written whole, the common case).
    pub(crate) fn as_one_part(&self) -> Option<&str> {
        self.tail.is_empty().then_some(&*self.head)
    }

    /// The two parts, in order.
    fn parts(&self) -> [&str; 2] {
        [&self.head, self.tail]
    }

    fn bytes(&self) -> impl Iterator<Item = u8> + '_ {
        self.head.bytes().chain(self.tail.bytes())
    }

    pub fn len(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `pattern` occurs in the text (across the two parts too).
    pub fn contains(&self, pattern: &str) -> bool {
        if self.tail.is_empty() { self.head.contains(pattern) } else { self.to_string().contains(pattern) }
    }

    pub fn starts_with(&self, prefix: &str) -> bool {
        self.to_string().starts_with(prefix)
    }
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.parts().iter().try_for_each(|part| f.write_str(part))
    }
}

/// As the text's own `Debug` (a quoted string), whatever its parts.
impl fmt::Debug for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_string(), f)
    }
}

impl PartialEq for Message {
    fn eq(&self, other: &Message) -> bool {
        self.len() == other.len() && self.bytes().eq(other.bytes())
    }
}

impl Eq for Message {}

/// As the texts order (`str`'s order is its bytes').
impl Ord for Message {
    fn cmp(&self, other: &Message) -> Ordering {
        self.bytes().cmp(other.bytes())
    }
}

impl PartialOrd for Message {
    fn partial_cmp(&self, other: &Message) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq<str> for Message {
    fn eq(&self, other: &str) -> bool {
        self.len() == other.len() && self.bytes().eq(other.bytes())
    }
}

impl PartialEq<&str> for Message {
    fn eq(&self, other: &&str) -> bool {
        *self == **other
    }
}

impl PartialEq<String> for Message {
    fn eq(&self, other: &String) -> bool {
        *self == **other
    }
}

impl From<String> for Message {
    fn from(text: String) -> Message {
        Message::new(&text)
    }
}

impl From<&String> for Message {
    fn from(text: &String) -> Message {
        Message::new(text)
    }
}

impl From<&str> for Message {
    fn from(text: &str) -> Message {
        Message::new(text)
    }
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A message in two parts is the same text as the one written whole: equal, ordered, printed,
    /// serialized and searched as it.
    #[test]
    fn parts_are_one_text() {
        let whole = Message::new("PodDisruptionBudget `a` has no policy");
        let split = Message::in_parts("PodDisruptionBudget `a`", " has no policy");
        assert_eq!(whole, split);
        assert_eq!(split, "PodDisruptionBudget `a` has no policy");
        assert_eq!(split.to_string(), whole.to_string());
        assert_eq!(format!("{split:?}"), format!("{:?}", "PodDisruptionBudget `a` has no policy"));
        assert_eq!(serde_json::to_string(&split).unwrap(), serde_json::to_string(&whole).unwrap());
        assert_eq!(split.len(), whole.len());
        assert!(split.contains("`a` has") && !split.contains("policy!"));
        assert!(split.starts_with("PodDisruptionBudget `a` h"));
        // Orders as the texts do, wherever the parts are cut.
        let texts = ["a", "ab", "abc", "abd", "b", "", "a b", "aa"];
        for a in texts {
            for b in texts {
                for cut in 0..=a.len() {
                    let tail: &'static str = Box::leak(a[cut..].to_string().into_boxed_str());
                    let parted = Message::in_parts(&a[..cut], tail);
                    assert_eq!(parted.cmp(&Message::new(b)), a.cmp(b), "{a:?} cut at {cut} against {b:?}");
                    assert_eq!(parted == Message::new(b), a == b);
                }
            }
        }
    }
}
