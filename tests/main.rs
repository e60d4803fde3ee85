//! The integration tests, one binary: each file beside this one is a module of it
//! (`tests/diff.rs` is `diff`, `tests/adversarial/` is `adversarial`), and
//! `support` holds the helpers they share. As ~30 binaries, each linked Arrow,
//! Parquet and minijinja again; `autotests = false` in Cargo.toml, so a new file
//! here runs only once it has its `mod` line below.

mod support;

mod adversarial;
mod browser;
mod classification;
mod cli;
mod confusion;
mod diagnostics;
mod diff;
mod engine;
mod formats;
mod frozen;
mod jsonl_lines;
mod layers;
mod message_format;
mod overlays;
mod parallel;
mod params;
mod plans;
mod properties;
mod readme;
mod report_model;
mod reports;
mod retrieval_spans;
mod runs;
mod runtime_errors;
mod seed000_differential;
mod seed001_differential;
mod shell;
mod significance;
mod slices;
mod specs;
mod streamed_join;
mod tour;
mod trec;

/// With `autotests = false`, a file in tests/ that no `mod` line above names is
/// never compiled, its tests silently gone: every `.rs` file and every folder with
/// a `mod.rs` must be named.
#[test]
fn every_file_in_tests_is_a_module() {
    let tests = support::repo_root().join("tests");
    let main = std::fs::read_to_string(tests.join("main.rs")).unwrap();
    let declared: Vec<&str> = (main.lines())
        .filter_map(|line| line.strip_prefix("mod ")?.strip_suffix(';'))
        .collect();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&tests).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let module = match name.strip_suffix(".rs") {
            Some(stem) if path.is_file() => stem.to_string(),
            None if path.join("mod.rs").is_file() => name,
            _ => continue,
        };
        if module != "main" && !declared.contains(&module.as_str()) {
            missing.push(module);
        }
    }
    missing.sort();
    assert!(
        missing.is_empty(),
        "not modules of tests/main.rs: {missing:?}"
    );
}
