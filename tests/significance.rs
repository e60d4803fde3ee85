//! Intervals, paired tests against a `--baseline`, and gates with `significance`:
//! a real regression fails, the same drop on a set too small to tell passes, and
//! both say why.

use std::path::Path;

use serde_json::Value;

use crate::support::{evalspec, write, Output};

const SPEC: &str = r#"name: sig
version: 1.0.0
datasets:
  items: { format: jsonl, path: items.jsonl, key: id }
metrics:
  precision: { expr: ratio(items.hit), better: higher }
  score: { expr: mean(items.score), better: higher }
gates:
  precision:
    metric: precision
    max_drop: 0.01
    significance: 0.05
reports: [json]
"#;

/// `n` items; the first `misses` miss; scores are 5 except the first `low`, 4.
fn items(n: usize, misses: usize, low: usize) -> String {
    (0..n)
        .map(|i| {
            let hit = i >= misses;
            let score = if i < low { 4 } else { 5 };
            format!("{{\"id\": \"q{i}\", \"hit\": {hit}, \"score\": {score}}}\n")
        })
        .collect()
}

fn run(dir: &Path, items_text: &str, out: &str, baseline: Option<&str>) -> Output {
    write(dir, "items.jsonl", items_text);
    let mut args = vec!["run", "spec.yaml", "--out", out, "-q"];
    if let Some(baseline) = baseline {
        args.extend(["--baseline", baseline]);
    }
    evalspec(dir, &args)
}

fn report(dir: &Path, out: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join(out).join("report.json")).unwrap())
        .unwrap()
}

fn gate_reasons(dir: &Path, out: &str) -> String {
    let report = report(dir, out);
    let gate = &report["gates"][0];
    format!(
        "status: {}\n{}",
        gate["status"].as_str().unwrap(),
        gate["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| format!("- {}\n", r.as_str().unwrap()))
            .collect::<String>()
    )
}

#[test]
fn a_real_regression_fails_and_the_same_drop_on_noise_passes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "spec.yaml", SPEC);
    // 200 items: 30 that hit now miss (precision 1.0 → 0.85, McNemar b = 30).
    assert_eq!(run(root, &items(200, 0, 0), "base", None).code, 0);
    let real = run(root, &items(200, 30, 0), "real", Some("base"));
    assert_eq!(real.code, 1, "{}", real.stderr);
    // 20 items: 3 that hit now miss, the same drop of 0.15 (b = 3, p = 0.125).
    assert_eq!(run(root, &items(20, 0, 0), "small", None).code, 0);
    let noise = run(root, &items(20, 3, 0), "noise", Some("small"));
    assert_eq!(noise.code, 0, "{}", noise.stderr);
    insta::assert_snapshot!(
        "significance_gates",
        format!(
            "real regression\n{}\nnoise\n{}",
            gate_reasons(root, "real"),
            gate_reasons(root, "noise")
        )
    );
    let change = &report(root, "real")["baseline"]["metrics"]["precision"]["change"];
    assert_eq!(change["test"], "mcnemar");
    assert_eq!(change["items"], 200);
    assert!((change["delta"].as_f64().unwrap() + 0.15).abs() < 1e-12);
}

#[test]
fn items_in_one_run_only_are_left_out_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "spec.yaml", SPEC);
    assert_eq!(run(root, &items(50, 0, 0), "base", None).code, 0);
    // Ten items fewer, and five new ones.
    let mut text: String = items(40, 0, 0);
    for i in 0..5 {
        text.push_str(&format!(
            "{{\"id\": \"new{i}\", \"hit\": true, \"score\": 5}}\n"
        ));
    }
    assert_eq!(run(root, &text, "new", Some("base")).code, 0);
    let change = &report(root, "new")["baseline"]["metrics"]["precision"]["change"];
    assert_eq!(change["items"], 40);
    assert_eq!(change["excluded"], 15);
}

#[test]
fn a_mean_gets_a_bootstrap_interval_and_a_paired_bootstrap() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "spec.yaml", SPEC);
    assert_eq!(run(root, &items(40, 0, 0), "base", None).code, 0);
    // Four scores went 5 → 4.
    assert_eq!(run(root, &items(40, 0, 4), "new", Some("base")).code, 0);
    let report = report(root, "new");
    assert_eq!(report["intervals"]["score"]["method"], "bootstrap");
    assert_eq!(report["intervals"]["precision"]["method"], "wilson");
    assert_eq!(report["intervals"]["precision"]["level"], 0.95);
    let change = &report["baseline"]["metrics"]["score"]["change"];
    assert_eq!(change["test"], "paired_bootstrap");
    assert!((change["delta"].as_f64().unwrap() + 0.1).abs() < 1e-12);
}

