//! Datasets read as several runs (`runs:`): per-run metrics and gates, stability,
//! summaries over runs, agreement, and the operational preset over its shipped runs.

use std::path::Path;

use serde_json::Value as Json;

use crate::support::{evalspec, evalspec_with_env, repo_root, texts_of, write};

const SPEC: &str = r#"
name: folder
version: 0.1.0
items: trace
datasets:
  gold: { path: gold.jsonl, key: qid }
  trace: { runs: runs, key: qid }
fields:
  ok: trace.status == "ok"
metrics:
  pass_rate: ratio(ok)
  p95_latency: p95(trace.latency)
  kappa: kappa(trace.a, trace.b)
  ok_stability: stability(ok)
  worst_pass_rate: run_min(pass_rate)
  pass_rate_std: run_std(pass_rate)
gates:
  fast_and_good:
    expr: p95(trace.latency) <= 500 and pass_rate >= 0.75
    runs: any
  all_good: pass_rate >= 0.75
  stable: ok_stability >= 0.5
reports: [json, markdown, items]
"#;

fn line(qid: &str, status: &str, latency: u32, a: &str, b: &str) -> String {
    format!(
        r#"{{"qid": "{qid}", "status": "{status}", "latency": {latency}, "a": "{a}", "b": "{b}"}}"#
    ) + "\n"
}

/// Three runs of four items; run `c` lacks `q4`.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "spec.yaml", SPEC);
    let gold: String = (1..=4)
        .map(|i| format!("{{\"qid\": \"q{i}\"}}\n"))
        .collect();
    write(root, "gold.jsonl", &gold);
    let a = [
        line("q1", "ok", 100, "y", "y"),
        line("q2", "ok", 200, "y", "y"),
        line("q3", "bad", 300, "n", "n"),
        line("q4", "ok", 400, "n", "y"),
    ];
    let b = [
        line("q1", "ok", 150, "y", "y"),
        line("q2", "bad", 250, "y", "n"),
        line("q3", "bad", 350, "n", "n"),
        line("q4", "ok", 1000, "n", "n"),
    ];
    let c = [
        line("q1", "ok", 120, "y", "y"),
        line("q2", "ok", 220, "y", "y"),
        line("q3", "bad", 320, "n", "n"),
    ];
    write(root, "runs/a.jsonl", &a.concat());
    write(root, "runs/b.jsonl", &b.concat());
    write(root, "runs/c.jsonl", &c.concat());
    dir
}

fn report(dir: &Path) -> Json {
    serde_json::from_str(&std::fs::read_to_string(dir.join("out/report.json")).unwrap()).unwrap()
}

fn close(value: &Json, expected: f64) -> bool {
    value.as_f64().is_some_and(|v| (v - expected).abs() < 1e-12)
}

