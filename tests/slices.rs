//! Slices: metrics and gates per slice value, computed by hand on a small set;
//! expected values (a new value warns or fails), `min_items`, null slice values,
//! a metric null in one slice, two slices at once, several runs, and the same
//! bytes for any thread count.

use std::path::Path;

use serde_json::{json, Value};

use crate::support::{evalspec, evalspec_with_env, write};

fn spec(unexpected: &str, values: &str) -> String {
    format!(
        r#"name: sliced
version: 1.0.0
datasets:
  j: {{path: j.jsonl, key: id}}
slices:
  cat: j.cat
  lang:
    expr: j.lang
    values: {values}
    unexpected: {unexpected}
metrics:
  n: {{expr: count(), by: [cat, lang]}}
  mean_score: {{expr: mean(j.score), better: higher, by: [cat, lang]}}
  good: {{expr: ratio(j.score >= 4 where j.judged), better: higher, by: cat}}
gates:
  floor: {{metric: mean_score, by: cat, threshold: 3, min_items: 2}}
  good_every: {{metric: good, by: cat, threshold: 0.5}}
  both: {{metric: mean_score, by: [cat, lang], threshold: 1.5}}
  worst: {{metric: mean_score, by: cat, slices: worst, threshold: 2.5, min_items: 2}}
reports: [json, markdown, junit, html]
"#
    )
}

const DATA: &str = r#"{"id": "a1", "cat": "billing", "lang": "en", "score": 5, "judged": true}
{"id": "a2", "cat": "billing", "lang": "de", "score": 4, "judged": true}
{"id": "a3", "cat": "refunds", "lang": "en", "score": 2, "judged": true}
{"id": "a4", "cat": "refunds", "lang": "en", "score": 2, "judged": false}
{"id": "a5", "cat": null, "lang": "en", "score": 3, "judged": false}
{"id": "a6", "cat": "tiny", "lang": "fr", "score": 1, "judged": true}
"#;

fn workspace(spec: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "spec.yaml", spec);
    write(dir.path(), "j.jsonl", DATA);
    dir
}

fn report(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("out/report.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The report with each slice value's `intervals` left out: what the tests of
/// counts and metrics compare (`each_slice_value_has_intervals_on_its_own_items`
/// tests intervals).
fn without_intervals(mut report: Value) -> Value {
    if let Some(slices) = report["slices"].as_object_mut() {
        for values in slices.values_mut() {
            for value in values.as_object_mut().unwrap().values_mut() {
                value.as_object_mut().unwrap().remove("intervals");
            }
        }
    }
    report
}

fn gate<'r>(report: &'r Value, name: &str) -> &'r Value {
    let gates = report["gates"].as_array().unwrap();
    gates.iter().find(|g| g["name"] == name).unwrap()
}

