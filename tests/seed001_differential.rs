//! `specs/rag-quality-report.yaml` against seed 001's own scorer, on generated
//! inputs full of its edge cases: the report.md it writes must be byte for byte
//! what the scorer prints, and its five gates must decide as the seed's
//! thresholds do on the scorer's own unrounded numbers. The scorer is read from
//! the seed document at test time.

use std::process::Command;

use serde_json::{json, Value};

use crate::support::{code_block, evalspec, repo_root, seed, write, Rng};

const CASES: u64 = 300;

const QUESTIONS: [&str; 7] = [
    "What is X?",
    "Explain Y.",
    "What is Z?",
    "Summarize the external link.",
    "Où est la clé ?",
    "",
    "What is W?",
];

fn qa_record(rng: &mut Rng, i: usize) -> Value {
    let claims = [
        "X is a constrained mapping.",
        "Y is unrelated to X.",
        "Short",
        "abc",
        "La clé est SOUS le paillasson",
        "multi-word-phrase here",
        "",
    ];
    let ids = ["p1#1", "p2#1", "p3#1", "1", "p 4"];
    let qid = match rng.below(8) {
        0 => json!(""),
        1 => json!(i + 1),
        _ => json!(format!("q{}", i + 1)),
    };
    let answerable = match rng.below(10) {
        0 => json!(1),
        1 => json!(0),
        n => json!(n % 2 == 0),
    };
    let mut record = json!({"qid": qid, "q": *rng.pick(&QUESTIONS), "answerable": answerable});
    match rng.below(5) {
        0 => {}
        1 => record["gold_ids"] = json!([]),
        _ => {
            record["gold_ids"] = json!((0..1 + rng.below(2))
                .map(|_| *rng.pick(&ids))
                .collect::<Vec<_>>())
        }
    }
    match rng.below(5) {
        0 => {}
        1 => record["gold_claim"] = Value::Null,
        _ => record["gold_claim"] = json!(*rng.pick(&claims)),
    }
    record
}

fn trace_record(rng: &mut Rng) -> Value {
    let answers = [
        "- X is a constrained mapping.\n- citations: [p1#1]",
        "Y is unrelated to X. Citations : [ p2#1 ,p3#1 ]",
        "CITATIONS:[]",
        "cıtations: [p1#1] then citations: [p2#1]",
        "citationſ:\u{1c}[p2#1\u{1d}p1#1]",
        "not in context",
        "  NOT IN CONTEXT\n",
        "not in context.",
        "la clé est sous le paillasson",
        "something else [p1#1]",
        "citations: [1, p 4]",
        "",
    ];
    let ids = ["p1#1", "p2#1", " p3#1 ", "1", "p 4"];
    let question = *rng.pick(&QUESTIONS);
    let mut record = json!({"ts": 1_700_000_000 + rng.below(1000)});
    match rng.below(6) {
        0 => record["question"] = json!(question),
        1 => {
            record["q"] = json!("");
            record["question"] = json!(question);
        }
        2 => record["q"] = json!("Not a known question"),
        _ => record["q"] = json!(question),
    }
    match rng.below(10) {
        0 => {}
        1 => record["answer"] = Value::Null,
        _ => record["answer"] = json!(*rng.pick(&answers)),
    }
    match rng.below(8) {
        0..=2 => {}
        3 => record["citations"] = Value::Null,
        4 => record["citations"] = json!("p1#1"),
        5 => record["citations"] = json!([]),
        6 => record["citations"] = json!([1, 2.5, true, null]),
        _ => {
            record["citations"] = json!((0..1 + rng.below(3))
                .map(|_| *rng.pick(&ids))
                .collect::<Vec<_>>())
        }
    }
    record
}

/// Runs the seed's `main` per case, keeps what it prints, and reads its unrounded
/// rates off `main`'s frame as it returns, to decide the seed's G1–G5 gates.
const RUNNER: &str = r#"
import contextlib, io, json, runpy, sys
scorer = runpy.run_path(sys.argv[1])
for case in sys.argv[2:]:
    seen = {}
    def grab(frame, event, arg):
        if event == "return" and frame.f_code is scorer["main"].__code__:
            seen.update(frame.f_locals)
    out = io.StringIO()
    sys.setprofile(grab)
    with contextlib.redirect_stdout(out):
        scorer["main"](case + "/qaset.json", case + "/trace.jsonl")
    sys.setprofile(None)
    open(case + "/expected.md", "w", encoding="utf8").write(out.getvalue())
    gold = {x["q"]: x for x in json.load(open(case + "/qaset.json", encoding="utf8"))}
    items = compliant = 0
    for p in scorer["load_jsonl"](case + "/trace.jsonl"):
        q = p.get("q") or p.get("question") or ""
        if q not in gold:
            continue
        items += 1
        answer = p.get("answer", "")
        compliant += bool(isinstance(p.get("citations"), list)
                          or scorer["CIT_RE"].search(answer or "")
                          or scorer["is_refusal"](answer))
    compliance = compliant / items if items else 0.0
    passed = (seen["precision"] >= 0.80 and seen["under_refusal"] <= 0.05
              and seen["over_refusal"] <= 0.25 and seen["chr_rate"] >= 0.75
              and compliance >= 0.98)
    json.dump({"precision": seen["precision"], "over_refusal": seen["over_refusal"],
               "under_refusal": seen["under_refusal"], "chr": seen["chr_rate"],
               "claim_containment": seen["contain_rate"], "questions": seen["total"],
               "compliance": compliance, "pass": passed}, open(case + "/expected.json", "w"))