#[test]
fn a_folder_of_runs_is_scored_run_by_run_and_across_runs() {
    let dir = workspace();
    let run = evalspec(dir.path(), &["run", "spec.yaml", "--out", "out"]);
    // `all_good` fails in run b (pass rate 0.5).
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("in 3 runs"), "{}", run.stdout);
    let r = report(dir.path());
    let names = texts_of(&r["runs"], "name");
    assert_eq!(names, ["a", "b", "c"]);
    assert_eq!(r["runs"][1]["files"]["trace"], "runs/b.jsonl");
    assert_eq!(r["datasets"]["trace"]["path"], "runs");
    assert_eq!(r["datasets"]["trace"]["runs"]["c"]["records"], 3);
    let m = &r["metrics"];
    // Per run, by hand.
    assert_eq!(m["pass_rate@a"], 0.75);
    assert_eq!(m["pass_rate@b"], 0.5);
    assert!(close(&m["pass_rate@c"], 2.0 / 3.0));
    // p95 of 4 values: index 2.85 → 300 + 0.85·100; of 3: index 1.9 → 220 + 0.9·100.
    assert!(close(&m["p95_latency@a"], 385.0));
    assert!(close(&m["p95_latency@b"], 902.5));
    assert!(close(&m["p95_latency@c"], 310.0));
    // κ = (n·agree − Σ a_k b_k) / (n² − Σ a_k b_k): a (12−8)/8, b (12−8)/8, c (9−5)/4.
    assert_eq!(m["kappa@a"], 0.5);
    assert_eq!(m["kappa@b"], 0.5);
    assert_eq!(m["kappa@c"], 1.0);
    // Across runs: q1 and q3 the same everywhere; q2 flips; q4 is missing from c.
    assert_eq!(m["ok_stability"], 0.5);
    assert_eq!(m["worst_pass_rate"], 0.5);
    let mean = (0.75 + 0.5 + 2.0 / 3.0) / 3.0;
    let var = [0.75, 0.5, 2.0 / 3.0]
        .iter()
        .map(|x: &f64| (x - mean).powi(2))
        .sum::<f64>()
        / 3.0;
    assert!((m["pass_rate_std"].as_f64().unwrap() - var.sqrt()).abs() < 1e-12);
    assert_eq!(r["spread"]["pass_rate"]["min"], 0.5);
    assert_eq!(r["spread"]["pass_rate"]["max"], 0.75);
    let flips = &r["stability"][0];
    assert_eq!(
        (flips["items"].as_u64(), flips["stable"].as_u64()),
        (Some(4), Some(2))
    );
    assert_eq!(flips["flips"][0]["key"], "q2");
    assert_eq!(flips["flips"][0]["values"]["b"], false);
    assert_eq!(flips["flips"][1]["key"], "q4");
    assert_eq!(flips["flips"][1]["values"]["c"], Json::Null);
    // Gates: the best run decides `any`, the worst decides `every`.
    let gate = |name: &str| {
        r["gates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(gate("fast_and_good")["status"], "pass");
    assert_eq!(gate("fast_and_good")["run"], "a");
    assert_eq!(gate("all_good")["status"], "fail");
    assert_eq!(gate("all_good")["run"], "b");
    assert_eq!(r["runs"][1]["gates"]["fast_and_good"]["status"], "fail");
    assert!(gate("stable").get("run").is_none(), "decided across runs");
    // One confusion table per run.
    let tables = r["agreement"].as_array().unwrap();
    assert_eq!(tables.len(), 3);
    assert_eq!(tables[0]["run"], "a");
    assert_eq!(tables[0]["labels"], serde_json::json!(["n", "y"]));
    assert_eq!(tables[0]["table"], serde_json::json!([[1, 1], [0, 2]]));
    // Items carry their run, listed by key, then run.
    let items = std::fs::read_to_string(dir.path().join("out/items.jsonl")).unwrap();
    let first: Vec<Json> = items
        .lines()
        .take(3)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(first[0]["run"], "a");
    assert_eq!(first[1]["run"], "b");
    assert_eq!(first[2]["key"], "q1");
    let md = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    assert!(
        md.contains("| pass_rate | 0.7500 | 0.5000 | 0.6667 | 0.5000 | 0.7500 |"),
        "{md}"
    );
    assert!(
        md.contains("`stability(ok)`: 2 of 4 items the same in every run; 2 flip."),
        "{md}"
    );
}

#[test]
fn a_baseline_pairs_per_run_metrics_by_run_name() {
    let dir = workspace();
    let root = dir.path();
    evalspec(root, &["run", "spec.yaml", "--out", "before"]);
    // Run b gets better; the baseline section compares each run with its namesake.
    write(
        root,
        "runs/b.jsonl",
        &std::fs::read_to_string(root.join("runs/a.jsonl")).unwrap(),
    );
    let run = evalspec(
        root,
        &["run", "spec.yaml", "--baseline", "before", "--out", "out"],
    );
    // Run c still fails `all_good`.
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let since = &report(root)["baseline"]["metrics"];
    assert_eq!(since["pass_rate@b"]["baseline"], 0.5);
    assert_eq!(since["pass_rate@b"]["value"], 0.75);
    assert_eq!(since["pass_rate@b"]["delta"], 0.25);
    assert_eq!(since["pass_rate@a"]["delta"], 0.0);
    assert_eq!(since["ok_stability"]["baseline"], 0.5);
}

#[test]
fn the_runs_can_come_from_the_command_line_and_results_do_not_depend_on_threads() {
    let dir = workspace();
    let root = dir.path();
    std::fs::create_dir_all(root.join("only-a")).unwrap();
    std::fs::copy(root.join("runs/a.jsonl"), root.join("only-a/a.jsonl")).unwrap();
    let run = evalspec(
        root,
        &[
            "run",
            "spec.yaml",
            "--dataset",
            "trace=only-a",
            "--out",
            "out",
        ],
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let r = report(root);
    assert_eq!(r["runs"].as_array().unwrap().len(), 1);
    assert_eq!(r["metrics"]["ok_stability"], 1.0);
    assert_eq!(r["datasets"]["trace"]["path"], "only-a");
    // A glob on the command line, and one thread against three, each run's file
    // split into three chunks (tiny chunks allowed): the same bytes.
    let scored = |threads: &str, out: &str| {
        evalspec_with_env(
            root,
            &[("EVALSPEC_MIN_CHUNK_BYTES", "16")],
            &[
                "run",
                "spec.yaml",
                "--dataset",
                "trace=runs/*.jsonl",
                "--threads",
                threads,
                "--out",
                out,
            ],
        )
    };
    let (one, two) = (scored("1", "one"), scored("3", "two"));
    assert_eq!(one.code, 1);
    assert_eq!(
        one.stdout.replace("one/", ""),
        two.stdout.replace("two/", "")
    );
    for file in ["report.json", "report.md", "items.jsonl"] {
        assert_eq!(
            std::fs::read(root.join("one").join(file)).unwrap(),
            std::fs::read(root.join("two").join(file)).unwrap(),
            "{file}"
        );
    }
}

#[test]
fn runs_may_be_named_by_a_field_that_every_record_repeats() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "spec.yaml",
        "name: named\nversion: 0.1.0\ndatasets:\n  trace:\n    runs: [x1.jsonl, x2.jsonl]\n    run_name: config\n    key: qid\nmetrics:\n  n: count()\n  same: stability(trace.v)\nreports: [json]\n",
    );
    write(root, "x1.jsonl", "{\"qid\": 1, \"config\": \"slow\", \"v\": 1}\n{\"qid\": 2, \"config\": \"slow\", \"v\": 2}\n");
    write(root, "x2.jsonl", "{\"qid\": 1, \"config\": \"fast\", \"v\": 1}\n{\"qid\": 2, \"config\": \"fast\", \"v\": 3}\n");
    let run = evalspec(root, &["run", "spec.yaml", "--out", "out"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let r = report(root);
    // Runs keep file order; their names come from the records.
    assert_eq!(r["runs"][0]["name"], "slow");
    assert_eq!(r["runs"][1]["name"], "fast");
    assert_eq!(r["metrics"]["same"], 0.5);
    assert_eq!(r["stability"][0]["flips"][0]["values"]["fast"], 3);

    // A record that disagrees with its file's first record is an error at its line.
    write(root, "x2.jsonl", "{\"qid\": 1, \"config\": \"fast\", \"v\": 1}\n{\"qid\": 2, \"config\": \"fastest\", \"v\": 3}\n");
    let run = evalspec(root, &["run", "spec.yaml", "--out", "out"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--> x2.jsonl:2"), "{}", run.stderr);
    assert!(
        run.stderr.contains("differs from the run's first record"),
        "{}",
        run.stderr
    );
}

#[test]
fn mistakes_with_runs_are_clear_errors() {
    let dir = workspace();
    let root = dir.path();
    let check = |spec: &str| {
        write(root, "bad.yaml", spec);
        let out = evalspec(root, &["run", "bad.yaml", "--out", "out"]);
        assert_eq!(out.code, 2, "{spec}: {}{}", out.stdout, out.stderr);
        out.stderr
    };
    let no_files = check(&SPEC.replace("runs: runs,", "runs: runs/seed-*.jsonl,"));
    assert!(
        no_files.contains("`runs/seed-*.jsonl` names no file"),
        "{no_files}"
    );
    assert!(no_files.contains("bad.yaml:7"), "{no_files}");

    let mixed = check(&SPEC.replace("run_min(pass_rate)", "run_min(pass_rate) + ratio(ok)"));
    assert!(
        mixed.contains("mixes per-run values with values across runs"),
        "{mixed}"
    );

    let summary_of_across = check(&SPEC.replace("run_std(pass_rate)", "run_std(ok_stability)"));
    assert!(
        summary_of_across.contains("has no value per run"),
        "{summary_of_across}"
    );

    let stability_in_gate = check(&SPEC.replace("ok_stability >= 0.5", "stability(ok) >= 0.5"));
    assert!(
        stability_in_gate.contains("aggregate `stability` is only allowed in metrics"),
        "{stability_in_gate}"
    );

    let both = check(&SPEC.replace("runs: runs,", "runs: runs, path: gold.jsonl,"));
    assert!(both.contains("has both `path` and `runs`"), "{both}");

    // Two datasets read as runs must have the same runs.
    std::fs::create_dir_all(root.join("gold-runs")).unwrap();
    std::fs::copy(root.join("gold.jsonl"), root.join("gold-runs/a.jsonl")).unwrap();
    let unpaired = check(&SPEC.replace("path: gold.jsonl", "runs: gold-runs"));
    assert!(
        unpaired.contains("have different runs: [a] and [a, b, c]"),
        "{unpaired}"
    );
}

#[test]
fn the_operational_preset_reports_its_shipped_runs() {
    let root = repo_root();
    let out = tempfile::tempdir().unwrap();
    let out_dir = out.path().to_str().unwrap();
    let run = evalspec(&root, &["run", "specs/operational.yaml", "--out", out_dir]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let md = std::fs::read_to_string(out.path().join("report.md")).unwrap();
    insta::assert_snapshot!("operational_report_md", md);
    let r: Json =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("report.json")).unwrap())
            .unwrap();
    // numpy.percentile([290, 300, 420, 515, 610, 740, 880, 1620], 95)
    assert_eq!(r["metrics"]["p95_latency_ms@seed-1"], 1360.9999999999995);
    let points = texts_of(&r["tradeoff"]["points"], "run");
    assert_eq!(points, ["seed-3", "seed-2", "seed-1"], "by latency");
    let html = std::fs::read_to_string(out.path().join("report.html")).unwrap();
    assert!(
        html.contains("<svg class=\"curve\""),
        "the latency-vs-accuracy curve"
    );
    assert_eq!(
        html.matches("<polyline").count(),
        2,
        "one line per accuracy metric"
    );
}
