//! What every target shares: a scratch folder of its own, and running the CLI
//! in-process. A panic anywhere aborts (libFuzzer's hook), so any input that
//! panics is a crash; exit codes 0, 1 and 2 are all fine.
#![allow(dead_code)] // each target uses some of these

use std::path::PathBuf;
use std::sync::OnceLock;

pub fn scratch() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = std::env::var_os("EVALSPEC_FUZZ_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(std::env::temp_dir);
        let dir = base.join(format!("evalspec-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch folder");
        dir
    })
}

/// Runs `evalspec ARGS` in-process; checks that its exit code is one evalspec gives.
pub fn evalspec(args: &[&str]) {
    let code = evalspec::run(std::iter::once("evalspec").chain(args.iter().copied()));
    assert!(matches!(code, 0..=2), "exit code {code}");
}

/// A spec around `fields` and `metrics` (YAML lines, already indented), reading
/// `gold.jsonl` in the scratch folder.
pub fn spec(fields: &str, metrics: &str) -> String {
    format!(
        "name: fuzz\nversion: 1.0.0\ndatasets:\n  gold: {{format: jsonl, path: gold.jsonl, key: id}}\nfields:\n{fields}metrics:\n{metrics}"
    )
}