"#;

#[test]
fn rag_quality_report_matches_the_seed_001_scorer_byte_for_byte() {
    let scorer = code_block(&seed("001"), "## 3) Path A", "python");
    let work = tempfile::tempdir().unwrap();
    let scorer_path = write(work.path(), "score_md.py", &scorer);
    let runner_path = write(work.path(), "run_cases.py", RUNNER);
    let spec = repo_root().join("specs/rag-quality-report.yaml");
    let mut rng = Rng::new(1001);
    let mut cases = Vec::new();
    for case in 0..CASES {
        let qaset: Vec<Value> = (0..rng.below(7)).map(|i| qa_record(&mut rng, i)).collect();
        let traces: Vec<Value> = (0..rng.below(14)).map(|_| trace_record(&mut rng)).collect();
        let qaset_text = if rng.chance(50) {
            serde_json::to_string_pretty(&qaset).unwrap()
        } else {
            serde_json::to_string(&qaset).unwrap()
        };
        let mut trace_text = String::new();
        for trace in &traces {
            if rng.chance(5) {
                trace_text.push_str("  \n");
            }
            trace_text.push_str(&trace.to_string());
            trace_text.push('\n');
        }
        let dir = work.path().join(format!("case{case}"));
        write(&dir, "qaset.json", &qaset_text);
        write(&dir, "trace.jsonl", &trace_text);
        cases.push((dir, qaset_text, trace_text));
    }
    let python = Command::new("python3")
        .arg(&runner_path)
        .arg(&scorer_path)
        .args(cases.iter().map(|(dir, ..)| dir.as_os_str()))
        .output()
        .expect("python3 runs");
    assert!(
        python.status.success(),
        "seed scorer failed: {}",
        String::from_utf8_lossy(&python.stderr)
    );
    let (mut passes, mut rows) = (0, 0);
    for (case, (dir, qaset_text, trace_text)) in cases.iter().enumerate() {
        let out = evalspec(
            dir,
            &[
                "run",
                spec.to_str().unwrap(),
                "--dataset",
                "qaset=qaset.json",
                "--dataset",
                "trace=trace.jsonl",
                "--out",
                "out",
                "--quiet",
            ],
        );
        let context = || {
            format!(
                "case {case}\nqaset:\n{qaset_text}\ntrace:\n{trace_text}\nstderr:\n{}",
                out.stderr
            )
        };
        // No trace (the items dataset) is "nothing was scored" (exit 2), where
        // the seed's scorer writes a report of zeros.
        if trace_text.trim().is_empty() {
            assert_eq!(out.code, 2, "{}", context());
            assert!(out.stderr.contains("nothing was scored"), "{}", context());
            continue;
        }
        assert!(out.code == 0 || out.code == 1, "{}", context());
        let expected_md = std::fs::read_to_string(dir.join("expected.md")).unwrap();
        let ours_md = std::fs::read_to_string(dir.join("out/report.md")).unwrap();
        assert_eq!(ours_md, expected_md, "report.md differs\n{}", context());
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap())
                .unwrap();
        let report: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("out/report.json")).unwrap())
                .unwrap();
        for metric in [
            "precision",
            "over_refusal",
            "under_refusal",
            "chr",
            "claim_containment",
            "questions",
            "compliance",
        ] {
            let (a, b) = (
                report["metrics"][metric].as_f64().unwrap(),
                expected[metric].as_f64().unwrap(),
            );
            assert!(
                a.to_bits() == b.to_bits(),
                "{metric}: {a} vs {b}\n{}",
                context()
            );
        }
        assert_eq!(report["pass"], expected["pass"], "{}", context());
        assert_eq!(
            out.code,
            if expected["pass"] == json!(true) {
                0
            } else {
                1
            }
        );
        passes += usize::from(out.code == 0);
        rows += expected_md
            .lines()
            .filter(|l| l.starts_with("| ") && !l.starts_with("| qid"))
            .count();
    }
    // The generator must exercise both outcomes and fill the tables.
    assert!(
        passes > 0 && passes < CASES as usize,
        "{passes} of {CASES} passed"
    );
    assert!(
        rows > CASES as usize,
        "only {rows} table rows in {CASES} cases"
    );
}

#[test]
fn the_seed_001_example_renders_as_the_seed_documents() {
    // The seed's own example QA set, and traces in the shape its section 1 shows.
    let dir = tempfile::tempdir().unwrap();
    let out = evalspec(
        dir.path(),
        &[
            "run",
            repo_root()
                .join("specs/rag-quality-report.yaml")
                .to_str()
                .unwrap(),
            "--out",
            "out",
            "--quiet",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    assert!(report.starts_with("# RAG Quality Report\n\n- Questions scored: **4**\n"));
    assert!(report.contains("\n## Per-question\n\n| qid | answered | hit | refusal | label |\n|-----|----------|-----|---------|-------|\n| q1 | true | true | false | **OK** |\n"), "{report}");
    assert!(
        report.ends_with("| q4 | false | false | true | **REFUSAL_OK** |\n"),
        "{report}"
    );
}
