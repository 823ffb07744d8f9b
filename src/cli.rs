//! The command line: raw flags as clap parses them.
//!
//! Each subcommand's arguments are plain data; `commands::run` turns them into
//! the engines' typed requests. Usage errors exit with 2
//! (clap's own convention), findings with 1.

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use clap_complete::ArgValueCompleter;
use std::path::PathBuf;

/// The command line as `--help`, completions and the man pages show it: the flags with each command's exit
/// status after them ([`crate::manual::decorate`]).
pub fn command() -> clap::Command {
    crate::manual::decorate(Cli::command())
}

/// Parses the process's arguments (printing help, the version or a usage error and exiting, as clap does).
pub fn parse() -> Cli {
    let matches = command().get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|error| error.exit())
}

/// kix: compile availability levels into Kubernetes placement, and prove it.
#[derive(Debug, Parser)]
#[command(name = "kix", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// No summary lines: build's table and kix's `kix: ...` lines on stderr (diagnostics, reports and
    /// streams are still printed).
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// When to colour diagnostics: auto (on a terminal; off under NO_COLOR, forced by CLICOLOR_FORCE or
    /// FORCE_COLOR), always, never.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,
}

/// `--color`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compile every cluster's instances into out/<cluster>/.
    Build(BuildArgs),
    /// Do everything build does, but write nothing.
    Check(SelectArgs),
    /// Compile, then prove each workload meets its level on a simulated scheduler.
    Verify(VerifyArgs),
    /// Judge the cluster as it runs: today's pods of every compiled workload against its level, with a
    /// simulated remedy for each that fails (snapshot: `kubectl get nodes,pods,pdb,deploy,sts,rs -A -o yaml`).
    Audit(AuditArgs),
    /// Evaluate the cluster's compiled admission policies (`[admission]`) against a snapshot: what they would
    /// refuse today, the dry run before switching `enforce` from "warn" to "deny" (snapshot:
    /// `kubectl get deploy,sts,hpa,pdb,ns -A -o yaml`, plus the kinds of the operators' resources kix compiles).
    Admission(AdmissionArgs),
    /// Run one scheduling cycle for one pod against a state snapshot.
    Schedule(ScheduleArgs),
    /// Place every replica of the given workloads, one pod at a time.
    Simulate(SimulateArgs),
    /// What each level costs per workload (requests at none, pod, node, zone), the totals against the
    /// inventory's allocatable, and what is left after the worst single domain loss.
    Capacity(CapacityArgs),
    /// Lint Kubernetes manifests kix did not write for placement mistakes.
    Lint(LintArgs),
    /// Print a shell completion script, e.g. `source <(kix completions bash)` in ~/.bashrc: it completes
    /// subcommands, flags, and the cluster and instance names of the kix root you are in.
    Completions {
        /// The shell to complete for.
        shell: clap_complete::Shell,
    },
    /// Start a kix root from what you have: a kix.toml for a directory of manifests, or a cluster file
    /// (from a snapshot of a real cluster's nodes).
    #[command(subcommand)]
    Init(InitCommand),
    /// Print the JSON Schema of a cluster file or of kix.toml (what editors' TOML language servers validate with),
    /// or of a command's `--format json` document (`kix schema verify`).
    Schema {
        /// Which file's or document's schema.
        #[arg(value_enum)]
        file: SchemaFile,
    },
    /// Print a man page (roff): kix's, or with a command that command's (`kix man build`, `kix man init
    /// cluster`); with --out, write every page (kix.1, kix-build.1, ...) into a directory.
    Man {
        /// The command whose page to print; default: kix's own.
        #[arg(value_name = "COMMAND", conflicts_with = "out")]
        command: Vec<String>,
        /// Write every page into this directory (e.g. /usr/local/share/man/man1) instead.
        #[arg(long, value_name = "DIR")]
        out: Option<std::path::PathBuf>,
    },
    /// Explain a diagnostic code (`kix explain K0302`; without one, list them all), or how an instance got its
    /// level, replicas, spread and budget (`kix explain --cluster prod --instance shop`).
    #[command(alias = "explain-code")]
    Explain(ExplainArgs),
}

