//! A YAML error from kix's loader ([`kix_yaml::YamlError`]) as the diagnostic that names its file,
//! line and column. Shared by the package documents reader and the kustomization check, which
//! is why it has its own file.

use kix_diag::{Code, Diagnostic, SourceFile};
use kix_yaml::{YamlError, YamlErrorKind};

/// One located diagnostic for a YAML problem: limits are refusals (K0108), the rest malformed YAML (K0104).
pub fn yaml_diagnostic(source: &SourceFile, error: &YamlError) -> Diagnostic {
    let (line, column) = (error.mark.line as usize, error.mark.column as usize);
    match error.kind {
        YamlErrorKind::SizeLimit | YamlErrorKind::DepthLimit | YamlErrorKind::AliasLimit => {
            Diagnostic::new(Code::InputRefused, format!("YAML {}", error.message)).at(source.locate_line(line, column))
        }
        _ if error.message.starts_with("tabs ") => {
            // Point at the tab itself: the parser notices it one character later.
            let tab_column = source
                .text
                .lines()
                .nth(line.saturating_sub(1))
                .and_then(|text| text.chars().position(|c| c == '\t'))
                .map_or(column, |index| index + 1);
            Diagnostic::new(Code::YamlSyntax, "invalid YAML: tabs cannot be used for indentation")
                .at(source.locate_line(line, tab_column))
                .help("indent with spaces")
        }
        _ => {
            let message = error.message.strip_prefix("invalid YAML: ").unwrap_or(&error.message);
            Diagnostic::new(Code::YamlSyntax, format!("invalid YAML: {message}")).at(source.locate_line(line, column))
        }
    }
}
