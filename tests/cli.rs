//! The command line end to end: exit codes, stdout, stderr and the files written.

use std::path::Path;

use serde_json::Value;

use crate::support::{evalspec, repo_root, write, Output};

const GOLD: &str = r#"{"qid":"A0001","question":"Does X support null keys?","answerable":true,"gold_claim_substr":["rejects null keys"],"gold_citations":["p1#2"],"constraints":["X rejects null keys."]}
{"qid":"A0002","question":"Explain Z.","answerable":false,"gold_claim_substr":[],"gold_citations":[]}
{"qid":"A0003","question":"What domain is allowed?","answerable":true,"gold_claim_substr":["only domain example.com"],"gold_citations":["pB#1"]}
"#;

const TRACE: &str = r#"{"qid":"A0001","q":"Does X support null keys?","retrieved_ids":["p1#1","p1#2","p2#1"],"answer_json":{"claim":"X rejects null keys.","citations":["p1#2"]}}
{"qid":"A0002","q":"Explain Z.","retrieved_ids":["p1#1","p2#1"],"answer_json":{"claim":"not in context","citations":[]}}
{"qid":"A0003","q":"What domain is allowed?","retrieved_ids":["pB#1","p1#2"],"answer_json":{"claim":"Only domain example.com is allowed.","citations":["pB#1"]}}
"#;

/// A workspace with gold and trace files, run against the shipped preset.
struct Workspace {
    dir: tempfile::TempDir,
}

impl Workspace {
    fn new(gold: &str, trace: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "gold.jsonl", gold);
        write(dir.path(), "trace.jsonl", trace);
        Workspace { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn run(&self, extra: &[&str]) -> Output {
        let spec = repo_root().join("specs/rag-precision.yaml");
        let mut args = vec![
            "run",
            spec.to_str().unwrap(),
            "--dataset",
            "gold=gold.jsonl",
            "--dataset",
            "trace=trace.jsonl",
            "--out",
            "out",
        ];
        args.extend_from_slice(extra);
        evalspec(self.path(), &args)
    }

    fn report(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.path().join("out/report.json")).unwrap())
            .unwrap()
    }
}

