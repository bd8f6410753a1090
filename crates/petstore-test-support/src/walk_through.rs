//! The README's walk-through, run as written: the block after its `walk-through` marker is run
//! by `bash -euo pipefail` against a running server (the walk-through's `BASE`), with a
//! `petstore` command first on `PATH`, and what each command prints is checked against the `# `
//! lines under it (`...` standing for what differs from run to run). `tests/api/readme.rs` runs
//! it against the built binary, the image suite against a container and its own CLI.

use std::path::Path;
use std::process::Command;

use crate::process::without_petstore_settings;

const MARKER: &str = "<!-- walk-through: tests/api/readme.rs runs the next block -->";

/// One command of the walk-through (continuation lines included) and the lines it must print.
#[derive(Debug, PartialEq)]
struct Step {
    command: String,
    expected: Vec<String>,
}

/// The walk-through's code block, from the README.
fn walk_through(readme: &str) -> &str {
    let after_marker = &readme[readme
        .find(MARKER)
        .expect("the README marks its walk-through")..];
    let start = after_marker
        .find("```sh\n")
        .expect("a sh block after the marker")
        + 6;
    let block = &after_marker[start..];
    &block[..block.find("\n```").expect("the block ends")]
}

/// The block's commands, each with the `# ` lines right under it.
fn steps(block: &str) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    // Whether the line before belonged to the last command (no blank line since).
    let mut under_a_command = false;
    let mut continued = false;
    for line in block.lines() {
        if continued {
            let step = steps.last_mut().expect("a continued command");
            step.command.push('\n');
            step.command.push_str(line);
        } else if let Some(expected) = line.strip_prefix("# ") {
            if under_a_command {
                let step = steps.last_mut().expect("a command");
                step.expected.push(expected.to_owned());
            }
        } else if line.trim().is_empty() {
            under_a_command = false;
        } else {
            steps.push(Step {
                command: line.to_owned(),
                expected: Vec::new(),
            });
            under_a_command = true;
        }
        continued = line.ends_with('\\');
    }
    steps
}

/// The block as a script that keeps what each command prints in `$WALK_OUT/<n>`.
fn instrumented(steps: &[Step]) -> String {
    steps
        .iter()
        .enumerate()
        .map(|(n, step)| format!("{{\n{}\n}} > \"$WALK_OUT/{n}\"\n", step.command))
        .collect()
}

/// Whether `output` is what `expected` says: the same text, or, where `...` stands for
/// anything, each part in order.
fn matches(output: &str, expected: &str) -> bool {
    if !expected.contains("...") {
        return output.trim_end() == expected;
    }
    let mut rest = output;
    for part in expected.split("...").filter(|part| !part.is_empty()) {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// Where the walk-through runs: the server's base URL, the directory holding the `petstore`
/// command it calls, its working directory, and the settings that command needs.
#[derive(Debug)]
pub struct WalkThroughTarget<'a> {
    pub base: &'a str,
    pub bin_dir: &'a Path,
    pub working_dir: &'a Path,
    pub env: &'a [(&'a str, &'a str)],
}

/// Runs the README's walk-through against `target`, asserting that it succeeds and that every
/// command prints what the README shows under it.
pub fn run_readme_walk_through(target: &WalkThroughTarget<'_>) {
    let readme_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let readme = std::fs::read_to_string(&readme_path).expect("read the README");
    let steps = steps(walk_through(&readme));
    assert!(
        steps
            .iter()
            .filter(|step| !step.expected.is_empty())
            .count()
            >= 10,
        "{steps:#?}"
    );
    let outputs = tempfile::tempdir().expect("a directory for the outputs");
    let script = outputs.path().join("walk-through.sh");
    std::fs::write(&script, instrumented(&steps)).expect("write the script");
    let path = format!(
        "{}:{}",
        target.bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut bash = Command::new("bash");
    bash.args(["-euo", "pipefail"]).arg(&script);
    without_petstore_settings(&mut bash);
    let run = bash
        .current_dir(target.working_dir)
        .env("PATH", path)
        .env("BASE", target.base)
        .env("WALK_OUT", outputs.path())
        .envs(target.env.iter().copied())
        .output()
        .expect("run bash");
    assert!(
        run.status.success(),
        "the walk-through failed ({}): {}",
        run.status,
        String::from_utf8_lossy(&run.stderr)
    );

    for (n, step) in steps.iter().enumerate() {
        if step.expected.is_empty() {
            continue;
        }
        let output = std::fs::read_to_string(outputs.path().join(n.to_string()))
            .expect("the command's output");
        let expected = step.expected.join("...");
        assert!(
            matches(&output, &expected),
            "`{}` printed\n{output}\nnot\n{expected}",
            step.command
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expectations_match_exactly_or_in_order_around_the_ellipses() {
        assert!(matches("{\"id\":1}\n", "{\"id\":1}"));
        assert!(!matches("{\"id\":2}", "{\"id\":1}"));
        assert!(matches(
            "HTTP/1.1 200 OK\nsunset: x\n\n{}",
            "HTTP/1.1 200 OK...sunset: x...{}"
        ));
        assert!(!matches(
            "sunset: x\nHTTP/1.1 200 OK",
            "HTTP/1.1 200 OK...sunset: x"
        ));
        let parsed = steps("A=1   # note\ncurl -s \\\n  x\n# out\n\n# a comment alone\n");
        assert_eq!(
            parsed,
            [
                Step {
                    command: "A=1   # note".into(),
                    expected: vec![]
                },
                Step {
                    command: "curl -s \\\n  x".into(),
                    expected: vec!["out".into()]
                },
            ]
        );
    }
}
