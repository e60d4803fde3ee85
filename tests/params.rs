//! Params a reader can see: a param set to something other than the spec's
//! default is shown, marked as overridden, in every report and the terminal
//! summary; `diff` lists param changes; a `locked` param refuses `--param`; a
//! frozen run with overridden params says the lock does not pin them. And every
//! gate that does not pass says why, beside its custom message.

use std::path::Path;

use serde_json::Value;

use crate::support::{evalspec, write, Output};

const SPEC: &str = r#"name: judged
version: 1.0.0
items: judgments
params:
  min_score: { type: number, default: 4.0 }
  max_drop: { type: number, default: 0.1, locked: true }
  tags: { type: list, default: [a, b] }
datasets:
  judgments: { path: judgments.jsonl, key: id }
metrics:
  mean_score: { expr: mean(judgments.score), better: higher }
gates:
  mean_score: { expr: mean_score >= min_score, message: judged answer quality is too low }
  no_drop:
    metric: mean_score
    max_drop: max_drop
    when_no_baseline: fail
    severity: warn
    message: judged answer quality dropped
reports: [markdown, summary, junit, html]
"#;

const DATA: &str = r#"{"id": "a", "score": 4.5}
{"id": "b", "score": 3.85}
"#;

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "spec.yaml", SPEC);
    write(dir.path(), "judgments.jsonl", DATA);
    dir
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn json(dir: &Path, name: &str) -> Value {
    serde_json::from_str(&read(dir, name)).unwrap()
}

fn code(out: &Output, code: i32) {
    assert_eq!(out.code, code, "{}{}", out.stdout, out.stderr);
}

