//! Silent wrong results: inputs on which a gate said PASS (or a run exited 0)
//! though nothing, or not what the user meant, was scored.

use std::path::Path;

use crate::support::{self, evalspec, Output};

/// `evalspec run specs/rag-precision.yaml` with `gold` and `trace` as given
/// (paths relative to `dir`, or `-` for standard input fed `stdin`).
fn rag_precision(dir: &Path, gold: &str, trace: &str, stdin: Option<&[u8]>) -> Output {
    let root = support::repo_root();
    let spec = root.join("specs/rag-precision.yaml");
    let out = dir.join("out");
    let args = [
        "run",
        spec.to_str().unwrap(),
        "--dataset",
        &format!("gold={gold}"),
        "--dataset",
        &format!("trace={trace}"),
        "--out",
        out.to_str().unwrap(),
        "--allow-drift",
    ];
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_evalspec"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut input = child.stdin.take().unwrap();
        if let Some(bytes) = stdin {
            input.write_all(bytes).unwrap();
        }
    }
    let output = child.wait_with_output().unwrap();
    Output {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

#[test]
fn an_empty_items_dataset_is_nothing_scored() {
    let dir = tempfile::tempdir().unwrap();
    let root = support::repo_root();
    let trace = root.join("specs/data/rag-precision/trace.jsonl");
    let trace = trace.to_str().unwrap();
    std::fs::write(dir.path().join("empty.jsonl"), "").unwrap();
    std::fs::write(dir.path().join("blank.jsonl"), "\n\n  \n").unwrap();
    for (gold, trace, stdin) in [
        ("empty.jsonl", trace, None),
        ("blank.jsonl", trace, None),
        ("empty.jsonl", "empty.jsonl", None),
        // Closed standard input reads as empty.
        ("-", trace, Some(&b""[..])),
        ("-", trace, None),
    ] {
        let out = rag_precision(dir.path(), gold, trace, stdin);
        assert_eq!(out.code, 2, "{gold} {trace}: {}{}", out.stdout, out.stderr);
        assert!(
            out.stderr.contains("nothing was scored"),
            "{gold}: {}",
            out.stderr
        );
        assert!(out.stderr.contains("allow_empty"), "{}", out.stderr);
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
        assert!(!dir.path().join("out/report.json").exists());
    }
}

/// A small spec over `items.jsonl`: one count metric gated at `>= 0`.
fn count_spec(dir: &Path, dataset_extra: &str) {
    std::fs::write(
        dir.join("spec.yaml"),
        format!(
            "name: t\nversion: 1.0.0\ndatasets:\n  items: {{format: jsonl, path: items.jsonl, key: id{dataset_extra}}}\n\
             metrics:\n  n: {{expr: count(), better: higher}}\ngates:\n  g: {{metric: n, threshold: 0}}\n"
        ),
    )
    .unwrap();
}

#[test]
fn a_spec_may_say_its_items_may_be_empty() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("items.jsonl"), "").unwrap();
    count_spec(dir.path(), "");
    let out = evalspec(dir.path(), &["run", "spec.yaml", "--out", "out"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("nothing was scored"), "{}", out.stderr);
    assert!(out.stderr.contains(" --> spec.yaml:"), "{}", out.stderr);
    count_spec(dir.path(), ", allow_empty: true");
    let out = evalspec(dir.path(), &["run", "spec.yaml", "--out", "out"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("scored 0 items"), "{}", out.stdout);
    // Only the items dataset can be empty by choice.
    std::fs::write(
        dir.path().join("spec.yaml"),
        "name: t\nversion: 1.0.0\nitems: items\ndatasets:\n  items: {format: jsonl, path: items.jsonl, key: id}\n  other: {format: jsonl, path: items.jsonl, key: id, allow_empty: true}\n\
         fields:\n  o: other.id\nmetrics:\n  n: count()\n",
    )
    .unwrap();
    let out = evalspec(dir.path(), &["check", "spec.yaml"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("allow_empty"), "{}", out.stderr);
}

/// Runs `spec` (its text) over `items` (JSONL text) in a fresh folder.
fn run_spec(spec: &str, items: &str) -> (tempfile::TempDir, Output) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("items.jsonl"), items).unwrap();
    std::fs::write(dir.path().join("spec.yaml"), spec).unwrap();
    let out = evalspec(dir.path(), &["run", "spec.yaml", "--out", "out"]);
    (dir, out)
}

const ITEMS: &str = "{\"id\":\"a\",\"x\":1,\"c\":\"p\"}\n{\"id\":\"b\",\"x\":2,\"c\":\"q\"}\n";

