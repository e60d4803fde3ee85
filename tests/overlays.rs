//! `extends` overlays that remove their base's gates, metrics and reports
//! (`remove:`), the errors a wrong removal gives, and the JSON Schema accepting
//! every valid overlay while still rejecting misspelled keys.

use std::path::Path;

use serde_json::Value;

use crate::support::{self, evalspec, texts_of, write, Output};

const BASE: &str = r#"name: judged
version: 1.0.0
params:
  min_mean: { type: number, default: 3.0, description: the lowest mean judged score }
datasets:
  judgments: { path: judgments.jsonl, key: id }
metrics:
  mean_score: { expr: mean(judgments.score), better: higher }
  low: count(judgments.score < 3)
gates:
  mean_score: { metric: mean_score, threshold: min_mean }
  no_low: low == 0
reports: [markdown, {format: junit, path: gates.xml}]
"#;

const DATA: &str = r#"{"id": "a", "score": 4.5}
{"id": "b", "score": 2.5}
"#;

fn workspace(overlay: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "base.yaml", BASE);
    write(dir.path(), "judgments.jsonl", DATA);
    write(dir.path(), "overlay.yaml", overlay);
    dir
}

fn code(out: &Output, code: i32) {
    assert_eq!(out.code, code, "{}{}", out.stdout, out.stderr);
}

fn report(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap()
}

#[test]
fn an_overlay_removes_a_gate_a_metric_and_a_report_of_its_base() {
    let ws = workspace(
        "extends: base.yaml\nversion: 1.1.0\nremove:\n  gates: [no_low]\n  metrics: [low]\n  reports: [junit]\n",
    );
    let d = ws.path();
    // The base fails `no_low` (one score below 3); the overlay has no such gate.
    code(&evalspec(d, &["run", "base.yaml", "--out", "base"]), 1);
    assert!(d.join("base/gates.xml").is_file());
    let out = evalspec(d, &["run", "overlay.yaml", "--out", "out"]);
    code(&out, 0);
    let report = report(&d.join("out"));
    let gates = texts_of(&report["gates"], "name");
    assert_eq!(gates, ["mean_score"]);
    assert!(report["metrics"].get("low").is_none());
    assert!(
        !d.join("out/gates.xml").exists(),
        "the junit report is removed"
    );
    assert!(d.join("out/report.md").is_file());
    // The resolved spec, which reports carry and hash, no longer has them, nor `remove`.
    let text = report["spec"]["text"].as_str().unwrap();
    assert!(
        !text.contains("no_low") && !text.contains("remove"),
        "{text}"
    );
    assert!(!text.contains("junit"), "{text}");
}

