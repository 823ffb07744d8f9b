//! `--format github`: each finding as a GitHub Actions workflow command on stdout, which the runner
//! turns into an annotation on the file and line of the pull request
//! (<https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands>):
//! `::error file=F,line=L,col=C,title=K0xxx::message` for an error, `::warning` for a warning,
//! `::notice` for a [`Note`](super::Note). Property values escape `%`, CR, LF, `:` and `,`; the message
//! escapes `%`, CR and LF, as the runner's own toolkit (`@actions/core` `command.ts`) does.

use super::Outcome;
use kix_diag::{Code, Location, Severity};

/// One workflow command per cause (its instances said after the message) and note, each on its own line.
pub fn render(outcome: &Outcome<'_>) -> String {
    let mut out = String::new();
    for cause in outcome.diagnostics.causes() {
        let diagnostic = cause.diagnostic();
        let command = match diagnostic.severity() {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let mut message = cause.message();
        if let Some(spread) = cause.spread() {
            message.push_str(&format!("\n{spread}"));
        }
        for note in diagnostic.notes() {
            message.push_str(&format!("\nnote: {note}"));
        }
        if let Some(help) = &diagnostic.help {
            message.push_str(&format!("\nhelp: {help}"));
        }
        out.push_str(&line(outcome, command, diagnostic.code, diagnostic.location(), &message));
    }
    for note in &outcome.notes {
        out.push_str(&line(outcome, "notice", note.code, note.location.as_ref(), &note.message));
    }
    out
}

fn line(outcome: &Outcome<'_>, command: &str, code: Code, location: Option<&Location>, message: &str) -> String {
    let mut properties = Vec::new();
    if let Some(location) = location {
        properties.push(format!("file={}", property(&outcome.artifact_path(location.path()))));
        if let Some(line) = location.line() {
            properties.push(format!("line={line}"));
        }
        if let Some(column) = location.column() {
            properties.push(format!("col={column}"));
        }
    }
    properties.push(format!("title={}", code.id()));
    format!("::{command} {}::{}\n", properties.join(","), data(message))
}

/// `escapeData`: the message.
fn data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// `escapeProperty`: a property's value.
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_as_the_actions_toolkit_does() {
        assert_eq!(super::data("50% done\nnext"), "50%25 done%0Anext");
        assert_eq!(super::property("a:b,c%"), "a%3Ab%2Cc%25");
    }
}
