//! Shared helpers for the integration tests: running the CLI, temporary workspaces,
//! a deterministic random generator, and reading the seed documents.

use std::path::{Path, PathBuf};

// The benchmarks' generators, of which the tests use a part.
#[allow(dead_code)]
#[path = "../../benches/support/generate.rs"]
pub mod generate;
#[allow(dead_code)]
#[path = "../../benches/support/generate_trec.rs"]
pub mod generate_trec;
pub use generate::Rng;
use std::process::Command;

pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs the `evalspec` binary with `args` in `dir`.
pub fn evalspec(dir: &Path, args: &[&str]) -> Output {
    evalspec_with_env(dir, &[], args)
}

/// Runs the `evalspec` binary with extra environment variables.
pub fn evalspec_with_env(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_evalspec"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .envs(env.iter().copied())
        .output()
        .expect("the evalspec binary runs");
    Output {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every shipped spec (`specs/*.yaml`), in name order; there is at least one.
pub fn shipped_specs() -> Vec<PathBuf> {
    let mut specs: Vec<PathBuf> = std::fs::read_dir(repo_root().join("specs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    specs.sort();
    assert!(!specs.is_empty(), "no shipped specs");
    specs
}

/// The seed documents, beside the repository as `../shared/seeds` (CI provides them).
pub fn seed(prefix: &str) -> String {
    let dir = repo_root().join("../shared/seeds");
    let entry = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("seed documents expected in {}: {e}", dir.display()))
        .filter_map(Result::ok)
        .find(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .unwrap_or_else(|| panic!("no seed {prefix}_* in {}", dir.display()));
    std::fs::read_to_string(entry.path()).expect("seed is readable")
}

/// The first fenced code block of `language` after `heading` in a seed document.
pub fn code_block(document: &str, heading: &str, language: &str) -> String {
    let start = document
        .find(heading)
        .unwrap_or_else(|| panic!("heading {heading:?} not in the seed"));
    let fence = format!("```{language}\n");
    let body_start = document[start..]
        .find(&fence)
        .expect("code block after heading")
        + start
        + fence.len();
    let body_end = document[body_start..].find("\n```").expect("closing fence") + body_start;
    // The mirrored seed pages interleave `|` and `||` lines (a rendering artefact);
    // they are never code.
    document[body_start..body_end]
        .lines()
        .filter(|line| !matches!(line.trim_end(), "|" | "||"))
        .map(|line| format!("{line}\n"))
        .collect()
}

pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&path, text).unwrap();
    path
}

/// The string `field` of each object in the JSON array `list` (a report's
/// offenders' keys, its gates' names): what a test compares in order.
pub fn texts_of<'a>(list: &'a serde_json::Value, field: &str) -> Vec<&'a str> {
    let items = list
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"));
    (items.iter())
        .map(|item| {
            (item[field].as_str()).unwrap_or_else(|| panic!("no string `{field}` in {item}"))
        })
        .collect()
}

/// `text` with the value of each `"run_id"` (report.json's, item-values.jsonl's
/// header's) blanked: a run id digests the report, paths included.
pub fn without_run_id(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\"run_id\"") {
        let after = &rest[at + 8..];
        let Some(open) = after.find('"') else { break };
        out.push_str(&rest[..at + 8]);
        out.push_str(&after[..=open]);
        rest = &after[open + 1..];
        let end = rest.find('"').unwrap_or(rest.len());
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}
