//! Reports rendered through templates (snapshots of every built-in template),
//! JUnit structure, items.jsonl order, labels, offenders, template errors, and
//! gates against a baseline.

use std::path::Path;

use serde_json::Value;

use crate::support::{evalspec, texts_of, write};

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
  cited: trace.citations ?? []
  hit: overlap(cited, gold.gold_ids ?? [])
matchers:
  refused: { kind: refusal, text: trace.answer ?? "" }
labels:
  - OK: answerable and not refused and hit
  - REFUSAL_OK: not answerable and refused
  - HALLUCINATION: not answerable and not refused
  - ANS_NO_HIT: true
offenders:
  when: label == "HALLUCINATION" or label == "ANS_NO_HIT"
  show: [cited]
  limit: 2
metrics:
  answered: count(not refused)
  precision: { expr: ratio(answerable and hit where not refused), empty: 0.0, better: higher, tolerance: 0.01 }
  hallucination: { expr: ratio(not refused where not answerable), empty: 0.0, better: lower }
gates:
  precision: { expr: precision >= min_precision, message: wrong answers shipped }
  hallucination:
    metric: hallucination
    threshold: 0.5
    warn_threshold: 0.2
    message: unanswerable questions were answered
reports: [markdown, junit, html, summary, items]
"#;

const GOLD: &str = r#"{"qid": "q10", "answerable": true, "gold_ids": ["p1"]}
{"qid": "q2", "answerable": true, "gold_ids": ["p2"]}
{"qid": "q1", "answerable": false}
{"qid": "q3", "answerable": false}
"#;

const TRACE: &str = r#"{"qid": "q10", "answer": "A <b>bold</b> & sure claim", "citations": ["p1"]}
{"qid": "q2", "answer": "wrong", "citations": ["p9"]}
{"qid": "q1", "answer": "not in context"}
{"qid": "q3", "answer": "made up", "citations": ["p7"]}
"#;

