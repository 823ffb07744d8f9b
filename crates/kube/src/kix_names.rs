//! kix's own words on the objects and files it writes: its labels and annotations (`kix.dev/*` and the
//! `app.kubernetes.io/*` labels it adds), and the names of the files of a cluster's output directory
//! that are not an instance's. One definition each, in a leaf module every stage and the scheduler
//! model read, so no stage takes them from a later one.

/// Labels kix adds to every object it emits where the user has not written them (their value is the
/// user's).
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
pub const INSTANCE_LABEL: &str = "app.kubernetes.io/instance";
/// kix's own tracking label, always set to the instance's name (`kubectl apply --prune -l kix.dev/instance=NAME`).
pub const KIX_INSTANCE_LABEL: &str = "kix.dev/instance";
/// The label naming an availability group across instances on its members' pod templates (issue 17):
/// the group's spread and budget select on it.
pub const GROUP_LABEL: &str = "kix.dev/group";
/// Annotations kix puts on every workload: the level requested and the level resolved.
pub const REQUESTED_ANNOTATION: &str = "kix.dev/availability-requested";
pub const RESOLVED_ANNOTATION: &str = "kix.dev/availability-resolved";
/// kix's annotation on an availability group's members and on the group's budget (issue 17): its
/// value is the group's name. On `metadata`, never on pod templates (no restart); `kix lint` reads it
/// to tell a group's shared spread and budget from a selector that counts other workloads by mistake.
pub const GROUP_ANNOTATION: &str = "kix.dev/availability-group";
/// The annotation that accepts `kix lint`'s warnings on one object (`kix.dev/allow: "K0702,K0714"`).
pub const ALLOW_ANNOTATION: &str = "kix.dev/allow";

/// The file, beside the instances' files, that holds a cluster's shared objects. Instance names are
/// DNS-1123 labels, so no instance file can be called this.
pub const SHARED_FILE: &str = "_shared.yaml";

/// The cluster's Kustomization, beside the instances' files.
pub const KUSTOMIZATION_FILE: &str = "kustomization.yaml";

/// The file, beside the instances' files, that holds a cluster's admission policies, their bindings and
/// params (`[admission]`, issue 40). Like [`SHARED_FILE`], no instance file can be called this.
pub const ADMISSION_FILE: &str = "_admission.yaml";

/// The directory beside the output directory that holds kix's own state: the output manifest, the spare,
/// the lock and a build's staging (issue 41: never taken by a `git add -A` of a repository that commits
/// `out/`; kix writes a `.gitignore` of `*` into it).
pub const STATE_DIR: &str = ".kix";

/// Every file of a cluster's output directory that is not an instance's `<name>.yaml`.
pub const OUTPUT_FILES: &[&str] = &[SHARED_FILE, ADMISSION_FILE, KUSTOMIZATION_FILE];

/// The output file an instance named `name` would collide with (its `<name>.yaml` is one kix writes
/// itself, as `kustomization` would be), if any.
pub fn reserved_instance_name(name: &str) -> Option<&'static str> {
    OUTPUT_FILES.iter().copied().find(|file| file.strip_suffix(".yaml") == Some(name))
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_instance_named_like_an_output_file_is_reserved() {
        assert_eq!(super::reserved_instance_name("kustomization"), Some("kustomization.yaml"));
        assert_eq!(super::reserved_instance_name("shared"), None);
        assert_eq!(super::reserved_instance_name("shop"), None);
    }
}