/// Runs spec.yaml against `base` with 1 and 2 threads, twice each (out
/// `t1`, `t2`, `t1b`, `t2b`): report.json and item-values.jsonl are the same bytes.
fn assert_same_for_any_thread_count(root: &Path) {
    let mut seen: Vec<Vec<u8>> = Vec::new();
    for (out, threads) in [("t1", "1"), ("t2", "2"), ("t1b", "1"), ("t2b", "2")] {
        let args = [
            "run",
            "spec.yaml",
            "--out",
            out,
            "-q",
            "--baseline",
            "base",
            "--threads",
            threads,
        ];
        evalspec(root, &args);
        let report = std::fs::read(root.join(out).join("report.json")).unwrap();
        let values = std::fs::read(root.join(out).join("item-values.jsonl")).unwrap();
        seen.push([report, values].concat());
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "byte-identical");
}

#[test]
fn reports_are_the_same_for_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "spec.yaml", SPEC);
    assert_eq!(run(root, &items(3000, 0, 0), "base", None).code, 0);
    write(root, "items.jsonl", &items(3000, 40, 300));
    assert_same_for_any_thread_count(root);
}

/// Metrics computed from other metrics (intervals and tests by resampling their
/// formulas) beside metrics from items, several of each, so that they are shared
/// out over the threads: the same bytes for any thread count.
#[test]
fn formula_intervals_are_the_same_for_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // SPEC's metrics (and gate), and metrics from formulas over them.
    let formulas = "  low: { expr: ratio(items.score < 5), better: lower }
  blend: { expr: 2 * precision * low / (precision + low), better: higher }
  spread: { expr: score - precision, better: higher }
  ratio_of_means: { expr: mean(items.score) / (1 + low), better: higher }
gates:";
    let spec = SPEC.replacen("gates:", formulas, 1);
    write(root, "spec.yaml", &spec);
    assert_eq!(run(root, &items(3000, 0, 200), "base", None).code, 0);
    write(root, "items.jsonl", &items(3000, 40, 300));
    assert_same_for_any_thread_count(root);
    let report = report(root, "t2");
    for metric in ["blend", "spread", "ratio_of_means"] {
        let interval = &report["intervals"][metric];
        assert_eq!(
            interval["method"], "grouped_bootstrap",
            "{metric}: {interval}"
        );
        let change = &report["baseline"]["metrics"][metric]["change"];
        assert_eq!(
            change["test"], "paired_grouped_bootstrap",
            "{metric}: {change}"
        );
    }
}

/// Version 3 of item-values.jsonl writes an aggregate that is also a metric's
/// once, in the metric's column; a baseline written by an earlier evalspec
/// (version 2, every observation on its own) pairs to the same tests.
#[test]
fn a_version_two_baseline_pairs_as_its_version_three_rewrite_does() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let spec = SPEC.replacen(
        "gates:",
        "  low: { expr: ratio(items.score < 5), better: lower }
  blend: { expr: 2 * precision * low / (precision + low), better: higher }
gates:",
        1,
    );
    write(root, "spec.yaml", &spec);
    assert_eq!(run(root, &items(300, 0, 20), "base", None).code, 0);
    let file = root.join("base/item-values.jsonl");
    let v3 = std::fs::read_to_string(&file).unwrap();
    let (header, rows) = v3.split_once('\n').unwrap();
    let mut header: Value = serde_json::from_str(header).unwrap();
    assert_eq!(header["item_values"], 3, "{header}");
    // Written as version 2: each aggregate's observations after the values.
    let kept_in: Vec<Option<usize>> = header["aggregates"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .map(|a| {
            let metric = a.as_object_mut().unwrap().remove("metric");
            metric.map(|m| m.as_u64().unwrap() as usize)
        })
        .collect();
    assert!(kept_in.iter().all(Option::is_some), "{header}");
    header["item_values"] = 2.into();
    let mut v2 = format!("{header}\n");
    for line in rows.lines() {
        let mut row: Vec<Value> = serde_json::from_str(line).unwrap();
        let values = row[1..].to_vec();
        row.extend(kept_in.iter().map(|c| values[c.unwrap()].clone()));
        v2.push_str(&format!("{}\n", Value::from(row)));
    }
    write(root, "items.jsonl", &items(300, 15, 40));
    let new = |out: &str| {
        assert_eq!(
            evalspec(
                root,
                &["run", "spec.yaml", "--out", out, "-q", "--baseline", "base"]
            )
            .code,
            1
        );
        report(root, out)["baseline"].clone()
    };
    let from_v3 = new("from-v3");
    std::fs::write(&file, v2).unwrap();
    let from_v2 = new("from-v2");
    assert_eq!(from_v2, from_v3);
    let change = &from_v2["metrics"]["blend"]["change"];
    assert_eq!(change["test"], "paired_grouped_bootstrap", "{change}");
    assert!(change["p_value"].as_f64().unwrap() < 0.05, "{change}");
}

