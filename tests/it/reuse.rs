//! A rebuild that compiles only the clusters whose inputs changed (issue 42, `kix_compiler::reuse`): a
//! cluster whose recorded key is its inputs' is reported from its record and staged as the build before
//! wrote it; every kind of input changed once makes it compile, and each rebuild ends with `out/` and the
//! findings exactly as a clean build gives them.

use crate::support::*;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, SystemTime};

const MANIFEST: &str = ".kix/.out.kix-manifest";

/// The examples with their `allow` lines removed, so every cluster reports warnings to record and replay.
fn unacknowledged() -> Test {
    let t = Test::new().examples();
    for entry in std::fs::read_dir(t.root().join("clusters")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let kept: String =
            text.lines().filter(|line| !line.starts_with("allow = ")).map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, kept).unwrap();
    }
    t
}

/// Moves the manifest's mtime past every time it records, so its entries are trusted (not racy).
fn trust_manifest(root: &Path) {
    let file = std::fs::File::options().append(true).open(root.join(MANIFEST)).unwrap();
    file.set_modified(SystemTime::now() + Duration::from_secs(3600)).unwrap();
}

/// A build's stderr and exit status, and what a clean build of the same inputs (into an `--out` that does
/// not exist yet) writes and prints: both must be the same (a build that fails writes nothing).
fn build_like_a_clean_build(t: &Test, what: &str) {
    let built = t.clone().args(["build", "-q"]).run();
    let clean_dir = t.root().join("clean");
    let _ = std::fs::remove_dir_all(&clean_dir);
    let clean = t.clone().args(["build", "-q", "--out", "clean"]).run();
    assert_eq!(
        (built.status, &built.stderr),
        (clean.status, &clean.stderr),
        "{what}: findings differ from a clean build's"
    );
    // A build that fails writes nothing, as a clean one.
    if clean.status == 0 {
        assert!(read_tree(&t.root().join("out")) == read_tree(&clean_dir), "{what}: out/ differs from a clean build");
        std::fs::remove_dir_all(&clean_dir).unwrap();
    } else {
        assert!(!clean_dir.exists(), "{what}: a failed build wrote {}", clean_dir.display());
    }
    let _ = std::fs::remove_file(t.root().join(".kix/.clean.kix-manifest"));
    let _ = std::fs::remove_dir_all(t.root().join(".kix/.clean.kix-spare"));
    trust_manifest(t.root());
}

/// The manifest with `cluster`'s inputs section rewritten by `edit` (given the findings and what follows
/// them, without the first line), its key and acknowledged count kept, the body's hash and the section's
/// length put right: a record a build could have written.
fn forge_inputs(root: &Path, cluster: &str, edit: impl Fn(&str) -> String) {
    let text = std::fs::read_to_string(root.join(MANIFEST)).unwrap();
    let header = format!("inputs {cluster} ");
    let at = text.find(&format!("\n{header}")).expect("an inputs section") + 1;
    let line_end = at + text[at..].find('\n').unwrap();
    let length: usize = text[at + header.len()..line_end].parse().unwrap();
    let section = &text[line_end + 1..line_end + 1 + length];
    let (first, body) = section.split_once('\n').unwrap();
    let words: Vec<&str> = first.split(' ').collect();
    let body = edit(body);
    let acknowledged: usize = words[1].parse().unwrap();
    let first = format!("{} {} {:016x}", words[0], words[1], kix_compiler::reuse::section_hash(acknowledged, &body));
    let section = format!("{first}\n{body}");
    let forged = format!("{}{header}{}\n{section}{}", &text[..at], section.len(), &text[line_end + 1 + length..]);
    std::fs::write(root.join(MANIFEST), forged).unwrap();
    trust_manifest(root);
}

/// The manifest with one more finding recorded for `cluster` (see `forge_inputs`).
fn forge_finding(root: &Path, cluster: &str, message: &str) {
    let finding =
        format!("{{\"code\":\"K0107\",\"message\":\"{message}\",\"subject\":[\"{cluster}\",null,null,null]}}\n");
    forge_inputs(root, cluster, |body| format!("{finding}{body}"));
}

/// Two builds like clean ones, the second made to stage, so the spare holds the first build's `out/`.
fn built_with_a_spare(t: &Test) {
    build_like_a_clean_build(t, "first");
    make_the_next_build_stage(t.root());
    build_like_a_clean_build(t, "second");
    assert!(t.root().join(".kix/.out.kix-spare/prod/shop.yaml").is_file(), "the second build left no spare");
}

