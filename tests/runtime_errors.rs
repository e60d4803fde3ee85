//! Errors while evaluating, as data: each data and evaluation error carries its
//! kind's code, and one from a failed evaluation also its cause: the runtime
//! kind and where the failing sub-expression is written (the rendered message
//! still names the declaration, as the snapshots pin).

use std::ops::ControlFlow;
use std::path::Path;

use evalspec::base::diagnostic::{Diagnostic, Level};
use evalspec::inputs::{gather, Overrides};
use evalspec::plan::Plan;

/// Compiles `spec` (the body after `name` and `version`) with `files` beside it.
fn plan(dir: &Path, spec: &str, files: &[(&str, &str)]) -> Plan {
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let path = dir.join("spec.yaml");
    std::fs::write(&path, format!("name: t\nversion: 0.1.0\n{spec}")).unwrap();
    let spec = evalspec::spec::load(&path).unwrap();
    let (inputs, _) = gather(&spec, &Overrides::default());
    evalspec::plan::compile(&spec, &[], inputs).unwrap()
}

/// The diagnostics evaluating `spec` reports (errors, or else warnings).
fn diagnostics(spec: &str, files: &[(&str, &str)]) -> Vec<Diagnostic> {
    let dir = tempfile::tempdir().unwrap();
    let plan = plan(dir.path(), spec, files);
    let resources = evalspec::eval::Resources::threads(1);
    let physical = match evalspec::eval::PhysicalPlan::decide(&plan, resources) {
        Ok(physical) => physical,
        Err(error) => return vec![error],
    };
    match evalspec::eval::evaluate(&plan, &physical) {
        Ok(outcome) => outcome.warnings,
        Err(errors) => errors,
    }
}

fn first_error(spec: &str, files: &[(&str, &str)]) -> Diagnostic {
    let errors = diagnostics(spec, files);
    assert_eq!(errors[0].level, Level::Error, "{}", errors[0].render());
    errors.into_iter().next().unwrap()
}

/// The code, line and column of a diagnostic's cause.
fn cause(d: &Diagnostic) -> (&'static str, usize, usize) {
    let cause = d.cause.as_ref().expect("an evaluation error has a cause");
    let at = cause.at.as_ref().expect("the cause is placed");
    (cause.code, at.line, at.column.unwrap())
}

/// The line and column (1-based) where `needle` first occurs in the spec file,
/// whose first two lines are the name and version.
fn place(spec: &str, needle: &str) -> (usize, usize) {
    let text = format!("name: t\nversion: 0.1.0\n{spec}");
    let offset = text.find(needle).expect("the needle is in the spec");
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    (
        text[..offset].matches('\n').count() + 1,
        text[line_start..offset].chars().count() + 1,
    )
}

/// `(code, line, column)` for a cause at `needle` in `spec`.
fn at(code: &'static str, spec: &str, needle: &str) -> (&'static str, usize, usize) {
    let (line, column) = place(spec, needle);
    (code, line, column)
}

const GOLD: &str = "items: gold\ndatasets:\n  gold: { path: gold.jsonl, key: qid }\n";

#[test]
fn a_failing_call_is_placed_inside_its_field() {
    let spec = format!("{GOLD}fields:\n  v: gold.ok and len(gold.x) > 0\nmetrics:\n  n: count()\n");
    let d = first_error(
        &spec,
        &[("gold.jsonl", "{\"qid\": \"q1\", \"ok\": true, \"x\": 3}\n")],
    );
    assert_eq!(d.code, "item_not_evaluated");
    assert_eq!(cause(&d), at("argument_type", &spec, "len(gold.x)"));
    let at = d.cause.as_ref().unwrap().at.as_ref().unwrap();
    assert_eq!(at.key_path.as_deref(), Some("fields.v"));
    assert_eq!(at.snippet.as_ref().unwrap().width, "len(gold.x)".len());
    // What is printed still names the field, at its declaration.
    assert!(d
        .message
        .ends_with("in `v`: argument 1 of `len` must be a list or a string, found number 3"));
    assert_eq!(d.location.as_ref().unwrap().column, Some(3));
}

#[test]
fn a_not_on_a_string_is_placed_inside_a_matcher_input() {
    let spec = format!(
        "{GOLD}matchers:\n  m:\n    kind: refusal\n    text: if(not gold.flag, \"a\", \"b\")\nmetrics:\n  n: count()\n"
    );
    let d = first_error(
        &spec,
        &[("gold.jsonl", "{\"qid\": \"q1\", \"flag\": \"yes\"}\n")],
    );
    assert_eq!(d.code, "item_not_evaluated");
    assert_eq!(cause(&d), at("not_needs_bool", &spec, "not gold.flag"));
    assert!(d
        .message
        .contains("in `m`: `not` needs a bool, found string \"yes\""));
}