#[test]
fn a_baseline_without_item_values_still_reads_and_says_why_there_are_no_tests() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "spec.yaml", SPEC);
    assert_eq!(run(root, &items(50, 0, 0), "base", None).code, 0);
    std::fs::remove_file(root.join("base/item-values.jsonl")).unwrap();
    let new = run(root, &items(50, 10, 0), "new", Some("base"));
    // No paired test: the bound applies as without `significance`, and says so.
    assert_eq!(new.code, 1, "{}", new.stderr);
    let report = report(root, "new");
    assert!(report["baseline"]["note"]
        .as_str()
        .unwrap()
        .contains("no paired tests"));
    assert!(report["baseline"]["metrics"]["precision"]["change"].is_null());
    assert!(gate_reasons(root, "new").contains("no paired test"));
}

#[test]
fn confidence_sets_the_level_and_keep_item_values_false_writes_no_store() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let spec = SPEC.replace(
        "reports: [json]",
        "reports: [json]\nconfidence: 0.9\nkeep_item_values: false",
    );
    write(root, "spec.yaml", &spec);
    assert_eq!(run(root, &items(50, 5, 0), "out", None).code, 0);
    assert_eq!(report(root, "out")["intervals"]["precision"]["level"], 0.9);
    assert!(!root.join("out/item-values.jsonl").exists());
    let args = [
        "run",
        "spec.yaml",
        "--out",
        "cli",
        "-q",
        "--confidence",
        "0.8",
    ];
    assert_eq!(evalspec(root, &args).code, 0);
    assert_eq!(report(root, "cli")["intervals"]["precision"]["level"], 0.8);
}

#[test]
fn diff_marks_changes_and_counts_only_significant_regressions() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "spec.yaml",
        &SPEC.replace("    significance: 0.05\n", ""),
    );
    assert_eq!(run(root, &items(200, 0, 0), "base", None).code, 0);
    assert_eq!(run(root, &items(200, 30, 0), "real", None).code, 0);
    assert_eq!(run(root, &items(20, 0, 0), "small", None).code, 0);
    assert_eq!(run(root, &items(20, 3, 0), "noise", None).code, 0);
    let diff = |old: &str, new: &str, extra: &[&str]| {
        let mut args = vec!["diff", old, new, "--fail-on-regression"];
        args.extend(extra);
        evalspec(root, &args)
    };
    let significance = ["--significance", "0.05"];
    assert_eq!(diff("base", "real", &significance).code, 1);
    assert_eq!(diff("small", "noise", &significance).code, 0);
    // Without --significance, any regression beyond the tolerance counts.
    assert_eq!(diff("small", "noise", &[]).code, 1);
    let text = diff("small", "noise", &significance).stdout;
    let line = text.lines().find(|l| l.contains("precision")).unwrap();
    insta::assert_snapshot!("diff_within_noise", line);
    let json: Value =
        serde_json::from_str(&diff("base", "real", &["--format", "json"]).stdout).unwrap();
    let paired = &json["metrics"][0]["change"];
    assert_eq!(paired["test"], "mcnemar");
    assert_eq!(paired["items"], 200);
    // One story: the JSON's p is the text's one-sided p, with the one-sided
    // bound of that test, and names what failed the build.
    assert_eq!(paired["alternative"], "decrease");
    assert!(paired["low"].is_null() && paired["high"].as_f64().unwrap() < 0.0);
    let json: Value = serde_json::from_str(
        &diff(
            "small",
            "noise",
            &["--format", "json", "--significance", "0.05"],
        )
        .stdout,
    )
    .unwrap();
    let paired = &json["metrics"][0]["change"];
    assert!(
        (paired["p_value"].as_f64().unwrap() - 0.125).abs() < 1e-12,
        "{paired}"
    );
    assert!(
        (paired["p_adjusted"].as_f64().unwrap() - 0.25).abs() < 1e-12,
        "{paired}"
    );
    assert_eq!(json["failed_by"], serde_json::json!([]));
    let json: Value = serde_json::from_str(
        &diff(
            "base",
            "real",
            &["--format", "json", "--significance", "0.05"],
        )
        .stdout,
    )
    .unwrap();
    let failed = &json["failed_by"];
    assert_eq!(failed.as_array().unwrap().len(), 1, "{failed}");
    assert_eq!(failed[0]["metric"], "precision");
    assert!(failed[0]["p_adjusted"].as_f64().unwrap() < 0.05);
}