/// A file added to a cluster's directory of `out/`, so the next build stages and swaps (a rebuild of
/// unchanged inputs over an unchanged `out/` leaves `out/`, the spare and the manifest in place); the build
/// removes it, as a clean build has none.
fn make_the_next_build_stage(root: &Path) {
    std::fs::write(root.join("out/prod/zz-stage.yaml"), "kind: ConfigMap\n").unwrap();
    trust_manifest(root);
}

/// Positive control: an unchanged cluster is reported from its record, not compiled (a finding forged into
/// its record is printed), and a cluster whose file changed is compiled (its forged finding is gone).
#[test]
fn an_unchanged_cluster_is_reported_from_its_record() {
    let t = unacknowledged();
    t.clone().args(["build", "-q"]).run().status(0);
    trust_manifest(t.root());
    forge_finding(t.root(), "prod", "forged for prod");
    forge_finding(t.root(), "dev", "forged for dev");
    let rebuilt = t.clone().args(["build", "-q"]).run().status(0);
    assert!(rebuilt.stderr.contains("forged for prod"), "prod was compiled:\n{}", rebuilt.stderr);
    assert!(rebuilt.stderr.contains("forged for dev"), "dev was compiled:\n{}", rebuilt.stderr);
    // The record carried over: the next rebuild still reports it.
    trust_manifest(t.root());
    t.clone().args(["build", "-q"]).run().status(0).stderr_contains("forged for prod");

    // A comment in dev's file is an input: dev compiles (its forged finding gone), prod is reused.
    let dev = t.root().join("clusters/dev.toml");
    std::fs::write(&dev, format!("{}# a comment\n", std::fs::read_to_string(&dev).unwrap())).unwrap();
    let rebuilt = t.clone().args(["build", "-q"]).run().status(0);
    assert!(rebuilt.stderr.contains("forged for prod"), "{}", rebuilt.stderr);
    assert!(!rebuilt.stderr.contains("forged for dev"), "{}", rebuilt.stderr);
}

/// A rebuild of unchanged inputs reports what a clean build reports (every warning, the acknowledged
/// count, `--deny-warnings`), and writes what it writes.
#[test]
fn recorded_findings_are_the_clean_builds() {
    let t = unacknowledged();
    build_like_a_clean_build(&t, "first build");
    build_like_a_clean_build(&t, "unchanged");
    build_like_a_clean_build(&t, "unchanged, again");
    let denied = t.clone().args(["build", "-q", "--deny-warnings"]).run().status(1);
    assert!(denied.stderr.contains("K0502"), "{}", denied.stderr);

    // SARIF report (every finding), as a clean build gives it, with and without
    // the examples' `allow` lines.
    for t in [t, Test::new().examples()] {
        let sarif = |t: &Test, out: &str| t.clone().args(["build", "-q", "--format", "sarif", "--out", out]).run();
        let clean = sarif(&t, "clean");
        sarif(&t, "out").status(clean.status);
        trust_manifest(t.root());
        let reused = sarif(&t, "out");
        assert_eq!((reused.status, &reused.stdout, &reused.stderr), (clean.status, &clean.stdout, &clean.stderr));
    }
}

