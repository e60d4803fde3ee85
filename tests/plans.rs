//! The compiled plan itself, pinned: `evalspec check` (the plan's summary) and
//! `evalspec explain` (what each metric and gate means) for every shipped spec and
//! every spec fixture. A refactoring of the compiler must leave these unchanged.

use crate::support::{evalspec, repo_root};

/// What `command` prints for `spec`, with the resources given (the physical
/// plan they print depends on them, and would otherwise on the machine).
fn snapshot_of(command: &str, spec: &std::path::Path) -> String {
    let root = repo_root();
    let relative = spec.strip_prefix(&root).unwrap().to_str().unwrap();
    let resources = ["--threads", "2", "--max-memory", "4G"];
    let out = evalspec(&root, &[&[command, relative][..], &resources].concat());
    format!(
        "exit: {}\n--- stdout\n{}--- stderr\n{}",
        out.code, out.stdout, out.stderr
    )
}

#[test]
fn shipped_specs_compile_to_the_same_plan() {
    insta::glob!(
        concat!(env!("CARGO_MANIFEST_DIR"), "/specs"),
        "*.yaml",
        |path| {
            insta::assert_snapshot!("check", snapshot_of("check", path));
            insta::assert_snapshot!("explain", snapshot_of("explain", path));
        }
    );
}

#[test]
fn spec_fixtures_compile_to_the_same_plan() {
    insta::glob!("fixtures/broken/*.yaml", |path| {
        insta::assert_snapshot!("check", snapshot_of("check", path));
        insta::assert_snapshot!("explain", snapshot_of("explain", path));
    });
}

/// A spec written to pin what `explain` says of composite metrics (which can
/// have no value, which have a denominator) and of shaped gates' bounds.
#[test]
fn explain_describes_composite_metrics_and_shaped_gates_truthfully() {
    let spec = repo_root().join("tests/fixtures/explain/composite_metrics.yaml");
    insta::assert_snapshot!("explain_composite_metrics", snapshot_of("explain", &spec));
}

#[test]
fn the_init_spec_compiles_to_the_same_plan() {
    let spec = repo_root().join("src/commands/init/evalspec.yaml");
    insta::assert_snapshot!("init_check", snapshot_of("check", &spec));
    insta::assert_snapshot!("init_explain", snapshot_of("explain", &spec));
}
