//! A YAML error from kix's loader ([`kix_yaml::YamlError`]) as the diagnostic that names its file,
//! line and column. Shared by the package documents reader and the kustomization check, which
//! is why it has its own file.

use kix_diag::{Code, Diagnostic, SourceFile};
use kix_yaml::{YamlError, YamlErrorKind};

/// One located diagnostic for a YAML problem: limits are refusals (K0108), the rest malformed YAML (K0104).
/// saphyr's syntax errors carry a position and no kind: a syntax error at the indentation of a line
/// indented with a tab is that tab (YAML forbids tabs there), read from the text at the error.
pub fn yaml_diagnostic(source: &SourceFile, error: &YamlError) -> Diagnostic {
    let (line, column) = (error.mark.line as usize, error.mark.column as usize);
    let tab_column = (error.kind == YamlErrorKind::Syntax).then(|| indenting_tab(source, line, column)).flatten();
    match error.kind {
        YamlErrorKind::SizeLimit | YamlErrorKind::DepthLimit | YamlErrorKind::AliasLimit => {
            Diagnostic::new(Code::InputRefused, format!("YAML {}", error.message)).at(source.locate_line(line, column))
        }
        // Point at the tab itself: the parser notices it a character or more later.
        _ => match tab_column {
            Some(tab_column) => Diagnostic::new(Code::YamlSyntax, "invalid YAML: tabs cannot be used for indentation")
                .at(source.locate_line(line, tab_column))
                .help("indent with spaces"),
            None => {
                let message = error.message.strip_prefix("invalid YAML: ").unwrap_or(&error.message);
                Diagnostic::new(Code::YamlSyntax, format!("invalid YAML: {message}"))
                    .at(source.locate_line(line, column))
            }
        },
    }
}

/// The 1-based column of the first tab in the indentation of `line`, when `column` is within that
/// indentation or just after it.
fn indenting_tab(source: &SourceFile, line: usize, column: usize) -> Option<usize> {
    let text = source.text().lines().nth(line.checked_sub(1)?)?;
    let indent = text.chars().take_while(|c| matches!(c, ' ' | '\t')).count();
    let tab = text.chars().take(indent).position(|c| c == '\t')?;
    (column <= indent + 1).then_some(tab + 1)
}
