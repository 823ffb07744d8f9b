//! Issue 19: whatever the tree or the output directory holds, nothing is lost. Inputs that are
//! not regular files are refused without being opened (the corpus cases `tests/bad/input-*` cover
//! the tree; here the paths given on the command line), and each output-directory hazard leaves
//! the previous output as it was.

use crate::support::*;
use std::path::Path;

fn mkfifo(path: &Path) {
    assert!(std::process::Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// `--state` naming a FIFO is one located error, not a build waiting for a writer forever.
#[test]
fn a_state_file_that_is_a_fifo_is_refused() {
    let t = Test::new().examples();
    let fifo = t.root().join("state.yaml");
    mkfifo(&fifo);
    t.args(["verify", "--cluster", "prod", "--state", "state.yaml"])
        .run()
        .status(1)
        .stderr_contains("not a regular file but a FIFO; kix reads only regular files");
}

/// `kix lint` given a directory holding a FIFO refuses it (it used to hang).
#[test]
fn lint_refuses_a_fifo_in_a_directory() {
    let t = Test::new().tree([("m/a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")]);
    mkfifo(&t.root().join("m/pipe.yaml"));
    t.args(["lint", "m"]).run().status(1).stderr_contains("not a regular file but a FIFO");
}
