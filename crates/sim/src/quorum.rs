//! What must keep running of a verified workload through a failure (issue 17): its own pods, or,
//! for a member of an availability group, the group's pods together; at least one of them
//! (`survive = "one"`), or more than half (`"majority"`). The scenarios judge running pods against it.

use super::verdict::Survive;
use super::world::World;

/// The workloads judged together (the verified one first) and how many of their pods must run.
#[derive(Clone, Debug)]
pub(super) struct Quorum {
    /// Indices into the world's workloads: the verified workload, then the other members of its group.
    pub members: Vec<usize>,
    /// The members' replicas added up.
    pub total: i64,
    /// The fewest running pods that keep the level: 1, or a majority of `total`.
    pub required: i64,
    pub survive: Survive,
    /// The group's name, when the workload is judged with one.
    pub group: Option<String>,
}

impl Quorum {
    pub fn new(members: Vec<usize>, total: i64, survive: Survive, group: Option<String>) -> Quorum {
        let required = match survive {
            Survive::One => 1,
            Survive::Majority => total / 2 + 1,
        };
        Quorum { members, total, required, survive, group }
    }

    /// A workload judged alone on one running pod: what verify promised before groups.
    pub fn is_plain(&self) -> bool {
        self.group.is_none() && self.survive == Survive::One
    }

    /// Whether pod `owner` is one of the quorum's.
    pub fn counts(&self, owner: usize) -> bool {
        self.members.contains(&owner)
    }

    /// The quorum's bound pods now.
    pub fn running(&self, world: &World<'_>) -> i64 {
        self.members.iter().map(|&m| world.owned_count(m)).sum()
    }

    /// `2 of 3 running, majority 2` (`2 of 3 running` under `survive = "one"`).
    pub fn figures(&self, running: i64) -> String {
        match self.survive {
            Survive::Majority => format!("{running} of {} running, majority {}", self.total, self.required),
            Survive::One => format!("{running} of {} running", self.total),
        }
    }
}
