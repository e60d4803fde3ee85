//! The classification and calibration aggregates agree with scikit-learn
//! (`f1_score` with each `average`, `confusion_matrix`, `brier_score_loss`) and
//! with the ECE formula of grammar/README.md on the generated cases of
//! tests/fixtures/classification (made once by its generate.py).

use serde_json::Value;

use crate::support::{evalspec_with_env, repo_root, texts_of};

fn run_case(case: &std::path::Path, out: &std::path::Path, threads: &str) -> Value {
    let spec = repo_root().join("tests/fixtures/classification/spec.yml");
    // Small chunks, so that two threads split even the small cases.
    let env = [("EVALSPEC_MIN_CHUNK_BYTES", "1024")];
    let result = evalspec_with_env(
        case,
        &env,
        &[
            "run",
            spec.to_str().unwrap(),
            "--dataset",
            "items=items.jsonl",
            "--threads",
            threads,
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(result.code, 0, "{}: {}", case.display(), result.stderr);
    serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap()
}

fn cases() -> Vec<std::path::PathBuf> {
    let mut cases: Vec<_> = std::fs::read_dir(repo_root().join("tests/fixtures/classification"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    cases
}

#[test]
fn classification_aggregates_match_scikit_learn() {
    let cases = cases();
    assert_eq!(cases.len(), 14);
    let out = tempfile::tempdir().unwrap();
    for case in cases {
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(case.join("expected.json")).unwrap())
                .unwrap();
        let report = run_case(&case, out.path(), "1");
        let metrics = &report["metrics"];
        for name in [
            "macro_f1",
            "micro_f1",
            "weighted_f1",
            "brier",
            "ece_10",
            "ece_3",
        ] {
            let (got, want) = (metrics[name].as_f64(), expected[name].as_f64());
            let (Some(got), Some(want)) = (got, want) else {
                panic!(
                    "{} {name}: evalspec {got:?}, scikit-learn {want:?}",
                    case.display()
                );
            };
            // Both sum floats; evalspec exactly, numpy pairwise: a few ulps apart.
            assert!(
                (got - want).abs() <= 1e-12,
                "{} {name}: evalspec {got}, scikit-learn {want}",
                case.display()
            );
        }
        // micro F1 is the accuracy, to the bit.
        assert_eq!(
            metrics["micro_f1"],
            metrics["accuracy"],
            "{}",
            case.display()
        );
        assert_eq!(metrics["matrix"], expected["items"], "{}", case.display());

        // The sparse matrix in report.json is scikit-learn's confusion_matrix.
        let table = &report["confusion"][0];
        let mut cells: Vec<(String, String, u64)> = Vec::new();
        for class in table["classes"].as_array().unwrap() {
            let label = class["label"].as_str().unwrap().to_string();
            if class["correct"].as_u64().unwrap() > 0 {
                cells.push((label.clone(), label, class["correct"].as_u64().unwrap()));
            }
        }
        for cell in table["confusions"].as_array().unwrap() {
            let text = |k: &str| cell[k].as_str().unwrap().to_string();
            cells.push((
                text("truth"),
                text("predicted"),
                cell["items"].as_u64().unwrap(),
            ));
        }
        cells.sort();
        let mut want: Vec<(String, String, u64)> = expected["confusion_matrix"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let s = |i: usize| c[i].as_str().unwrap().to_string();
                (s(0), s(1), c[2].as_u64().unwrap())
            })
            .collect();
        want.sort();
        assert_eq!(cells, want, "{}", case.display());
        let mut labels = texts_of(&table["classes"], "label");
        labels.sort();
        let mut want_labels: Vec<&str> = expected["labels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap())
            .collect();
        want_labels.sort();
        assert_eq!(labels, want_labels, "{}", case.display());
    }
}

#[test]
fn classification_reports_are_the_same_bytes_for_any_thread_count() {
    let out1 = tempfile::tempdir().unwrap();
    let out2 = tempfile::tempdir().unwrap();
    for case in cases() {
        run_case(&case, out1.path(), "1");
        let read = |dir: &tempfile::TempDir| std::fs::read(dir.path().join("report.json")).unwrap();
        for threads in ["2", "3"] {
            run_case(&case, out2.path(), threads);
            assert_eq!(
                read(&out1),
                read(&out2),
                "{} with {threads} threads",
                case.display()
            );
        }
    }
}