fn workspace(spec: &str, trace: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "spec.yaml", spec);
    write(dir.path(), "gold.jsonl", GOLD);
    write(dir.path(), "trace.jsonl", trace);
    dir
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn every_builtin_template_renders_the_same_report() {
    let ws = workspace(SPEC, TRACE);
    // precision (1 of 3 answered) fails; hallucination (1 of 2) warns.
    let out = evalspec(ws.path(), &["run", "spec.yaml", "--out", "out"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let dir = ws.path().join("out");
    insta::assert_snapshot!("report_md", read(&dir, "report.md"));
    insta::assert_snapshot!("junit_xml", read(&dir, "junit.xml"));
    insta::assert_snapshot!("report_html", read(&dir, "report.html"));
    insta::assert_snapshot!("summary_md", read(&dir, "summary.md"));
    insta::assert_snapshot!("items_jsonl", read(&dir, "items.jsonl"));
}

#[test]
fn items_labels_and_offenders() {
    let ws = workspace(SPEC, TRACE);
    assert_eq!(
        evalspec(ws.path(), &["run", "spec.yaml", "--out", "out", "-q"]).code,
        1
    );
    let items: Vec<Value> = read(&ws.path().join("out"), "items.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let keys: Vec<&str> = items.iter().map(|i| i["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["q1", "q2", "q3", "q10"], "numeric-aware key order");
    assert_eq!(items[0]["label"], "REFUSAL_OK");
    assert_eq!(items[0]["matchers"]["refused"], true);
    assert_eq!(items[3]["fields"]["cited"], serde_json::json!(["p1"]));
    let report: Value = serde_json::from_str(&read(&ws.path().join("out"), "report.json")).unwrap();
    assert_eq!(
        report["labels"],
        serde_json::json!({"OK": 1, "REFUSAL_OK": 1, "HALLUCINATION": 1, "ANS_NO_HIT": 1})
    );
    let offenders = texts_of(&report["offenders"]["items"], "key");
    assert_eq!(
        offenders,
        ["q2", "q3"],
        "the first `limit` offenders by key"
    );
    // Hallucination 0.5 meets the 0.5 threshold but not the 0.2 warning level.
    let gate = &report["gates"][1];
    assert_eq!(gate["status"], "warn");
    assert_eq!(gate["pass"], false);
    assert_eq!(gate["threshold"], 0.5);
    assert_eq!(gate["warn_threshold"], 0.2);
}

#[test]
fn junit_has_the_structure_ci_systems_ingest() {
    let ws = workspace(SPEC, TRACE);
    evalspec(ws.path(), &["run", "spec.yaml", "--out", "out", "-q"]);
    let xml = read(&ws.path().join("out"), "junit.xml");
    let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let suites: Vec<_> = root
        .children()
        .filter(|n| n.has_tag_name("testsuite"))
        .collect();
    assert_eq!(suites.len(), 1);
    let suite = suites[0];
    for attribute in ["name", "tests", "failures", "errors", "skipped", "time"] {
        assert!(
            suite.attribute(attribute).is_some(),
            "testsuite lacks {attribute}"
        );
    }
    let cases: Vec<_> = suite
        .children()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert_eq!(
        suite.attribute("tests"),
        Some(cases.len().to_string().as_str())
    );
    let failures: Vec<_> = cases
        .iter()
        .filter_map(|c| c.children().find(|n| n.has_tag_name("failure")))
        .collect();
    assert_eq!(
        suite.attribute("failures"),
        Some(failures.len().to_string().as_str())
    );
    assert_eq!(failures.len(), 1);
    assert_eq!(
        failures[0].attribute("message"),
        Some("wrong answers shipped")
    );
    for case in &cases {
        assert!(case.attribute("name").is_some() && case.attribute("classname").is_some());
    }
    assert!(suite.children().any(|n| n.has_tag_name("properties")));
}

#[test]
fn format_flag_adds_reports_and_spec_templates_render() {
    let spec = SPEC.replace(
        "reports: [markdown, junit, html, summary, items]",
        "reports:\n  - { template: mine/custom.txt.j2 }\n",
    );
    let ws = workspace(&spec, TRACE);
    write(
        ws.path(),
        "mine/custom.txt.j2",
        "{% include \"part.j2\" %}{% for i in items %}{{ i.key }}={{ i.label }}\n{% endfor %}",
    );
    write(
        ws.path(),
        "mine/part.j2",
        "{{ spec.name }}: {{ metrics.answered }} answered\n",
    );
    let out = evalspec(
        ws.path(),
        &[
            "run",
            "spec.yaml",
            "--out",
            "out",
            "-q",
            "--format",
            "junit",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let dir = ws.path().join("out");
    assert_eq!(
        read(&dir, "custom.txt"),
        "demo: 3 answered\nq10=OK\nq2=ANS_NO_HIT\nq1=REFUSAL_OK\nq3=HALLUCINATION\n",
        "items in file order, includes from the template's folder"
    );
    assert!(dir.join("junit.xml").is_file());
    assert!(
        !dir.join("report.md").exists(),
        "the spec's reports replace the defaults"
    );
}

#[test]
fn template_errors_name_the_template_line_and_column_before_reading_data() {
    let spec = SPEC.replace(
        "reports: [markdown, junit, html, summary, items]",
        "reports: [{ template: bad.md.j2 }]",
    );
    let ws = workspace(&spec, "this is not JSON\n");
    write(
        ws.path(),
        "bad.md.j2",
        "# ok\n\n{{ metrics.precision | pct }\n",
    );
    let out = evalspec(ws.path(), &["run", "spec.yaml", "--out", "out"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("template `bad.md.j2`"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("bad.md.j2:3:"), "{}", out.stderr);
    assert!(
        !out.stderr.contains("trace.jsonl"),
        "no data was read: {}",
        out.stderr
    );
    // Loading outside the template folders is refused (includes load as they render).
    write(ws.path(), "trace.jsonl", TRACE);
    write(ws.path(), "bad.md.j2", "{% include \"../gold.jsonl\" %}");
    let out = evalspec(ws.path(), &["run", "spec.yaml", "--out", "out"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("outside the spec's template folders"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_runtime_template_error_writes_no_report() {
    let spec = SPEC.replace(
        "reports: [markdown, junit, html, summary, items]",
        "reports: [{ template: t.md.j2 }]",
    );
    let ws = workspace(&spec, TRACE);
    write(
        ws.path(),
        "t.md.j2",
        "line one\n{{ metrics.no_such_metric }}\n",
    );
    let out = evalspec(ws.path(), &["run", "spec.yaml", "--out", "out"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("t.md.j2:2"), "{}", out.stderr);
    assert!(!ws.path().join("out/report.json").exists());
}

#[test]
fn items_read_only_inside_an_include_fail_loudly_rather_than_render_empty() {
    let spec = SPEC.replace(
        "reports: [markdown, junit, html, summary, items]",
        "reports: [{ template: t/outer.md.j2 }]",
    );
    let ws = workspace(&spec, TRACE);
    write(ws.path(), "t/outer.md.j2", "{% include \"rows.j2\" %}");
    write(
        ws.path(),
        "t/rows.j2",
        "{% for i in items %}{{ i.key }}\n{% endfor %}",
    );
    let out = evalspec(ws.path(), &["run", "spec.yaml", "--out", "out"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("rows.j2:1"), "{}", out.stderr);
    // Naming `items` in the outer template keeps them.
    write(
        ws.path(),
        "t/outer.md.j2",
        "{% set rows = items %}{% include \"rows.j2\" %}",
    );
    let out = evalspec(ws.path(), &["run", "spec.yaml", "--out", "out", "-q"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(
        read(&ws.path().join("out"), "outer.md"),
        "q10\nq2\nq1\nq3\n"
    );
}

#[test]
fn two_templates_of_one_name_in_different_folders_are_an_error() {
    let spec = SPEC.replace(
        "reports: [markdown, junit, html, summary, items]",
        "reports: [{ template: a/r.j2, path: a.md }, { template: b/r.j2, path: b.md }]",
    );
    let ws = workspace(&spec, TRACE);
    write(ws.path(), "a/r.j2", "a\n");
    write(ws.path(), "b/r.j2", "b\n");
    let out = evalspec(ws.path(), &["check", "spec.yaml"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("two templates are named `r.j2`"),
        "{}",
        out.stderr
    );
}
