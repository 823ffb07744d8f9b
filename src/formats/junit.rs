//! `--format junit`: JUnit XML, the report every CI's test dashboard reads (kubeconform and conftest
//! write it too). A `<testsuites>` of `<testsuite>`s of `<testcase>`s, as the de-facto schema has it
//! (Ant's JUnit task, read by Jenkins, GitLab, Buildkite, GitHub test reporters): a case that fails
//! carries a `<failure message=".." type="K0xxx">` with the findings as its text; a case that was not
//! run a `<skipped>`. What each command makes a case of: `kix verify` one per workload and scenario
//! (`formats::verify_junit`), `kix lint` one per object (`formats::lint_junit`).

use std::fmt::Write as _;

/// One test suite: a cluster of verify, a file of lint.
#[derive(Clone, Debug, Default)]
pub struct Suite {
    pub name: String,
    pub cases: Vec<Case>,
}

/// One test case and how it went.
#[derive(Clone, Debug, Default)]
pub struct Case {
    pub name: String,
    pub classname: String,
    /// Why it failed: the first finding's code and message, then every finding as the text.
    pub failure: Option<Failure>,
    /// Why it did not run.
    pub skipped: Option<String>,
    /// What else there is to know (warnings, notes), as `<system-out>`.
    pub output: Option<String>,
}

#[derive(Clone, Debug)]
pub struct Failure {
    pub kind: String,
    pub message: String,
    pub text: String,
}

/// The XML document, with a final line break.
pub fn render(name: &str, suites: &[Suite]) -> String {
    let count = |f: fn(&Case) -> bool| suites.iter().flat_map(|s| &s.cases).filter(|c| f(c)).count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">",
        escape(name),
        count(|_| true),
        count(|c| c.failure.is_some()),
        count(|c| c.skipped.is_some())
    );
    for suite in suites {
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">",
            escape(&suite.name),
            suite.cases.len(),
            suite.cases.iter().filter(|c| c.failure.is_some()).count(),
            suite.cases.iter().filter(|c| c.skipped.is_some()).count()
        );
        for case in &suite.cases {
            let _ =
                write!(out, "    <testcase name=\"{}\" classname=\"{}\"", escape(&case.name), escape(&case.classname));
            if case.failure.is_none() && case.skipped.is_none() && case.output.is_none() {
                out.push_str("/>\n");
                continue;
            }
            out.push_str(">\n");
            if let Some(failure) = &case.failure {
                let _ = writeln!(
                    out,
                    "      <failure message=\"{}\" type=\"{}\">{}</failure>",
                    escape(&failure.message),
                    escape(&failure.kind),
                    escape(&failure.text)
                );
            }
            if let Some(why) = &case.skipped {
                let _ = writeln!(out, "      <skipped message=\"{}\"/>", escape(why));
            }
            if let Some(output) = &case.output {
                let _ = writeln!(out, "      <system-out>{}</system-out>", escape(output));
            }
            out.push_str("    </testcase>\n");
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// Text as XML 1.0 character data or an attribute value: the five markup characters as entities, line
/// breaks and tabs as character references (attribute values keep them), and the control characters XML
/// 1.0 cannot carry at all as U+FFFD.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_markup_and_control_characters() {
        assert_eq!(super::escape("a<b & \"c\"\n\u{1}"), "a&lt;b &amp; &quot;c&quot;&#10;\u{FFFD}");
    }
}