/// Each kind of input changed once, between reused builds: a package file (also with its mtime and size
/// put back), a cluster file, a new package version, a directory under `packages/` that is no package, the
/// root spelled another way, and another kix binary; each rebuild is a clean build's.
#[test]
fn every_kind_of_input_changed_once() {
    let t = unacknowledged();
    let root = t.root().to_path_buf();
    build_like_a_clean_build(&t, "first");
    build_like_a_clean_build(&t, "reused");

    // A package file, its size and mtime put back (the same length: 8080 -> 8081).
    let api = root.join("packages/web/api.yaml");
    let (original, mtime) =
        (std::fs::read_to_string(&api).unwrap(), std::fs::metadata(&api).unwrap().modified().unwrap());
    std::fs::write(&api, original.replacen("containerPort: 8080", "containerPort: 8081", 1)).unwrap();
    std::fs::File::options().append(true).open(&api).unwrap().set_modified(mtime).unwrap();
    build_like_a_clean_build(&t, "a package file changed, its mtime put back");
    std::fs::write(&api, &original).unwrap();
    build_like_a_clean_build(&t, "the package file back");

    // A cluster file's setting.
    let prod = root.join("clusters/prod.toml");
    let cluster = std::fs::read_to_string(&prod).unwrap();
    std::fs::write(&prod, cluster.replacen("name = \"shop\"", "name = \"shop-two\"", 1)).unwrap();
    build_like_a_clean_build(&t, "a cluster file changed");
    std::fs::write(&prod, &cluster).unwrap();
    build_like_a_clean_build(&t, "the cluster file back");

    // A new version of a package some cluster runs (its highest version is what an instance gets).
    copy_tree(&root.join("packages/web"), &root.join("packages/web-next"));
    let manifest = root.join("packages/web-next/kix.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let version = text.lines().find(|l| l.starts_with("version = ")).unwrap().to_string();
    std::fs::write(&manifest, text.replacen(&version, "version = \"99.0.0\"", 1)).unwrap();
    let next_api = root.join("packages/web-next/api.yaml");
    std::fs::write(&next_api, original.replacen("containerPort: 8080", "containerPort: 9090", 1)).unwrap();
    build_like_a_clean_build(&t, "a new package version");
    std::fs::remove_dir_all(root.join("packages/web-next")).unwrap();
    build_like_a_clean_build(&t, "the new version removed");

    // A directory under packages/ that is no package (K0107, said once for the tree).
    std::fs::create_dir(root.join("packages/not-yet")).unwrap();
    build_like_a_clean_build(&t, "a directory that is no package");
    std::fs::remove_dir(root.join("packages/not-yet")).unwrap();
    build_like_a_clean_build(&t, "the directory removed");

    // The root spelled another way: findings keep their paths relative to it.
    let elsewhere = t.clone().in_subdirectory("elsewhere").args(["build", "-q", "--root", ".."]).run().status(0);
    let here = t.clone().args(["build", "-q"]).run().status(0);
    assert_eq!(elsewhere.stderr, here.stderr);

    // Another kix binary (a copy: other facts) records its own keys and never reuses this one's.
    let copy = root.join("kix-copy");
    std::fs::copy(env!("CARGO_BIN_EXE_kix"), &copy).unwrap();
    forge_finding(&root, "prod", "forged for this binary");
    let other = std::process::Command::new(&copy).args(["build", "-q"]).current_dir(&root).output().unwrap();
    assert!(other.status.success());
    assert!(!String::from_utf8_lossy(&other.stderr).contains("forged for this binary"));
    std::fs::remove_file(&copy).unwrap();
    build_like_a_clean_build(&t, "after another binary's build");
}

/// A file of `out/` edited by hand (its mtime put back) while the inputs are unchanged: the cluster is not
/// trusted from its record alone, and the rebuild writes what a clean build writes.
#[test]
fn a_hand_edit_of_a_reused_clusters_output_is_undone() {
    let t = unacknowledged();
    build_like_a_clean_build(&t, "first");
    build_like_a_clean_build(&t, "second");
    for file in ["out/prod/shop.yaml", "out/prod/kustomization.yaml", ".kix/.out.kix-spare/prod/shop.yaml"] {
        let path = t.root().join(file);
        let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replacen("a", "b", 1)).unwrap();
        std::fs::File::options().append(true).open(&path).unwrap().set_modified(mtime).unwrap();
        build_like_a_clean_build(&t, &format!("{file} edited"));
        build_like_a_clean_build(&t, &format!("{file} edited, one build on"));
        std::fs::remove_file(&path).unwrap_or_default();
        build_like_a_clean_build(&t, &format!("{file} removed"));
        build_like_a_clean_build(&t, &format!("{file} removed, one build on"));
    }
}

