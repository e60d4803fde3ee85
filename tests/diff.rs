//! `evalspec diff` between runs, and gates against a `--baseline` run.

use std::path::Path;

use serde_json::Value;

use crate::support::{self, evalspec, write, Output};

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
    assert_eq!(precision["direction"], "regressed");
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
    assert_eq!(precision["direction"], "improved");
}

/// Judge scores per item: a number that moves and a boolean that flips.
const SCORED: &str = r#"name: scored
version: 1.0.0
items: trace
datasets:
  trace: { format: jsonl, path: trace.jsonl, key: qid }
fields:
  score: trace.score
  grounded: trace.grounded
labels:
  - GOOD: score >= 4
  - BAD: true
metrics:
  mean_score: { expr: mean(score), better: higher }
reports: [items]
"#;

fn scored(rows: &[(&str, i64, bool)]) -> String {
    rows.iter()
        .map(|(q, s, g)| format!("{{\"qid\": \"{q}\", \"score\": {s}, \"grounded\": {g}}}\n"))
        .collect()
}

#[test]
fn item_level_diffs_show_flips_and_moves_largest_first() {
    let ws = Ws::new();
    let old = scored(&[
        ("q1", 5, true),
        ("q2", 5, true),
        ("q3", 5, true),
        ("q10", 5, true),
        ("q11", 3, false),
        ("q12", 2, true),
        ("q13", 4, true),
    ]);
    // q1, q2, q3 and q10 go 5 → 4; q11 3 → 5 and flips to grounded; q12 2 → 1
    // and stops being grounded; q13 is gone and q14 is new.
    let new = scored(&[
        ("q10", 4, true),
        ("q2", 4, true),
        ("q1", 4, true),
        ("q3", 4, true),
        ("q11", 5, true),
        ("q12", 1, false),
        ("q14", 4, true),
    ]);
    assert_eq!(ws.run(SCORED, &old, "a", &[]).code, 0);
    assert_eq!(ws.run(SCORED, &new, "b", &[]).code, 0);
    let text = ws.diff(&["a", "b"]).stdout;
    insta::assert_snapshot!("item_level_text", text);
    assert!(
        text.contains("score (6): q11 3 → 5, q1 5 → 4, q2 5 → 4, q3 5 → 4, q10 5 → 4, q12 2 → 1"),
        "{text}"
    );
    insta::assert_snapshot!(
        "item_level_md",
        ws.diff(&["a", "b", "--format", "md"]).stdout
    );
    let json: Value =
        serde_json::from_str(&ws.diff(&["a", "b", "--format", "json"]).stdout).unwrap();
    insta::assert_snapshot!(
        "item_level_json",
        serde_json::to_string_pretty(&json["items"]).unwrap()
    );
    assert_eq!(json["unchanged"], false);
    // Only the values changed: the runs are still not "the same".
    let same_scores = scored(&[
        ("q1", 5, false),
        ("q2", 5, true),
        ("q3", 5, true),
        ("q10", 5, true),
        ("q11", 3, false),
        ("q12", 2, true),
        ("q13", 4, true),
    ]);
    assert_eq!(ws.run(SCORED, &same_scores, "c", &[]).code, 0);
    let out = ws.diff(&["a", "c"]);
    assert!(!out.stdout.contains("no change"), "{}", out.stdout);
    assert!(
        out.stdout.contains("grounded  true → false (1): q1"),
        "{}",
        out.stdout
    );
}