#[test]
fn a_removed_entry_declared_again_is_replaced_whole() {
    // Merged key by key, an `expr` on the shaped gate would clash with its
    // `metric`; removed first, the gate is the overlay's alone.
    let ws = workspace(
        "extends: base.yaml\nremove: {gates: mean_score, reports: [gates.xml]}\ngates:\n  mean_score: mean_score >= 4.5\n",
    );
    let d = ws.path();
    let out = evalspec(d, &["run", "overlay.yaml", "--out", "out"]);
    code(&out, 1);
    let report = report(&d.join("out"));
    let gate = report["gates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "mean_score")
        .unwrap();
    assert_eq!(gate["expr"], "mean_score >= 4.5");
    assert_eq!(gate["status"], "fail");
    let clash = workspace("extends: base.yaml\ngates:\n  mean_score: {expr: mean_score >= 4.5}\n");
    code(&evalspec(clash.path(), &["check", "overlay.yaml"]), 2);
}

#[test]
fn removing_the_default_report_leaves_only_report_json() {
    let ws = workspace("extends: base.yaml\nremove: {reports: [markdown, junit]}\n");
    let d = ws.path();
    code(&evalspec(d, &["run", "overlay.yaml", "--out", "out"]), 1);
    assert!(d.join("out/report.json").is_file());
    assert!(!d.join("out/report.md").exists() && !d.join("out/gates.xml").exists());
    // A base without `reports:` writes markdown, which can be removed too.
    let plain = workspace("extends: base.yaml\nreports: []\n");
    write(
        plain.path(),
        "again.yaml",
        "extends: overlay.yaml\nremove: {reports: [markdown]}\n",
    );
    let out = evalspec(plain.path(), &["check", "again.yaml"]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stderr
            .contains("the base spec has no report `markdown`"),
        "{}",
        out.stderr
    );
}

#[test]
fn wrong_removals_are_located_errors() {
    // Every error of the `remove:` mapping at once, each with a suggestion.
    let ws = workspace(
        "extends: base.yaml\nremove:\n  gates: [no_lo, mean_score]\n  metrics: [mean_scor]\n  reports: [htm, 3]\n  gate: [x]\n",
    );
    let out = evalspec(ws.path(), &["check", "overlay.yaml"]);
    code(&out, 2);
    insta::assert_snapshot!("wrong_removals", out.stderr);

    // A metric a gate still reads is a compile error, as for any unknown name.
    let ws = workspace("extends: base.yaml\nremove: {metrics: [low]}\n");
    let out = evalspec(ws.path(), &["check", "overlay.yaml"]);
    code(&out, 2);
    insta::assert_snapshot!("removed_metric_still_used", out.stderr);

    // Without a base there is nothing to remove.
    let ws = workspace("name: x\nversion: 1.0.0\ndatasets: {j: {path: judgments.jsonl, key: id}}\nremove: {gates: [a]}\n");
    let out = evalspec(ws.path(), &["check", "overlay.yaml"]);
    code(&out, 2);
    insta::assert_snapshot!("remove_without_extends", out.stderr);
}

/// The JSON Schema as `evalspec schema` prints it, as a validator.
fn validator() -> jsonschema::Validator {
    let out = evalspec(&support::repo_root(), &["schema"]);
    code(&out, 0);
    let schema: Value = serde_json::from_str(&out.stdout).unwrap();
    jsonschema::validator_for(&schema).expect("a valid JSON Schema")
}

fn yaml(text: &str) -> Value {
    serde_saphyr::from_str(text).unwrap()
}

#[test]
fn the_json_schema_accepts_every_valid_overlay_and_rejects_misspelled_keys() {
    let validator = validator();
    let valid = [
        // Tighten one gate: no name, version or datasets of its own.
        "extends: base.yaml\nversion: 2.0.0\ngates:\n  mean_score: {threshold: 4.5}\n",
        "extends: base.yaml\nparams:\n  min_mean: {default: 4.5}\n",
        "extends: base.yaml\ndatasets:\n  judgments: {path: other.jsonl}\n",
        "extends: base.yaml\nmetrics:\n  mean_score: {tolerance: 0.1}\noffenders: {limit: 5}\n",
        "extends: base.yaml\nmatchers:\n  refused: {token: n/a}\ntradeoff: {latency: p95}\n",
        "extends: base.yaml\nremove:\n  gates: [no_low]\n  metrics: low\n  reports: [junit]\n",
        BASE,
    ];
    for text in valid {
        let errors: Vec<String> = validator
            .iter_errors(&yaml(text))
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{text}: {errors:?}");
    }
    let invalid = [
        // Misspelled keys, in an overlay as in a full spec.
        "extends: base.yaml\ngates:\n  mean_score: {treshold: 4.5}\n",
        "extends: base.yaml\nparams:\n  min_mean: {defualt: 4.5}\n",
        "extends: base.yaml\nremove:\n  gate: [no_low]\n",
        "extends: base.yaml\nremovve:\n  gates: [no_low]\n",
        "extend: base.yaml\ngates:\n  mean_score: {threshold: 4.5}\n",
        // A gate cannot be both an expression and a shaped gate.
        "extends: base.yaml\ngates:\n  g: {expr: a > 1, metric: a}\n",
        // Without `extends`, a spec is complete, and has no base to remove from.
        "name: x\nversion: 1.0.0\ngates:\n  g: a > 1\n",
        "name: x\nversion: 1.0.0\ndatasets: {g: {path: g.jsonl}}\n",
        "name: x\nversion: 1.0.0\ndatasets: {g: {key: id}}\ngates:\n  g: {threshold: 1}\n",
        "name: x\nversion: 1.0.0\ndatasets: {g: {key: id}}\nremove: {gates: [a]}\n",
    ];
    for text in invalid {
        assert!(!validator.is_valid(&yaml(text)), "accepted: {text}");
    }
}
