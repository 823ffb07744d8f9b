//! One convention across commands (issue 24): `-q/--quiet` and `--color auto|always|never` are
//! accepted by every command, before or after it; quiet drops kix's own `kix: ...` summary lines
//! and build's table while diagnostics, reports and streams stay; colour follows `--color`, then
//! `NO_COLOR`, `CLICOLOR_FORCE` and `FORCE_COLOR` (the rule itself is table-tested in kix-diag's
//! render_tests.rs).

use crate::support::*;

/// Every command, run for real on the shipped examples (built, so lint has out/ to read).
const COMMANDS: &[&[&str]] = &[
    &["build"],
    &["build", "--stdout", "--cluster", "prod"],
    &["check"],
    &["verify", "--cluster", "staging"],
    &["lint", "out/prod"],
    &["explain", "K0302"],
    &["explain", "--cluster", "prod", "--instance", "shop"],
    &["schema", "cluster"],
    &["completions", "bash"],
    &["man"],
    &["init", "cluster", "lab"],
    &["schedule", "--state", "sim/three-zones.yaml", "--pod", "sim/web.yaml"],
    &["simulate", "--state", "sim/tainted.yaml", "sim/web.yaml"],
];

/// The shipped examples, built, with the scheduler model's inputs beside them (`sim/`).
fn examples() -> Test {
    let t = Test::new().examples();
    t.clone().args(["build"]).run().status(0);
    copy_tree(&repo_path("tests/sim"), &t.root().join("sim"));
    t
}

#[test]
fn quiet_and_color_are_accepted_by_every_command_and_quiet_drops_only_summary_lines() {
    for command in COMMANDS {
        let t = examples();
        let loud = t.clone().args(command.iter().copied()).run();
        let t = examples();
        let args: Vec<&str> = command.iter().copied().chain(["-q", "--color", "never"]).collect();
        let quiet = t.clone().args(args.iter().copied()).run();
        assert_eq!(quiet.status, loud.status, "{args:?}: {}", quiet.stderr);
        assert!(!quiet.stderr.lines().any(|l| l.starts_with("kix: ")), "{args:?} printed a summary: {}", quiet.stderr);
        let without_summaries: Vec<&str> = loud.stderr.lines().filter(|l| !l.starts_with("kix: ")).collect();
        assert_eq!(quiet.stderr.lines().collect::<Vec<_>>(), without_summaries, "{args:?}: only summaries go");
        if command[0] == "build" && command.len() == 1 {
            assert_eq!(quiet.stdout, "", "build -q prints no table");
            assert!(!loud.stdout.is_empty());
        } else {
            assert_eq!(quiet.stdout, loud.stdout, "{args:?}: reports and streams stay");
        }
        // Before the command too.
        let t = examples();
        let before: Vec<&str> = ["--quiet", "--color=always"].into_iter().chain(command.iter().copied()).collect();
        assert_eq!(t.args(before.iter().copied()).run().status, loud.status, "{before:?}");
    }
}

#[test]
fn color_follows_the_flag_then_no_color_then_clicolor_force_and_force_color() {
    const ESCAPE: char = '\x1b';
    // A warning to colour: the examples without their acknowledgements (support sets NO_COLOR=1).
    let t = Test::new().examples();
    let prod = t.root().join("clusters/prod.toml");
    let text = std::fs::read_to_string(&prod).unwrap();
    std::fs::write(&prod, text.replace("allow = [", "# allow = [")).unwrap();
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut test = t.clone().args(["check"].iter().chain(args).copied());
        for (k, v) in env {
            test = test.env(*k, *v);
        }
        let out = test.run().status(0);
        assert!(out.stderr.contains("warning["), "{}", out.stderr);
        out.stderr.contains(ESCAPE)
    };
    assert!(!run(&[], &[]), "NO_COLOR=1, not a terminal: plain");
    assert!(run(&["--color", "always"], &[]), "--color always beats NO_COLOR");
    assert!(!run(&["--color", "never"], &[("NO_COLOR", ""), ("FORCE_COLOR", "1")]), "--color never beats FORCE_COLOR");
    assert!(run(&[], &[("NO_COLOR", ""), ("CLICOLOR_FORCE", "1")]), "CLICOLOR_FORCE off a terminal");
    assert!(run(&[], &[("NO_COLOR", ""), ("FORCE_COLOR", "1")]), "FORCE_COLOR off a terminal");
    assert!(!run(&[], &[("NO_COLOR", ""), ("FORCE_COLOR", "0")]), "FORCE_COLOR=0 forces nothing");
    assert!(!run(&[], &[("FORCE_COLOR", "1"), ("CLICOLOR_FORCE", "1")]), "NO_COLOR wins over both");
    assert!(!run(&[], &[("NO_COLOR", "")]), "not a terminal: plain");
}