/// What a hostile `out/` holds where a reused cluster's file belongs (a FIFO, a symlink out of the tree, a
/// directory): the cluster is never staged from it. A FIFO is refused (K0501) with `out/` as it was; a
/// symlink or a directory in a file's place makes the cluster compile, the link's target untouched, and the
/// build is a clean build's.
#[test]
fn a_hostile_out_never_stages_a_reused_cluster_from_it() {
    let t = unacknowledged();
    build_like_a_clean_build(&t, "first");
    build_like_a_clean_build(&t, "second");
    let root = t.root().to_path_buf();
    let file = root.join("out/prod/shop.yaml");

    std::fs::remove_file(&file).unwrap();
    assert!(std::process::Command::new("mkfifo").arg(&file).status().unwrap().success());
    trust_manifest(&root);
    let before = read_tree(&root.join("out"));
    t.clone().args(["build", "-q"]).run().status(1).stderr_contains("out/prod/shop.yaml is a FIFO");
    assert!(read_tree(&root.join("out")) == before, "out/ changed by a refused build");
    std::fs::remove_file(&file).unwrap();

    // A symlink out of the tree to a file holding exactly the bytes kix would write.
    let outside = root.parent().unwrap().join("outside.yaml");
    let clean = root.join("clean-copy");
    t.clone().args(["build", "-q", "--out", "clean-copy"]).run().status(0);
    let bytes = std::fs::read(clean.join("prod/shop.yaml")).unwrap();
    std::fs::write(&outside, &bytes).unwrap();
    std::os::unix::fs::symlink(&outside, &file).unwrap();
    trust_manifest(&root);
    build_like_a_clean_build(&t, "a symlink out of the tree where a file was");
    assert_eq!(std::fs::read(&outside).unwrap(), bytes, "the link's target changed");
    assert!(!file.is_symlink(), "the link is still in out/");

    // A directory where a file was.
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap();
    std::fs::write(file.join("inside"), "x").unwrap();
    trust_manifest(&root);
    build_like_a_clean_build(&t, "a directory where a file was");
}

/// What a hostile spare holds where a reused cluster's file belongs (a FIFO, a directory with a file in it, a
/// symlink out of the tree): the spare is kix's, so each is removed, never opened or followed, and replaced
/// by `out/`'s file; the build is a clean build's and the link's target is untouched.
#[test]
fn a_hostile_spare_is_replaced_under_a_reused_cluster() {
    let t = unacknowledged();
    let root = t.root().to_path_buf();
    built_with_a_spare(&t);
    let file = root.join(".kix/.out.kix-spare/prod/shop.yaml");
    let outside = root.parent().unwrap().join("outside-spare.yaml");
    std::fs::write(&outside, "kept\n").unwrap();
    type Plant<'a> = (&'a str, &'a dyn Fn(&Path));
    let plant: [Plant<'_>; 3] = [
        ("a FIFO", &|path| assert!(std::process::Command::new("mkfifo").arg(path).status().unwrap().success())),
        ("a directory", &|path| {
            std::fs::create_dir(path).unwrap();
            std::fs::write(path.join("inside"), "x").unwrap();
        }),
        ("a symlink out of the tree", &|path| std::os::unix::fs::symlink(&outside, path).unwrap()),
    ];
    for (what, plant) in plant {
        std::fs::remove_file(&file).unwrap();
        plant(&file);
        make_the_next_build_stage(&root);
        let out_before = std::fs::symlink_metadata(root.join("out/prod/shop.yaml")).unwrap();
        build_like_a_clean_build(&t, &format!("{what} in the spare"));
        // Staged through the spare: out/'s file is now the spare's, replaced by a link to out/'s (one inode).
        let staged = std::fs::symlink_metadata(root.join("out/prod/shop.yaml")).unwrap();
        assert!(staged.is_file(), "{what}: out/'s file is not a file");
        assert_eq!(staged.ino(), out_before.ino(), "{what}: out/prod/shop.yaml is not the previous out/'s inode");
        make_the_next_build_stage(&root);
        build_like_a_clean_build(&t, &format!("{what} in the spare, one build on"));
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "kept\n", "{what}: the link's target changed");
        assert!(std::fs::symlink_metadata(&file).unwrap().is_file(), "{what}: the spare's file is not a file");
    }
}

/// A build that prints the summary (the table, `--format json`) and what a clean build of the same inputs
/// prints: the same stdout and exit status (the JSON's output directory aside). A clean build's own record
/// is left out of the way.
fn summary_like_a_clean_build(t: &Test, what: &str, format: &[&str]) {
    let run = |out: &str| t.clone().args(["build", "--out", out].iter().chain(format)).run();
    let built = run("out");
    let clean = run("clean");
    let json_of = |output: &Output| {
        let mut json = output.json();
        json["written"]["directory"] = serde_json::Value::Null;
        json
    };
    if format.is_empty() {
        assert_eq!((built.status, &built.stdout), (clean.status, &clean.stdout), "{what}: the table differs");
    } else {
        assert_eq!((built.status, json_of(&built)), (clean.status, json_of(&clean)), "{what}: the JSON differs");
    }
    assert_eq!(built.status, 0, "{what}: {}", built.stderr);
    assert!(read_tree(&t.root().join("out")) == read_tree(&t.root().join("clean")), "{what}: out/ differs");
    std::fs::remove_dir_all(t.root().join("clean")).unwrap();
    let _ = std::fs::remove_file(t.root().join(".kix/.clean.kix-manifest"));
    let _ = std::fs::remove_dir_all(t.root().join(".kix/.clean.kix-spare"));
    trust_manifest(t.root());
}

