//! The fast reader against toml's parser: wherever it reads a document, toml reads the same one, spans
//! and all; and it reads the cluster files kix ships and generates (else it would help nobody).

use super::parse;
use proptest::prelude::*;
use std::path::Path;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// Whether two documents are the same, keys, values and every span.
fn same_table(a: &DeTable<'_>, b: &DeTable<'_>) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b.iter())
            .all(|((ka, va), (kb, vb))| ka.span() == kb.span() && ka.get_ref() == kb.get_ref() && same_value(va, vb))
}

fn same_value(a: &Spanned<DeValue<'_>>, b: &Spanned<DeValue<'_>>) -> bool {
    a.span() == b.span()
        && match (a.get_ref(), b.get_ref()) {
            (DeValue::String(x), DeValue::String(y)) => x == y,
            (DeValue::Boolean(x), DeValue::Boolean(y)) => x == y,
            (DeValue::Array(x), DeValue::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| same_value(p, q))
            }
            (DeValue::Table(x), DeValue::Table(y)) => same_table(x, y),
            _ => false,
        }
}

/// `None` when the fast reader gave up; else whether it read what toml reads (toml must accept it).
fn agrees(text: &str) -> Option<bool> {
    let fast = parse(text)?;
    let Ok(toml) = DeTable::parse(text) else { return Some(false) };
    Some(fast.span() == toml.span() && same_table(fast.get_ref(), toml.get_ref()))
}

fn cluster_files(dir: &Path, found: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() && !path.ends_with("target") {
            cluster_files(&path, found);
        } else if kind.is_file() && path.extension().is_some_and(|e| e == "toml") {
            found.push(path);
        }
    }
}

/// Every TOML file of the repository (cluster files, kix.toml, the bad cases): read as toml reads it or
/// left to toml (the shipped clusters' node pools, with integers and inline tables, are toml's).
#[test]
fn every_toml_file_of_the_repository_is_read_as_toml_reads_it() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let mut files = Vec::new();
    for dir in ["clusters", "packages", "tests", "examples"] {
        cluster_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 100, "{} files", files.len());
    let mut read = 0;
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else { continue };
        match agrees(&text) {
            Some(true) => read += 1,
            Some(false) => panic!("{} read otherwise than toml reads it", file.display()),
            None => {}
        }
    }
    eprintln!("{read} of {} files read", files.len());
    assert!(read > 50, "only {read} of {} files read", files.len());
}

/// The forms a fleet's cluster files take (genfleet's, and what people write), read; each variation
/// toml refuses or reads otherwise, left to toml.
#[test]
fn fleet_forms_are_read_and_the_rest_left_to_toml() {
    let fleet = "availability = \"node\"\n# a comment\nallow = [\"K0307\", \"K0308\"]\n\n[capabilities]\nmultiNode = true\n\
                 availabilityZones = [\"z-a\", 'z-b' , ]\n\n[failureDomains]\nextra = []\n\n[[instances]]\nname = \"i0000\"\n\
                 package = \"pkg-1\"\nversion = \"^1.0\"   # pinned\n\n[[ instances ]]\t# two\nname = \"é\"\nnamespace = ''\n";
    assert_eq!(agrees(fleet), Some(true));
    assert_eq!(agrees(""), Some(true));
    for refused in [
        "a = \"x\"\na = \"y\"\n",
        "[t]\n[t]\n",
        "t = \"x\"\n[t]\n",
        "[[t]]\n[t]\n",
        "[t]\n[[t]]\n",
        "t = []\n[[t]]\n",
        "a = \"x\" b\n",
        "a = \"x\\ny\"\n",
        "a = \"\"\"x\"\"\"\n",
        "a = 1\n",
        "a.b = \"x\"\n",
        "\"a\" = \"x\"\n",
        "[a.b]\n",
        "a = [\"x\"\n",
        "a = [,]\n",
        "a = [\"x\" \"y\"]\n",
        "a = tru\n",
        "a = truex\n",
        "a = \"x\"\r\n",
        "a = \"x\u{7}\"\n",
        "# bell \u{7}\n",
        "a = { b = \"c\" }\n",
        "[t] x\n",
        "[]\n",
        "a =\n",
    ] {
        assert_ne!(agrees(refused), Some(false), "{refused:?}");
        assert_eq!(parse(refused).map(|_| ()), None, "{refused:?} is left to toml");
    }
}

/// Lines from the forms above and their near misses, in any order: wherever the fast reader reads a
/// document, toml reads the same one.
fn line() -> impl Strategy<Value = String> {
    let keys = prop::sample::select(vec!["name", "package", "a", "b-c", "x_1", "multiNode", "Ab"]);
    let values = prop::sample::select(vec![
        "\"v\"",
        "'v'",
        "\"\"",
        "''",
        "\"é ü\"",
        "\"a#b\"",
        "true",
        "false",
        "[]",
        "[ ]",
        "[\"a\",]",
        "['a', \"b\"]",
        "[\"a\" ,'b' ]",
        "\"a\\\"b\"",
        "'''x'''",
        "\"\"\"x\"\"\"",
        "1",
        "tru",
        "[\"a\"",
        "[,]",
        "\"a\" # c",
        "\"a\" x",
        "{}",
        "\"a\"\"b\"",
        "'a'b'",
    ]);
    let blanks = prop::sample::select(vec!["", " ", "\t", "  "]);
    let header = prop::sample::select(vec![
        "[t]",
        "[[t]]",
        "[ t ]",
        "[[ t ]]",
        "[[t]] # c",
        "[u]",
        "[[u]]",
        "[t",
        "[[t]",
        "[]",
        "[t.u]",
        "[\"t\"]",
    ]);
    prop_oneof![
        (blanks.clone(), keys.clone(), blanks.clone(), values, blanks.clone())
            .prop_map(|(a, k, b, v, c)| format!("{a}{k}{b}={b}{v}{c}")),
        (blanks.clone(), header).prop_map(|(a, h)| format!("{a}{h}")),
        Just(String::new()),
        Just("# comment".to_string()),
        (blanks, keys).prop_map(|(a, k)| format!("{a}{k}")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]
    #[test]
    fn wherever_it_reads_a_document_toml_reads_the_same(lines in prop::collection::vec(line(), 0..12), newline in any::<bool>()) {
        let mut text = lines.join("\n");
        if newline {
            text.push('\n');
        }
        prop_assert_ne!(agrees(&text), Some(false), "{:?}", text);
    }
}
