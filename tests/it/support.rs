//! Test support shared by every module of the integration-test binary and by the corpus runner
//! (tests/corpus/, which includes this file; conventions in tests/README.md):
//!
//! - trees: [`write_tree`] writes files from `(path, contents)` pairs, [`copy_tree`] copies a
//!   fixture keeping symlinks as symlinks, [`read_tree`] reads one back;
//! - goldens: [`assert_golden`] and [`assert_golden_tree`] compare with files under tests/, or
//!   rewrite them when `KIX_BLESS=1` is set;
//! - the real binary: [`Test`] builds a root and a command line, [`Test::run`] runs `kix` and
//!   returns an [`Output`] whose checks chain: `.status(1).stderr_golden(..).files_golden(..)`.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::rc::Rc;

// ---------------------------------------------------------------------------
// Paths.

/// The repository root (where the shipped examples live).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `path` if absolute, else `path` under the repository root.
pub fn repo_path(path: impl AsRef<Path>) -> PathBuf {
    repo_root().join(path)
}

/// The shipped examples' goldens (their kix root is the repository root itself).
pub const EXAMPLES: &str = "tests/fixtures/examples";

/// The shipped examples' files, named one by one: tests copy exactly these, so a cluster or package a
/// user adds beside them (as the README invites) never changes what a test sees.
pub const SHIPPED_EXAMPLES: &[&str] = &[
    "clusters/dev.toml",
    "clusters/edge.toml",
    "clusters/prod.toml",
    "clusters/staging.toml",
    "packages/cache/cache.yaml",
    "packages/cache/kix.toml",
    "packages/dns/kix.toml",
    "packages/dns/primaries.yaml",
    "packages/dns/secondaries.yaml",
    "packages/gateway/gateway.yaml",
    "packages/gateway/kix.toml",
    "packages/nameserver/kix.toml",
    "packages/nameserver/nameserver.yaml",
    "packages/operator/kix.toml",
    "packages/operator/operator.yaml",
    "packages/quorum/kix.toml",
    "packages/quorum/store.yaml",
    "packages/storefront/kix.toml",
    "packages/storefront/storefront.yaml",
    "packages/web-1.3/api.yaml",
    "packages/web-1.3/kix.toml",
    "packages/web/api.yaml",
    "packages/web/kix.toml",
];

/// Copies the shipped examples (and nothing else of the repository) into `root`.
pub fn copy_examples(root: &Path) {
    for file in SHIPPED_EXAMPLES {
        let target = root.join(file);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(repo_path(file), target).unwrap_or_else(|e| panic!("copy {file}: {e}"));
    }
}

/// Every case directory of tests/fixtures/ that is a kix root (all but [`EXAMPLES`]), sorted.
pub fn fixture_cases() -> Vec<PathBuf> {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(repo_path("tests/fixtures"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.ends_with("examples"))
        .collect();
    cases.sort();
    for case in &cases {
        assert!(case.join("clusters").is_dir(), "{} has no clusters/ (see tests/README.md)", case.display());
    }
    assert!(!cases.is_empty());
    cases
}

// ---------------------------------------------------------------------------
// Trees.

/// Writes each `(path, contents)` under `root`, creating directories as needed.
pub fn write_tree<P: AsRef<Path>, C: AsRef<[u8]>>(root: &Path, files: impl IntoIterator<Item = (P, C)>) {
    for (path, contents) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }
}

/// Copies a directory tree, keeping symlinks as symlinks (so a fixture's escaping or dangling
/// link stays exactly what it was) and non-UTF-8 files byte for byte.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        let file_type = entry.file_type().unwrap();
        if file_type.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path()).unwrap(), target).unwrap();
        } else if file_type.is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Whether an entry beside `out/` is one a build keeps there on purpose: kix's state directory, `.kix/`
/// (the output manifest, the spare and the lock, issue 41).
pub fn kept_beside_out(name: &str) -> bool {
    name == ".kix"
}

/// Every file under `dir`, by relative path, with its contents (empty when `dir` is missing); a
/// FIFO, socket or device is recorded as `<not a file>`, never opened.
pub fn read_tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, files: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let relative = path.strip_prefix(root).unwrap().to_path_buf();
            if path.is_dir() {
                walk(root, &path, files);
            } else if path.is_file() {
                files.insert(relative, std::fs::read(&path).unwrap());
            } else {
                files.insert(relative, b"<not a file>".to_vec());
            }
        }
    }
    let mut files = BTreeMap::new();
    if dir.exists() {
        walk(dir, dir, &mut files);
    }
    files
}

// ---------------------------------------------------------------------------
// Goldens.