/// The summary a build prints of a reused cluster is the one its record kept: a clean build's, as text and
/// as JSON, across a package change, `-q` builds (which keep no summary, so the next summary build compiles
/// the cluster) and a change undone. Positive control: a summary forged into the record (its length kept)
/// is what the rebuild prints, so the summary really is replayed, not compiled again.
#[test]
fn a_reused_clusters_summary_is_the_clean_builds() {
    let t = unacknowledged();
    let root = t.root().to_path_buf();
    for format in [&[][..], &["--format", "json"][..]] {
        summary_like_a_clean_build(&t, "first", format);
        summary_like_a_clean_build(&t, "reused", format);
        let api = root.join("packages/web/api.yaml");
        let original = std::fs::read_to_string(&api).unwrap();
        std::fs::write(&api, original.replacen("containerPort: 8080", "containerPort: 8081", 1)).unwrap();
        summary_like_a_clean_build(&t, "a package changed", format);
        // A placement of the package's own, compiled in part where no admission guards it (its summary line
        // read again equal to the recorded one, the record written back as read), then replayed.
        let own = original.replacen(
            "    spec:\n      containers:",
            "    spec:\n      topologySpreadConstraints: []\n      containers:",
            1,
        );
        std::fs::write(&api, own).unwrap();
        summary_like_a_clean_build(&t, "a placement of the package's own", format);
        summary_like_a_clean_build(&t, "its summary replayed", format);
        std::fs::write(&api, &original).unwrap();
        t.clone().args(["build", "-q"]).run().status(0);
        trust_manifest(&root);
        summary_like_a_clean_build(&t, "after a -q build of the change undone", format);
        summary_like_a_clean_build(&t, "reused again", format);
    }

    // A summary line changed in the record, its hash left as it was: damaged, so prod compiles.
    let text = std::fs::read_to_string(root.join(MANIFEST)).unwrap();
    let (from, to) = ("\tweb\t1.4.0\t", "\tweb\t9.4.0\t");
    assert!(text.contains(from), "the manifest records no summary line for web 1.4.0");
    std::fs::write(root.join(MANIFEST), text.replace(from, to)).unwrap();
    trust_manifest(&root);
    summary_like_a_clean_build(&t, "a damaged summary record", &[]);
    // The same change recorded as a build would write it (its hash put right) is what the rebuild prints.
    forge_inputs(&root, "prod", |body| body.replace(from, to));
    let forged = t.clone().args(["build"]).run().status(0);
    assert!(forged.stdout.contains("web 9.4.0"), "{}", forged.stdout);

    // A -q build keeps no summary: the next summary build compiles the cluster (a finding forged into its
    // record is not printed) and prints a clean build's table.
    std::fs::remove_dir_all(root.join("out")).unwrap();
    t.clone().args(["build", "-q"]).run().status(0);
    forge_finding(&root, "prod", "forged under -q");
    let compiled = t.clone().args(["build"]).run().status(0);
    assert!(!compiled.stderr.contains("forged under -q"), "{}", compiled.stderr);
    summary_like_a_clean_build(&t, "after -q", &[]);
}

/// What a build leaves on disk, as `stat` says: `out/` itself (its inode is the spare's after a swap),
/// every file of `out/` and of the spare, and the manifest (its stat and its text).
fn on_disk(root: &Path) -> Vec<String> {
    let facts = |path: &Path| {
        let m = std::fs::symlink_metadata(path).unwrap();
        format!("{} {} {} {}.{}", path.display(), m.ino(), m.size(), m.ctime(), m.ctime_nsec())
    };
    let mut seen = vec![facts(&root.join("out")), facts(&root.join(MANIFEST))];
    seen.push(String::from_utf8(std::fs::read(root.join(MANIFEST)).unwrap()).unwrap());
    for tree in ["out", ".kix/.out.kix-spare"] {
        let mut stack = vec![root.join(tree)];
        while let Some(dir) = stack.pop() {
            let Ok(listing) = std::fs::read_dir(&dir) else { continue };
            for entry in listing {
                let path = entry.unwrap().path();
                seen.push(facts(&path));
                if path.is_dir() {
                    stack.push(path);
                }
            }
        }
    }
    seen.sort();
    seen
}