#[test]
fn a_gate_on_a_metric_without_a_value_never_passes() {
    for gate in [
        "r != 1",
        "r in [null, 1]",
        "not (r == 1)",
        "r == null",
        "if(r == null, true, r > 0)",
    ] {
        let spec = format!(
            "name: t\nversion: 1.0.0\ndatasets:\n  items: {{format: jsonl, path: items.jsonl, key: id}}\n\
             metrics:\n  r: ratio(items.x > 1 where items.x > 100)\ngates:\n  g: {{expr: '{gate}'}}\n"
        );
        let (dir, out) = run_spec(&spec, ITEMS);
        assert_eq!(out.code, 1, "{gate}: {}{}", out.stdout, out.stderr);
        let report: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("out/report.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(report["gates"][0]["pass"], false, "{gate}");
        assert!(out.stdout.contains("no value"), "{gate}: {}", out.stdout);
    }
}

#[test]
fn a_by_gate_with_nothing_gated_does_not_pass() {
    let spec = |min_items: usize, allow_empty: &str| {
        format!(
            "name: t\nversion: 1.0.0\ndatasets:\n  items: {{format: jsonl, path: items.jsonl, key: id{allow_empty}}}\n\
             slices:\n  c: items.c\nmetrics:\n  m: {{expr: mean(items.x), by: c, better: higher}}\n\
             gates:\n  g: {{metric: m, by: c, min_items: {min_items}, threshold: 0}}\n"
        )
    };
    // Every value skipped by `min_items`.
    let (_dir, out) = run_spec(&spec(5, ""), ITEMS);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("nothing was gated"), "{}", out.stdout);
    // No value at all.
    let (_dir, out) = run_spec(&spec(1, ", allow_empty: true"), "");
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("nothing was gated"), "{}", out.stdout);
    // Some value gated: passes as before.
    let (_dir, out) = run_spec(&spec(1, ""), ITEMS);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
}

/// Writes `items.parquet` in `dir`: ids `a`, `b`, … and `score`.
fn parquet_scores(dir: &Path, scores: &[f64]) {
    use std::sync::Arc;
    let ids: Vec<String> = (0..scores.len())
        .map(|i| char::from(b'a' + i as u8).to_string())
        .collect();
    let batch = arrow_array::RecordBatch::try_from_iter([
        (
            "id",
            Arc::new(arrow_array::StringArray::from(ids)) as arrow_array::ArrayRef,
        ),
        (
            "score",
            Arc::new(arrow_array::Float64Array::from(scores.to_vec())) as arrow_array::ArrayRef,
        ),
    ])
    .unwrap();
    let file = std::fs::File::create(dir.join("items.parquet")).unwrap();
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

fn parquet_spec(dir: &Path, rule: &str) -> Output {
    std::fs::write(
        dir.join("spec.yaml"),
        format!(
            "name: t\nversion: 1.0.0\ndatasets:\n  items:\n    path: items.parquet\n    key: id\n    schema:\n      score: {rule}\n\
             metrics:\n  fine: {{expr: 'ratio(items.score < 0.5)', better: higher}}\ngates:\n  g: {{metric: fine, threshold: 1}}\n"
        ),
    )
    .unwrap();
    evalspec(dir, &["run", "spec.yaml", "--out", "out"])
}

#[test]
fn non_finite_numbers_never_pass_a_rule_nor_count_as_fine() {
    let dir = tempfile::tempdir().unwrap();
    // NaN in Parquet is a missing value: it breaks a rule that needs a number.
    parquet_scores(dir.path(), &[0.1, f64::NAN]);
    let out = parquet_spec(dir.path(), "{type: number, min: 0, max: 1}");
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("items.parquet"), "{}", out.stderr);
    // Where the rule allows null, it is not counted as a fine score.
    let out = parquet_spec(dir.path(), "number?");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/report.json")).unwrap())
            .unwrap();
    assert_ne!(report["metrics"]["fine"], 1.0, "{}", out.stdout);
    // An infinity is refused, located.
    for inf in [f64::INFINITY, f64::NEG_INFINITY] {
        parquet_scores(dir.path(), &[0.1, inf]);
        let out = parquet_spec(dir.path(), "{type: number, min: 0, max: 1}");
        assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
        assert!(out.stderr.contains("not a finite number"), "{}", out.stderr);
        assert!(out.stderr.contains("items.parquet"), "{}", out.stderr);
    }
    // `num` of text that is no finite number is an error, as of any text that is no number.
    for text in ["nan", "inf", "-inf", "1e999", "NaN"] {
        let spec = format!(
            "name: t\nversion: 1.0.0\ndatasets:\n  items: {{format: jsonl, path: items.jsonl, key: id}}\n\
             metrics:\n  fine: {{expr: 'ratio(num(\"{text}\") < 0.5)', better: higher}}\ngates:\n  g: {{metric: fine, threshold: 1}}\n"
        );
        let (_dir, out) = run_spec(&spec, ITEMS);
        assert_eq!(out.code, 2, "{text}: {}{}", out.stdout, out.stderr);
        assert!(out.stderr.contains("as a finite number"), "{}", out.stderr);
    }
}

