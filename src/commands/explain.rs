//! `kix explain`: an instance's derivation step by step, or a diagnostic code's meaning.

use super::output::{finish, outcome, print_stdout, unsupported, usage_error};
use crate::cli::ExplainArgs;
use crate::cli::Format;
use kix_compiler::compile::{self, Selection};
use kix_diag::{Code, Diagnostics};
use kix_engines::explain;
use std::path::Path;
use std::process::ExitCode;

/// `kix explain`: one instance's derivation (`--cluster --instance`), or what a code means.
pub fn explain(args: &ExplainArgs) -> ExitCode {
    if let Some(refused) = unsupported(args.format, "explain", &[]) {
        return refused;
    }
    match (&args.cluster, &args.instance) {
        (Some(cluster), Some(instance)) => explain_instance(args, cluster, instance),
        _ => explain_code(args.code.as_deref(), args.format),
    }
}

/// `kix explain --cluster C --instance I [--workload W]`: the derivation, step by step.
fn explain_instance(args: &ExplainArgs, cluster: &str, instance: &str) -> ExitCode {
    let root = args.root.clone().unwrap_or_else(|| compile::find_root(Path::new(".")));
    let request = explain::ExplainRequest {
        selection: Selection { root, ..Selection::default() },
        cluster: cluster.to_string(),
        instance: instance.to_string(),
        workload: args.workload.clone(),
        level: args.level.as_deref().and_then(kix_kube::level::Level::parse),
    };
    match explain::explain(&request) {
        Ok(derivation) if args.format == Format::Text => {
            print_stdout(&crate::text::explain::render_text(&derivation));
            ExitCode::SUCCESS
        }
        Ok(derivation) => {
            let root = request.selection.root.clone();
            let mut outcome = outcome("explain", &derivation.diagnostics, root);
            if let Ok(serde_json::Value::Object(report)) = serde_json::to_value(&derivation) {
                outcome.report = report;
            }
            finish(&outcome, args.format, None, &[])
        }
        Err(explain::ExplainError::Compile(diagnostics)) => {
            let root = request.selection.root.clone();
            finish(&outcome("explain", &diagnostics, root), args.format, None, &[])
        }
        Err(explain::ExplainError::Unknown(message)) => usage_error(&message),
    }
}

/// `kix explain [CODE]`: one code's meaning, or the table of all (as JSON, `codes`: each with its id,
/// severity, summary and explanation).
fn explain_code(code: Option<&str>, format: Format) -> ExitCode {
    let codes: Vec<Code> = match code {
        None => Code::ALL.to_vec(),
        Some(wanted) => match Code::ALL.iter().find(|c| c.id().eq_ignore_ascii_case(wanted)) {
            Some(code) => vec![*code],
            None => return usage_error(&format!("unknown code `{wanted}`; `kix explain` lists them all")),
        },
    };
    if format == Format::Json {
        let listed = codes.iter().map(|code| {
            serde_json::json!({
                "code": code.id(), "severity": code.severity(), "summary": code.summary(),
                "explanation": code.explanation(),
            })
        });
        let none = Diagnostics::default();
        let mut outcome = outcome("explain", &none, ".".into());
        outcome.report.insert("codes".into(), listed.collect());
        return finish(&outcome, format, None, &[]);
    }
    let mut text = String::new();
    match (code, codes.as_slice()) {
        (Some(_), [code]) => text.push_str(&format!(
            "{} ({}): {}\n\n{}\n",
            code.id(),
            code.severity().as_str(),
            code.summary(),
            code.explanation()
        )),
        _ => {
            for code in codes {
                text.push_str(&format!("{}  {:<7}  {}\n", code.id(), code.severity().as_str(), code.summary()));
            }
        }
    }
    print_stdout(&text);
    ExitCode::SUCCESS
}
