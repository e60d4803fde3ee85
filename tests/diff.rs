//! `evalspec diff` between runs, and gates against a `--baseline` run.

mod support;

use std::path::Path;

use serde_json::Value;
use support::{evalspec, write, Output};

const SPEC: &str = r#"name: demo
version: 1.2.0
items: trace
params:
  min_precision: { type: number, default: 0.5 }
datasets:
  gold: { format: jsonl, path: gold.jsonl, key: qid }
  trace: { format: jsonl, path: trace.jsonl, key: qid }
fields:
  answerable: gold.answerable
  hit: overlap(trace.citations ?? [], gold.gold_ids ?? [])
matchers:
  refused: { kind: refusal, text: trace.answer ?? "" }
labels:
  - OK: answerable and not refused and hit
  - REFUSAL_OK: not answerable and refused
  - HALLUCINATION: not answerable and not refused
  - ANS_NO_HIT: true
metrics:
  answered: count(not refused)
  precision: { expr: ratio(answerable and hit where not refused), empty: 0.0, better: higher, tolerance: 0.01 }
gates:
  precision: precision >= min_precision
reports: [markdown, items]
"#;

const GOLD: &str = r#"{"qid": "q1", "answerable": true, "gold_ids": ["p1"]}
{"qid": "q2", "answerable": true, "gold_ids": ["p2"]}
{"qid": "q3", "answerable": false}
{"qid": "q17", "answerable": true, "gold_ids": ["p7"]}
"#;

const TRACE: &str = r#"{"qid": "q1", "answer": "a", "citations": ["p1"]}
{"qid": "q2", "answer": "b", "citations": ["p2"]}
{"qid": "q3", "answer": "not in context"}
{"qid": "q17", "answer": "c", "citations": ["p7"]}
"#;

/// q2 and q17 lose their hits, q3 is dropped, q4 is new.
const WORSE: &str = r#"{"qid": "q1", "answer": "a", "citations": ["p1"]}
{"qid": "q2", "answer": "b", "citations": ["p9"]}
{"qid": "q17", "answer": "c", "citations": []}
{"qid": "q4", "answer": "not in context"}
"#;

struct Ws(tempfile::TempDir);