#[test]
fn sums_and_means_of_large_values_do_not_overflow() {
    let items =
        "{\"id\":\"a\",\"x\":1e308}\n{\"id\":\"b\",\"x\":1e308}\n{\"id\":\"c\",\"x\":-1e308}\n";
    let spec = "name: t\nversion: 1.0.0\ndatasets:\n  items: {format: jsonl, path: items.jsonl, key: id}\n\
                metrics:\n  s: sum(items.x)\n  m: mean(items.x where items.x > 0)\n  big: sum(items.x where items.x > 0)\n";
    let (dir, out) = run_spec(spec, items);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/report.json")).unwrap())
            .unwrap();
    assert_eq!(report["metrics"]["s"], 1e308);
    assert_eq!(report["metrics"]["m"], 1e308);
    // A sum past f64's range has no value (never infinity shown as null).
    assert_eq!(report["metrics"]["big"], serde_json::Value::Null);
}

#[test]
fn item_values_of_another_run_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let spec = "name: t\nversion: 1.0.0\ndatasets:\n  items: {format: jsonl, path: items.jsonl, key: id}\n\
                metrics:\n  r: {expr: ratio(items.ok), better: higher}\n\
                gates:\n  g: {metric: r, max_drop: 0.1, significance: 0.05}\n";
    std::fs::write(root.join("spec.yaml"), spec).unwrap();
    let items = |ok: usize| -> String {
        (0..100)
            .map(|i| format!("{{\"id\":\"k{i}\",\"ok\":{}}}\n", i < ok))
            .collect()
    };
    let run = |ok: usize, out: &str, baseline: Option<&str>| {
        std::fs::write(root.join("items.jsonl"), items(ok)).unwrap();
        let mut args = vec!["run", "spec.yaml", "--out", out];
        if let Some(baseline) = baseline {
            args.extend(["--baseline", baseline]);
        }
        evalspec(root, &args)
    };
    assert_eq!(run(90, "old", None).code, 0);
    assert_eq!(run(90, "other", None).code, 0);
    assert_eq!(run(50, "new", None).code, 0);
    // The same run's item values: the 0.4 drop is significant.
    assert_eq!(run(50, "check", Some("old")).code, 1);
    // Another run's item values beside the old report.
    std::fs::copy(
        root.join("new/item-values.jsonl"),
        root.join("old/item-values.jsonl"),
    )
    .unwrap();
    for out in [
        run(50, "check", Some("old")),
        evalspec(root, &["diff", "old", "new"]),
        evalspec(root, &["diff", "new", "old"]),
    ] {
        assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
        assert!(
            out.stderr.contains("is not the item values of"),
            "{}",
            out.stderr
        );
    }
    // Identical inputs give the same id: their item values stand in for each other.
    std::fs::copy(
        root.join("other/item-values.jsonl"),
        root.join("old/item-values.jsonl"),
    )
    .unwrap();
    assert_eq!(run(50, "check", Some("old")).code, 1);
}

#[test]
fn keys_do_not_collide_nor_join_across_types() {
    let spec = "name: t\nversion: 1.0.0\nitems: items\ndatasets:\n  items: {format: jsonl, path: items.jsonl, key: id}\n  other: {format: jsonl, path: other.jsonl, key: id}\n\
                fields:\n  joined: other.id != null\nmetrics:\n  r: {expr: ratio(joined), better: higher}\ngates:\n  g: {metric: r, threshold: 0}\n";
    let run = |items: &str, other: &str| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("spec.yaml"), spec).unwrap();
        std::fs::write(dir.path().join("items.jsonl"), items).unwrap();
        std::fs::write(dir.path().join("other.jsonl"), other).unwrap();
        evalspec(dir.path(), &["run", "spec.yaml", "--out", "out"])
    };
    // Two ids past 64 bits that a float cannot tell apart.
    let out = run(
        "{\"id\":100000000000000000000}\n{\"id\":100000000000000000001}\n",
        "{\"id\":1}\n",
    );
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("cannot be a key"), "{}", out.stderr);
    assert!(out.stderr.contains("items.jsonl:1"), "{}", out.stderr);
    // `true` is no key: it does not join `1`.
    let out = run("{\"id\":true}\n", "{\"id\":1}\n");
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("a bool cannot be a key"),
        "{}",
        out.stderr
    );
    let out = run("{\"id\":1}\n", "{\"id\":true}\n");
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("other.jsonl:1"), "{}", out.stderr);
    // 64-bit ids stay exact and apart.
    let out = run(
        "{\"id\":18446744073709551615}\n{\"id\":18446744073709551614}\n",
        "{\"id\":18446744073709551615}\n",
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("missing"), "{}", out.stderr);
}