/// True when `KIX_BLESS=1`: goldens are rewritten instead of compared.
pub fn blessing() -> bool {
    std::env::var_os("KIX_BLESS").is_some_and(|v| v == "1")
}

/// Compares `actual` with the golden file at `path` (relative to the repository root), or
/// writes it when blessing; `Err` says how they differ. For corpora that collect failures.
pub fn check_golden(path: impl AsRef<Path>, actual: &str) -> Result<(), String> {
    let path = repo_path(path);
    if blessing() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return Ok(());
    }
    match std::fs::read_to_string(&path) {
        Ok(expected) if expected == actual => Ok(()),
        Ok(expected) => Err(format!(
            "{} differs from the golden file (run with KIX_BLESS=1 to accept)\n--- expected\n{expected}\n--- actual\n{actual}",
            path.display()
        )),
        Err(e) => Err(format!("missing golden file {} ({e}); run with KIX_BLESS=1 to create it", path.display())),
    }
}

/// [`check_golden`], panicking on a difference.
pub fn assert_golden(path: impl AsRef<Path>, actual: &str) {
    if let Err(message) = check_golden(path, actual) {
        panic!("{message}");
    }
}

/// Compares a written tree with a golden tree (or replaces the golden tree when blessing).
pub fn assert_golden_tree(golden: impl AsRef<Path>, actual: &Path) {
    let golden = repo_path(golden);
    let actual_files = read_tree(actual);
    if blessing() {
        let _ = std::fs::remove_dir_all(&golden);
        write_tree(&golden, &actual_files);
        return;
    }
    let expected_files = read_tree(&golden);
    let expected_names: Vec<_> = expected_files.keys().collect();
    let actual_names: Vec<_> = actual_files.keys().collect();
    assert_eq!(actual_names, expected_names, "files written differ from {}", golden.display());
    for path in expected_files.keys() {
        assert_golden(golden.join(path), &String::from_utf8_lossy(&actual_files[path]));
    }
}

// ---------------------------------------------------------------------------
// The real binary.

/// One run of the real `kix` binary, built up like casey/just's test builder: a root
/// (scratch or existing), what goes in it, arguments and environment.
///
/// ```ignore
/// Test::new().fixture("tests/fixtures/crd-scope").args(["build"]).run().status(0).files_golden("out", "...");
/// ```
///
/// A `Test` is cheap to clone and clones share the scratch root, so several runs over one
/// tree read `let t = Test::new().examples(); t.clone().args(["build"]).run() ...`. The scratch
/// root is removed when the last clone (a `Test` or an [`Output`]) is dropped, so keep `t` alive
/// while the test still reads files under `t.root()`.
#[derive(Clone)]
pub struct Test {
    dir: PathBuf,
    scratch: Option<Rc<tempfile::TempDir>>,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
}

impl Default for Test {
    fn default() -> Test {
        Test::new()
    }
}

impl Test {
    /// An empty scratch root (`<tempdir>/root`, so a fixture's `../` links land in the tempdir).
    pub fn new() -> Test {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path().join("root");
        std::fs::create_dir_all(&dir).unwrap();
        Test { dir, scratch: Some(Rc::new(scratch)), args: Vec::new(), env: Vec::new() }
    }

    /// Runs in an existing directory (relative to the repository root), which must not be written to.
    pub fn in_dir(dir: impl AsRef<Path>) -> Test {
        Test { dir: repo_path(dir), scratch: None, args: Vec::new(), env: Vec::new() }
    }

    /// Runs in the repository root, for commands that read no cluster or package (explain, completions,
    /// schedule and simulate over tests/sim): use [`Test::examples`] for anything that compiles.
    pub fn in_repo() -> Test {
        Test::in_dir(repo_root())
    }

    /// Copies a fixture's kix root (its `clusters/` and `packages/`, symlinks kept) into the root.
    pub fn fixture(self, case: impl AsRef<Path>) -> Test {
        let case = repo_path(case);
        for dir in ["clusters", "packages"] {
            if case.join(dir).exists() {
                copy_tree(&case.join(dir), &self.dir.join(dir));
            }
        }
        self
    }

    /// Copies the shipped examples ([`SHIPPED_EXAMPLES`], nothing else) into the root.
    pub fn examples(self) -> Test {
        assert!(self.scratch.is_some(), "Test::examples writes only into a scratch root");
        copy_examples(&self.dir);
        self
    }

    /// Writes files from `(path, contents)` pairs into the root.
    pub fn tree<P: AsRef<Path>, C: AsRef<[u8]>>(self, files: impl IntoIterator<Item = (P, C)>) -> Test {
        assert!(self.scratch.is_some(), "Test::tree writes only into a scratch root");
        write_tree(&self.dir, files);
        self
    }