#[derive(Clone, Debug, Subcommand)]
pub enum InitCommand {
    /// Write DIR/kix.toml listing every Deployment and StatefulSet of the manifests in DIR.
    Package {
        /// The package directory (its YAML files are read, nothing else is written).
        dir: PathBuf,
    },
    /// Write clusters/NAME.toml: from `kubectl get nodes -o yaml` output, or a commented template.
    Cluster {
        /// The cluster's name (a DNS-1123 label; the file's stem).
        name: String,
        /// A snapshot of the cluster's nodes to read capabilities, failure-domain keys and node pools from.
        #[arg(long, value_name = "STATE.yaml")]
        from_state: Option<PathBuf>,
        /// The kix root to write into; default: found as for build, else the current directory.
        #[arg(long)]
        root: Option<PathBuf>,
    },
}

#[derive(Clone, Debug, Args)]
pub struct ExplainArgs {
    /// The code to explain.
    #[arg(conflicts_with_all = ["cluster", "instance", "workload"])]
    pub code: Option<String>,
    /// The cluster of the instance to explain.
    #[arg(long, requires = "instance", add = ArgValueCompleter::new(crate::completion::cluster_names))]
    pub cluster: Option<String>,
    /// The instance to explain, step by step, each step with the file and line it came from.
    #[arg(long, requires = "cluster", add = ArgValueCompleter::new(crate::completion::instance_names))]
    pub instance: Option<String>,
    /// Only this workload of the instance.
    #[arg(long, requires = "instance")]
    pub workload: Option<String>,
    /// What the instance would get at this level instead (a what-if: replicas, spread, budget and
    /// requests as a build would give them if its entry requested it; no file is changed). The package's
    /// and workloads' ceilings still apply, and the output says when they cap it.
    #[arg(long, requires = "instance", value_parser = ["none", "pod", "node", "zone"])]
    pub level: Option<String>,
    /// The directory holding clusters/ and packages/ (default: found as for build).
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// Text, or the derivation as JSON.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// The files and documents that have a JSON Schema: the input files, and each command's `--format json`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SchemaFile {
    /// `clusters/<name>.toml`.
    Cluster,
    /// `packages/<dir>/kix.toml`.
    Package,
    /// `kix build --format json` (and `build --check`).
    Build,
    /// `kix check --format json`.
    Check,
    /// `kix verify --format json`.
    Verify,
    /// `kix lint --format json`.
    Lint,
    /// `kix explain --format json` (a code, or an instance's derivation).
    Explain,
    /// `kix schedule --format json`.
    Schedule,
    /// `kix simulate --format json`.
    Simulate,
    /// `kix capacity --format json`.
    Capacity,
    /// `kix audit --format json`.
    Audit,
    /// `kix admission --format json`.
    Admission,
}

/// Output format for reports and diagnostics. Every command takes text and json; sarif and github
/// are for build, check, verify and lint; junit for verify and lint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// For people: the report on stdout, rustc-style diagnostics and a summary on stderr.
    #[default]
    Text,
    /// One JSON document on stdout (the report, its diagnostics and the summary; `kix schema COMMAND`).
    Json,
    /// A SARIF 2.1.0 log on stdout (GitHub code scanning).
    Sarif,
    /// JUnit XML on stdout (CI test dashboards).
    Junit,
    /// GitHub Actions workflow commands on stdout (annotations on the pull request's lines).
    Github,
}

impl Format {
    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Sarif => "sarif",
            Format::Junit => "junit",
            Format::Github => "github",
        }
    }
}

/// Which tree to read and which clusters to compile.
#[derive(Clone, Debug, Args)]
pub struct SelectArgs {
    /// The directory holding clusters/ and packages/; default: the current directory or the nearest
    /// parent holding clusters/ (as cargo finds Cargo.toml).
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// Compile only these clusters (repeatable); default: all of them.
    #[arg(long = "cluster", value_name = "NAME", add = ArgValueCompleter::new(crate::completion::cluster_names))]
    pub clusters: Vec<String>,
    /// Fail (exit 1) when there are warnings.
    #[arg(long)]
    pub deny_warnings: bool,
    /// How to print the report and the diagnostics: text, or one document on stdout: json (every command),
    /// sarif and github (build, check, verify), junit (verify).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Clone, Debug, Args)]
pub struct CapacityArgs {
    #[command(flatten)]
    pub select: SelectArgs,
    /// Only this instance (of the selected clusters).
    #[arg(long, add = ArgValueCompleter::new(crate::completion::instance_names))]
    pub instance: Option<String>,
}

#[derive(Clone, Debug, Args)]
pub struct BuildArgs {
    #[command(flatten)]
    pub select: SelectArgs,
    /// Where to write the manifests; default ROOT/out.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print one cluster's YAML stream to stdout instead of writing files (choose it with --cluster).
    #[arg(long)]
    pub stdout: bool,
    /// With --stdout: every selected cluster's stream, each preceded by a comment naming it.
    #[arg(long, requires = "stdout")]
    pub all: bool,
    /// Write nothing; exit 1, listing the files, when the output directory is not what a build would write
    /// (for CI over a committed out/).
    #[arg(long, conflicts_with = "stdout")]
    pub check: bool,
    /// With --check: also print a unified diff of each changed file.
    #[arg(long, requires = "check")]
    pub diff: bool,
}

#[derive(Clone, Debug, Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub select: SelectArgs,
    /// A snapshot of Nodes and Pods (`kubectl get nodes,pods -A -o yaml`) to verify on,
    /// instead of the cluster files' node inventories.
    #[arg(long)]
    pub state: Option<PathBuf>,
    /// Fail (exit 1, K0624) on a cluster with neither `[[nodePools]]` nor a --state snapshot, instead of
    /// reporting it as not verified (a cluster file can require it itself: `[verify] requireNodes = true`).
    #[arg(long)]
    pub require_nodes: bool,
    /// Also write the report as one self-contained HTML page: zones, nodes and pods, and every
    /// scenario's placement before and after.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
}