impl Ws {
    fn new() -> Ws {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "gold.jsonl", GOLD);
        Ws(dir)
    }

    fn path(&self) -> &Path {
        self.0.path()
    }

    /// Runs `spec` over `trace` into `out`.
    fn run(&self, spec: &str, trace: &str, out: &str, extra: &[&str]) -> Output {
        write(self.path(), "spec.yaml", spec);
        write(self.path(), "trace.jsonl", trace);
        let mut args = vec!["run", "spec.yaml", "--out", out, "-q"];
        args.extend_from_slice(extra);
        evalspec(self.path(), &args)
    }

    fn diff(&self, args: &[&str]) -> Output {
        let mut all = vec!["diff"];
        all.extend_from_slice(args);
        evalspec(self.path(), &all)
    }

    fn report(&self, out: &str) -> Value {
        let text = std::fs::read_to_string(self.path().join(out).join("report.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }
}

#[test]
fn a_run_diffed_against_itself_reports_no_change() {
    let ws = Ws::new();
    assert_eq!(ws.run(SPEC, TRACE, "a", &[]).code, 0);
    assert_eq!(ws.run(SPEC, TRACE, "b", &[]).code, 0);
    let out = ws.diff(&["a", "b", "--fail-on-regression"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("\nno change\n"), "{}", out.stdout);
    let json: Value =
        serde_json::from_str(&ws.diff(&["a/report.json", "a", "--format", "json"]).stdout).unwrap();
    assert_eq!(json["unchanged"], true);
    assert_eq!(json["regressed"], false);
    assert!(ws
        .diff(&["a", "b", "--format", "md"])
        .stdout
        .contains("No change."));
}

#[test]
fn regressions_gate_flips_label_transitions_and_items() {
    let ws = Ws::new();
    assert_eq!(ws.run(SPEC, TRACE, "a", &[]).code, 0);
    assert_eq!(ws.run(SPEC, WORSE, "b", &[]).code, 1);
    let out = ws.diff(&["a", "b"]);
    assert_eq!(
        out.code, 0,
        "without --fail-on-regression the diff only reports"
    );
    insta::assert_snapshot!("diff_text", out.stdout);
    let text = &out.stdout;
    assert!(text.contains("precision  pass → fail"), "{text}");
    assert!(text.contains("OK → ANS_NO_HIT (2): q2, q17"), "{text}");
    assert!(text.contains("items added (1): q4"), "{text}");
    assert!(text.contains("items removed (1): q3"), "{text}");
    assert_eq!(ws.diff(&["a", "b", "--fail-on-regression"]).code, 1);
    insta::assert_snapshot!("diff_md", ws.diff(&["a", "b", "--format", "md"]).stdout);
    let json: Value =
        serde_json::from_str(&ws.diff(&["a", "b", "--format", "json"]).stdout).unwrap();
    assert_eq!(json["regressed"], true);
    let precision = json["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "precision")
        .unwrap();
    assert_eq!(precision["change"], "regressed");
    assert_eq!(precision["old"], 1.0);
    // Improving is never a regression: the diff the other way round passes.
    let back = ws.diff(&["b", "a", "--fail-on-regression"]);
    assert_eq!(back.code, 0, "{}", back.stdout);
    assert!(back.stdout.contains("improved"), "{}", back.stdout);
}

#[test]
fn a_metric_within_its_tolerance_is_not_a_regression() {
    let ws = Ws::new();
    let spec = SPEC.replace("tolerance: 0.01", "tolerance: 0.5");
    // precision 1.0 → 0.5 (q17 loses its hit, q2 too): within 0.5.
    assert_eq!(
        ws.run(&spec, TRACE, "a", &["--param", "min_precision=0"])
            .code,
        0
    );
    let worse = TRACE.replace(r#""citations": ["p7"]"#, r#""citations": []"#);
    assert_eq!(
        ws.run(&spec, &worse, "b", &["--param", "min_precision=0"])
            .code,
        0
    );
    let out = ws.diff(&["a", "b", "--fail-on-regression"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stdout.contains("worse, within tolerance 0.5"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_spec_change_shows_versions_and_a_unified_diff() {
    let ws = Ws::new();
    ws.run(SPEC, TRACE, "a", &[]);
    let spec = SPEC.replace("version: 1.2.0", "version: 1.3.0");
    ws.run(&spec, TRACE, "b", &[]);
    let out = ws.diff(&["a", "b"]);
    assert!(
        out.stdout
            .contains("warning: the runs used different specs (demo 1.2.0 → demo 1.3.0)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("\n-version: 1.2.0\n+version: 1.3.0\n"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("@@ "), "{}", out.stdout);
}

#[test]
fn diff_errors_are_clear() {
    let ws = Ws::new();
    write(ws.path(), "notes.json", "{\"hello\": 1}");
    let out = ws.diff(&["notes.json", "missing"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("`notes.json` is not an evalspec report"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("cannot read report `missing`"),
        "{}",
        out.stderr
    );
}

const SHAPED: &str = r#"gates:
  precision:
    metric: precision
    threshold: 0.3
    max_drop: 0.02
    message: precision fell below the baseline
  vs_baseline: precision >= (baseline.precision ?? 0) - 0.5
"#;

#[test]
fn gates_compare_against_a_baseline() {
    let ws = Ws::new();
    let spec = SPEC.replace("gates:\n  precision: precision >= min_precision\n", SHAPED);
    assert!(spec.contains("max_drop"));
    // Without a baseline, change bounds are skipped and `baseline.NAME` is null.
    assert_eq!(ws.run(&spec, TRACE, "a", &[]).code, 0);
    assert!(ws.report("a").get("baseline").is_none());
    // Same data against itself: no drop.
    assert_eq!(ws.run(&spec, TRACE, "b", &["--baseline", "a"]).code, 0);
    let report = ws.report("b");
    assert_eq!(report["baseline"]["metrics"]["precision"]["delta"], 0.0);
    assert_eq!(report["gates"][0]["baseline"], 1.0);
    // precision 1.0 → 0.333: more than 0.02 below the baseline.
    let out = ws.run(&spec, WORSE, "c", &["--baseline", "a/report.json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report = ws.report("c");
    let gate = &report["gates"][0];
    assert_eq!(gate["status"], "fail");
    let reason = gate["reasons"][0].as_str().unwrap();
    assert!(
        reason.contains("against baseline 1: may be at most 0.02 below it"),
        "{reason}"
    );
    assert_eq!(report["gates"][1]["status"], "fail", "0.333 < 1.0 - 0.5");
    let md = std::fs::read_to_string(ws.path().join("c/report.md")).unwrap();
    assert!(md.contains("Since baseline `a/report.json`"), "{md}");
}

#[test]
fn zero_and_missing_baselines_follow_the_documented_rule() {
    let ws = Ws::new();
    let gate = |bound: &str| {
        SPEC.replace(
            "gates:\n  precision: precision >= min_precision\n",
            &format!("gates:\n  precision:\n    metric: precision\n    {bound}\n"),
        )
    };
    // A baseline whose precision is 0: nothing answerable was hit.
    let zero = TRACE
        .replace("[\"p1\"]", "[]")
        .replace("[\"p2\"]", "[]")
        .replace("[\"p7\"]", "[]");
    assert_eq!(ws.run(&gate("threshold: 0"), &zero, "zero", &[]).code, 0);
    assert_eq!(ws.report("zero")["metrics"]["precision"], 0.0);
    // Relative gain against 0: any strict improvement counts; no change does not.
    let gain = gate("min_gain_relative: 0.01");
    assert_eq!(ws.run(&gain, TRACE, "up", &["--baseline", "zero"]).code, 0);
    assert_eq!(
        ws.run(&gain, &zero, "same", &["--baseline", "zero"]).code,
        1
    );
    // Relative drop against 0: no worsening allowed, staying at 0 is fine.
    let drop = gate("max_drop_relative: 0.05");
    assert_eq!(
        ws.run(&drop, &zero, "same2", &["--baseline", "zero"]).code,
        0
    );
    // No baseline: change bounds pass unless `when_no_baseline` says otherwise.
    assert_eq!(ws.run(&drop, &zero, "none", &[]).code, 0);
    let strict = gate("max_drop: 0.0\n    when_no_baseline: fail");
    let out = ws.run(&strict, TRACE, "none2", &[]);
    assert_eq!(out.code, 1);
    assert_eq!(
        ws.report("none2")["gates"][0]["reasons"][0],
        "no baseline (run with --baseline)"
    );
}

/// `a`'s report with one edit; panics unless `from` is in it.
fn edited(ws: &Ws, out: &str, from: &str, to: &str) {
    let path = ws.path().join("a/report.json");
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{from}");
    std::fs::create_dir_all(ws.path().join(out)).unwrap();
    write(
        &ws.path().join(out),
        "report.json",
        &text.replacen(from, to, 1),
    );
}

#[test]
fn malformed_reports_are_located_errors_not_passes() {
    let ws = Ws::new();
    assert_eq!(ws.run(SPEC, TRACE, "a", &[]).code, 0);
    // Read as null, these used to let a worse run through `--fail-on-regression`.
    edited(
        &ws,
        "metric",
        "\"precision\": 1.0",
        "\"precision\": \"0.1\"",
    );
    edited(
        &ws,
        "status",
        "\"status\": \"pass\"",
        "\"status\": \"banana\"",
    );
    edited(&ws, "gate", "\"gates\": [", "\"gates\": [\"precision\", ");
    for (bad, name) in [
        ("metric", "string_metric"),
        ("status", "gate_status"),
        ("gate", "string_gate"),
    ] {
        let out = ws.diff(&["a", bad, "--fail-on-regression"]);
        assert_eq!(out.code, 2, "{bad}: {}{}", out.stdout, out.stderr);
        assert!(out.stdout.is_empty(), "{bad}: {}", out.stdout);
        insta::assert_snapshot!(format!("malformed_{name}"), out.stderr);
    }
    // The same reports as a baseline stop the run before any data is read.
    let out = ws.run(SPEC, TRACE, "b", &["--baseline", "metric"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("metric `precision` must be a number, true/false or null, found a string"),
        "{}",
        out.stderr
    );
    assert!(!ws.path().join("b/report.json").exists());
}

#[test]
fn a_report_from_the_first_release_still_diffs() {
    let ws = Ws::new();
    assert_eq!(ws.run(SPEC, TRACE, "a", &[]).code, 0);
    let old = std::fs::read_to_string(
        support::repo_root().join("tests/fixtures/reports/first-release.json"),
    )
    .unwrap();
    std::fs::create_dir_all(ws.path().join("old")).unwrap();
    write(&ws.path().join("old"), "report.json", &old);
    let out = ws.diff(&["old", "a", "--format", "json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let json: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        json["spec"]["diff"],
        Value::Null,
        "the old report has no spec text"
    );
    let precision = json["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "precision")
        .unwrap();
    assert_eq!(precision["change"], "improved");
}
