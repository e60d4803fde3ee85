//! `specs/retrieval-spans.yaml` (seed 004): hand-computed metrics on the shipped
//! sample, and the dataset contract's validation rules with file:line errors.

use serde_json::Value;

use crate::support::{self, evalspec, repo_root, write};

#[test]
fn sample_metrics_are_the_hand_computed_ones() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = evalspec(
        &repo_root(),
        &[
            "run",
            "specs/retrieval-spans.yaml",
            "--out",
            out_dir.path().to_str().unwrap(),
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.path().join("report.json")).unwrap())
            .unwrap();
    let m = &report["metrics"];
    // Scored: q1, q2, q10, q4 (q3 is unanswerable). Ranked hits (strict relevance,
    // credit): q1 [p12 ✗, p40 ✓], q2 [p15 ✓ credited, p15 ✓ not credited again,
    // p54 ✗], q10 [nothing relevant], q4 [p19 ✗ (near), p18 ✓].
    let expect = [
        ("scored_questions", 4.0),
        ("skipped_questions", 1.0),
        ("recall_at_1", 0.5 / 4.0),
        ("recall_at_3", 2.5 / 4.0),
        ("mrr_at_1", 0.25),
        ("mrr_at_3", 2.0 / 4.0),
        ("ndcg_at_1", 0.25),
        ("strict_hit_rate_at_1", 0.25),
        ("strict_hit_rate_at_3", 0.75),
        ("near_page_hit_rate_at_1", 0.5),
        ("doc_only_hit_rate_at_1", 1.0),
    ];
    for (name, want) in expect {
        assert_eq!(m[name].as_f64(), Some(want), "{name}");
    }
    let l3 = 1.0 / 3f64.log2();
    let ndcg3 = (l3 + 1.0 / (1.0 + l3) + l3) / 4.0;
    assert!((m["ndcg_at_3"].as_f64().unwrap() - ndcg3).abs() < 1e-15);
}

const GOOD: &str = r#"{"qid":"q1","question":"Q?","answerable":true,"gold":[{"doc_id":"D","start_page":1,"end_page":2}]}"#;

fn run_with_questions(lines: &[&str], extra: &[&str]) -> support::Output {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "questions.jsonl", &(lines.join("\n") + "\n"));
    write(dir.path(), "hits.jsonl", "");
    let spec = repo_root().join("specs/retrieval-spans.yaml");
    let mut args = vec![
        "run",
        spec.to_str().unwrap(),
        "--dataset",
        "questions=questions.jsonl",
        "--dataset",
        "hits=hits.jsonl",
        "--out",
        "out",
    ];
    args.extend_from_slice(extra);
    evalspec(dir.path(), &args)
}

#[test]
fn the_question_contract_is_enforced_with_lines() {
    let cases = [
        (
            r#"{"qid":"q1","question":"again","answerable":false,"gold":[]}"#,
            "duplicate key `q1` (first on line 1)",
        ),
        (
            r#"{"qid":"","question":"Q?","answerable":false,"gold":[]}"#,
            "field `qid` must not be empty",
        ),
        (
            r#"{"qid":"q2","question":"","answerable":false,"gold":[]}"#,
            "field `question` must not be empty",
        ),
        (
            r#"{"qid":"q2","question":"Q?","answerable":"yes","gold":[]}"#,
            "field `answerable` must be a bool",
        ),
        (
            r#"{"qid":"q2","question":"Q?","answerable":true,"gold":[{"doc_id":"D","start_page":0,"end_page":2}]}"#,
            "field `gold[0].start_page` must be at least 1, found 0",
        ),
        (
            r#"{"qid":"q2","question":"Q?","answerable":true,"gold":[{"doc_id":"","start_page":1,"end_page":2}]}"#,
            "field `gold[0].doc_id` must not be empty",
        ),
        (
            r#"{"qid":"q2","question":"Q?","answerable":true,"gold":[{"doc_id":"D","start_page":3,"end_page":2}]}"#,
            "a gold span has start_page > end_page",
        ),
        (
            r#"{"qid":"q2","question":"Q?","answerable":false,"gold":[{"doc_id":"D","start_page":1,"end_page":2}]}"#,
            "an unanswerable question must have empty gold",
        ),
        (
            r#"{"qid":"q2","question":"Q?","answerable":true,"gold":[]}"#,
            "an answerable question needs gold spans",
        ),
    ];
    for (line, message) in cases {
        let out = run_with_questions(&[GOOD, line], &[]);
        assert_eq!(out.code, 2, "{line}: {}", out.stderr);
        assert!(
            out.stderr.contains("questions.jsonl:2"),
            "{line}: {}",
            out.stderr
        );
        assert!(
            out.stderr.contains(message),
            "{line}: expected {message:?} in\n{}",
            out.stderr
        );
    }
}

#[test]
fn unlabeled_questions_are_allowed_on_request_and_skipped() {
    let unlabeled = r#"{"qid":"q2","question":"Q?","answerable":true,"gold":[]}"#;
    let out = run_with_questions(&[GOOD, unlabeled], &["--param", "allow_unlabeled=true"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("scored_questions         1"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("skipped_questions        1"),
        "{}",
        out.stdout
    );
    // No hits at all: every rate is 0, not an error.
    assert!(
        out.stdout.contains("recall_at_8              0.0"),
        "{}",
        out.stdout
    );
}
