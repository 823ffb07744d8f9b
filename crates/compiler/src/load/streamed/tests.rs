//! The streamed reader gives what reading the file whole gives: the same documents (values, byte
//! ranges, the locations of their fields) and the same diagnostics, rendered, on every YAML file of
//! the repository (the real-world corpus, the lint cases, the fixtures, the fuzz corpora) and on
//! files made to fall back (a YAML error in a later document, a character YAML refuses, bytes that
//! are not UTF-8, document markers inside scalars, directives, CRLF line ends).

use super::*;
use kix_diag::Style;

/// What a reader hands on, as comparable text: each document's byte range, value and a few located
/// fields, then every diagnostic rendered (the rendering reads the lines it shows from the source).
fn read(path: &Path, streamed: bool) -> (Vec<String>, Vec<String>, bool) {
    let mut diagnostics = Diagnostics::default();
    let mut documents = Vec::new();
    let mut each = |document: Document| {
        let at = |path: &str| document.locate_field(path).to_string();
        documents.push(format!(
            "{:?} {} {} {} {} {}",
            document.byte_range(),
            document.location(),
            at("metadata.name"),
            at("spec.template.spec.containers[0].image"),
            at("spec.selector"),
            kix_yaml::emit::to_string(&document.value),
        ));
    };
    let limit = kix_diag::source::MAX_PACKAGE_FILE_BYTES;
    let read = if streamed {
        each_document_streamed(path, path.to_path_buf(), limit, Naming::OrGenerated, &mut diagnostics, each)
    } else {
        match crate::fs::read_source(path, path.to_path_buf(), limit) {
            Ok(source) => {
                each_document_named(source, Naming::OrGenerated, &mut diagnostics, &mut each);
                true
            }
            Err(problem) => {
                diagnostics.push(problem);
                false
            }
        }
    };
    diagnostics.finish();
    let rendered = diagnostics.iter().map(|d| format!("{}\n{}", d.render(Style::Plain), d.to_json())).collect();
    (documents, rendered, read)
}

fn assert_same(path: &Path) {
    let (whole, streamed) = (read(path, false), read(path, true));
    let short = |s: &String| s.chars().take(400).collect::<String>();
    for (what, (one, other)) in [("document", (&streamed.0, &whole.0)), ("diagnostic", (&streamed.1, &whole.1))] {
        if let Some(at) = (0..one.len().max(other.len())).find(|&i| one.get(i) != other.get(i)) {
            panic!(
                "{}: {what} {at} differs\nstreamed: {:?}\nwhole:    {:?}",
                path.display(),
                one.get(at).map(short),
                other.get(at).map(short)
            );
        }
    }
    assert_eq!(streamed.2, whole.2, "{}", path.display());
}

fn yaml_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        let Ok(metadata) = std::fs::symlink_metadata(&path) else { continue };
        if metadata.is_dir() {
            yaml_files(&path, found);
        } else if metadata.is_file() {
            found.push(path);
        }
    }
}

#[test]
fn every_file_of_the_repository_reads_the_same_streamed() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let mut files = Vec::new();
    for dir in ["tests", "examples", "packages", "fuzz/corpus", "fuzz/regressions"] {
        yaml_files(&root.join(dir), &mut files);
    }
    let yaml: Vec<&PathBuf> = files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml") || p.starts_with(root.join("fuzz")))
        .collect();
    // The corpus alone holds over a hundred manifests; the fuzz corpora hold hostile text.
    assert!(yaml.len() > 300, "found only {} files", yaml.len());
    for path in yaml {
        assert_same(path);
    }
}