/// A rebuild of unchanged inputs over an `out/` the previous build left as it was changes nothing on disk:
/// `out/`, every file of it and of the spare, and the manifest keep their inodes, ctimes and bytes (and the
/// findings are a clean build's). Anything else in `out/` (a file added to a cluster's directory, a cluster's
/// directory gone, a file of the user's beside the clusters, a file edited) makes the build stage and swap
/// as before, and its `out/` is a clean build's (the user's file carried over).
#[test]
fn an_unchanged_rebuild_changes_nothing_on_disk() {
    let t = unacknowledged();
    let root = t.root().to_path_buf();
    built_with_a_spare(&t);
    let before = on_disk(&root);
    build_like_a_clean_build(&t, "unchanged");
    // build_like_a_clean_build moved the manifest's mtime (to trust it): compare what the build left.
    let after = on_disk(&root);
    let without_manifest_time = |seen: &[String]| -> Vec<String> {
        seen.iter().filter(|line| !line.contains("kix-manifest ")).cloned().collect()
    };
    assert_eq!(without_manifest_time(&after), without_manifest_time(&before), "an unchanged rebuild changed the disk");
    let untouched = on_disk(&root);
    t.clone().args(["build", "-q"]).run().status(0);
    assert_eq!(on_disk(&root), untouched, "an unchanged rebuild wrote the manifest");

    // A file added to a cluster's directory: removed, as a clean build has none; the build swapped (out/ is
    // another directory now: the spare's).
    let out_inode = std::fs::symlink_metadata(root.join("out")).unwrap().ino();
    std::fs::write(root.join("out/prod/extra.yaml"), "kind: ConfigMap\n").unwrap();
    trust_manifest(&root);
    build_like_a_clean_build(&t, "a file added to out/prod");
    assert_ne!(std::fs::symlink_metadata(root.join("out")).unwrap().ino(), out_inode, "the build did not swap");
    build_like_a_clean_build(&t, "a file added to out/prod, one build on");

    // A cluster's directory gone.
    std::fs::remove_dir_all(root.join("out/dev")).unwrap();
    trust_manifest(&root);
    build_like_a_clean_build(&t, "out/dev removed");

    // A file edited in place (its size kept, its mtime put back): the build stages and swaps.
    let shop = root.join("out/prod/shop.yaml");
    let mtime = std::fs::metadata(&shop).unwrap().modified().unwrap();
    let text = std::fs::read_to_string(&shop).unwrap();
    std::fs::write(&shop, text.replacen("a", "b", 1)).unwrap();
    std::fs::File::options().append(true).open(&shop).unwrap().set_modified(mtime).unwrap();
    trust_manifest(&root);
    build_like_a_clean_build(&t, "out/prod/shop.yaml edited");

    // The user's own file beside the clusters: kept, and the rest is a clean build's.
    std::fs::write(root.join("out/README.md"), "ours\n").unwrap();
    trust_manifest(&root);
    t.clone().args(["build", "-q"]).run().status(0);
    assert_eq!(std::fs::read_to_string(root.join("out/README.md")).unwrap(), "ours\n");
    std::fs::remove_file(root.join("out/README.md")).unwrap();
    trust_manifest(&root);
    build_like_a_clean_build(&t, "the user's file removed");
}

/// The manifest with a finding recorded in `instance`'s part of `cluster`'s record (see `forge_inputs`).
fn forge_instance_finding(root: &Path, cluster: &str, instance: &str, message: &str) {
    let finding = format!(
        "{{\"code\":\"K0107\",\"message\":\"{message}\",\"subject\":[\"{cluster}\",\"{instance}\",null,null]}}\n"
    );
    forge_inputs(root, cluster, |body| {
        let opening = format!("instance {instance} ");
        let at = body.find(&opening).unwrap_or_else(|| panic!("no part for {instance} in\n{body}"));
        let end = at + body[at..].find('\n').unwrap() + 1;
        format!("{}{finding}{}", &body[..end], &body[end..])
    });
}

