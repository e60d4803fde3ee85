//! Every shipped spec compiles and runs on its shipped sample data.

use crate::support::{evalspec, repo_root, shipped_specs};

#[test]
fn every_shipped_spec_checks_and_runs() {
    let root = repo_root();
    let specs = shipped_specs();
    let out_dir = tempfile::tempdir().unwrap();
    for spec in specs {
        let spec = spec.to_str().unwrap();
        let check = evalspec(&root, &["check", spec]);
        assert_eq!(check.code, 0, "{spec}: {}", check.stderr);
        let out = out_dir.path().to_str().unwrap();
        let run = evalspec(&root, &["run", spec, "--out", out]);
        assert_eq!(
            run.code, 0,
            "{spec} should pass on its sample data: {}{}",
            run.stdout, run.stderr
        );
        assert!(
            run.stdout.contains("result: PASS"),
            "{spec}: {}",
            run.stdout
        );
    }
}