/// Files made to take every way out of the windows, each compared with the whole read.
#[test]
fn files_that_fall_back_read_as_they_do_whole() {
    let deployment = |name: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    spec:\n      containers: [{{name: c, image: x}}]\n"
        )
    };
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("plain", format!("{}---\n{}---\n", deployment("a"), deployment("b")).into_bytes()),
        (
            "error-in-third",
            format!("{}---\n{}---\nkind: [\n---\n{}", deployment("a"), deployment("b"), deployment("c")).into_bytes(),
        ),
        (
            "duplicate-key-later",
            format!("{}---\n{}  name: again\n---\n{}", deployment("a"), deployment("b"), deployment("c")).into_bytes(),
        ),
        ("control-character-later", format!("{}---\n{}\u{1}\n", deployment("a"), deployment("b")).into_bytes()),
        ("not-utf8-later", [deployment("a").as_bytes(), b"---\nkind: \xff\n"].concat()),
        (
            "marker-in-block-scalar",
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\ndata:\n  x: |\n    a\n---\n{}",
                deployment("a")
            )
            .into_bytes(),
        ),
        (
            "marker-in-quoted",
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\ndata:\n  x: \"a\n---\n  b\"\n{}",
                deployment("a")
            )
            .into_bytes(),
        ),
        (
            "directive",
            format!("%YAML 1.2\n---\n{}...\n%YAML 1.2\n---\n{}", deployment("a"), deployment("b")).into_bytes(),
        ),
        ("document-end-markers", format!("{}...\n---\n{}...\n", deployment("a"), deployment("b")).into_bytes()),
        (
            "marker-with-content",
            format!(
                "--- {{apiVersion: v1, kind: ConfigMap, metadata: {{name: c}}}}\n--- |\n  text\n---\n{}",
                deployment("a")
            )
            .into_bytes(),
        ),
        ("crlf", format!("{}---\r\n{}", deployment("a"), deployment("b")).replace('\n', "\r\n").into_bytes()),
        ("not-a-marker", format!("{}----\n---x\n", deployment("a")).into_bytes()),
        (
            "list",
            format!(
                "apiVersion: v1\nkind: List\nitems:\n- {}---\n{}",
                deployment("a").replace('\n', "\n  "),
                deployment("b")
            )
            .into_bytes(),
        ),
        ("not-an-object", format!("just text\n---\n{}---\n- 1\n", deployment("a")).into_bytes()),
        ("alias-across-documents", format!("{}---\nkind: &k ConfigMap\n---\nkind: *k\n", deployment("a")).into_bytes()),
        (
            "bom",
            [b"\xef\xbb\xbf".as_slice(), deployment("a").as_bytes(), b"---\n", deployment("b").as_bytes()].concat(),
        ),
        ("marker-in-top-level-block-scalar", format!("--- |\ntext at column 0\n---\n{}", deployment("a")).into_bytes()),
        ("marker-in-plain-multiline", format!("--- a\n  b\n---\n{}", deployment("a")).into_bytes()),
        ("empty", Vec::new()),
        ("no-trailing-newline", format!("{}---\nkind: x", deployment("a")).into_bytes()),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in cases {
        let path = dir.path().join(format!("{name}.yaml"));
        std::fs::write(&path, bytes).unwrap();
        assert_same(&path);
    }
}

/// What is not a regular file is refused as reading it whole refuses it, and never opened (a FIFO's
/// open would wait for a writer).
#[test]
fn what_is_not_a_file_is_refused_alike() {
    let dir = tempfile::tempdir().unwrap();
    assert_same(dir.path());
    assert_same(&dir.path().join("missing.yaml"));
    #[cfg(target_os = "linux")]
    {
        let fifo = dir.path().join("fifo.yaml");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let (_, rendered, read) = read(&fifo, true);
        assert!(!read && rendered.len() == 1 && rendered[0].contains("FIFO"), "{rendered:?}");
    }
    let big = dir.path().join("big.yaml");
    std::fs::write(&big, "a: 1\n---\n".repeat(20)).unwrap();
    let mut diagnostics = Diagnostics::default();
    assert!(!each_document_streamed(&big, big.clone(), 100, Naming::OrGenerated, &mut diagnostics, |_| {}));
    assert!(diagnostics.iter().next().unwrap().to_json().contains("larger than"));
}

/// A diagnostic in a streamed file shows its line read again from the file, and a file changed on disk
/// since shows its new text rather than failing (one that is gone shows an empty line).
#[test]
fn a_streamed_file_is_read_again_when_its_diagnostics_render() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.yaml");
    std::fs::write(&path, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n- 1\n").unwrap();
    let mut diagnostics = Diagnostics::default();
    each_document_streamed(&path, path.clone(), 1 << 20, Naming::OrGenerated, &mut diagnostics, |_| {});
    let rendered = diagnostics.iter().next().unwrap().render(Style::Plain);
    assert!(rendered.contains("a.yaml:5:1") && rendered.contains("5 | - 1"), "{rendered}");
    std::fs::remove_file(&path).unwrap();
    let gone = diagnostics.iter().next().unwrap().render(Style::Plain);
    assert!(gone.contains("a.yaml"), "{gone}");
}

/// A plain file is parsed a window at a time (no document's source holds the file's text), and a file
/// with a YAML error in its third document is parsed whole only from there: the first two documents
/// came from their windows.
#[test]
fn windows_hold_one_document_each_and_the_fallback_starts_where_they_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let document = |name: &str| format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n");
    let texts = |text: String| {
        let path = dir.path().join("f.yaml");
        std::fs::write(&path, &text).unwrap();
        let mut held = Vec::new();
        let mut diagnostics = Diagnostics::default();
        each_document_streamed(&path, path.clone(), 1 << 20, Naming::OrGenerated, &mut diagnostics, |d| {
            held.push(d.source.text().len());
        });
        (held, text.len(), diagnostics.iter().count())
    };
    let (held, length, problems) = texts(format!("{}---\n{}---\n{}", document("a"), document("b"), document("c")));
    assert_eq!((held.len(), problems), (3, 0));
    assert!(held.iter().all(|&bytes| bytes <= document("a").len() + 4), "{held:?} of {length}");
    let (held, length, problems) =
        texts(format!("{}---\n{}---\nkind: [\n---\n{}", document("a"), document("b"), document("c")));
    assert_eq!(problems, 1);
    assert_eq!(held.len(), 2, "the document after the error is not read, as in the whole stream");
    assert!(held.iter().all(|&bytes| bytes < length), "{held:?} of {length}");
    let (held, length, _) =
        texts(format!("{}---\n{}  name: again\n---\n{}", document("a"), document("b"), document("c")));
    assert_eq!(held.len(), 2, "{held:?}");
    assert!(held[0] < length && held[1] == length, "the second document came from the whole read: {held:?}");
}