#[test]
fn an_overridden_param_is_marked_in_every_report() {
    let ws = workspace();
    let d = ws.path();
    let out = evalspec(
        d,
        &[
            "run",
            "spec.yaml",
            "--param",
            "min_score=3",
            "--param",
            "tags=a,b",
            "--out",
            "out",
        ],
    );
    code(&out, 0);
    insta::assert_snapshot!("terminal", out.stdout.replace(d.to_str().unwrap(), "WS"));
    let report = json(&d.join("out"), "report.json");
    // `tags` was given its default again: not overridden.
    assert_eq!(
        report["overridden_params"],
        serde_json::json!({"min_score": {"value": 3, "default": 4}})
    );
    assert_eq!(report["params"]["min_score"], 3);
    let md = read(&d.join("out"), "report.md");
    assert!(
        md.contains("| param (overridden) | value | spec default |\n|---|---|---|\n| min_score | `3` | `4` |\n"),
        "{md}"
    );
    insta::assert_snapshot!("summary_md", read(&d.join("out"), "summary.md"));
    let junit = read(&d.join("out"), "junit.xml");
    assert!(junit.contains(r#"<property name="params.overridden" value="min_score"/>"#));
    assert!(junit.contains(r#"<property name="param.min_score.default" value="4"/>"#));
    let html = read(&d.join("out"), "report.html");
    assert!(
        html.contains("<strong>Params overridden</strong> with <code>--param</code>: <code>min_score</code> = <code>3</code> (spec: <code>4</code>)."),
        "{html}"
    );

    // With the defaults, nothing is marked and report.json has no key for it.
    code(&evalspec(d, &["run", "spec.yaml", "--out", "plain"]), 0);
    let plain = json(&d.join("plain"), "report.json");
    assert!(plain.get("overridden_params").is_none());
    for name in ["report.md", "summary.md", "junit.xml", "report.html"] {
        let text = read(&d.join("plain"), name);
        assert!(!text.contains("overridden"), "{name}: {text}");
    }
}

#[test]
fn a_locked_param_refuses_param_with_a_located_error() {
    let ws = workspace();
    let out = evalspec(
        ws.path(),
        &[
            "run",
            "spec.yaml",
            "--param",
            "max_drop=0.5",
            "--out",
            "out",
        ],
    );
    code(&out, 2);
    insta::assert_snapshot!("locked", out.stderr);
    assert!(!ws.path().join("out").exists());
    // `check` and `explain` refuse it too, and say the param is locked.
    code(
        &evalspec(
            ws.path(),
            &["check", "spec.yaml", "--param", "max_drop=0.1"],
        ),
        2,
    );
    let explain = evalspec(ws.path(), &["explain", "spec.yaml"]);
    code(&explain, 0);
    assert!(
        explain.stdout.contains("max_drop = 0.1 (number, locked)"),
        "{}",
        explain.stdout
    );
}

#[test]
fn a_frozen_run_with_overridden_params_does_not_claim_it_matches_its_lock() {
    let ws = workspace();
    let d = ws.path();
    code(&evalspec(d, &["freeze", "spec.yaml"]), 0);
    let out = evalspec(
        d,
        &["run", "spec.yaml", "--param", "min_score=3", "--out", "out"],
    );
    code(&out, 0);
    assert!(
        out.stdout.contains(
            "params overridden with --param: min_score = 3 (spec: 4); the lock pins the spec, not these values\n"
        ),
        "{}",
        out.stdout
    );
    let md = read(&d.join("out"), "report.md");
    assert!(!md.contains("Frozen: matches lock"), "{md}");
    assert!(
        md.contains("Frozen spec, **overridden params**: the spec matches lock `spec.yaml.lock`"),
        "{md}"
    );
    assert!(md.contains("which the lock does not pin"), "{md}");
    let summary = read(&d.join("out"), "summary.md");
    assert!(
        summary.contains("Params overridden with `--param` (not pinned by the lock)"),
        "{summary}"
    );
    // Without overrides the frozen run says plainly that it matches.
    code(&evalspec(d, &["run", "spec.yaml", "--out", "plain"]), 0);
    let md = read(&d.join("plain"), "report.md");
    assert!(md.contains("Frozen: matches lock `spec.yaml.lock`"), "{md}");
}

#[test]
fn diff_lists_param_changes_and_does_not_call_the_runs_the_same() {
    let ws = workspace();
    let d = ws.path();
    code(&evalspec(d, &["run", "spec.yaml", "--out", "a"]), 0);
    code(
        &evalspec(
            d,
            &["run", "spec.yaml", "--param", "min_score=3", "--out", "b"],
        ),
        0,
    );
    let text = evalspec(d, &["diff", "a", "b"]);
    code(&text, 0);
    insta::assert_snapshot!("diff_text", text.stdout);
    let md = evalspec(d, &["diff", "a", "b", "--format", "md"]);
    code(&md, 0);
    insta::assert_snapshot!("diff_md", md.stdout);
    let out = evalspec(d, &["diff", "a", "b", "--format", "json"]);
    code(&out, 0);
    let diff: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(diff["unchanged"], false);
    assert_eq!(
        diff["params"],
        serde_json::json!([{"name": "min_score", "old": 4, "new": 3}])
    );
    // Same params: no param section, and a run against itself has no change.
    let same = evalspec(d, &["diff", "a", "a"]);
    assert!(
        same.stdout.contains("unchanged\nno change\n"),
        "{}",
        same.stdout
    );
}

#[test]
fn a_failing_gate_says_why_beside_its_message() {
    let ws = workspace();
    let d = ws.path();
    // mean_score 4.175 passes 4.0; `no_drop` has no baseline and warns;
    // with min_score 4.5 the expression gate fails too.
    let out = evalspec(
        d,
        &[
            "run",
            "spec.yaml",
            "--param",
            "min_score=4.5",
            "--out",
            "out",
        ],
    );
    code(&out, 1);
    assert!(
        out.stdout.contains(
            "— judged answer quality dropped\n        why: no baseline (run with --baseline)\n"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "— judged answer quality is too low\n        why: `mean_score >= min_score` is false: 4.175 against 4.5\n"
        ),
        "{}",
        out.stdout
    );
    let summary = read(&d.join("out"), "summary.md");
    assert!(
        summary.contains(
            "- ⚠ **no_drop**: judged answer quality dropped (no baseline (run with --baseline))\n"
        ),
        "{summary}"
    );
    assert!(
        summary.contains("- ✗ **mean_score**: judged answer quality is too low (`mean_score >= min_score` is false: 4.175 against 4.5)\n"),
        "{summary}"
    );
}