#[test]
fn the_innermost_failing_expression_wins() {
    // The `if` around it and the comparison above it pass the error on untouched.
    let spec = format!("{GOLD}fields:\n  v: if(-gold.s > 0, 1, 2)\nmetrics:\n  n: count()\n");
    let d = first_error(
        &spec,
        &[("gold.jsonl", "{\"qid\": \"q1\", \"s\": \"x\"}\n")],
    );
    assert_eq!(cause(&d), at("neg_needs_number", &spec, "-gold.s"));
}

#[test]
fn aggregates_place_their_argument_and_their_filter() {
    let files = [("gold.jsonl", "{\"qid\": \"q1\", \"s\": \"x\"}\n")];
    let spec = format!("{GOLD}metrics:\n  r: ratio(gold.s)\n");
    let d = first_error(&spec, &files);
    assert_eq!(cause(&d), at("aggregate_needs_bool", &spec, "gold.s)"));
    let spec = format!("{GOLD}metrics:\n  r: count(where gold.s)\n");
    let d = first_error(&spec, &files);
    assert_eq!(cause(&d), at("where_needs_bool", &spec, "gold.s)"));
}

/// An item that fails several aggregates reports the first in the spec's
/// order, whether it is scored as a flag (a `ratio` kept in its column) or
/// item by item (a `mean`): scoring takes the two kinds in separate loops.
#[test]
fn the_first_failing_aggregate_in_spec_order_is_reported() {
    let files = [("gold.jsonl", "{\"qid\": \"q1\", \"s\": \"x\"}\n")];
    let flag_first = format!("{GOLD}metrics:\n  r: ratio(gold.s)\n  m: mean(gold.s + 1)\n");
    let d = first_error(&flag_first, &files);
    assert_eq!(
        cause(&d),
        at("aggregate_needs_bool", &flag_first, "gold.s)")
    );
    let folded_first = format!("{GOLD}metrics:\n  m: mean(gold.s + 1)\n  r: ratio(gold.s)\n");
    let d = first_error(&folded_first, &files);
    assert_eq!(cause(&d), at("cannot_apply", &folded_first, "gold.s + 1"));
}

#[test]
fn calibration_places_a_confidence_outside_zero_to_one_and_a_correct_that_is_no_bool() {
    let spec = format!("{GOLD}metrics:\n  b: brier(gold.p, gold.ok)\n");
    let files = [(
        "gold.jsonl",
        "{\"qid\": \"q1\", \"p\": 0.5, \"ok\": true}\n{\"qid\": \"q2\", \"p\": 85, \"ok\": true}\n",
    )];
    let d = first_error(&spec, &files);
    assert_eq!(
        cause(&d),
        at("confidence_out_of_range", &spec, "gold.p, gold.ok")
    );
    assert!(
        d.message
            .ends_with("a confidence must be a probability from 0 to 1, found 85"),
        "{}",
        d.message
    );
    let files = [("gold.jsonl", "{\"qid\": \"q1\", \"p\": 0.5, \"ok\": 1}\n")];
    let d = first_error(&spec, &files);
    assert_eq!(
        cause(&d),
        at("aggregate_needs_bool", &spec, "gold.p, gold.ok")
    );
    // A null on either side leaves the item out.
    let files = [(
        "gold.jsonl",
        "{\"qid\": \"q1\", \"p\": null, \"ok\": 1}\n{\"qid\": \"q2\", \"p\": 0.5}\n",
    )];
    assert!(diagnostics(&spec, &files).is_empty());
}

#[test]
fn keys_and_checks_carry_their_codes_and_causes() {
    let list_key =
        "items: gold\ndatasets:\n  gold: { path: gold.jsonl, key: k }\nmetrics:\n  n: count()\n";
    let d = first_error(list_key, &[("gold.jsonl", "{\"k\": [1]}\n")]);
    assert_eq!(d.code, "key_not_evaluated");
    // A key that is a list fails as the whole key expression.
    assert_eq!(cause(&d), at("not_a_key", list_key, "k }"));

    let check = "items: gold\ndatasets:\n  gold:\n    path: gold.jsonl\n    key: qid\n    checks:\n      - expr: not flag\n        message: m\nmetrics:\n  n: count()\n";
    let d = first_error(check, &[("gold.jsonl", "{\"qid\": 1, \"flag\": 2}\n")]);
    assert_eq!(d.code, "check_not_evaluated");
    assert_eq!(cause(&d), at("not_needs_bool", check, "not flag"));
    let d = first_error(check, &[("gold.jsonl", "{\"qid\": 1, \"flag\": true}\n")]);
    assert_eq!(d.code, "check_failed");
    assert!(d.cause.is_none());
}