#[test]
fn the_seed_worked_example_gives_the_seed_numbers() {
    let ws = Workspace::new(GOLD, TRACE);
    let out = ws.run(&[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let metrics = &ws.report()["metrics"];
    assert_eq!(metrics["answered"], 2);
    assert_eq!(metrics["refused"], 1);
    assert_eq!(metrics["answerable"], 2);
    assert_eq!(metrics["unanswerable"], 1);
    for rate in ["precision", "chr", "recall_at_k", "chr_upper_at_k"] {
        assert_eq!(metrics[rate].as_f64(), Some(1.0), "{rate}");
    }
    for rate in ["under_refusal", "over_refusal"] {
        assert_eq!(metrics[rate].as_f64(), Some(0.0), "{rate}");
    }
    // A0001 locks a constraint its trace does not echo: a warning, not a failure.
    assert_eq!(metrics["scu_violations"], 1);
    assert!(out.stdout.contains("WARN  scu"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("result: PASS (4 passed, 1 warned, 0 failed)"),
        "{}",
        out.stdout
    );
    assert!(out.stderr.is_empty(), "{}", out.stderr);
}

#[test]
fn chr_upper_bound_counts_answerable_items_whose_gold_is_in_the_top_k() {
    let ws = Workspace::new(GOLD, TRACE);
    // A0001's gold p1#2 is retrieved second, A0003's pB#1 first.
    assert_eq!(ws.run(&["--param", "k=1"]).code, 0);
    assert_eq!(ws.report()["metrics"]["chr_upper_at_k"].as_f64(), Some(0.5));
    assert_eq!(ws.run(&["--param", "k=2"]).code, 0);
    assert_eq!(ws.report()["metrics"]["chr_upper_at_k"].as_f64(), Some(1.0));
}

#[test]
fn scu_enforced_turns_constraint_violations_into_failures() {
    let ws = Workspace::new(GOLD, TRACE);
    let out = ws.run(&["--param", "scu_enforced=true"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    let report = ws.report();
    // Precision now also requires the echo: A0001 no longer counts.
    assert_eq!(report["metrics"]["precision"].as_f64(), Some(0.5));
    let scu = report["gates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "scu")
        .unwrap();
    assert_eq!(scu["severity"], "fail");
    assert_eq!(scu["status"], "fail");
    assert_eq!(report["pass"], false);
}

#[test]
fn a_failing_gate_exits_1_and_says_why() {
    let trace = TRACE.replace("X rejects null keys.", "not in context");
    let ws = Workspace::new(GOLD, &trace);
    let out = ws.run(&[]);
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("FAIL  over_refusal"), "{}", out.stdout);
    assert!(
        out.stdout.contains("answerable questions were refused"),
        "{}",
        out.stdout
    );
    assert_eq!(ws.report()["metrics"]["over_refusal"].as_f64(), Some(0.5));
}

#[test]
fn reports_are_byte_identical_across_runs_and_written_atomically() {
    let ws = Workspace::new(GOLD, TRACE);
    assert_eq!(ws.run(&["--format", "items"]).code, 0);
    let files = [
        "item-values.jsonl",
        "items.jsonl",
        "report.json",
        "report.md",
    ];
    let read_all = || -> Vec<Vec<u8>> {
        files
            .iter()
            .map(|f| std::fs::read(ws.path().join("out").join(f)).unwrap())
            .collect()
    };
    let first_run = read_all();
    assert_eq!(ws.run(&["--threads", "1", "--format", "items"]).code, 0);
    assert_eq!(first_run, read_all(), "every report is byte-identical");
    let first = first_run[2].clone();
    let mut names: Vec<String> = std::fs::read_dir(ws.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, files, "no temporary files are left behind");
    let report: Value = serde_json::from_slice(&first).unwrap();
    let keys: Vec<&String> = report.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "evalspec",
            "spec",
            "params",
            "datasets",
            "scored",
            "metrics",
            "metric_info",
            "intervals",
            "gates",
            "offenders",
            "pass",
            "run_id"
        ]
    );
    assert_eq!(report["datasets"]["gold"]["records"], 3);
    assert_eq!(report["spec"]["version"], "1.0.0");
    assert_eq!(report["spec"]["sha256"].as_str().unwrap().len(), 64);
}

#[test]
fn unmatched_and_missing_traces_are_counted_and_warned() {
    let trace = format!(
        "{}\n{}\n",
        TRACE.lines().next().unwrap(),
        r#"{"qid":"ZZZ","answer_json":{"claim":"x"}}"#
    );
    let ws = Workspace::new(GOLD, &trace);
    let out = ws.run(&[]);
    let trace_stats = &ws.report()["datasets"]["trace"];
    assert_eq!(trace_stats["unmatched"], 1);
    assert_eq!(trace_stats["missing"], 2);
    assert!(
        out.stderr
            .contains("warning: trace: 1 record(s) match no gold item"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(
            "warning: trace: 2 gold item(s) have no record here (scored with it missing)"
        ),
        "{}",
        out.stderr
    );
    // A gold item without a trace is an answer with an empty claim, as in seed 000.
    assert_eq!(ws.report()["metrics"]["answered"], 3);
}

#[test]
fn bad_data_exits_2_with_file_line_and_column_and_writes_nothing() {
    let cases = [
        (
            "not JSON",
            GOLD.replacen("{\"qid\":\"A0002\"", "{\"qid\":\"A0002\",,", 1),
            "gold.jsonl:2:16",
            "invalid JSON: key must be a string",
        ),
        (
            "wrong type",
            GOLD.replacen("\"answerable\":false", "\"answerable\":\"no\"", 1),
            "gold.jsonl:2",
            "field `answerable` must be a bool, found string \"no\"",
        ),
        (
            "missing field",
            GOLD.replacen("\"answerable\":true,", "", 1),
            "gold.jsonl:1",
            "field `answerable` is missing or null",
        ),
        (
            "duplicate key",
            format!("{GOLD}{}\n", GOLD.lines().next().unwrap()),
            "gold.jsonl:4",
            "duplicate key `A0001` (first on line 1)",
        ),
        (
            "empty qid",
            GOLD.replacen("\"qid\":\"A0003\"", "\"qid\":\"\"", 1),
            "gold.jsonl:3",
            "field `qid` must not be empty",
        ),
    ];
    for (what, gold, location, message) in cases {
        let ws = Workspace::new(&gold, TRACE);
        let out = ws.run(&[]);
        assert_eq!(out.code, 2, "{what}: {}", out.stderr);
        assert!(
            out.stderr.contains(location),
            "{what}: expected {location} in\n{}",
            out.stderr
        );
        assert!(
            out.stderr.contains(message),
            "{what}: expected {message:?} in\n{}",
            out.stderr
        );
        assert!(
            out.stderr.ends_with("1 error; nothing was scored\n"),
            "{what}: {}",
            out.stderr
        );
        assert!(
            !ws.path().join("out/report.json").exists(),
            "{what}: no report from unreadable data"
        );
    }
}

#[test]
fn a_value_the_spec_cannot_use_names_the_item_and_its_lines() {
    let trace = TRACE.replacen("\"claim\":\"not in context\"", "\"claim\":42", 1);
    let ws = Workspace::new(GOLD, &trace);
    let out = ws.run(&[]);
    assert_eq!(out.code, 2);
    insta::assert_snapshot!(out.stderr.replace(&repo_root().display().to_string(), "<repo>"), @r#"
    error: item `A0002` (trace.jsonl:2, gold.jsonl:2): in `claim`: argument 1 of `trim` must be a string, found number 42
      --> <repo>/specs/rag-precision.yaml:53:3 (fields)
       |
    53 |   claim: trim(truthy_or(trace.answer_json.claim, ""))
       |   ^^^^^
       = help: fix the data, or guard the expression (`??`, `if`, `is_list`, …)

    1 error; nothing was scored
    "#);
}

#[test]
fn command_line_mistakes_exit_2_with_suggestions() {
    let ws = Workspace::new(GOLD, TRACE);
    let out = ws.run(&["--param", "k=five"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("`--param k=five`: expected an integer, found `five`"),
        "{}",
        out.stderr
    );
    let out = ws.run(&["--param", "scu_enforce=true"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("did you mean `scu_enforced`?"),
        "{}",
        out.stderr
    );
    let out = ws.run(&["--dataset", "traces=trace.jsonl"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("the spec has no dataset `traces`")
            && out.stderr.contains("did you mean `trace`?"),
        "{}",
        out.stderr
    );
    let out = ws.run(&["--dataset", "trace=nowhere.jsonl"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("cannot read dataset `trace` from `nowhere.jsonl`"),
        "{}",
        out.stderr
    );
    let out = evalspec(ws.path(), &["run", "missing.yaml"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("cannot read spec `missing.yaml`"),
        "{}",
        out.stderr
    );
    let out = evalspec(ws.path(), &["frobnicate"]);
    assert_eq!(out.code, 2);
}

#[test]
fn check_prints_the_plan_without_reading_data() {
    let out = evalspec(
        &repo_root(),
        &[
            "check",
            "specs/rag-precision.yaml",
            "--dataset",
            "gold=does-not-exist.jsonl",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .starts_with("spec rag-precision 1.0.0 (specs/rag-precision.yaml): OK\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("reads: answer_json.citations, answer_json.claim, answer_json.constraints_echo, q_id, qid, retrieved_ids"),
        "{}",
        out.stdout
    );
    let claim = out.stdout.find("field claim").unwrap();
    let correct = out.stdout.find("field correct").unwrap();
    assert!(claim < correct, "fields are listed in dependency order");
}

#[test]
fn json_array_datasets_and_inner_joins() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "qaset.json", "[\n  {\"q\": \"What is X?\", \"ok\": true},\n  {\"q\": \"Explain Y.\", \"ok\": false}\n]\n");
    write(dir.path(), "trace.jsonl", "{\"question\":\"What is X?\"}\n{\"question\":\"Unknown\"}\n{\"question\":\"What is X?\"}\n");
    write(
        dir.path(),
        "spec.yaml",
        "name: join\nversion: 0.1.0\nitems: trace\ndatasets:\n  qaset: {format: json, path: qaset.json, key: q, duplicates: last, join: inner}\n  trace: {path: trace.jsonl, key: question, duplicates: keep}\nmetrics:\n  scored: count()\n  ok: count(qaset.ok)\n",
    );
    let out = evalspec(dir.path(), &["run", "spec.yaml", "--quiet"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.is_empty());
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("evalspec-out/report.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        report["metrics"]["scored"], 2,
        "duplicates are scored twice; unknown questions skipped"
    );
    assert_eq!(report["metrics"]["ok"], 2);
    assert_eq!(report["datasets"]["qaset"]["missing"], 1);
    assert_eq!(report["datasets"]["qaset"]["unmatched"], 1);

    write(
        dir.path(),
        "qaset.json",
        "[\n  {\"q\": \"What is X?\"},\n  {\"q\": \"Explain Y.\" \"ok\": false}\n]\n",
    );
    let out = evalspec(dir.path(), &["run", "spec.yaml"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("qaset.json:3:"), "{}", out.stderr);
}

#[test]
fn a_gate_that_is_not_a_comparison_reports_its_own_result() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "t.jsonl",
        "{\"id\":\"a\",\"ok\":true}\n{\"id\":\"b\",\"ok\":false}\n",
    );
    write(
        dir.path(),
        "spec.yaml",
        "name: g\nversion: 0.1.0\nitems: t\ndatasets:\n  t: {path: t.jsonl, key: id}\nmetrics:\n  rate: ratio(t.ok)\ngates:\n  threshold: rate >= 0.4\n  band: rate > 0.4 and rate < 0.6\n  strict: {expr: rate > 0.6 and rate < 1, severity: warn}\n",
    );
    let out = evalspec(dir.path(), &["run", "spec.yaml", "--quiet"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("evalspec-out/report.json")).unwrap(),
    )
    .unwrap();
    let gates = report["gates"].as_array().unwrap();
    assert_eq!(
        gates[0]["value"].as_f64(),
        Some(0.5),
        "a comparison reports its left side"
    );
    assert_eq!(
        gates[1]["value"], true,
        "anything else reports the gate's result"
    );
    assert_eq!(
        (gates[2]["value"].clone(), gates[2]["status"].clone()),
        (Value::Bool(false), Value::from("warn"))
    );
}
