//! The report model reads back every report.json and items.jsonl a run writes,
//! and writes them again byte for byte.

use evalspec::report_model::{Item, Report};

use crate::support::{evalspec, repo_root, shipped_specs};

fn round_trip(dir: &std::path::Path, what: &str) {
    let text = std::fs::read_to_string(dir.join("report.json")).unwrap();
    let report = Report::from_json(&text, "report.json")
        .unwrap_or_else(|e| panic!("{what}: {}", e.render()));
    let mut written = serde_json::to_string_pretty(&report).unwrap();
    written.push('\n');
    assert!(written == text, "{what}: report.json does not round-trip");
    let items = std::fs::read_to_string(dir.join("items.jsonl")).unwrap();
    for (i, line) in items.lines().enumerate() {
        let item = Item::from_json_line(line, "items.jsonl", i + 1)
            .unwrap_or_else(|e| panic!("{what}: {}", e.render()));
        assert_eq!(serde_json::to_string(&item).unwrap(), line, "{what}");
    }
}

#[test]
fn every_shipped_spec_s_reports_read_back_and_write_again_unchanged() {
    let root = repo_root();
    let specs = shipped_specs();
    for spec in specs {
        let spec = spec.to_str().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (first, second) = (dir.path().join("first"), dir.path().join("second"));
        let (first, second) = (first.to_str().unwrap(), second.to_str().unwrap());
        let run = evalspec(
            &root,
            &["run", spec, "--out", first, "--format", "items", "-q"],
        );
        assert_eq!(run.code, 0, "{spec}: {}", run.stderr);
        round_trip(dir.path().join("first").as_path(), spec);
        // Against itself as the baseline: the "since baseline" section too.
        let args = [
            "run",
            spec,
            "--out",
            second,
            "--format",
            "items",
            "--baseline",
            first,
            "-q",
        ];
        let run = evalspec(&root, &args);
        assert_eq!(run.code, 0, "{spec}: {}", run.stderr);
        round_trip(dir.path().join("second").as_path(), spec);
    }
}
