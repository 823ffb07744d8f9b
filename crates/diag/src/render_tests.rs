//! The text and JSON forms: exact output for each shape a diagnostic takes.

use crate::{Code, Diagnostic, Location, SourceFile, Style, Subject};

fn cluster(name: &str) -> Subject {
    Subject { cluster: Some(name.into()), ..Subject::default() }
}

#[test]
fn colour_only_on_a_terminal_and_never_under_no_color() {
    use std::ffi::OsStr;
    assert_eq!(Style::choose(true, None), Style::Colour);
    assert_eq!(Style::choose(false, None), Style::Plain);
    assert_eq!(Style::choose(true, Some(OsStr::new("1"))), Style::Plain);
    assert_eq!(Style::choose(true, Some(OsStr::new(""))), Style::Colour);
    let source = SourceFile::new("a.toml", "a = 1\n".to_string());
    for diagnostic in [Diagnostic::new(Code::Io, "x"), Diagnostic::new(Code::Io, "x").at(source.locate(4..5))] {
        let diagnostic = diagnostic.about(&cluster("dev"));
        assert!(diagnostic.render(Style::Colour).contains("\x1b["));
        assert!(!diagnostic.render(Style::Plain).contains('\x1b'));
    }
}

#[test]
fn render_plain_has_caret_and_subject() {
    let source = SourceFile::new("clusters/dev.toml", "availability = \"zone\"\n".to_string());
    let diagnostic =
        Diagnostic::new(Code::LevelAboveSubstrate, "too high").at(source.locate(15..21)).about(&cluster("dev"));
    assert_eq!(
        diagnostic.render(Style::Plain),
        "error[K0302]: too high\n --> clusters/dev.toml:1:16\n  |\n1 | availability = \"zone\"\n  |                ^^^^^^\n  = in cluster dev\n"
    );
}

#[test]
fn a_file_alone_and_no_place_at_all() {
    let diagnostic = Diagnostic::new(Code::Io, "cannot read").at(Location::file("clusters")).help("check it");
    assert_eq!(diagnostic.render(Style::Plain), "error[K0101]: cannot read\n --> clusters\n  = help: check it\n");
    let diagnostic = Diagnostic::new(Code::Io, "nowhere").about(&cluster("c")).note("a note");
    assert_eq!(diagnostic.render(Style::Plain), "error[K0101]: nowhere\n  = in cluster c\n  = note: a note\n");
}

/// The gutter is as wide as the largest line number shown, footers included.
#[test]
fn secondary_labels_in_the_same_file_and_in_another() {
    let text = (1..=12).map(|n| format!("key{n} = {n}\n")).collect::<String>();
    let first = SourceFile::new("a.toml", text.clone());
    let other = SourceFile::new("b/kix.toml", "version = \"1.0.0\"\n".to_string());
    let at = |source: &SourceFile, line: usize| source.locate_line(line, 1);
    let diagnostic = Diagnostic::new(Code::Io, "twice")
        .at(at(&first, 11))
        .with_label(at(&first, 2), "first here")
        .with_label(other.locate(10..17), "and here")
        .help("keep one");
    assert_eq!(
        diagnostic.render(Style::Plain),
        "error[K0101]: twice
  --> a.toml:11:1
   |
 2 | key2 = 2
   | ---- first here
...
11 | key11 = 11
   | ^^^^^
   |
  ::: b/kix.toml:1:11
   |
 1 | version = \"1.0.0\"
   |           ------- and here
   = help: keep one
"
    );
}

#[test]
fn long_lines_are_cut_to_a_window_and_the_column_is_the_files() {
    let line = format!("x = [{}]\n", "[".repeat(300));
    let source = SourceFile::new("a.toml", line);
    let diagnostic = Diagnostic::new(Code::Io, "deep").at(source.locate(200..400));
    let text = diagnostic.render(Style::Plain);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[1], " --> a.toml:1:201");
    assert_eq!(lines[3], format!("1 | ...{}...", "[".repeat(120)));
    // The caret keeps its width (up to the window's) past the window's end, as kix always showed it.
    assert_eq!(lines[4], format!("  | {}{}", " ".repeat(62), "^".repeat(106)));
}

