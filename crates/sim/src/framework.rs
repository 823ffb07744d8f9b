//! The scheduler framework's shared vocabulary, as the plugins and the cycle use it: a filter's
//! rejection and the score scale. It sits apart from the plugins so that InterPodAffinity (its own
//! file) and the filters of `plugins.rs` can share it without importing each other
//! (kubernetes/kubernetes `pkg/scheduler/framework/interface.go`: `Status`, `MaxNodeScore`).

/// `framework.MaxNodeScore`.
pub const MAX_SCORE: i64 = 100;

/// A failed filter: the plugin's reasons and whether preemption could ever help.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    pub reasons: Vec<String>,
    pub unresolvable: bool,
}

impl Rejection {
    pub(crate) fn one(reason: impl Into<String>, unresolvable: bool) -> Rejection {
        Rejection { reasons: vec![reason.into()], unresolvable }
    }

    /// The reasons as one line, as `kubectl describe` joins them.
    pub fn message(&self) -> String {
        self.reasons.join(", ")
    }
}