#[test]
fn a_parquet_column_named_twice_is_refused() {
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let strings = |v: &[&str]| -> arrow_array::ArrayRef {
        Arc::new(arrow_array::StringArray::from(v.to_vec()))
    };
    let numbers = |v: &[f64]| -> arrow_array::ArrayRef {
        Arc::new(arrow_array::Float64Array::from(v.to_vec()))
    };
    let batch = arrow_array::RecordBatch::try_from_iter([
        ("id", strings(&["a", "b"])),
        ("score", numbers(&[0.9, 0.9])),
        ("score", numbers(&[0.1, 0.1])),
    ])
    .unwrap();
    let file = std::fs::File::create(dir.path().join("items.parquet")).unwrap();
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    let out = parquet_spec(dir.path(), "number");
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("named twice"), "{}", out.stderr);
    assert!(out.stderr.contains("items.parquet"), "{}", out.stderr);
}

#[test]
fn a_field_in_no_record_is_warned_about_where_it_is_read() {
    let items = "{\"id\":\"a\",\"x\":1,\"trace\":{\"response\":{\"text\":\"t\"}}}\n{\"id\":\"b\",\"x\":null}\n";
    let spec = "name: t\nversion: 1.0.0\ndatasets:\n  items: {format: jsonl, path: items.jsonl, key: id}\n\
                fields:\n  ok: items.trace.respones.text != null\n  good: items.x != null\n\
                metrics:\n  r: {expr: ratio(ok), better: higher}\n  g: ratio(good)\n";
    let (_dir, out) = run_spec(spec, items);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .contains("field `trace.respones.text` is in none of the 2 record(s)"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains(" --> spec.yaml:6:"), "{}", out.stderr);
    // A field present in some record (null or not) is not warned about.
    assert!(!out.stderr.contains("field `x`"), "{}", out.stderr);
    // Under every join, and from a JSON array.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("items.json"), "[{\"id\":\"a\"}]").unwrap();
    std::fs::write(
        dir.path().join("spec.yaml"),
        "name: t\nversion: 1.0.0\ndatasets:\n  items: {path: items.json, key: id}\nmetrics:\n  n: count(items.scroe)\n",
    )
    .unwrap();
    let out = evalspec(dir.path(), &["run", "spec.yaml", "--out", "out"]);
    assert!(out.stderr.contains("field `scroe`"), "{}", out.stderr);
}

#[test]
fn percentiles_are_numpys_to_the_last_bit() {
    let items = "{\"id\":\"a\",\"x\":0.3}\n{\"id\":\"b\",\"x\":0.7}\n{\"id\":\"c\",\"x\":1.9}\n";
    let spec = "name: t\nversion: 1.0.0\ndatasets:\n  items: {format: jsonl, path: items.jsonl, key: id}\n\
                metrics:\n  p: percentile(items.x, 90)\n";
    let (dir, out) = run_spec(spec, items);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/report.json")).unwrap())
            .unwrap();
    // numpy.percentile([0.3, 0.7, 1.9], 90)
    assert_eq!(report["metrics"]["p"], 1.66);
}

#[test]
fn a_score_of_minus_zero_ties_zero_as_in_trec_eval() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("qrels.txt"), "q1 0 d1 1\n").unwrap();
    std::fs::write(
        dir.path().join("run.txt"),
        "q1 Q0 d1 1 0 t\nq1 Q0 d2 2 -0.0 t\n",
    )
    .unwrap();
    let spec = support::repo_root().join("specs/trec.yaml");
    let out = evalspec(
        dir.path(),
        &[
            "run",
            spec.to_str().unwrap(),
            "--dataset",
            "qrels=qrels.txt",
            "--dataset",
            "run=run.txt",
            "--out",
            "out",
        ],
    );
    assert!(out.code <= 1, "{}", out.stderr);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/report.json")).unwrap())
            .unwrap();
    // Tied, the docno breaks it descending: d2 first, d1 second (trec_eval: 0.5).
    assert_eq!(report["metrics"]["map"], 0.5);
    // order_by("-score") ties them too: the first of equal keys stays first.
    let items = "{\"id\":\"a\",\"l\":[{\"d\":\"y\",\"score\":-0.0},{\"d\":\"x\",\"score\":0}]}\n";
    let spec = "name: t\nversion: 1.0.0\ndatasets:\n  items: {format: jsonl, path: items.jsonl, key: id}\n\
                fields:\n  first: 'order_by(items.l, [\"-score\"])[0].d'\nmetrics:\n  x: ratio(first == \"y\")\n";
    let (dir, out) = run_spec(spec, items);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/report.json")).unwrap())
            .unwrap();
    assert_eq!(report["metrics"]["x"], 1.0);
}
