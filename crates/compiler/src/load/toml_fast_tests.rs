//! The fast reader against toml's parser: wherever it reads a document, toml reads the same one, spans
//! and all; and it reads the cluster files kix ships and generates (else it would help nobody).

use super::{parse, parse_regions};
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

/// Whether the two readings are the same: both none, or the same document, spans and all.
fn same_reading(a: Option<Spanned<DeTable<'_>>>, b: Option<Spanned<DeTable<'_>>>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.span() == b.span() && same_table(a.get_ref(), b.get_ref()),
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]
    /// Reading some lines in place is reading the text with the other lines blanked: the same document or
    /// the same refusal, whichever lines are kept (a byte-order mark, carriage returns and control
    /// characters among them or blanked).
    #[test]
    fn lines_read_in_place_are_the_blanked_text_read(
        lines in prop::collection::vec(prop_oneof![
            4 => line(),
            1 => Just("a = \"x\"\r".to_string()),
            1 => Just("# bell \u{7}".to_string()),
            1 => Just("\u{feff}name = \"v\"".to_string()),
        ], 0..12),
        kept_lines in prop::collection::vec(any::<bool>(), 12),
        newline in any::<bool>(),
    ) {
        let mut text = lines.join("\n");
        if newline {
            text.push('\n');
        }
        // The kept lines as ranges, neighbours joined (as `reuse::in_part` gives them).
        let mut kept: Vec<std::ops::Range<usize>> = Vec::new();
        let mut at = 0;
        for (index, line) in text.split_inclusive('\n').enumerate() {
            if kept_lines[index] {
                match kept.last_mut() {
                    Some(last) if last.end == at => last.end = at + line.len(),
                    _ => kept.push(at..at + line.len()),
                }
            }
            at += line.len();
        }
        let blanked = crate::load::toml_file::blanked(&text, &kept);
        prop_assert_eq!(blanked.len(), text.len());
        prop_assert!(same_reading(parse_regions(&text, &kept), parse(&blanked)), "{:?} kept {:?}", text, kept);
    }
}

/// The whole text as one range is the text read.
#[test]
fn the_whole_text_kept_is_the_text_read() {
    let text = "availability = \"zone\"\n[[instances]]\nname = \"a\"\n\n[[instances]]\nname = \"b\"\n";
    assert!(same_reading(parse_regions(text, std::slice::from_ref(&(0..text.len()))), parse(text)));
    let second = text.find("\n\n[[instances]]").unwrap() + 2;
    let first_only = parse_regions(text, std::slice::from_ref(&(0..second))).expect("read");
    let instances = first_only.get_ref().iter().find(|(key, _)| key.get_ref() == "instances").expect("instances");
    let DeValue::Array(entries) = instances.1.get_ref() else { panic!("an array of tables") };
    assert_eq!(entries.len(), 1, "the second entry is left out");
}