    /// The command-line arguments (replacing any given before).
    pub fn args<S: Into<OsString>>(mut self, args: impl IntoIterator<Item = S>) -> Test {
        self.args = args.into_iter().map(Into::into).collect();
        self
    }

    /// Sets one environment variable for the run (`NO_COLOR=1` is always set).
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Test {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Runs in a subdirectory of the root instead (created if missing), as a user inside a tree would.
    pub fn in_subdirectory(mut self, sub: &str) -> Test {
        self.dir = self.dir.join(sub);
        std::fs::create_dir_all(&self.dir).unwrap();
        self
    }

    /// The directory the binary runs in.
    pub fn root(&self) -> &Path {
        &self.dir
    }

    /// Runs `kix` with the arguments in the root, colour off.
    pub fn run(&self) -> Output {
        let output = Command::new(env!("CARGO_BIN_EXE_kix"))
            .args(&self.args)
            .current_dir(&self.dir)
            .env("NO_COLOR", "1")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .output()
            .expect("run kix");
        Output {
            status: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            utf8: std::str::from_utf8(&output.stdout).is_ok() && std::str::from_utf8(&output.stderr).is_ok(),
            test: self.clone(),
        }
    }
}

/// What one run did; every check returns the output so checks chain. Stdout and stderr are
/// read lossily (a non-UTF-8 input may be echoed); [`Output::utf8`] insists they were UTF-8.
pub struct Output {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
    utf8: bool,
    test: Test,
}

impl Output {
    fn context(&self) -> String {
        format!(
            "kix {:?} in {}\n--- stdout\n{}--- stderr\n{}",
            self.test.args,
            self.test.dir.display(),
            self.stdout,
            self.stderr
        )
    }

    /// Stdout and stderr were valid UTF-8.
    #[track_caller]
    pub fn utf8(self) -> Output {
        assert!(self.utf8, "output is not UTF-8\n{}", self.context());
        self
    }

    /// The exit status is `code` (0 success, 1 errors, 2 usage).
    #[track_caller]
    pub fn status(self, code: i32) -> Output {
        assert_eq!(self.status, code, "exit status\n{}", self.context());
        self
    }

    /// Stdout is exactly `expected`.
    #[track_caller]
    pub fn stdout(self, expected: &str) -> Output {
        assert_eq!(self.stdout, expected, "stdout\n{}", self.context());
        self
    }

    #[track_caller]
    pub fn stdout_contains(self, needle: &str) -> Output {
        assert!(self.stdout.contains(needle), "stdout lacks {needle:?}\n{}", self.context());
        self
    }

    #[track_caller]
    pub fn stdout_ends_with(self, suffix: &str) -> Output {
        assert!(self.stdout.ends_with(suffix), "stdout does not end with {suffix:?}\n{}", self.context());
        self
    }

    #[track_caller]
    pub fn stderr_contains(self, needle: &str) -> Output {
        assert!(self.stderr.contains(needle), "stderr lacks {needle:?}\n{}", self.context());
        self
    }

    #[track_caller]
    pub fn stderr_ends_with(self, suffix: &str) -> Output {
        assert!(self.stderr.ends_with(suffix), "stderr does not end with {suffix:?}\n{}", self.context());
        self
    }

    /// Stdout matches the golden file at `path` (relative to the repository root).
    pub fn stdout_golden(self, path: impl AsRef<Path>) -> Output {
        assert_golden(path, &self.stdout);
        self
    }

    /// Stderr matches the golden file at `path`.
    #[allow(dead_code)] // only the corpus target (tests/corpus/, `fixtures::examples`) compares bare stderr
    pub fn stderr_golden(self, path: impl AsRef<Path>) -> Output {
        assert_golden(path, &self.stderr);
        self
    }

    /// `exit status N` and stderr match the golden file at `path` (the fixtures' `stderr.txt`).
    pub fn status_and_stderr_golden(self, path: impl AsRef<Path>) -> Output {
        assert_golden(path, &format!("exit status {}\n{}", self.status, self.stderr));
        self
    }

    /// The files under `written` (relative to the root) match the golden tree `golden`.
    pub fn files_golden(self, written: impl AsRef<Path>, golden: impl AsRef<Path>) -> Output {
        assert_golden_tree(golden, &self.test.dir.join(written));
        self
    }

    /// Stdout as one JSON document.
    #[track_caller]
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e})\n{}", self.context()))
    }

    /// The `diagnostics` of the `--format json` document on stdout.
    pub fn diagnostics(&self) -> Vec<serde_json::Value> {
        self.json()["diagnostics"].as_array().cloned().unwrap_or_else(|| panic!("no diagnostics\n{}", self.context()))
    }

    /// The root the run wrote in.
    pub fn root(&self) -> &Path {
        &self.test.dir
    }
}
