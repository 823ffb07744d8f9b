//! The one error type of the API server's rules: a field path and a reason, never one string to
//! split. A leaf of its own, so the rules files and the module that runs them both use it and
//! neither imports the other.

use std::fmt;

/// One field the API server would refuse: where, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectError {
    /// The field path as the API server prints it (`spec.template.spec.topologySpreadConstraints[0].maxSkew`);
    /// empty for the object as a whole.
    pub path: String,
    /// Why, phrased to follow the path (`must be greater than zero`).
    pub reason: String,
}

impl fmt::Display for ObjectError {
    /// `path: reason`, or the reason alone for the whole object.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() { f.write_str(&self.reason) } else { write!(f, "{}: {}", self.path, self.reason) }
    }
}

impl std::error::Error for ObjectError {}