#[test]
fn explain_states_the_smallest_change_a_gate_can_call_significant() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "spec.yaml", SPEC);
    assert_eq!(run(root, &items(200, 20, 0), "base", None).code, 0);
    let resources = ["--threads", "2", "--max-memory", "4G"];
    let without = evalspec(root, &[&["explain", "spec.yaml"][..], &resources].concat());
    let with = ["explain", "spec.yaml", "--baseline", "base"];
    let with = evalspec(root, &[&with[..], &resources].concat());
    assert_eq!(with.code, 0, "{}", with.stderr);
    let gate_lines = |text: &str| -> String {
        text.lines()
            .skip_while(|l| !l.starts_with("Gates"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    insta::assert_snapshot!(
        "explain_power",
        format!(
            "without a baseline\n{}\n\nwith one\n{}",
            gate_lines(&without.stdout),
            gate_lines(&with.stdout)
        )
    );
}

#[test]
fn a_repeated_key_is_one_unit_under_duplicates_keep() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let spec = SPEC.replace("key: id }", "key: id, duplicates: keep }");
    write(root, "spec.yaml", &spec);
    // q0..q29, then q0..q9 again: 30 keys, ten of them twice.
    let twice = |misses: usize| format!("{}{}", items(30, misses, 0), items(10, 0, 0));
    assert_eq!(run(root, &twice(0), "base", None).code, 0);
    run(root, &twice(5), "new", Some("base"));
    let change = &report(root, "new")["baseline"]["metrics"]["precision"]["change"];
    assert_eq!(change["items"], 30);
    assert_eq!(change["excluded"], 0);
    // Two items under one key are not one pair: no McNemar.
    assert_eq!(change["test"], "paired_bootstrap");
}

#[test]
fn runs_have_their_own_intervals_and_paired_tests() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let spec = SPEC.replace("path: items.jsonl", "runs: runs");
    write(root, "spec.yaml", &spec);
    std::fs::create_dir(root.join("runs")).unwrap();
    write(root, "runs/a.jsonl", &items(100, 0, 0));
    write(root, "runs/b.jsonl", &items(100, 10, 0));
    assert_eq!(
        evalspec(root, &["run", "spec.yaml", "--out", "base", "-q"]).code,
        0
    );
    write(root, "runs/b.jsonl", &items(100, 30, 0));
    let args = [
        "run",
        "spec.yaml",
        "--out",
        "new",
        "-q",
        "--baseline",
        "base",
    ];
    evalspec(root, &args);
    let report = report(root, "new");
    assert_eq!(report["intervals"]["precision@a"]["method"], "wilson");
    let metrics = &report["baseline"]["metrics"];
    assert_eq!(metrics["precision@a"]["change"]["delta"], 0.0);
    let b = &metrics["precision@b"]["change"];
    assert!((b["delta"].as_f64().unwrap() + 0.2).abs() < 1e-12, "{b}");
    assert_eq!(b["items"], 100);
    let values = std::fs::read_to_string(root.join("new/item-values.jsonl")).unwrap();
    assert!(
        values.lines().nth(1).unwrap().starts_with("[\"q0\",\"a\","),
        "{values}"
    );
}

#[test]
fn significance_does_not_forgive_a_missing_gain() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "spec.yaml",
        &SPEC.replace("max_drop: 0.01", "min_gain: 0.05"),
    );
    assert_eq!(run(root, &items(20, 3, 0), "base", None).code, 0);
    // No gain at all: fails, though no test could call it significant.
    assert_eq!(run(root, &items(20, 3, 0), "same", Some("base")).code, 1);
    assert!(gate_reasons(root, "same").contains("must improve on it by at least 0.05"));
}