#[test]
fn metrics_per_slice_value_are_computed_by_hand() {
    let ws = workspace(&spec("warn", "[en, de]"));
    let out = evalspec(ws.path(), &["run", "spec.yaml", "--out", "out"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let r = without_intervals(report(ws.path()));
    // Natural order; a null category is the slice value `null`.
    assert_eq!(
        r["slices"]["cat"],
        json!({
            "billing": {"items": 2, "metrics": {"n": 2, "mean_score": 4.5, "good": 1.0}},
            "null": {"items": 1, "metrics": {"n": 1, "mean_score": 3.0, "good": null}},
            "refunds": {"items": 2, "metrics": {"n": 2, "mean_score": 2.0, "good": 0.0}},
            "tiny": {"items": 1, "metrics": {"n": 1, "mean_score": 1.0, "good": 0.0}},
        })
    );
    assert_eq!(
        r["slices"]["lang"],
        json!({
            "de": {"items": 1, "metrics": {"n": 1, "mean_score": 4.0}},
            "en": {"items": 4, "metrics": {"n": 4, "mean_score": 3.0}},
            "fr": {"items": 1, "metrics": {"n": 1, "mean_score": 1.0}},
        })
    );
    assert_eq!(r["metrics"]["mean_score"], json!(17.0 / 6.0));
    assert_eq!(r["metric_info"]["good"]["by"], json!(["cat"]));
}

#[test]
fn a_by_gate_names_each_failing_value_and_skips_small_ones() {
    let ws = workspace(&spec("warn", "[en, de]"));
    evalspec(ws.path(), &["run", "spec.yaml", "--out", "out", "-q"]);
    let r = report(ws.path());
    let floor = gate(&r, "floor");
    assert_eq!(floor["status"], "fail");
    assert_eq!(floor["value"], json!(2.0));
    assert_eq!(
        floor["reasons"],
        json!(["cat=refunds (2 items): mean_score = 2 is below the threshold 3"])
    );
    let statuses: Vec<(&str, &str)> = floor["by"]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["value"].as_str().unwrap(), v["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        statuses,
        [
            ("billing", "pass"),
            ("null", "skipped"),
            ("refunds", "fail"),
            ("tiny", "skipped")
        ]
    );
    // `good` has no value where no item is judged: that value fails, as a
    // metric without a value fails its gate.
    assert_eq!(
        gate(&r, "good_every")["reasons"],
        json!([
            "cat=null (1 item): `good` has no value",
            "cat=refunds (2 items): good = 0 is below the threshold 0.5",
            "cat=tiny (1 item): good = 0 is below the threshold 0.5",
        ])
    );
}

#[test]
fn two_slices_at_once_are_gated_each_separately() {
    let ws = workspace(&spec("warn", "[en, de]"));
    evalspec(ws.path(), &["run", "spec.yaml", "--out", "out", "-q"]);
    let r = report(ws.path());
    let both = gate(&r, "both");
    assert_eq!(both["by"]["slices"], json!(["cat", "lang"]));
    assert_eq!(both["by"]["values"].as_array().unwrap().len(), 4 + 3);
    assert_eq!(
        both["reasons"],
        json!([
            "cat=tiny (1 item): mean_score = 1 is below the threshold 1.5",
            "lang=fr (1 item): mean_score = 1 is below the threshold 1.5",
        ])
    );
}

#[test]
fn worst_gates_the_worst_value_over_the_slices() {
    let ws = workspace(&spec("warn", "[en, de]"));
    evalspec(ws.path(), &["run", "spec.yaml", "--out", "out", "-q"]);
    let r = report(ws.path());
    let worst = gate(&r, "worst");
    assert_eq!(worst["by"]["mode"], "worst");
    assert_eq!(
        worst["value"],
        json!(2.0),
        "refunds; tiny is below min_items"
    );
    assert_eq!(
        worst["reasons"],
        json!(["worst, cat=refunds (2 items): mean_score = 2 is below the threshold 2.5"])
    );
}

#[test]
fn a_value_outside_values_warns_or_fails() {
    let ws = workspace(&spec("warn", "[en, de, es]"));
    let out = evalspec(ws.path(), &["run", "spec.yaml", "--out", "out"]);
    assert!(out.stdout.contains("WARN  slices.lang"), "{}", out.stdout);
    let r = report(ws.path());
    let check = gate(&r, "slices.lang");
    assert_eq!(check["status"], "warn");
    assert_eq!(check["value"], 2);
    assert_eq!(
        check["reasons"],
        json!([
            "lang=fr (1 item): not among the expected `values`",
            "lang=es: listed in `values`, but no item has it",
        ])
    );
    // Every value seen is gated, listed or not.
    assert!(gate(&r, "both")["reasons"][1]
        .as_str()
        .unwrap()
        .starts_with("lang=fr"));

    let ws = workspace(&spec("fail", "[en, de, fr]"));
    evalspec(ws.path(), &["run", "spec.yaml", "--out", "out", "-q"]);
    assert_eq!(gate(&report(ws.path()), "slices.lang")["status"], "pass");

    // A new value with `unexpected: fail` fails the run on its own.
    let strict = spec("fail", "[en, de]").replace(
        "gates:\n",
        "gates:\n  only: {metric: mean_score, threshold: 0}\n#",
    );
    let strict: String = strict
        .lines()
        .filter(|l| !l.starts_with("  floor") && !l.starts_with("  good_every"))
        .filter(|l| !l.starts_with("  both") && !l.starts_with("  worst"))
        .map(|l| format!("{l}\n"))
        .collect();
    let ws = workspace(&strict);
    let out = evalspec(ws.path(), &["run", "spec.yaml", "--out", "out"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("lang=fr (1 item): not among the expected `values`"),
        "{}",
        out.stdout
    );
}

#[test]
fn report_sections_show_slices() {
    let ws = workspace(&spec("warn", "[en, de]"));
    evalspec(ws.path(), &["run", "spec.yaml", "--out", "out", "-q"]);
    let read = |name: &str| std::fs::read_to_string(ws.path().join("out").join(name)).unwrap();
    let md = read("report.md");
    let slices = &md[md.find("## Slices").unwrap()..];
    insta::assert_snapshot!("slices_report_md", slices);
    let junit = read("junit.xml");
    let cases: Vec<&str> = junit
        .lines()
        .filter(|l| l.contains("<testcase name=\"floor") || l.contains("<testsuite "))
        .collect();
    insta::assert_snapshot!("slices_junit", cases.join("\n"));
    let html = read("report.html");
    assert!(
        html.contains(r#"<td class="num fail">2.0000 ✗</td>"#),
        "the failing refunds cell is marked"
    );
    let out = evalspec(ws.path(), &["run", "spec.yaml", "--out", "out2"]);
    let summary = out.stdout.replace(ws.path().to_str().unwrap(), "WS");
    insta::assert_snapshot!("slices_terminal", summary);
}

#[test]
fn diff_shows_per_slice_deltas_and_gate_flips() {
    let ws = workspace(&spec("warn", "[en, de]"));
    evalspec(ws.path(), &["run", "spec.yaml", "--out", "old", "-q"]);
    // refunds improves to a mean of 3.5; billing drops to 4.0.
    let better = DATA
        .replace(
            r#""id": "a3", "cat": "refunds", "lang": "en", "score": 2"#,
            r#""id": "a3", "cat": "refunds", "lang": "en", "score": 5"#,
        )
        .replace(
            r#""id": "a1", "cat": "billing", "lang": "en", "score": 5"#,
            r#""id": "a1", "cat": "billing", "lang": "en", "score": 4"#,
        );
    write(ws.path(), "j.jsonl", &better);
    evalspec(ws.path(), &["run", "spec.yaml", "--out", "new", "-q"]);
    let out = evalspec(ws.path(), &["diff", "old", "new"]);
    let text = out.stdout.replace(ws.path().to_str().unwrap(), "WS");
    assert!(text.contains("mean_score[cat=refunds]"), "{text}");
    assert!(text.contains("floor[cat=refunds]"), "{text}");
    insta::assert_snapshot!("slices_diff", text);
}

#[test]
fn slices_are_per_run_with_several_runs() {
    let dir = tempfile::tempdir().unwrap();
    let spec =
        spec("warn", "[en, de]").replace("j: {path: j.jsonl, key: id}", "j: {runs: runs, key: id}");
    write(dir.path(), "spec.yaml", &spec);
    std::fs::create_dir(dir.path().join("runs")).unwrap();
    write(&dir.path().join("runs"), "r1.jsonl", DATA);
    let r2: String = DATA.lines().take(3).map(|l| format!("{l}\n")).collect();
    write(&dir.path().join("runs"), "r2.jsonl", &r2);
    evalspec(dir.path(), &["run", "spec.yaml", "--out", "out", "-q"]);
    let r = without_intervals(report(dir.path()));
    assert_eq!(
        r["slices"]["cat"]["refunds"],
        json!({
            "items": 3,
            "runs": {"r1": 2, "r2": 1},
            "metrics": {
                "n@r1": 2, "mean_score@r1": 2.0, "good@r1": 0.0,
                "n@r2": 1, "mean_score@r2": 2.0, "good@r2": 0.0,
            }
        })
    );
    // r2 has no `tiny`: its metrics there are null.
    assert_eq!(
        r["slices"]["cat"]["tiny"]["runs"],
        json!({"r1": 1, "r2": 0})
    );
    assert_eq!(
        r["slices"]["cat"]["tiny"]["metrics"]["mean_score@r2"],
        json!(null)
    );
    // Gates over slices are decided per run; the worst run's values are shown.
    let floor = gate(&r, "floor");
    assert_eq!(floor["run"], "r1");
    assert_eq!(
        floor["reasons"],
        json!(["run `r1`: cat=refunds (2 items): mean_score = 2 is below the threshold 3"])
    );
}

#[test]
fn slices_are_the_same_for_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "spec.yaml", &spec("warn", "[en, de]"));
    let mut data = String::new();
    for i in 0..4000u32 {
        let cat = format!("c{}", (i * 7) % 20);
        let lang = ["en", "de", "fr"][(i % 3) as usize];
        let score = (i * 13) % 5 + 1;
        let judged = i % 4 != 0;
        data.push_str(&format!(
            "{{\"id\": \"i{i}\", \"cat\": \"{cat}\", \"lang\": \"{lang}\", \"score\": {score}, \"judged\": {judged}}}\n"
        ));
    }
    write(dir.path(), "j.jsonl", &data);
    let run = |threads: &str| {
        let out_dir = format!("out{threads}");
        let out = evalspec_with_env(
            dir.path(),
            &[("EVALSPEC_MIN_CHUNK_BYTES", "16384")],
            &[
                "run",
                "spec.yaml",
                "--out",
                &out_dir,
                "--threads",
                threads,
                "-q",
            ],
        );
        let read = |name: &str| std::fs::read(dir.path().join(&out_dir).join(name)).unwrap();
        (
            out.code,
            read("report.json"),
            read("report.md"),
            read("junit.xml"),
        )
    };
    let one = run("1");
    assert_eq!(one, run("2"));
    assert_eq!(one, run("3"));
    let r = report_at(dir.path(), "out1");
    assert_eq!(r["slices"]["cat"].as_object().unwrap().len(), 20);
}

fn report_at(dir: &Path, out: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join(out).join("report.json")).unwrap())
        .unwrap()
}

