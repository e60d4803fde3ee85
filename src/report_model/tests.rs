use crate::report_model::{Better, GateStatus, Item, Report};

/// A report written by `evalspec run specs/rag-precision.yaml --baseline …`:
/// spec lock, offenders, shaped gates and the "since baseline" section.
const REAL: &str = include_str!("../../tests/fixtures/reports/rag-precision.json");

/// A report as the first evalspec wrote it: no spec text or lock, no
/// `metric_info`, `scored` or gate `reasons`; the item count under `items`.
const OLD: &str = include_str!("../../tests/fixtures/reports/first-release.json");

const SMALL: &str = r#"{
  "evalspec": "0.1.0",
  "spec": {"name": "demo", "version": "1.0.0", "path": "demo.yaml", "sha256": "ab12"},
  "params": {},
  "datasets": {},
  "metrics": {
    "answered": 3,
    "precision": 0.9
  },
  "gates": [
    {
      "name": "precision",
      "expr": "precision >= 0.8",
      "severity": "fail",
      "value": 0.9,
      "pass": true,
      "status": "pass",
      "message": null
    }
  ],
  "pass": true
}
"#;

fn error(text: &str) -> String {
    Report::from_json(text, "old/report.json")
        .expect_err("a malformed report")
        .render()
}

fn broken(from: &str, to: &str) -> String {
    assert!(SMALL.contains(from), "{from}");
    error(&SMALL.replacen(from, to, 1))
}

#[test]
fn a_real_report_reads_and_writes_back_byte_for_byte() {
    let report = Report::from_json(REAL, "report.json").unwrap();
    let mut written = serde_json::to_string_pretty(&report).unwrap();
    written.push('\n');
    assert_eq!(written, REAL);
    assert!(report.offenders.is_some() && report.baseline.is_some());
    assert!(report.spec.lock.is_some());
}

