//! The newcomer's tour, end to end through the command: `init`, `check`, a passing
//! run on the shipped sample, a failing run on the shipped regressed sample (its
//! reasons printed), and `diff` between the two showing what moved.

use crate::support::{evalspec, repo_root};

const SPEC: &str = "specs/rag-precision.yaml";
const REGRESSED: &str = "trace=specs/data/rag-precision-regressed/trace.jsonl";

#[test]
fn init_then_check_passes_on_the_starter_spec() {
    let dir = tempfile::tempdir().unwrap();
    let init = evalspec(dir.path(), &["init", "my-eval"]);
    assert_eq!(init.code, 0, "{}{}", init.stdout, init.stderr);
    for file in ["evalspec.yaml", "data/gold.jsonl", "data/traces.jsonl"] {
        assert!(dir.path().join("my-eval").join(file).is_file(), "{file}");
    }
    let check = evalspec(dir.path(), &["check", "my-eval/evalspec.yaml"]);
    assert_eq!(check.code, 0, "{}", check.stderr);
    assert!(
        check.stdout.contains("(my-eval/evalspec.yaml): OK"),
        "{}",
        check.stdout
    );
    let run = evalspec(
        dir.path(),
        &["run", "my-eval/evalspec.yaml", "--out", "runs/mine"],
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
}

#[test]
fn the_regressed_sample_fails_with_reasons_and_diff_shows_what_moved() {
    let dir = tempfile::tempdir().unwrap();
    let out = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let (passing, regressed) = (out("passing"), out("regressed"));

    let check = evalspec(&repo_root(), &["check", SPEC]);
    assert_eq!(check.code, 0, "{}", check.stderr);

    let pass = evalspec(
        &repo_root(),
        &["run", SPEC, "--format", "items", "--out", &passing],
    );
    assert_eq!(pass.code, 0, "{}{}", pass.stdout, pass.stderr);
    assert!(pass.stdout.contains("result: PASS"), "{}", pass.stdout);

    let args = [
        "run",
        SPEC,
        "--dataset",
        REGRESSED,
        "--format",
        "items",
        "--out",
        &regressed,
    ];
    let fail = evalspec(&repo_root(), &args);
    assert_eq!(
        fail.code, 1,
        "a `fail` gate fails: {}{}",
        fail.stdout, fail.stderr
    );
    assert_eq!(fail.stderr, "");
    // The gates that fail, each with its message and why, the others passing.
    for (gate, message, why) in [
        (
            "precision",
            "too many shipped answers are wrong or badly cited",
            "`precision >= min_precision` is false",
        ),
        (
            "chr",
            "shipped answers cite the wrong evidence",
            "`chr >= min_chr` is false",
        ),
        (
            "over_refusal",
            "answerable questions were refused",
            "`over_refusal <= max_over_refusal` is false",
        ),
    ] {
        let line = (fail.stdout.lines())
            .find(|l| l.trim_start().starts_with(&format!("FAIL  {gate} ")))
            .unwrap_or_else(|| panic!("no FAIL line for {gate}: {}", fail.stdout));
        assert!(line.contains(message), "{line}");
        assert!(
            fail.stdout.contains(&format!("why: {why}")),
            "{}",
            fail.stdout
        );
    }
    for gate in ["under_refusal", "scu"] {
        let passed = format!("PASS  {gate} ");
        assert!(
            fail.stdout
                .lines()
                .any(|l| l.trim_start().starts_with(&passed)),
            "{}",
            fail.stdout
        );
    }
    assert!(
        fail.stdout
            .contains("result: FAIL (2 passed, 0 warned, 3 failed)"),
        "{}",
        fail.stdout
    );
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("regressed/report.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(report["pass"], false, "{report}");

    let diff = evalspec(&repo_root(), &["diff", &passing, &regressed]);
    assert_eq!(diff.code, 0, "{}", diff.stderr);
    for flip in ["precision", "chr", "over_refusal"] {
        assert!(
            diff.stdout.lines().any(|l| {
                let words: Vec<&str> = l.split_whitespace().collect();
                words == [flip, "pass", "→", "fail"]
            }),
            "{flip} flipped: {}",
            diff.stdout
        );
    }
    // The items that moved: A0001 now cites the wrong passage, A0003 is refused.
    assert!(
        diff.stdout
            .contains("cited_ok  true → false (2): A0001, A0003"),
        "{}",
        diff.stdout
    );
    assert!(
        diff.stdout.contains("refused  false → true (1): A0003"),
        "{}",
        diff.stdout
    );
    let strict = evalspec(
        &repo_root(),
        &["diff", "--fail-on-regression", &passing, &regressed],
    );
    assert_eq!(strict.code, 1, "{}{}", strict.stdout, strict.stderr);
}
