//! The kubectl YAML conformance table (`conformance/kubectl-yaml.tsv`: YAML snippets with the JSON
//! kubectl's decoder, sigs.k8s.io/yaml over go-yaml v2, makes of each, cited per row) run through
//! both of kix's readers: the located loader and the fast reader. The fast reader may refuse a
//! document (the loader then reads it), but what it reads must be what kubectl reads.

use kix_yaml::{Limits, Value, fast_stream, parse_stream};

struct Case {
    line: usize,
    yaml: String,
    json: Option<serde_json::Value>,
}

fn unescape(text: &str) -> String {
    text.replace("\\n", "\n").replace("\\t", "\t")
}

fn cases() -> Vec<Case> {
    let table = include_str!("conformance/kubectl-yaml.tsv");
    let cases: Vec<Case> = table
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.starts_with('#') && !line.trim().is_empty())
        .map(|(i, line)| {
            let columns: Vec<&str> = line.split('\t').collect();
            assert_eq!(columns.len(), 3, "line {}: three tab-separated columns", i + 1);
            let json = match columns[1] {
                "error" => None,
                json => Some(serde_json::from_str(json).unwrap_or_else(|e| panic!("line {}: {e}", i + 1))),
            };
            assert!(!columns[2].trim().is_empty(), "line {}: every row cites its source", i + 1);
            let mut yaml = unescape(columns[0]);
            if !yaml.ends_with('\n') {
                yaml.push('\n');
            }
            Case { line: i + 1, yaml, json }
        })
        .collect();
    assert!(cases.len() >= 100, "the table has {} rows", cases.len());
    cases
}

/// Numbers compare by value (JSON has one number type; the API server reads `1000` and `1000.0`
/// alike); everything else exactly.
fn same(ours: &serde_json::Value, want: &serde_json::Value) -> bool {
    use serde_json::Value as J;
    match (ours, want) {
        (J::Number(a), J::Number(b)) => match (a.as_i64(), b.as_i64(), a.as_u64(), b.as_u64()) {
            (Some(a), Some(b), _, _) => a == b,
            (_, _, Some(a), Some(b)) => a == b,
            _ => a.as_f64() == b.as_f64(),
        },
        (J::Array(a), J::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, b)),
        (J::Object(a), J::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| same(v, w)))
        }
        _ => ours == want,
    }
}

fn json(value: &Value) -> serde_json::Value {
    serde_json::to_value(value).expect("kix's values serialize to JSON")
}

#[test]
fn the_loader_reads_yaml_as_kubectl_does() {
    for case in cases() {
        let mut documents = parse_stream(&case.yaml, &Limits::PACKAGE);
        assert_eq!(documents.len(), 1, "line {}: one document", case.line);
        match (documents.remove(0), &case.json) {
            (Ok(doc), Some(want)) => {
                let ours = json(&doc.value);
                assert!(same(&ours, want), "line {}: {:?} read as {ours}, kubectl reads {want}", case.line, case.yaml);
            }
            (Err(_), None) => {}
            (Ok(doc), None) => {
                panic!("line {}: {:?} read as {}, kubectl refuses it", case.line, case.yaml, json(&doc.value))
            }
            (Err(e), Some(want)) => panic!("line {}: {:?} refused ({e}), kubectl reads {want}", case.line, case.yaml),
        }
    }
}

#[test]
fn the_fast_reader_reads_yaml_as_kubectl_does_or_gives_up() {
    let mut read = 0;
    for case in cases() {
        let Some(mut values) = fast_stream(&case.yaml, &Limits::PACKAGE) else { continue };
        read += 1;
        let Some(want) = &case.json else { panic!("line {}: {:?} read, kubectl refuses it", case.line, case.yaml) };
        assert_eq!(values.len(), 1, "line {}", case.line);
        let ours = json(&values.remove(0));
        assert!(same(&ours, want), "line {}: {:?} fast-read as {ours}, kubectl reads {want}", case.line, case.yaml);
    }
    // The block YAML kubectl writes is the fast reader's: most rows are read by it, not handed on.
    assert!(read >= 70, "the fast reader read only {read} rows");
}

/// What kix writes reads back unchanged through kubectl's rules: every value of the table, and
/// every table row's YAML text as a string value (the strings YAML 1.1 would retype are quoted).
#[test]
fn the_emitter_writes_values_that_read_back_unchanged() {
    let mut values: Vec<Value> = Vec::new();
    for case in cases() {
        if let Some(Ok(doc)) = parse_stream(&case.yaml, &Limits::PACKAGE).into_iter().next() {
            values.push(doc.value);
        }
        for word in case.yaml.split([' ', '\n', ':', ',', '[', ']', '{', '}']).filter(|w| !w.is_empty()) {
            values.push(Value::String(word.to_string()));
        }
    }
    for value in values {
        let written = kix_yaml::emit::to_string(&value);
        let mut read = parse_stream(&written, &Limits::PACKAGE);
        let reread = read.remove(0).unwrap_or_else(|e| panic!("{written:?}: {e}")).value;
        assert_eq!(json(&reread), json(&value), "{written:?}");
        if let Some(mut fast) = fast_stream(&written, &Limits::PACKAGE) {
            assert_eq!(json(&fast.remove(0)), json(&reread), "{written:?}");
        }
    }
}