/// A tab is shown as written, and the padding before the caret has a tab under it.
#[test]
fn tabs_stay_tabs() {
    let source = SourceFile::new("a.yaml", "a:\n\tname:\tapi\n".to_string());
    let diagnostic = Diagnostic::new(Code::YamlSyntax, "tab").at(source.locate_line(2, 8)).help("spaces");
    assert_eq!(
        diagnostic.render(Style::Plain),
        "error[K0104]: tab\n --> a.yaml:2:8\n  |\n2 | \tname:\tapi\n  | \t     \t^^^\n  = help: spaces\n"
    );
}

#[test]
fn json_keeps_its_keys_in_order_with_nulls_and_labels_only_when_there_are_some() {
    let source = SourceFile::new("m.yaml", "a: 1\nb: 2\n".to_string());
    let diagnostic = Diagnostic::new(Code::Io, "x").at(source.locate(5..6)).about(&cluster("c"));
    assert_eq!(
        diagnostic.to_json(),
        r#"{"cluster":"c","code":"K0101","column":1,"file":"m.yaml","help":null,"instance":null,"line":2,"message":"x","package":null,"severity":"error","workload":null}"#
    );
    let diagnostic = Diagnostic::new(Code::Io, "x").with_label(source.locate(0..1), "here").note("n");
    assert_eq!(
        diagnostic.to_json(),
        r#"{"cluster":null,"code":"K0101","column":null,"file":null,"help":null,"instance":null,"labels":[{"column":1,"file":"m.yaml","label":"here","line":1}],"line":null,"message":"x","notes":["n"],"package":null,"severity":"error","workload":null}"#
    );
}

/// `text` without its ANSI escape sequences (`ESC [ ... letter`).
fn without_escapes(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            chars.by_ref().find(|c| c.is_ascii_alphabetic());
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn colour_lays_out_the_same_text() {
    let source = SourceFile::new("a.yaml", format!("a:\n\tname:\tapi {}\n", "x".repeat(200)));
    let diagnostic = Diagnostic::new(Code::YamlSyntax, "tab")
        .at(source.locate_line(2, 8))
        .with_label(source.locate_line(1, 1), "here")
        .about(&cluster("c"))
        .note("n")
        .help("h");
    let plain = diagnostic.render(Style::Plain);
    assert!(plain.contains("2 | \tname:\tapi x") && plain.contains("  | \t     \t^^^"), "{plain}");
    assert_eq!(without_escapes(&diagnostic.render(Style::Colour)), plain);
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

        /// Spans from parsers point anywhere into any text (the fuzz targets' concern): every
        /// diagnostic renders.
        #[test]
        fn any_spans_into_any_text_render(
            text in prop_oneof![
                "(\\PC|\t|\r|\n|\u{E000}|é|日){0,300}",
                "([a \t日]{0,300}\r?\n){0,3}[a \t]{0,300}",
            ],
            spans in proptest::collection::vec((0usize..1000, 0usize..1000), 0..4),
        ) {
            let source = SourceFile::new("f.txt", text);
            let mut diagnostic = Diagnostic::new(Code::Io, "m\tn");
            for (i, (a, b)) in spans.into_iter().enumerate() {
                let location = source.locate(a.min(b)..a.max(b));
                diagnostic = if i == 0 { diagnostic.at(location) } else { diagnostic.with_label(location, "l") };
            }
            // Colour changes nothing but the escape sequences, kix's restorations included.
            prop_assert_eq!(without_escapes(&diagnostic.render(Style::Colour)), diagnostic.render(Style::Plain));
            let _ = diagnostic.to_json();
        }
    }
}

#[test]
fn color_auto_honours_no_color_then_clicolor_force_and_force_color_then_the_terminal() {
    use std::ffi::OsStr;
    let v = |s: &'static str| Some(OsStr::new(s));
    let cases = [
        // (terminal, NO_COLOR, CLICOLOR_FORCE, FORCE_COLOR, style)
        (false, None, None, None, Style::Plain),
        (true, None, None, None, Style::Colour),
        (false, None, v("1"), None, Style::Colour),
        (false, None, None, v("1"), Style::Colour),
        (false, None, None, v("true"), Style::Colour),
        (false, None, v("0"), v("0"), Style::Plain),
        (false, None, v(""), v(""), Style::Plain),
        (true, v("1"), None, None, Style::Plain),
        (false, v("1"), v("1"), v("1"), Style::Plain),
        (true, v(""), None, None, Style::Colour),
    ];
    for (terminal, no_color, clicolor_force, force_color, style) in cases {
        assert_eq!(
            Style::choose_auto(terminal, no_color, clicolor_force, force_color),
            style,
            "{terminal} {no_color:?} {clicolor_force:?} {force_color:?}"
        );
    }
}
