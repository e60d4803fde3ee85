//! Hostile and careless inputs, one per class of defect: each must give a located
//! error and exit 2 (never a panic, an abort or a hang), and leave its input as
//! it was.

mod data;
mod expressions;
mod output;
mod silent;
mod specs;

use crate::support::evalspec;

/// A spec whose only field is `expr` (as a YAML plain scalar).
pub fn spec_with_field(expr: &str) -> String {
    format!(
        "name: t\nversion: 1.0.0\ndatasets:\n  gold: {{format: jsonl, path: gold.jsonl, key: id}}\nfields:\n  a: {expr}\n"
    )
}

/// Runs `evalspec check` on `spec`; asserts exit 2, a located error containing
/// `expected`, and that the spec file is unchanged.
pub fn check_refuses(spec: &str, expected: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spec.yaml");
    std::fs::write(&path, spec).unwrap();
    let out = evalspec(dir.path(), &["check", "spec.yaml"]);
    assert_eq!(out.code, 2, "exit code for {expected:?}\n{}", out.stderr);
    assert!(
        out.stderr.contains(expected),
        "expected {expected:?} in:\n{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(" --> spec.yaml:"),
        "the error is located:\n{}",
        out.stderr
    );
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        spec,
        "the spec is untouched"
    );
}
