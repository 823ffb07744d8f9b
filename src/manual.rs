//! What kix says about its commands beyond their flags: each command's exit status (printed by
//! `--help` after the options, and the EXIT STATUS section of its man page), the environment kix
//! reads, and examples; and the man pages themselves, one per command (`kix.1`, `kix-build.1`, ...,
//! `kix-init-package.1`), rendered by clap_mangen from the same clap definitions as `--help`, with
//! EXIT STATUS, ENVIRONMENT, EXAMPLES and SEE ALSO sections kix adds in roff.
//!
//! The exit codes are one convention across commands (see `commands/mod.rs`): 0 success (warnings
//! allowed), 1 findings or failure, 2 bad usage (clap's own code, kept for usage errors kix finds
//! itself). [`EXIT`] says per command what 0 and 1 mean there; a test keeps it covering every
//! command.

use clap::Command;
use roff::{Roff, bold, italic, roman};

/// Per command path (`"build"`, `"init package"`; `""` for kix itself): what exit statuses 0 and 1 mean.
pub const EXIT: &[(&str, &str, &str)] = &[
    ("", "the command succeeded (warnings allowed)", "findings or failure, as each command's page says"),
    (
        "build",
        "the output was written (warnings allowed)",
        "errors, warnings under --deny-warnings, or with --check an output directory that differs",
    ),
    ("check", "no errors (warnings allowed)", "errors, or warnings under --deny-warnings"),
    ("verify", "every workload meets its level", "a workload misses its level, or the compile failed"),
    (
        "audit",
        "every audited workload's running pods meet its level",
        "a workload's running placement fails its level, or the compile or snapshot failed",
    ),
    (
        "admission",
        "the cluster's admission policies would refuse no object of the snapshot",
        "they would refuse an object or a kix budget is missing, or the compile or snapshot failed",
    ),
    ("schedule", "the pod was placed", "the pod stays Pending, or an input could not be read"),
    ("simulate", "every replica was placed", "a replica stays Pending, or an input could not be read"),
    ("capacity", "the report was printed", "the compile failed"),
    ("lint", "no finding is an error", "a finding is an error, or an input could not be read"),
    ("completions", "the script was printed", "never"),
    (
        "init",
        "the file was written",
        "the file exists (init never overwrites) or cannot be written, or the input is invalid",
    ),
    ("init package", "DIR/kix.toml was written", "it exists, cannot be written, or a manifest is invalid"),
    (
        "init cluster",
        "clusters/NAME.toml was written",
        "it exists, cannot be written, the name is invalid, or the snapshot holds no Node",
    ),
    ("schema", "the schema was printed", "never"),
    ("man", "the page was printed or the pages written", "a page could not be written"),
    ("explain", "the explanation was printed", "the compile failed (with --instance)"),
];

/// Environment variables kix reads, for every page.
const ENVIRONMENT: &[(&str, &str)] = &[
    ("NO_COLOR", "when set and not empty, diagnostics are not coloured under --color auto (no-color.org)."),
    (
        "CLICOLOR_FORCE, FORCE_COLOR",
        "when set and not 0, diagnostics are coloured under --color auto even when stderr is not a terminal.",
    ),
    (
        "COLUMNS",
        "the width the tables of build, verify and capacity are fitted to; when unset, the terminal's width if stdout is one, else no limit (one line per row).",
    ),
    (
        "COMPLETE",
        "set by the shell completion script (kix completions) to ask kix for completions instead of running a command.",
    ),
];

/// Per command path: examples, each a command line and what it does.
const EXAMPLES: &[(&str, &[(&str, &str)])] = &[
    (
        "",
        &[
            ("kix build && kix verify", "compile every cluster into out/, then prove each workload meets its level"),
            ("kix man build", "the page of one command"),
        ],
    ),
    (
        "build",
        &[
            ("kix build", "write out/<cluster>/ for every cluster"),
            ("kix build --cluster prod --stdout | kubectl apply -f -", "one cluster's YAML stream"),
            (
                "kix build --check --diff",
                "in CI: fail, with a patch git apply accepts, when the committed out/ is stale",
            ),
        ],
    ),
    ("check", &[("kix check --deny-warnings", "compile without writing; warnings fail too")]),
    (
        "verify",
        &[
            ("kix verify --cluster prod", "prove prod's workloads on its node inventory"),
            (
                "kubectl get nodes,pods -A -o yaml > state.yaml && kix verify --cluster prod --state state.yaml",
                "prove them on the cluster's nodes as they are",
            ),
        ],
    ),
    (
        "audit",
        &[(
            "kubectl get nodes,pods,pdb,deploy,sts,rs -A -o yaml > state.yaml && kix audit --cluster prod --state state.yaml",
            "judge today's pods against their levels",
        )],
    ),
    (
        "admission",
        &[(
            "kubectl get deploy,sts,hpa,pdb,ns -A -o yaml > state.yaml && kix admission --cluster prod --state state.yaml",
            "what prod's admission policies would refuse today, before switching warn to deny",
        )],
    ),
    (
        "schedule",
        &[(
            "kix schedule --state state.yaml --pod pod.yaml",
            "where the scheduler would put one pod, and why not elsewhere",
        )],
    ),
    (
        "simulate",
        &[("kix simulate --state state.yaml out/prod/shop.yaml", "place every replica of the compiled workloads")],
    ),
    ("capacity", &[("kix capacity --cluster prod", "what each level costs against prod's allocatable")]),
    (
        "lint",
        &[
            ("kix lint manifests/", "placement mistakes in manifests kix did not write"),
            ("helm template chart | kix lint - --cluster prod", "a chart's output against prod's substrate"),
        ],
    ),
    (
        "completions",
        &[("source <(kix completions bash)", "in ~/.bashrc: complete commands, flags, cluster and instance names")],
    ),
    (
        "init",
        &[
            ("kix init package packages/web", "a kix.toml for the manifests already in packages/web"),
            ("kix init cluster prod --from-state nodes.yaml", "a cluster file from kubectl get nodes -o yaml"),
        ],
    ),
    ("init package", &[("kix init package packages/web", "write packages/web/kix.toml")]),
    (
        "init cluster",
        &[
            (
                "kubectl get nodes -o yaml > nodes.yaml && kix init cluster prod --from-state nodes.yaml",
                "capabilities and node pools from the real nodes",
            ),
            ("kix init cluster lab", "a commented template"),
        ],
    ),
    (
        "schema",
        &[("kix schema cluster > schemas/cluster.schema.json", "the schema a cluster file's #:schema line names")],
    ),
    (
        "man",
        &[
            ("kix man --out /usr/local/share/man/man1", "install every page"),
            ("kix man init cluster", "print one page"),
        ],
    ),
    (
        "explain",
        &[
            ("kix explain K0302", "what a diagnostic code means"),
            (
                "kix explain --cluster prod --instance shop",
                "how an instance got its level, replicas, spread and budget",
            ),
        ],
    ),
];