#[test]
fn numbers_keep_how_they_were_written() {
    let report = Report::from_json(SMALL, "report.json").unwrap();
    let answered = report.metrics.get("answered").unwrap();
    assert!(answered.as_json().is_u64(), "an integer stays one");
    assert_eq!(report.metrics.get("precision").unwrap().as_f64(), Some(0.9));
    let whole = SMALL.replace("\"precision\": 0.9", "\"precision\": 1.0");
    let report = Report::from_json(&whole, "report.json").unwrap();
    let text = serde_json::to_string(&report.metrics).unwrap();
    assert_eq!(text, r#"{"answered":3,"precision":1.0}"#);
}

#[test]
fn a_report_from_the_first_release_still_reads() {
    let report = Report::from_json(OLD, "report.json").unwrap();
    assert_eq!(report.spec.text, None);
    assert_eq!(report.spec.lock, None);
    assert_eq!(report.scored, None);
    assert!(report.metric_info.is_empty());
    assert!(report.gates[0].reasons.is_empty());
    assert_eq!(report.gates[1].status, GateStatus::Fail);
    assert_eq!(
        report.metrics.names().collect::<Vec<_>>(),
        ["answered", "precision"]
    );
}

#[test]
fn optional_keys_read_as_their_defaults() {
    let report = Report::from_json(SMALL, "report.json").unwrap();
    assert!(report.labels.is_none() && report.runs.is_none() && report.baseline.is_none());
    let with_info = SMALL.replace(
        "\"gates\":",
        "\"metric_info\": {\"precision\": {\"expr\": \"ratio(x)\", \"better\": \"higher\"}},\n  \"gates\":",
    );
    let report = Report::from_json(&with_info, "report.json").unwrap();
    let info = report.metric_info.get("precision").unwrap();
    assert_eq!((info.better, info.tolerance), (Some(Better::Higher), None));
}

#[test]
fn a_string_metric_is_a_located_error() {
    assert_eq!(
        broken("\"precision\": 0.9", "\"precision\": \"0.9\""),
        "error: `old/report.json`: metric `precision` must be a number, true/false or null, found a string\n --> old/report.json:8:22 (metrics.precision)\n  = help: report.json is written by `evalspec run`; re-run it instead of editing the file\n"
    );
}

#[test]
fn a_gate_that_is_a_string_is_a_located_error() {
    let text = SMALL.replacen(
        &SMALL[SMALL.find("    {\n      \"name\"").unwrap()..SMALL.find("  ],").unwrap()],
        "    \"precision\"\n",
        1,
    );
    assert_eq!(
        error(&text),
        "error: `old/report.json`: `gates[0]` must be an object, found a string\n  --> old/report.json:11:15 (gates[0])\n   = help: report.json is written by `evalspec run`; re-run it instead of editing the file\n"
    );
}

#[test]
fn a_gate_status_that_is_no_status_is_a_located_error() {
    assert_eq!(
        broken("\"status\": \"pass\"", "\"status\": \"banana\""),
        "error: `old/report.json`: `gates[0].status` must be `pass`, `warn` or `fail`, found `banana`\n  --> old/report.json:17:24 (gates[0].status)\n   = help: report.json is written by `evalspec run`; re-run it instead of editing the file\n"
    );
    assert_eq!(
        broken("\"status\": \"pass\"", "\"status\": true"),
        "error: `old/report.json`: `gates[0].status` must be `pass`, `warn` or `fail`, found `true`\n  --> old/report.json:17:20 (gates[0].status)\n   = help: report.json is written by `evalspec run`; re-run it instead of editing the file\n"
    );
}

#[test]
fn a_file_that_is_not_an_object_is_not_a_report() {
    assert_eq!(
        error("[1, 2]\n"),
        "error: `old/report.json` is not an evalspec report (it holds a list, not an object)\n --> old/report.json:1:1\n  = help: pass a report.json written by `evalspec run`, or its --out folder\n"
    );
    assert_eq!(
        error("{\"hello\": 1}\n"),
        "error: `old/report.json` is not an evalspec report (no `evalspec` key)\n --> old/report.json:1:12\n  = help: pass a report.json written by `evalspec run`, or its --out folder\n"
    );
}

#[test]
fn a_report_without_metrics_is_a_located_error() {
    let text = SMALL.replacen(
        &SMALL[SMALL.find("  \"metrics\"").unwrap()..SMALL.find("  \"gates\"").unwrap()],
        "",
        1,
    );
    assert_eq!(
        error(&text),
        "error: `old/report.json`: the report has no `metrics`\n  --> old/report.json:18:1\n   = help: report.json is written by `evalspec run`; re-run it instead of editing the file\n"
    );
}

#[test]
fn wrong_shapes_deeper_down_name_their_key_path() {
    assert_eq!(
        broken("\"pass\": true,", "\"pass\": \"yes\","),
        "error: `old/report.json`: `gates[0].pass` must be true or false, found a string\n  --> old/report.json:16:19 (gates[0].pass)\n   = help: report.json is written by `evalspec run`; re-run it instead of editing the file\n"
    );
    assert_eq!(
        broken("\"metrics\": {", "\"metrics\": [1], \"x\": {"),
        "error: `old/report.json`: `metrics` must be an object, found a list\n --> old/report.json:6:13 (metrics)\n  = help: report.json is written by `evalspec run`; re-run it instead of editing the file\n"
    );
    assert_eq!(
        broken("\"name\": \"demo\", ", ""),
        "error: `old/report.json`: `spec` has no `name`\n --> old/report.json:3:69 (spec)\n  = help: report.json is written by `evalspec run`; re-run it instead of editing the file\n"
    );
}

#[test]
fn text_that_is_not_json_says_where() {
    let rendered = error("{\"evalspec\": \n");
    assert!(
        rendered.starts_with("error: `old/report.json` is not JSON: "),
        "{rendered}"
    );
    assert!(rendered.contains(" --> old/report.json:2:0"), "{rendered}");
}

#[test]
fn item_lines_read_and_refuse_wrong_shapes() {
    let line = r#"{"key":"q1","line":3,"label":null,"fields":{"ok":true},"matchers":{}}"#;
    let item = Item::from_json_line(line, "items.jsonl", 4).unwrap();
    assert_eq!((item.line, item.label.clone()), (3, Some(None)));
    assert_eq!(serde_json::to_string(&item).unwrap(), line);
    let bad = Item::from_json_line(r#"{"key":"q1","label":7}"#, "items.jsonl", 4)
        .unwrap_err()
        .render();
    assert_eq!(
        bad,
        "error: `items.jsonl`: `label` must be a string, found a number\n --> items.jsonl:4:21 (label)\n  = help: items.jsonl is written by `evalspec run`; re-run to regenerate it\n"
    );
    let bad = Item::from_json_line(r#"{"key":"q1"}"#, "items.jsonl", 2)
        .unwrap_err()
        .render();
    assert_eq!(
        bad,
        "error: `items.jsonl`: the item has no `line`\n --> items.jsonl:2:12\n  = help: items.jsonl is written by `evalspec run`; re-run to regenerate it\n"
    );
}

#[test]
fn overridden_params_are_optional_and_read_back_as_written() {
    let report = Report::from_json(SMALL, "report.json").unwrap();
    assert!(
        report.overridden_params.is_empty(),
        "absent in older reports"
    );
    let text = serde_json::to_string(&report).unwrap();
    assert!(
        !text.contains("overridden_params"),
        "not written when empty"
    );
    let overridden = SMALL.replace(
        "\"params\": {},",
        "\"params\": {\"k\": 3},\n  \"overridden_params\": {\"k\": {\"value\": 3, \"default\": 5}},",
    );
    let report = Report::from_json(&overridden, "report.json").unwrap();
    let k = report.overridden_params.get("k").unwrap();
    assert_eq!((k.value.as_u64(), k.default.as_u64()), (Some(3), Some(5)));
    let text = serde_json::to_string(&report).unwrap();
    assert!(text.contains(r#""params":{"k":3},"overridden_params":{"k":{"value":3,"default":5}},"#));
    let wrong = SMALL.replace(
        "\"params\": {},",
        "\"params\": {},\n  \"overridden_params\": {\"k\": 3},",
    );
    assert!(
        error(&wrong).contains("overridden_params.k"),
        "{}",
        error(&wrong)
    );
}

#[test]
fn slices_read_back_and_older_reports_have_none() {
    let sliced = SMALL
        .replace(
            "  \"gates\": [",
            "  \"slices\": {\"category\": {\"billing\": {\"items\": 2, \"metrics\": {\"precision\": 1.0}}, \"null\": {\"items\": 1, \"metrics\": {\"precision\": null}}}},\n  \"gates\": [",
        )
        .replace(
            "      \"message\": null\n",
            "      \"message\": null,\n      \"by\": {\"slices\": [\"category\"], \"metric\": \"precision\", \"mode\": \"every\", \"min_items\": 2, \"values\": [{\"slice\": \"category\", \"value\": \"null\", \"items\": 1, \"status\": \"skipped\", \"gated\": null, \"reasons\": []}]}\n",
        );
    let report = Report::from_json(&sliced, "report.json").unwrap();
    let slices = report.slices.as_ref().unwrap();
    let category = slices.get("category").unwrap();
    assert_eq!(category.names().collect::<Vec<_>>(), ["billing", "null"]);
    assert_eq!(category.get("billing").unwrap().items, 2);
    let by = report.gates[0].by.as_ref().unwrap();
    assert_eq!(
        by.values[0].status,
        crate::report_model::SliceStatus::Skipped
    );
    let written = serde_json::to_value(&report).unwrap();
    let read: serde_json::Value = serde_json::from_str(&sliced).unwrap();
    assert_eq!(written["slices"], read["slices"], "written back as read");
    assert_eq!(written["gates"][0]["by"], read["gates"][0]["by"]);
    assert!(Report::from_json(OLD, "old.json").unwrap().slices.is_none());
}
