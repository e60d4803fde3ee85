//! `--message-format json`: every diagnostic as one JSON object a line on
//! stderr (level, code, message, file, line, column, key_path, help, note,
//! label), for a spec error, a data error and a frozen spec's drift, from
//! every command that reports them; the exit codes are the same as in words.

use crate::support::{evalspec, write};

/// Each line of `stderr` parsed as a JSON object (a line that is not one
/// fails the test).
fn objects(stderr: &str) -> Vec<serde_json::Value> {
    (stderr.lines())
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|_| panic!("not a JSON line: {line:?}"))
        })
        .collect()
}

/// `stderr`'s objects, pretty, with the temporary folder's path removed.
fn snapshot(stderr: &str, dir: &std::path::Path) -> String {
    let text: Vec<String> = objects(stderr)
        .iter()
        .map(|o| serde_json::to_string_pretty(o).unwrap())
        .collect();
    text.join("\n").replace(&format!("{}/", dir.display()), "")
}

const SPEC: &str = "name: t\nversion: 1.0.0\ndatasets:\n  gold: {path: gold.jsonl, key: id}\nmetrics:\n  n: count()\n  share: ratio(gold.ok)\ngates:\n  share: {expr: share >= 0.5}\n";

#[test]
fn a_spec_error_is_one_json_object_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let broken = SPEC.replace(
        "ratio(gold.ok)",
        "ratio(gold.ok where gold.x)\n  other: nope(1)",
    );
    write(dir.path(), "spec.yaml", &broken);
    for command in ["check", "run", "explain"] {
        let out = evalspec(
            dir.path(),
            &[command, "spec.yaml", "--message-format", "json"],
        );
        assert_eq!(out.code, 2, "{command}: {}", out.stderr);
        assert!(
            out.stdout.is_empty() || command == "run",
            "{command}: {}",
            out.stdout
        );
        let found = objects(&out.stderr);
        assert_eq!(found.len(), 1, "{command}: {}", out.stderr);
        if command == "check" {
            insta::assert_snapshot!("spec_error", snapshot(&out.stderr, dir.path()));
        }
    }
}

#[test]
fn a_data_error_and_its_warnings_are_json_lines() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "spec.yaml", SPEC);
    write(
        dir.path(),
        "gold.jsonl",
        "{\"id\": 1, \"ok\": true}\n{\"id\": 2, \"ok\": tru}\n",
    );
    let args = [
        "run",
        "spec.yaml",
        "--out",
        "out",
        "--message-format",
        "json",
    ];
    let out = evalspec(dir.path(), &args);
    assert_eq!(out.code, 2, "{}", out.stderr);
    insta::assert_snapshot!("data_error", snapshot(&out.stderr, dir.path()));
    // Warnings of a run that scores, in the same form.
    write(
        dir.path(),
        "gold.jsonl",
        "{\"id\": 1, \"ok\": true}\n{\"id\": null, \"ok\": true}\n",
    );
    let out = evalspec(dir.path(), &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let warnings = objects(&out.stderr);
    assert_eq!(warnings.len(), 1, "{}", out.stderr);
    assert_eq!(warnings[0]["level"], "warning");
}

#[test]
fn a_frozen_specs_drift_is_json_lines_from_verify_run_and_freeze() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "spec.yaml",
        &SPEC.replace("key: id}", "key: id, frozen: true}"),
    );
    write(dir.path(), "gold.jsonl", "{\"id\": 1, \"ok\": true}\n");
    assert_eq!(evalspec(dir.path(), &["freeze", "spec.yaml"]).code, 0);
    write(dir.path(), "gold.jsonl", "{\"id\": 1, \"ok\": false}\n");
    let verify = evalspec(
        dir.path(),
        &["verify", "spec.yaml", "--message-format", "json"],
    );
    assert_eq!(verify.code, 2, "{}", verify.stderr);
    insta::assert_snapshot!("drift", snapshot(&verify.stderr, dir.path()));
    let run = [
        "run",
        "spec.yaml",
        "--out",
        "out",
        "--message-format",
        "json",
    ];
    let run = evalspec(dir.path(), &run);
    assert_eq!(run.code, 2, "{}", run.stderr);
    // The same drift; a run's last also says how to go on.
    let without_help = |stderr: &str| -> Vec<serde_json::Value> {
        let mut found = objects(stderr);
        found
            .iter_mut()
            .for_each(|o| o["help"] = serde_json::Value::Null);
        found
    };
    assert_eq!(without_help(&run.stderr), without_help(&verify.stderr));
    assert!(objects(&run.stderr)[0]["help"]
        .as_str()
        .unwrap()
        .contains("--allow-drift"));
    // Re-freezing a changed spec without a new version is refused, in JSON too.
    write(
        dir.path(),
        "spec.yaml",
        &SPEC
            .replace("0.5", "0.6")
            .replace("key: id}", "key: id, frozen: true}"),
    );
    let freeze = evalspec(
        dir.path(),
        &["freeze", "spec.yaml", "--message-format", "json"],
    );
    assert_eq!(freeze.code, 2, "{}", freeze.stderr);
    assert_eq!(objects(&freeze.stderr)[0]["level"], "error");
}

#[test]
fn a_diff_of_a_missing_report_is_a_json_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = evalspec(dir.path(), &["diff", "a", "b", "--message-format", "json"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    let found = objects(&out.stderr);
    assert_eq!(found.len(), 2, "{}", out.stderr);
    assert!(found.iter().all(|o| o["level"] == "error"));
    assert!(
        found[0]["message"].as_str().unwrap().contains("`a`"),
        "{}",
        out.stderr
    );
}
