//! Snapshot tests of the rendered diagnostics for broken specs. Each fixture in
//! tests/fixtures/broken is named for what it breaks; `evalspec check` must exit 2
//! and say what is wrong, where, and how to fix it.

use crate::support::{evalspec, repo_root};

#[test]
fn broken_specs_are_reported_with_locations() {
    insta::glob!("fixtures/broken/err_*.yaml", |path| {
        let root = repo_root();
        let relative = path.strip_prefix(&root).unwrap();
        let out = evalspec(&root, &["check", relative.to_str().unwrap()]);
        assert_eq!(
            out.code,
            2,
            "{}: expected exit 2\n{}",
            relative.display(),
            out.stderr
        );
        assert!(
            out.stdout.is_empty(),
            "{}: nothing on stdout",
            relative.display()
        );
        insta::assert_snapshot!(out.stderr);
    });
}

#[test]
fn bad_data_lines_are_reported_with_file_and_line() {
    insta::glob!("fixtures/bad_data/err_*.jsonl", |path| {
        let dir = path.parent().unwrap();
        let spec = repo_root().join("specs/rag-precision.yaml");
        let gold = format!("gold={}", path.file_name().unwrap().to_str().unwrap());
        let out_dir = tempfile::tempdir().unwrap();
        let args = [
            "run",
            spec.to_str().unwrap(),
            "--dataset",
            &gold,
            "--dataset",
            "trace=trace.jsonl",
            "--out",
            out_dir.path().to_str().unwrap(),
        ];
        let out = evalspec(dir, &args);
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert!(
            !out_dir.path().join("report.json").exists(),
            "no report from data that could not be read"
        );
        insta::assert_snapshot!(out.stderr);
    });
}