#[derive(Clone, Debug, Args)]
pub struct AuditArgs {
    #[command(flatten)]
    pub select: SelectArgs,
    /// A snapshot of the cluster as it runs: `kubectl get nodes,pods,pdb,deploy,sts,rs -A -o yaml > state.yaml`.
    #[arg(long)]
    pub state: PathBuf,
    /// Also audit every Deployment and StatefulSet in the snapshot that kix did not compile, with its
    /// own spread constraints, at the cluster's level.
    #[arg(long)]
    pub all: bool,
}

#[derive(Clone, Debug, Args)]
pub struct AdmissionArgs {
    #[command(flatten)]
    pub select: SelectArgs,
    /// A snapshot of the cluster's objects: `kubectl get deploy,sts,hpa,pdb,ns -A -o yaml > state.yaml`.
    #[arg(long)]
    pub state: PathBuf,
}

#[derive(Clone, Debug, Args)]
pub struct ScheduleArgs {
    /// Nodes and Pods, as a YAML stream or a v1 List.
    #[arg(long)]
    pub state: PathBuf,
    /// The pod to schedule: a Pod, or a Deployment/StatefulSet whose template is used.
    #[arg(long)]
    pub pod: PathBuf,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Clone, Debug, Args)]
pub struct SimulateArgs {
    /// Nodes and Pods, as a YAML stream or a v1 List.
    #[arg(long)]
    pub state: PathBuf,
    /// Manifests holding Deployments and StatefulSets to place.
    #[arg(required = true)]
    pub manifests: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Clone, Debug, Args)]
pub struct LintArgs {
    /// Manifest files, directories (walked for *.yaml and *.yml in path order) or `-` for stdin.
    #[arg(required = true, value_name = "FILE|DIR|-")]
    pub inputs: Vec<PathBuf>,
    /// Also check against this cluster's declared substrate, failure-domain keys and inventory.
    #[arg(long, value_name = "NAME", add = ArgValueCompleter::new(crate::completion::cluster_names))]
    pub cluster: Option<String>,
    /// The directory holding clusters/ (for --cluster); default: the nearest directory upward holding clusters/.
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// How to print findings: text, or one document on stdout (json, sarif, junit, github).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Fail (exit 1) when there are warnings.
    #[arg(long)]
    pub deny_warnings: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    // Every command has an exit status in its `--help` and a man page with one.
    #[test]
    fn every_command_states_its_exit_status() {
        fn check(command: &clap::Command, path: &str) {
            let after = command.get_after_help().map(|h| h.to_string()).unwrap_or_default();
            assert!(after.starts_with("Exit status: 0 "), "`{path}` --help has no exit status");
            for sub in command.get_subcommands() {
                check(sub, &format!("{path} {}", sub.get_name()));
            }
        }
        check(&command(), "kix");
        let pages = crate::manual::pages(command());
        assert_eq!(pages.len(), 17, "{:?}", pages.iter().map(|(name, _)| name).collect::<Vec<_>>());
        for (name, page) in &pages {
            for section in [".SH \"EXIT STATUS\"", ".SH ENVIRONMENT", ".SH EXAMPLES", ".SH \"SEE ALSO\""] {
                assert!(page.contains(section), "{name} lacks {section}");
            }
        }
    }
}
