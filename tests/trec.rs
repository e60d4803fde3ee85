//! `specs/trec.yaml` agrees with trec_eval (via pytrec_eval) to 1e-9 on 40 generated
//! qrels/run pairs (tests/fixtures/trec, made by its generate.py), averaged both
//! ways: over the queries in both files, and with `complete` (trec_eval -c).

use serde_json::Value;

use crate::support::{self, evalspec, repo_root};

#[test]
fn trec_preset_matches_trec_eval() {
    let spec = repo_root().join("specs/trec.yaml");
    let mut cases: Vec<_> = std::fs::read_dir(repo_root().join("tests/fixtures/trec"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert_eq!(cases.len(), 40);
    let out = tempfile::tempdir().unwrap();
    for case in cases {
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(case.join("expected.json")).unwrap())
                .unwrap();
        for (mode, param) in [("default", "complete=false"), ("complete", "complete=true")] {
            let result = evalspec(
                &case,
                &[
                    "run",
                    spec.to_str().unwrap(),
                    "--dataset",
                    "qrels=qrels.txt",
                    "--dataset",
                    "run=run.txt",
                    "--param",
                    param,
                    "--out",
                    out.path().to_str().unwrap(),
                ],
            );
            // An empty run is "nothing was scored" (exit 2), where trec_eval
            // reports zeros (or nothing): the preset does not say `allow_empty`.
            let run = std::fs::read_to_string(case.join("run.txt")).unwrap();
            if run.trim().is_empty() {
                assert_eq!(result.code, 2, "{}: {}", case.display(), result.stderr);
                assert!(
                    result.stderr.contains("nothing was scored"),
                    "{}",
                    result.stderr
                );
                continue;
            }
            assert_eq!(result.code, 0, "{}: {}", case.display(), result.stderr);
            let report: Value = serde_json::from_str(
                &std::fs::read_to_string(out.path().join("report.json")).unwrap(),
            )
            .unwrap();
            for (measure, want) in expected[mode].as_object().unwrap() {
                let got = &report["metrics"][measure];
                match (got.as_f64(), want.as_f64()) {
                    (Some(got), Some(want)) => {
                        assert!(
                            (got - want).abs() <= 1e-9,
                            "{} {mode} {measure}: evalspec {got}, trec_eval {want}",
                            case.display()
                        )
                    }
                    _ => assert_eq!(got, want, "{} {mode} {measure}", case.display()),
                }
            }
        }
    }
}

#[test]
fn trec_files_are_validated_with_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let spec = repo_root().join("specs/trec.yaml");
    let run = |qrels: &str, run: &str| {
        support::write(dir.path(), "qrels.txt", qrels);
        support::write(dir.path(), "run.txt", run);
        evalspec(
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
        )
    };
    let out = run(
        "q1 0 d1 1\n",
        "q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.4 t\nq1 Q0 d1 3 0.3 t\n",
    );
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("run.txt:3:7"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("document `d1` is listed twice for query `q1` (first on line 1)"),
        "{}",
        out.stderr
    );
    let out = run("q1 0 d1 high\n", "q1 Q0 d1 1 0.5 t\n");
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("qrels.txt:1:9")
            && out
                .stderr
                .contains("a relevance level must be a whole number, found `high`"),
        "{}",
        out.stderr
    );
    let out = run("q1 0 d1 1\n", "q1 Q0 d1 1 0.5\n");
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("expected 6 columns, found 5"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_run_grouped_by_query_streams_to_the_same_numbers() {
    // The fixtures' runs are shuffled (read grouped in memory); the same lines sorted
    // by query are streamed one query at a time. Both must agree byte for byte.
    let spec = repo_root().join("specs/trec.yaml");
    let case = repo_root().join("tests/fixtures/trec/case38");
    let dir = tempfile::tempdir().unwrap();
    let run = std::fs::read_to_string(case.join("run.txt")).unwrap();
    let mut lines: Vec<&str> = run.lines().collect();
    lines.sort_by_key(|l| l.split_whitespace().next().unwrap().to_string());
    support::write(dir.path(), "sorted.txt", &(lines.join("\n") + "\n"));
    let report = |run: &str, out: &str| {
        let qrels = format!("qrels={}", case.join("qrels.txt").display());
        let result = evalspec(
            dir.path(),
            &[
                "run",
                spec.to_str().unwrap(),
                "--dataset",
                &qrels,
                "--dataset",
                run,
                "--out",
                out,
            ],
        );
        assert_eq!(result.code, 0, "{}", result.stderr);
        let text = std::fs::read_to_string(dir.path().join(out).join("report.json")).unwrap();
        let mut report: Value = serde_json::from_str(&text).unwrap();
        report["datasets"]["run"] = Value::Null; // the files differ, their fingerprints too
        report
    };
    let shuffled = report(&format!("run={}", case.join("run.txt").display()), "a");
    let sorted = report("run=sorted.txt", "b");
    assert_eq!(shuffled, sorted);
}