/// Metrics that are not one ratio of sums: a scaled mean, a percentile, a
/// harmonic mean of two ratios (reading two other metrics).
const COMPOSITE: &str = r#"name: composite
version: 1.0.0
datasets:
  items: { format: jsonl, path: items.jsonl, key: id }
metrics:
  hit_rate: { expr: ratio(items.hit) }
  high: { expr: ratio(items.score >= 5) }
  score_pct: { expr: mean(items.score) * 100, better: higher }
  p90_score: { expr: "percentile(items.score, 90)", better: higher }
  balanced: { expr: 2 * hit_rate * high / (hit_rate + high), better: higher }
gates:
  balanced:
    metric: balanced
    max_drop: 0.01
    significance: 0.05
reports: [json]
"#;

#[test]
fn every_metric_from_items_gets_an_interval_and_a_paired_test() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "spec.yaml", COMPOSITE);
    assert_eq!(run(root, &items(40, 0, 0), "base", None).code, 0);
    // 12 of 40 scores went 5 → 4: score_pct drops 3 points, balanced ~0.17.
    assert_eq!(run(root, &items(40, 0, 12), "new", Some("base")).code, 1);
    let report = report(root, "new");
    for metric in ["score_pct", "p90_score", "balanced"] {
        assert_eq!(
            report["intervals"][metric]["method"], "bootstrap",
            "{metric}"
        );
        let change = &report["baseline"]["metrics"][metric]["change"];
        assert_eq!(change["test"], "paired_bootstrap", "{metric}");
        assert_eq!(change["items"], 40, "{metric}");
    }
    let change = &report["baseline"]["metrics"]["score_pct"]["change"];
    assert!(
        (change["delta"].as_f64().unwrap() + 30.0).abs() < 1e-9,
        "{change}"
    );
    assert!(change["high"].as_f64().unwrap() < 0.0, "{change}");
    let interval = &report["intervals"]["score_pct"];
    let (low, high) = (
        interval["low"].as_f64().unwrap(),
        interval["high"].as_f64().unwrap(),
    );
    assert!(low < 470.0 && 470.0 < high, "{interval}");
    // The significant drop of the harmonic mean fails its gate, and says so.
    let reasons = gate_reasons(root, "new");
    assert!(reasons.starts_with("status: fail"), "{reasons}");
    assert!(reasons.contains("paired bootstrap, 40 items"), "{reasons}");
    // `diff` reads the same formulas from item-values.jsonl and gives the
    // same change as `--baseline`.
    let out = evalspec(root, &["diff", "base", "new", "--format", "json"]);
    let json: Value = serde_json::from_str(&out.stdout).unwrap();
    let by_diff = json["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "balanced")
        .unwrap()["change"]
        .clone();
    let by_run = &report["baseline"]["metrics"]["balanced"]["change"];
    for field in ["delta", "low", "high", "p_value", "test", "items"] {
        assert_eq!(
            by_diff[field], by_run[field],
            "{field}: {by_diff} vs {by_run}"
        );
    }
}

#[test]
fn many_items_are_resampled_in_groups_the_same_for_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "spec.yaml", COMPOSITE);
    assert_eq!(run(root, &items(3000, 0, 0), "base", None).code, 0);
    write(root, "items.jsonl", &items(3000, 40, 300));
    assert_same_for_any_thread_count(root);
    let report = report(root, "t1");
    assert_eq!(
        report["intervals"]["balanced"]["method"],
        "grouped_bootstrap"
    );
    let change = &report["baseline"]["metrics"]["balanced"]["change"];
    assert_eq!(change["test"], "paired_grouped_bootstrap");
    assert_eq!(change["items"], 3000);
}