#[test]
fn data_errors_carry_their_codes() {
    let schema = "items: gold\ndatasets:\n  gold:\n    path: gold.jsonl\n    key: qid\n    schema:\n      x: integer\nmetrics:\n  n: count()\n";
    let code = |spec: &str, data: &str| first_error(spec, &[("gold.jsonl", data)]).code;
    assert_eq!(code(schema, "{\"qid\": 1, \"x\": 1.5}\n"), "schema");
    assert_eq!(code(schema, "{\"qid\": 1, \"x\": \n"), "invalid_json");
    assert_eq!(code(schema, "[1]\n"), "invalid_record");
    let dup = "items: gold\ndatasets:\n  gold: { path: gold.jsonl, key: qid, duplicates: error }\nmetrics:\n  n: count()\n";
    assert_eq!(code(dup, "{\"qid\": 1}\n{\"qid\": 1}\n"), "duplicate_key");
    let missing =
        "items: gold\ndatasets:\n  gold: { path: nope.jsonl, key: qid }\nmetrics:\n  n: count()\n";
    assert_eq!(code(missing, ""), "cannot_read_dataset");
    let trec = "items: run\ndatasets:\n  run: { format: trec_run, path: gold.jsonl, key: qid }\nmetrics:\n  n: count()\n";
    assert_eq!(code(trec, "q1 Q0 d1 1 x t\n"), "trec_value");
}

#[test]
fn too_many_item_errors_stop_the_run_with_a_kind_of_their_own() {
    let spec = format!("{GOLD}fields:\n  v: not gold.s\nmetrics:\n  n: count()\n");
    let gold: String = (0..12)
        .map(|i| format!("{{\"qid\": {i}, \"s\": \"x\"}}\n"))
        .collect();
    let errors = diagnostics(&spec, &[("gold.jsonl", &gold)]);
    assert_eq!(errors.len(), 11);
    assert!(errors[..10].iter().all(|d| d.code == "item_not_evaluated"));
    assert_eq!(errors[10].code, "too_many_item_errors");
}

#[test]
fn runs_errors_and_warnings_carry_their_codes() {
    let runs = "items: trace\ndatasets:\n  trace:\n    runs: [r/a.jsonl, r/b.jsonl]\n    run_name: cfg\n    key: qid\nmetrics:\n  n: count()\n";
    let same = [
        ("r/a.jsonl", "{\"qid\": 1, \"cfg\": \"x\"}\n"),
        ("r/b.jsonl", "{\"qid\": 1, \"cfg\": \"x\"}\n"),
    ];
    assert_eq!(first_error(runs, &same).code, "run_named_twice");
    let listed = [
        ("r/a.jsonl", "{\"qid\": 1, \"cfg\": [1]}\n"),
        ("r/b.jsonl", "{\"qid\": 1, \"cfg\": \"y\"}\n"),
    ];
    assert_eq!(first_error(runs, &listed).code, "run_name_not_scalar");
    let differs = [
        (
            "r/a.jsonl",
            "{\"qid\": 1, \"cfg\": \"x\"}\n{\"qid\": 2, \"cfg\": \"z\"}\n",
        ),
        ("r/b.jsonl", "{\"qid\": 1, \"cfg\": \"y\"}\n"),
    ];
    assert_eq!(first_error(runs, &differs).code, "run_name_differs");

    let warned = "items: trace\ndatasets:\n  trace:\n    runs: [r/a.jsonl, r/b.jsonl]\n    key: qid\nmetrics:\n  n: count()\n";
    let keyless = [
        ("r/a.jsonl", "{\"qid\": null}\n"),
        ("r/b.jsonl", "{\"qid\": 1}\n"),
    ];
    let warnings = diagnostics(warned, &keyless);
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].level, Level::Warning);
    assert_eq!(warnings[0].code, "keyless_records");
    assert_eq!(
        warnings[0].message,
        "run `a`: trace: 1 record(s) have no key (`qid` is null) and join nothing"
    );
}

#[test]
fn a_sink_stops_the_reader_by_breaking() {
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (0..100).map(|i| format!("{{\"qid\": {i}}}\n")).collect();
    let plan = plan(
        dir.path(),
        "items: gold\ndatasets:\n  gold: { path: gold.jsonl, key: qid }\nmetrics:\n  n: count()\n",
        &[("gold.jsonl", &lines)],
    );
    let (chunks, _) = evalspec::data::read_chunked(
        &plan.datasets[0],
        1,
        Vec::new,
        |seen: &mut Vec<u32>, record| {
            seen.push(record.line);
            Ok(if seen.len() == 3 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            })
        },
    )
    .unwrap();
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0].state, [1, 2, 3]);
    assert!(chunks[0].stop.is_none(), "a break is not an error");
}
