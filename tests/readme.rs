//! The README's commands are true: every `cargo run --release -- …` line in it runs
//! and exits 0 on the shipped data.

use crate::support::{evalspec, repo_root};

#[test]
fn readme_run_commands_work() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let first_lines: Vec<&str> = readme.lines().take(12).collect();
    assert!(
        first_lines
            .iter()
            .any(|l| l.contains("cargo run --release -- run specs/rag-precision.yaml")),
        "the README starts with the main command"
    );
    assert!(
        first_lines
            .iter()
            .any(|l| l.contains("cargo test --locked")),
        "the README starts with the test command"
    );
    let commands: Vec<&str> = readme
        .lines()
        .filter_map(|l| l.trim().strip_prefix("cargo run --release -- "))
        .collect();
    assert!(commands.len() >= 2, "{commands:?}");
    let out_dir = tempfile::tempdir().unwrap();
    for command in commands {
        let command = command.split(" #").next().unwrap_or(command);
        let mut args: Vec<&str> = command.split_whitespace().collect();
        if args[0] == "run" {
            args.extend(["--out", out_dir.path().to_str().unwrap()]);
        }
        let out = evalspec(&repo_root(), &args);
        assert_eq!(
            out.code, 0,
            "`{command}` from the README: {}{}",
            out.stdout, out.stderr
        );
    }
}

#[test]
fn the_grammar_reference_lists_every_builtin_and_aggregate() {
    let reference = std::fs::read_to_string(repo_root().join("grammar/README.md")).unwrap();
    for builtin in evalspec::library::builtins::BUILTINS {
        assert!(
            reference.contains(&format!("| `{}(", builtin.name)),
            "grammar/README.md misses `{}`",
            builtin.name
        );
    }
    let aggregates = evalspec::library::aggregates::AGGREGATES.iter();
    for name in aggregates.map(|a| a.name).chain(["if"]) {
        assert!(
            reference.contains(&format!("`{name}(")),
            "grammar/README.md misses `{name}`"
        );
    }
}