#[test]
fn item_level_diffs_match_items_by_run_and_key() {
    let ws = Ws::new();
    let spec = SCORED.replace(
        "trace: { format: jsonl, path: trace.jsonl, key: qid }",
        "trace: { format: jsonl, runs: runs, key: qid }",
    );
    write(ws.path(), "spec.yaml", &spec);
    let run = |out: &str, seed1: &[(&str, i64, bool)], seed2: &[(&str, i64, bool)]| {
        std::fs::create_dir_all(ws.path().join("runs")).unwrap();
        write(&ws.path().join("runs"), "seed1.jsonl", &scored(seed1));
        write(&ws.path().join("runs"), "seed2.jsonl", &scored(seed2));
        let out = evalspec(ws.path(), &["run", "spec.yaml", "--out", out, "-q"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
    };
    run("a", &[("q1", 5, true), ("q2", 3, true)], &[("q1", 5, true)]);
    // The same key moves in one run only; q2 leaves seed1 and joins seed2.
    run("b", &[("q1", 5, true)], &[("q1", 2, true), ("q2", 3, true)]);
    let text = ws.diff(&["a", "b"]).stdout;
    assert!(text.contains("score (1): q1@seed2 5 → 2"), "{text}");
    assert!(text.contains("items added (1): q2@seed2"), "{text}");
    assert!(text.contains("items removed (1): q2@seed1"), "{text}");
    assert!(
        text.contains("BAD → GOOD") || text.contains("GOOD → BAD"),
        "{text}"
    );
}

/// Two runs of 100,000 items: about a third of the scores move, a fifth of the
/// `grounded` values flip, 1% of the items leave and 1% join.
fn large_pair(ws: &Ws) {
    let mut rng = support::Rng::new(17);
    let (mut old, mut new) = (String::new(), String::new());
    let row = |q: usize, s: usize, g: bool| {
        format!("{{\"qid\": \"q{q}\", \"score\": {s}, \"grounded\": {g}}}\n")
    };
    for q in 1..=100_000 {
        let (s, g) = (1 + rng.below(5), rng.chance(70));
        let s2 = if rng.chance(33) { 1 + rng.below(5) } else { s };
        let g2 = if rng.chance(20) { !g } else { g };
        match rng.below(100) {
            0 => old.push_str(&row(q, s, g)),
            1 => new.push_str(&row(q, s2, g2)),
            _ => {
                old.push_str(&row(q, s, g));
                new.push_str(&row(q, s2, g2));
            }
        }
    }
    assert_eq!(ws.run(SCORED, &old, "a", &[]).code, 0);
    assert_eq!(ws.run(SCORED, &new, "b", &[]).code, 0);
}

#[test]
fn a_markdown_diff_of_100k_items_fits_a_pull_request_comment() {
    let ws = Ws::new();
    large_pair(&ws);
    let out = ws.diff(&["a", "b", "--format", "md"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let md = &out.stdout;
    let chars = md.chars().count();
    assert!(chars <= 60_000, "{chars} characters");
    assert!(chars > 50_000, "the budget is used, not wasted: {chars}");
    let longest = md.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(longest <= 200, "a line of {longest} characters");
    assert!(
        md.contains("_Cut to fit a comment (60000 characters): `evalspec diff --format json` lists everything._"),
        "{md}"
    );
    let head: String = md.lines().take(24).collect::<Vec<_>>().join("\n");
    insta::assert_snapshot!("md_100k_head", head);
    // Every group shows its first entries and says how many it left out.
    let outline: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with(['*', '-', '_']) || l.ends_with(" more"))
        .map(|l| {
            l.rsplit_once(", ")
                .filter(|_| l.starts_with(' '))
                .map_or(l, |(_, end)| end)
        })
        .collect();
    insta::assert_snapshot!("md_100k_outline", outline.join("\n"));
    // Lists end with how many were left out, and the counts agree with the JSON.
    let json: Value =
        serde_json::from_str(&ws.diff(&["a", "b", "--format", "json"]).stdout).unwrap();
    let moves = json["items"]["moves"][0]["items"].as_array().unwrap();
    let header = format!("- `score` ({}): ", moves.len());
    let start = md
        .lines()
        .position(|l| l.starts_with(&header))
        .expect(&header);
    let lines: Vec<&str> = md.lines().skip(start).collect();
    let end = 1 + lines[1..]
        .iter()
        .take_while(|l| l.starts_with("  "))
        .count();
    let list = lines[..end].join(" ");
    let entries: Vec<&str> = list[header.len()..].split(", ").collect();
    let (shown, last) = (entries.len() - 1, entries[entries.len() - 1]);
    assert_eq!(last, format!("… and {} more", moves.len() - shown));
    assert!(shown > 100, "{shown}");
    // The largest moves come first: the first shown are 4 apart.
    assert_eq!(moves[0]["delta"].as_f64().unwrap().abs(), 4.0);
    assert!(entries[0].contains(&format!(
        "{} {} → {}",
        moves[0]["key"].as_str().unwrap(),
        moves[0]["old"],
        moves[0]["new"]
    )));
    // The JSON form is complete.
    let added = json["items"]["added"].as_array().unwrap().len();
    assert!(md.contains(&format!("- added ({added}): ")), "{md}");
    assert!(added > 900, "{added}");
    // The terminal text is capped too.
    let text = ws.diff(&["a", "b"]).stdout;
    assert!(text.chars().count() < 20_000, "{}", text.chars().count());
    assert!(text.contains("(lists show at most 20 items; `--format json` lists every item)"));
}

/// items.jsonl is streamed: the 64 MiB bound on whole text files stopped `diff`
/// on any run of about 250,000 items.
#[test]
fn an_items_jsonl_over_64_mib_still_diffs() {
    let ws = Ws::new();
    let rows = [("q1", 5, true), ("q2", 3, false)];
    assert_eq!(ws.run(SCORED, &scored(&rows), "a", &[]).code, 0);
    let items = std::fs::read_to_string(ws.path().join("a/items.jsonl")).unwrap();
    let padding = "x".repeat(65 << 20);
    let big = items.replacen(
        "\"score\":5",
        &format!("\"notes\":\"{padding}\",\"score\":4"),
        1,
    );
    assert!(big.len() > 64 << 20);
    std::fs::create_dir_all(ws.path().join("b")).unwrap();
    std::fs::copy(
        ws.path().join("a/report.json"),
        ws.path().join("b/report.json"),
    )
    .unwrap();
    write(&ws.path().join("b"), "items.jsonl", &big);
    let out = ws.diff(&["a", "b"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("score (1): q1 5 → 4"), "{}", out.stdout);
}