#[test]
fn an_expression_gate_holds_per_value_and_a_list_value_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let spec = r#"name: exg
version: 1.0.0
datasets:
  j: {path: j.jsonl, key: id}
slices:
  cat: j.cat
metrics:
  n: {expr: count(), by: cat}
  mean_score: {expr: mean(j.score), by: cat}
gates:
  g: {expr: "mean_score >= 3 or n < 2", by: cat}
reports: [json, markdown]
"#;
    write(dir.path(), "spec.yaml", spec);
    let data = "{\"id\":\"1\",\"cat\":\"a\",\"score\":1}\n{\"id\":\"2\",\"cat\":\"a\",\"score\":2}\n{\"id\":\"3\",\"cat\":\"b\",\"score\":1}\n{\"id\":\"4\",\"cat\":true,\"score\":5}\n";
    write(dir.path(), "j.jsonl", data);
    let out = evalspec(dir.path(), &["run", "spec.yaml", "--out", "out"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let r = report(dir.path());
    // A bool value is the slice value `true`.
    assert_eq!(r["slices"]["cat"]["true"]["items"], 1);
    assert_eq!(
        gate(&r, "g")["reasons"],
        json!(["cat=a (2 items): `mean_score >= 3 or n < 2` is false"])
    );
    write(
        dir.path(),
        "j.jsonl",
        &format!("{data}{{\"id\":\"5\",\"cat\":[1],\"score\":5}}\n"),
    );
    let out = evalspec(dir.path(), &["run", "spec.yaml", "--out", "out2"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains(
            "in slice `cat`: a slice value must be a string, number, bool or null, found list [1]"
        ) && out.stderr.contains("spec.yaml:6:8 (slices.cat)"),
        "{}",
        out.stderr
    );
}

#[test]
fn each_slice_value_has_intervals_on_its_own_items() {
    let spec = r#"name: sliced
version: 1.0.0
datasets:
  j: {path: j.jsonl, key: id}
slices:
  cat: j.cat
metrics:
  good: {expr: ratio(j.score >= 4), by: cat}
  score_pct: {expr: mean(j.score) * 100, by: cat}
reports: [json]
"#;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "spec.yaml", spec);
    // billing: 30 items, 24 good; refunds: 10 items, 2 good.
    let data: String = (0..40)
        .map(|i| {
            let (cat, score) = match i {
                0..30 => ("billing", if i < 24 { 5 } else { 2 }),
                _ => ("refunds", if i < 32 { 4 } else { 1 }),
            };
            format!("{{\"id\": \"q{i}\", \"cat\": \"{cat}\", \"score\": {score}}}\n")
        })
        .collect();
    write(dir.path(), "j.jsonl", &data);
    let out = evalspec(dir.path(), &["run", "spec.yaml", "--out", "out", "-q"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = report(dir.path());
    let billing = &report["slices"]["cat"]["billing"]["intervals"];
    // Wilson for 24 of 30 at 95%: the formula in grammar/README.md, by hand.
    let good = &billing["good"];
    assert_eq!(good["method"], "wilson");
    assert!(
        (good["low"].as_f64().unwrap() - 0.626_943_035_868_517_5).abs() < 1e-9,
        "{good}"
    );
    assert!(
        (good["high"].as_f64().unwrap() - 0.904_948_928_227_101_3).abs() < 1e-9,
        "{good}"
    );
    // A formula per value: the bootstrap on that value's items only.
    let refunds = &report["slices"]["cat"]["refunds"]["intervals"]["score_pct"];
    assert_eq!(refunds["method"], "bootstrap");
    let (low, high) = (
        refunds["low"].as_f64().unwrap(),
        refunds["high"].as_f64().unwrap(),
    );
    assert!(
        (100.0..160.0).contains(&low) && 160.0 < high && high <= 250.0,
        "{refunds}"
    );
}