/// Positive control of a cluster compiled in part: after a package changed, the instances that run it are
/// compiled again (a finding forged into their part of the record is gone) and the other instances of the
/// same cluster are not (theirs is printed, and recorded again for the next build); an instance one of
/// whose objects went to `_shared.yaml` is compiled alone with that object left out, as a clean build
/// leaves it.
#[test]
fn a_package_change_compiles_only_the_instances_that_run_it() {
    let t = unacknowledged();
    let root = t.root().to_path_buf();
    build_like_a_clean_build(&t, "first");
    for (instance, message) in [("shop", "forged for shop"), ("orders-db", "forged for orders-db")] {
        forge_instance_finding(&root, "prod", instance, message);
    }
    // web runs in prod's `shop` only: its port is read by no check across instances.
    let api = root.join("packages/web/api.yaml");
    let original = std::fs::read_to_string(&api).unwrap();
    std::fs::write(&api, original.replacen("containerPort: 8080", "containerPort: 8081", 1)).unwrap();
    let rebuilt = t.clone().args(["build", "-q"]).run().status(0);
    assert!(!rebuilt.stderr.contains("forged for shop"), "shop was not compiled:\n{}", rebuilt.stderr);
    assert!(rebuilt.stderr.contains("forged for orders-db"), "orders-db was compiled:\n{}", rebuilt.stderr);
    let shop = std::fs::read_to_string(root.join("out/prod/shop.yaml")).unwrap();
    assert!(shop.contains("containerPort: 8081"), "{shop}");
    // The instances kept are recorded again as they were.
    trust_manifest(&root);
    let again = t.clone().args(["build", "-q"]).run().status(0);
    assert!(again.stderr.contains("forged for orders-db"), "{}", again.stderr);

    // shop and sessions both ship one ClusterRole, written once to `_shared.yaml`: a change to web compiles
    // shop alone, its copy left out of its file as a clean build leaves it, and keeps sessions.
    let role = "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: shop-reader\n\
                rules:\n  - apiGroups: [\"\"]\n    resources: [\"configmaps\"]\n    verbs: [\"get\"]\n";
    for package in ["packages/web/api.yaml", "packages/cache/cache.yaml"] {
        let path = root.join(package);
        std::fs::write(&path, format!("{}{role}", std::fs::read_to_string(&path).unwrap())).unwrap();
    }
    build_like_a_clean_build(&t, "a ClusterRole both ship");
    assert!(std::fs::read_to_string(root.join("out/prod/_shared.yaml")).unwrap().contains("shop-reader"));
    forge_instance_finding(&root, "prod", "sessions", "forged for sessions");
    forge_instance_finding(&root, "prod", "shop", "forged for shop");
    std::fs::write(
        &api,
        std::fs::read_to_string(&api).unwrap().replacen("containerPort: 8081", "containerPort: 8082", 1),
    )
    .unwrap();
    let rebuilt = t.clone().args(["build", "-q"]).run().status(0);
    assert!(!rebuilt.stderr.contains("forged for shop"), "shop was not compiled:\n{}", rebuilt.stderr);
    assert!(rebuilt.stderr.contains("forged for sessions"), "sessions was compiled:\n{}", rebuilt.stderr);
    let shop = std::fs::read_to_string(root.join("out/prod/shop.yaml")).unwrap();
    assert!(shop.contains("containerPort: 8082") && !shop.contains("shop-reader"), "{shop}");
    t.clone().args(["build", "-q", "--out", "clean"]).run().status(0);
    assert!(read_tree(&root.join("out")) == read_tree(&root.join("clean")), "out/ differs from a clean build");
}