#[test]
fn a_metric_across_runs_is_resampled_with_items_matched_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let spec = SPEC.replace("path: items.jsonl", "runs: runs").replace(
        "  score: { expr: mean(items.score), better: higher }\n",
        "  score: { expr: mean(items.score), better: higher }\n  \
         mean_precision: { expr: run_mean(precision) }\n  \
         spread: { expr: run_max(precision) - run_min(precision) }\n",
    );
    write(root, "spec.yaml", &spec);
    std::fs::create_dir(root.join("runs")).unwrap();
    // Run b misses the first 20 of the 100 items that run a hits.
    write(root, "runs/a.jsonl", &items(100, 0, 0));
    write(root, "runs/b.jsonl", &items(100, 20, 0));
    let out = evalspec(root, &["run", "spec.yaml", "--out", "out", "-q"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = report(root, "out");
    let mean = &report["intervals"]["mean_precision"];
    assert_eq!(mean["method"], "bootstrap", "{mean}");
    let (low, high) = (
        mean["low"].as_f64().unwrap(),
        mean["high"].as_f64().unwrap(),
    );
    assert!(low < 0.9 && 0.9 < high && high <= 1.0, "{mean}");
    // Items matched across runs: a replicate's spread is the share of the
    // first 20 items among those it drew, about 0.2 ± 0.08.
    let spread = &report["intervals"]["spread"];
    let (low, high) = (
        spread["low"].as_f64().unwrap(),
        spread["high"].as_f64().unwrap(),
    );
    assert!(
        0.1 < low && low < 0.2 && 0.2 < high && high < 0.3,
        "{spread}"
    );
    // Twice, the same bytes.
    evalspec(root, &["run", "spec.yaml", "--out", "again", "-q"]);
    assert_eq!(
        std::fs::read(root.join("out/report.json")).unwrap(),
        std::fs::read(root.join("again/report.json")).unwrap()
    );
}

const SLICED: &str = r#"name: sliced
version: 1.0.0
datasets:
  items: { format: jsonl, path: items.jsonl, key: id }
slices:
  category: items.category
metrics:
  precision: { expr: ratio(items.hit), better: higher, by: category }
gates:
  precision_per_category:
    metric: precision
    by: category
    max_drop: 0.01
    significance: 0.05
reports: [json]
"#;

/// 200 items in each of categories `a` and `b`; the first `misses_a` of `a`
/// and `misses_b` of `b` miss.
fn sliced_items(misses_a: usize, misses_b: usize) -> String {
    (0..400)
        .map(|i| {
            let (category, j) = if i < 200 { ("a", i) } else { ("b", i - 200) };
            let misses = if category == "a" { misses_a } else { misses_b };
            let hit = j >= misses;
            format!("{{\"id\": \"q{i}\", \"category\": \"{category}\", \"hit\": {hit}}}\n")
        })
        .collect()
}

#[test]
fn a_gate_by_slice_tests_each_value_against_its_baseline_items() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "spec.yaml", SLICED);
    assert_eq!(run(root, &sliced_items(0, 0), "base", None).code, 0);
    // 30 of a's 200 items now miss: significant in `a` after Holm over a and b.
    assert_eq!(
        run(root, &sliced_items(30, 0), "real", Some("base")).code,
        1
    );
    let reasons = gate_reasons(root, "real");
    assert!(reasons.contains("category=a (200 items)"), "{reasons}");
    assert!(reasons.contains("Holm p < 0.001 of 2 tests"), "{reasons}");
    assert!(!reasons.contains("category=b"), "{reasons}");
    let failed = &report(root, "real")["gates"][0]["failed_by"];
    assert_eq!(failed.as_array().unwrap().len(), 1, "{failed}");
    assert_eq!(
        (
            &failed[0]["metric"],
            &failed[0]["slice"],
            &failed[0]["value"]
        ),
        (
            &Value::from("precision"),
            &Value::from("category"),
            &Value::from("a")
        ),
        "{failed}"
    );
    assert!(failed[0]["p_adjusted"].as_f64().unwrap() < 0.05, "{failed}");
    let change = &report(root, "real")["slices"]["category"]["a"]["changes"]["precision"];
    assert_eq!(change["test"], "mcnemar", "{change}");
    assert!(change["p_adjusted"].as_f64().unwrap() < 0.05, "{change}");
    // 3 misses in `b` are beyond the bound but within noise: passes, and says so.
    assert_eq!(
        run(root, &sliced_items(0, 3), "noise", Some("base")).code,
        0
    );
    let reasons = gate_reasons(root, "noise");
    assert!(
        reasons.contains("within noise at significance 0.05"),
        "{reasons}"
    );
}

