//! docs/getting-started.md is run as written: its file blocks (```yaml file=PATH) are written into a
//! scratch root (or, marked `check`, compared with what kix wrote there), and every `$ kix ...` line of
//! its console blocks is run in order, its output (stdout, then stderr) compared with the lines that
//! follow it in the guide. A guide that drifts from kix fails here.

use crate::support::{Test, repo_path};

/// One step of the guide, in order.
enum Step {
    Write { path: String, text: String },
    Check { path: String, text: String },
    Run { args: Vec<String>, output: String },
}

fn steps(guide: &str) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut lines = guide.lines();
    while let Some(line) = lines.next() {
        let Some(info) = line.strip_prefix("```") else { continue };
        let mut body = Vec::new();
        for inner in lines.by_ref() {
            if inner == "```" {
                break;
            }
            body.push(inner);
        }
        let words: Vec<&str> = info.split_whitespace().collect();
        if let Some(path) = words.iter().find_map(|w| w.strip_prefix("file=")) {
            let text = body.iter().map(|l| format!("{l}\n")).collect();
            let path = path.to_string();
            steps.push(if words.contains(&"check") { Step::Check { path, text } } else { Step::Write { path, text } });
        } else if words.first() == Some(&"console") {
            for line in body {
                match line.strip_prefix("$ kix ") {
                    Some(command) => steps.push(Step::Run {
                        args: command.split_whitespace().map(str::to_string).collect(),
                        output: String::new(),
                    }),
                    None => match steps.last_mut() {
                        Some(Step::Run { output, .. }) => {
                            output.push_str(line);
                            output.push('\n');
                        }
                        _ => panic!("console output before any command: {line}"),
                    },
                }
            }
        }
    }
    steps
}

#[test]
fn the_getting_started_guide_runs_as_written() {
    let guide = std::fs::read_to_string(repo_path("docs/getting-started.md")).unwrap();
    let steps = steps(&guide);
    let runs = steps.iter().filter(|s| matches!(s, Step::Run { .. })).count();
    assert!(runs >= 8, "the guide runs {runs} commands; it should walk through the whole workflow");
    let t = Test::new();
    for step in steps {
        match step {
            Step::Write { path, text } => {
                let path = t.root().join(path);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, text).unwrap();
            }
            Step::Check { path, text } => {
                let written = std::fs::read_to_string(t.root().join(&path)).unwrap();
                assert_eq!(written, text, "{path} as kix wrote it differs from the guide");
            }
            Step::Run { args, output } => {
                let run = t.clone().args(&args).run().status(0);
                let printed = format!("{}{}", run.stdout, run.stderr);
                assert_eq!(printed, output, "`kix {}` prints something else than the guide shows", args.join(" "));
            }
        }
    }
}