/// The command line with each command's exit status after its help (`--help` prints it last).
pub fn decorate(command: Command) -> Command {
    decorate_at(command, "")
}

fn decorate_at(mut command: Command, path: &str) -> Command {
    if let Some((_, zero, one)) = EXIT.iter().find(|(p, _, _)| *p == path) {
        command = command.after_help(format!("Exit status: 0 {zero}; 1 {one}; 2 bad usage."));
    }
    let names: Vec<String> = command.get_subcommands().map(|s| s.get_name().to_string()).collect();
    for name in names {
        let sub = if path.is_empty() { name.clone() } else { format!("{path} {name}") };
        command = command.mut_subcommand(&name, |s| decorate_at(s, &sub));
    }
    command
}

/// Every man page: (file name, roff), kix.1 first, then each command in definition order.
pub fn pages(command: Command) -> Vec<(String, String)> {
    let mut command = command.disable_help_subcommand(true);
    command.build();
    let mut pages = Vec::new();
    collect(&command, "", &mut pages);
    pages
}

fn collect(command: &Command, path: &str, pages: &mut Vec<(String, String)>) {
    pages.push(page(command, path));
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        let path = if path.is_empty() { sub.get_name().to_string() } else { format!("{path} {}", sub.get_name()) };
        collect(sub, &path, pages);
    }
}

/// One page: clap_mangen's title, name, synopsis, description, options and subcommands, then kix's sections.
fn page(command: &Command, path: &str) -> (String, String) {
    let man = clap_mangen::Man::new(command.clone())
        .source(format!("kix {}", env!("CARGO_PKG_VERSION")))
        .manual("kix manual");
    let mut out: Vec<u8> = Vec::new();
    let has_options = command.get_arguments().any(|a| !a.is_hide_set());
    // Writing to a Vec cannot fail.
    let _ = man.render_title(&mut out);
    let _ = man.render_name_section(&mut out);
    let _ = man.render_synopsis_section(&mut out);
    let _ = man.render_description_section(&mut out);
    if has_options {
        let _ = man.render_options_section(&mut out);
    }
    if command.get_subcommands().next().is_some() {
        let _ = man.render_subcommands_section(&mut out);
    }
    let mut roff = Roff::new();
    if let Some((_, zero, one)) = EXIT.iter().find(|(p, _, _)| *p == path) {
        roff.control("SH", ["EXIT STATUS"]);
        for (code, meaning) in
            [("0", *zero), ("1", *one), ("2", "bad usage: an unknown flag or value, a missing argument")]
        {
            roff.control("TP", []).text([bold(code)]).text([roman(meaning)]);
        }
    }
    roff.control("SH", ["ENVIRONMENT"]);
    for (name, meaning) in ENVIRONMENT {
        roff.control("TP", []).text([bold(*name)]).text([roman(*meaning)]);
    }
    if let Some((_, examples)) = EXAMPLES.iter().find(|(p, _)| *p == path) {
        roff.control("SH", ["EXAMPLES"]);
        for (line, what) in *examples {
            roff.control("TP", []).text([bold(*line)]).text([roman(*what)]);
        }
    }
    roff.control("SH", ["SEE ALSO"]);
    let mut see: Vec<String> = Vec::new();
    if path.is_empty() {
        see.extend(command.get_subcommands().filter(|s| !s.is_hide_set()).map(|s| format!("kix-{}(1)", s.get_name())));
    } else {
        see.push("kix(1)".to_string());
        if let Some((parent, _)) = path.rsplit_once(' ') {
            see.push(format!("kix-{}(1)", parent.replace(' ', "-")));
        }
    }
    let last = see.len().saturating_sub(1);
    for (index, reference) in see.iter().enumerate() {
        let (name, section) = reference.split_once('(').unwrap_or((reference, ""));
        roff.text([bold(name), roman(format!("({section}{}", if index == last { "" } else { "," }))]);
    }
    roff.control("PP", []);
    roff.text([roman("README.md of kix, and "), italic("kix explain"), roman(" for every diagnostic code.")]);
    let _ = roff.to_writer(&mut out);
    let name = if path.is_empty() { "kix".to_string() } else { format!("kix-{}", path.replace(' ', "-")) };
    (format!("{name}.1"), String::from_utf8_lossy(&out).into_owned())
}