#[test]
fn check_refuses_significance_no_slice_test_can_decide() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let worst = SLICED.replace(
        "    by: category\n    max_drop",
        "    by: category\n    slices: worst\n    max_drop",
    );
    write(root, "spec.yaml", &worst);
    let out = evalspec(root, &["check", "spec.yaml"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("`slices: worst`, which no paired test decides"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("spec.yaml:"), "{}", out.stderr);
    let formula = SLICED.replace(
        "precision: { expr: ratio(items.hit), better: higher, by: category }",
        "precision: { expr: 2 * ratio(items.hit), better: higher, by: category }",
    );
    write(root, "spec.yaml", &formula);
    let out = evalspec(root, &["check", "spec.yaml"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("has no paired test per slice value"),
        "{}",
        out.stderr
    );
}

/// `diff` tests each slice value's metric on that value's items, as
/// `--baseline` does, and holds them to one level with the rest (Holm).
#[test]
fn diff_tests_slice_values_and_names_what_failed_the_build() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "spec.yaml", SLICED);
    assert_eq!(run(root, &sliced_items(0, 0), "base", None).code, 0);
    assert_eq!(run(root, &sliced_items(0, 3), "noise", None).code, 0);
    assert_eq!(run(root, &sliced_items(30, 0), "real", None).code, 0);
    let diff = |new: &str| {
        let args = [
            "diff",
            "base",
            new,
            "--fail-on-regression",
            "--significance",
            "0.05",
            "--format",
            "json",
        ];
        let out = evalspec(root, &args);
        (
            out.code,
            serde_json::from_str::<Value>(&out.stdout).unwrap(),
        )
    };
    let (code, json) = diff("noise");
    assert_eq!(code, 0, "{json}");
    let b = json["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "precision[category=b]")
        .unwrap();
    assert_eq!(b["direction"], "regressed");
    assert_eq!(b["change"]["items"], 200, "{b}");
    let (code, json) = diff("real");
    assert_eq!(code, 1, "{json}");
    let failed = json["failed_by"].as_array().unwrap();
    let names: Vec<String> = failed
        .iter()
        .map(|f| {
            format!(
                "{}[{}={}]",
                f["metric"].as_str().unwrap(),
                f["slice"].as_str().unwrap_or("-"),
                f["value"].as_str().unwrap_or("-")
            )
        })
        .collect();
    assert!(
        names.contains(&"precision[category=a]".to_string()),
        "{names:?}"
    );
    assert!(!names.iter().any(|n| n.contains("=b")), "{names:?}");
}

/// A gate that bounds a change, run without `--baseline`: every output says
/// the bound went unchecked, whatever `when_no_baseline` made of it.
#[test]
fn a_missing_baseline_is_said_in_every_output() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "spec.yaml",
        &SPEC.replace("reports: [json]", "reports: [json, summary]"),
    );
    write(root, "items.jsonl", &items(20, 0, 0));
    let out = evalspec(root, &["run", "spec.yaml", "--out", "none"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let said = "no baseline (run with --baseline): the change bounds of `precision` (passed) were not checked";
    assert!(out.stderr.contains(said), "{}", out.stderr);
    assert_eq!(report(root, "none")["baseline_missing"], said);
    let summary = std::fs::read_to_string(root.join("none/summary.md")).unwrap();
    assert!(summary.contains(said), "{summary}");
    assert!(
        gate_reasons(root, "none").contains("change bounds not checked (when_no_baseline: pass)")
    );
}

/// Power per slice value: `explain --baseline` states the smallest change each
/// value's items can call significant, and a run warns when that is above the
/// gate's bound.
#[test]
fn power_is_stated_per_slice_value_and_a_small_slice_warns() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "spec.yaml",
        &SLICED.replace("max_drop: 0.01", "max_drop: 0.05"),
    );
    // `a` has 200 items, 40 of them misses; `b` 200 without one.
    assert_eq!(run(root, &sliced_items(40, 0), "base", None).code, 0);
    let out = evalspec(root, &["explain", "spec.yaml", "--baseline", "base"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let line = out
        .stdout
        .lines()
        .find(|l| l.contains("call significant per value"))
        .unwrap_or_else(|| panic!("{}", out.stdout));
    insta::assert_snapshot!("slice_power", line.trim());
    // At 0.05, `a` (p = 0.8 on 200 items) cannot see a drop that small; `b` can.
    let out = run(root, &sliced_items(40, 0), "new", Some("base"));
    assert!(
        out.stderr.contains(
            "category=a has 200 baseline items, too few to call a drop of 0.05 significant"
        ),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("category=b has"), "{}", out.stderr);
}