/// Each kind of change to a package between builds, those the checks across instances read and those they
/// do not: each rebuild (in part where it may be, whole where it must) reports and writes what a clean
/// build does. The findings recorded for the checks across instances point into packages: a package that
/// changed makes its cluster compile whole, so none is replayed at a place its text left.
#[test]
fn every_kind_of_package_change_is_a_clean_builds() {
    let t = unacknowledged();
    let root = t.root().to_path_buf();
    build_like_a_clean_build(&t, "first");
    build_like_a_clean_build(&t, "reused");
    let edit = |path: &str, from: &str, to: &str| {
        let path = root.join(path);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{} lacks {from:?}", path.display());
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    };
    let changes: [(&str, &str, &str, &str); 12] = [
        (
            "a port (read by no check across instances)",
            "packages/web/api.yaml",
            "containerPort: 8080",
            "containerPort: 8081",
        ),
        (
            "the package's level ceiling (what admission guards)",
            "packages/cache/kix.toml",
            "max = \"node\"",
            "max = \"pod\"",
        ),
        (
            "a kept namespace nothing creates (K0421)",
            "packages/cache/kix.toml",
            "version = \"2.1.0\"\n",
            "version = \"2.1.0\"\nkeepNamespaces = [\"monitoring\"]\n",
        ),
        ("text moved above a recorded K0421", "packages/cache/kix.toml", "[meta]\n", "# moved\n[meta]\n"),
        ("a pod template label", "packages/cache/cache.yaml", "labels:\n", "labels:\n        tier: shared\n"),
        ("requests beyond the inventory (K0462)", "packages/quorum/store.yaml", "cpu: 500m", "cpu: \"50\""),
        (
            "a Deployment of instances that share their Namespace",
            "packages/nameserver/nameserver.yaml",
            "containerPort: 53",
            "containerPort: 5353",
        ),
        (
            "a workload whose ceiling is reported per package (K0308)",
            "packages/operator/operator.yaml",
            "containerPort: 9443",
            "containerPort: 9444",
        ),
        (
            "a workload under an autoscaler (K0432), guarded by admission",
            "packages/storefront/storefront.yaml",
            "containerPort: 8080",
            "containerPort: 8088",
        ),
        (
            "a spread of the package's own, which admission no longer guards",
            "packages/web/api.yaml",
            "    spec:\n      containers:",
            "    spec:\n      topologySpreadConstraints: []\n      containers:",
        ),
        (
            "a selector that does not select its own pods (an error)",
            "packages/cache/cache.yaml",
            "app.kubernetes.io/name: cache",
            "app.kubernetes.io/component: api",
        ),
        (
            "a selector that takes another instance's pods (K0406, an error)",
            "packages/cache/cache.yaml",
            "app.kubernetes.io/name: cache",
            "app.kubernetes.io/component: api",
        ),
    ];
    let mut undo = Vec::new();
    for (what, path, from, to) in changes {
        edit(path, from, to);
        build_like_a_clean_build(&t, what);
        undo.push((what, path, to, from));
    }
    for (what, path, from, to) in undo.into_iter().rev() {
        edit(path, from, to);
        build_like_a_clean_build(&t, &format!("{what}, undone"));
    }
}

/// Two package directories swapped (every file's bytes as they were): a finding of the checks across
/// instances recorded at one package's `kix.toml` is never replayed into the other package now in its
/// directory, in a cluster that runs either or both (found by review: the kept places were the directories
/// of every package no changed instance ran, whatever had moved into them).
#[test]
fn a_package_moved_to_another_directory_is_a_clean_builds() {
    let t = unacknowledged();
    let root = t.root().to_path_buf();
    let quorum = root.join("packages/quorum/kix.toml");
    let text = std::fs::read_to_string(&quorum).unwrap();
    let version = text.lines().find(|l| l.starts_with("version = ")).unwrap().to_string();
    std::fs::write(&quorum, text.replacen(&version, &format!("{version}\nkeepNamespaces = [\"monitoring\"]"), 1))
        .unwrap();
    build_like_a_clean_build(&t, "a kept namespace nothing creates (K0421)");
    build_like_a_clean_build(&t, "reused");
    let swap = |a: &str, b: &str| {
        let (a, b, between) = (root.join(a), root.join(b), root.join("packages/swapping"));
        std::fs::rename(&a, &between).unwrap();
        std::fs::rename(&b, &a).unwrap();
        std::fs::rename(&between, &b).unwrap();
    };
    swap("packages/quorum", "packages/cache");
    build_like_a_clean_build(&t, "quorum and cache swapped");
    swap("packages/quorum", "packages/cache");
    build_like_a_clean_build(&t, "swapped back");
    // Moved to a directory of a new name, and a package of another name in its place.
    std::fs::rename(root.join("packages/quorum"), root.join("packages/quorum-moved")).unwrap();
    copy_tree(&root.join("packages/dns"), &root.join("packages/quorum"));
    let dns = root.join("packages/quorum/kix.toml");
    let text = std::fs::read_to_string(&dns).unwrap();
    let name = text.lines().find(|l| l.starts_with("name = ")).unwrap().to_string();
    std::fs::write(&dns, text.replacen(&name, "name = \"unrelated\"", 1)).unwrap();
    build_like_a_clean_build(&t, "moved, another package in its place");
}
