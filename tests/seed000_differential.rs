//! `specs/rag-precision.yaml` against seed 000's own reference scorer, on generated
//! inputs full of the contract's edge cases. The scorer is read from the seed
//! document at test time and run with its output rounding disabled, so that the
//! unrounded rates can be compared bit for bit.

use std::process::Command;

use serde_json::{json, Value};

use crate::support::{code_block, evalspec, repo_root, seed, write, Rng};

const CASES: u64 = 400;

fn gold_record(rng: &mut Rng, qid: &str) -> Value {
    let phrases = [
        "rejects null keys",
        "only domain example.com",
        "abc",
        "Fermé",
        "café au lait",
        "",
        "NULL KEYS",
    ];
    let ids = ["p1#1", "p1#2", "p2#1", "pB#1", "p9#9"];
    let mut record =
        json!({"qid": qid, "question": format!("question {qid}"), "answerable": rng.chance(65)});
    match rng.below(5) {
        0 => {}
        1 => record["gold_claim_substr"] = Value::Null,
        2 => record["gold_claim_substr"] = json!([]),
        _ => {
            record["gold_claim_substr"] = json!((0..1 + rng.below(3))
                .map(|_| *rng.pick(&phrases))
                .collect::<Vec<_>>())
        }
    }
    match rng.below(5) {
        0 => {}
        1 => record["gold_citations"] = Value::Null,
        2 => record["gold_citations"] = json!([]),
        _ => {
            record["gold_citations"] = json!((0..1 + rng.below(2))
                .map(|_| *rng.pick(&ids))
                .collect::<Vec<_>>())
        }
    }
    if rng.chance(40) {
        record["constraints"] = json!((0..rng.below(3))
            .map(|i| format!("c{i}"))
            .collect::<Vec<_>>());
    }
    record
}

fn trace_record(rng: &mut Rng, qids: &[String]) -> Value {
    let ids = ["p1#1", "p1#2", "p2#1", "pB#1", "p9#9", "p3#3"];
    let claims = [
        "X rejects null keys.",
        "not in context",
        "  NOT in Context \t",
        "Only domain example.com is allowed.",
        "La porte est FERMÉ aujourd'hui",
        "",
        "something else entirely",
        "abc",
    ];
    let qid = if rng.chance(85) && !qids.is_empty() {
        rng.pick(qids).clone()
    } else {
        "UNKNOWN".to_string()
    };
    let mut record = json!({"q": "question"});
    match rng.below(6) {
        0 => record["q_id"] = json!(qid),
        1 => {
            record["qid"] = json!("");
            record["q_id"] = json!(qid);
        }
        2 => record["qid"] = Value::Null,
        _ => record["qid"] = json!(qid),
    }
    match rng.below(5) {
        0 => {}
        1 => record["retrieved_ids"] = Value::Null,
        2 => record["retrieved_ids"] = json!([]),
        _ => {
            record["retrieved_ids"] = json!((0..1 + rng.below(7))
                .map(|_| *rng.pick(&ids))
                .collect::<Vec<_>>())
        }
    }
    let mut answer = json!({});
    match rng.below(8) {
        0 => {}
        1 => answer["claim"] = Value::Null,
        _ => answer["claim"] = json!(*rng.pick(&claims)),
    }
    match rng.below(9) {
        0 => {}
        1 => answer["citations"] = Value::Null,
        2 => answer["citations"] = json!([]),
        3 => answer["citations"] = json!(*rng.pick(&ids)),
        4 => answer["citations"] = json!(rng.below(3)),
        5 => answer["citations"] = json!({"id": "p1#2"}),
        _ => {
            answer["citations"] = json!((0..1 + rng.below(3))
                .map(|_| *rng.pick(&ids))
                .collect::<Vec<_>>())
        }
    }
    if rng.chance(40) {
        answer["constraints_echo"] = json!((0..rng.below(3))
            .rev()
            .map(|i| format!("c{i}"))
            .collect::<Vec<_>>());
    }
    match rng.below(10) {
        0 => {}
        1 => record["answer_json"] = Value::Null,
        2 => record["answer_json"] = json!({}),
        _ => record["answer_json"] = answer,
    }
    record
}

fn jsonl(rng: &mut Rng, records: &[Value]) -> String {
    let mut out = String::new();
    for record in records {
        if rng.chance(5) {
            out.push_str("   \n");
        }
        if rng.chance(5) {
            out.push_str("  ");
        }
        out.push_str(&record.to_string());
        out.push('\n');
    }
    out
}

#[test]
fn rag_precision_matches_the_seed_000_reference_scorer() {
    // Seed 000 keeps the indentation that the 003 mirror lost; the code itself is ASCII,
    // so its double-decoded UTF-8 does not touch it.
    let scorer = code_block(&seed("000"), "## 4) Reference scorer", "python");
    assert!(scorer.is_ascii(), "the scorer block should be plain ASCII");
    let work = tempfile::tempdir().unwrap();
    let scorer_path = write(work.path(), "score_eval.py", &scorer);
    // Run the seed's scorer unchanged, once per case but in one Python process, with
    // `round` as the identity so that its JSON carries the exact rates.
    let runner = "import builtins, contextlib, io, runpy, sys\nbuiltins.round = lambda x, n=None: x\nscorer = sys.argv[1]\nfor case in sys.argv[2:]:\n    k = open(case + '/k').read()\n    sys.argv = [scorer, '--gold', case + '/gold.jsonl', '--trace', case + '/trace.jsonl', '--k', k]\n    out = io.StringIO()\n    with contextlib.redirect_stdout(out):\n        runpy.run_path(scorer, run_name='__main__')\n    open(case + '/expected.json', 'w').write(out.getvalue())\n";
    let runner_path = write(work.path(), "run_unrounded.py", runner);
    let spec = repo_root().join("specs/rag-precision.yaml");
    let mut rng = Rng::new(2026);
    let mut cases = Vec::new();
    for case in 0..CASES {
        let gold_count = rng.below(9);
        let mut qids: Vec<String> = (0..gold_count)
            .map(|i| format!("A{:04}", i * 7 + rng.below(7)))
            .collect();
        qids.dedup();
        let gold: Vec<Value> = qids.iter().map(|q| gold_record(&mut rng, q)).collect();
        let traces: Vec<Value> = (0..rng.below(12))
            .map(|_| trace_record(&mut rng, &qids))
            .collect();
        let k = *rng.pick(&[5, 1, 2, 0, 10, -1]);
        let dir = work.path().join(format!("case{case}"));
        let gold_text = jsonl(&mut rng, &gold);
        let trace_text = jsonl(&mut rng, &traces);
        write(&dir, "gold.jsonl", &gold_text);
        write(&dir, "trace.jsonl", &trace_text);
        write(&dir, "k", &k.to_string());
        cases.push((dir, k, gold_text, trace_text));
    }
    let python = Command::new("python3")
        .arg(&runner_path)
        .arg(&scorer_path)
        .args(cases.iter().map(|(dir, ..)| dir.as_os_str()))
        .output()
        .expect("python3 runs");
    assert!(
        python.status.success(),
        "reference scorer failed: {}",
        String::from_utf8_lossy(&python.stderr)
    );
    let mut passes = 0;
    for (case, (dir, k, gold_text, trace_text)) in cases.iter().enumerate() {
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap())
                .unwrap();

        let out = evalspec(
            dir,
            &[
                "run",
                spec.to_str().unwrap(),
                "--dataset",
                "gold=gold.jsonl",
                "--dataset",
                "trace=trace.jsonl",
                "--param",
                &format!("k={k}"),
                "--out",
                "out",
                "--quiet",
            ],
        );
        let context = || {
            format!(
                "case {case} (k={k})\ngold:\n{gold_text}\ntrace:\n{trace_text}\nstderr:\n{}",
                out.stderr
            )
        };
        // An empty gold set is "nothing was scored" (exit 2), where the
        // reference scorer reports zeros.
        if gold_text.trim().is_empty() {
            assert_eq!(out.code, 2, "{}", context());
            assert!(out.stderr.contains("nothing was scored"), "{}", context());
            continue;
        }
        assert!(out.code == 0 || out.code == 1, "{}", context());
        let report: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("out/report.json")).unwrap())
                .unwrap();
        let metrics = &report["metrics"];
        for (ours, theirs) in [
            ("answered", "answered"),
            ("refused", "refused"),
            ("answerable", "answerable"),
            ("unanswerable", "unanswerable"),
            ("precision", "precision"),
            ("chr", "chr"),
            ("under_refusal", "under_refusal"),
            ("over_refusal", "over_refusal"),
            ("recall_at_k", "recall@k"),
        ] {
            let (a, b) = (
                metrics[ours].as_f64().unwrap(),
                expected[theirs].as_f64().unwrap(),
            );
            assert!(
                a.to_bits() == b.to_bits(),
                "{ours}: evalspec {a} vs reference {b}\n{}",
                context()
            );
            // Counts print as integers, rates as floats, as the reference prints them.
            assert_eq!(
                metrics[ours].is_u64(),
                expected[theirs].is_u64(),
                "{ours} number kind\n{}",
                context()
            );
        }
        assert_eq!(report["pass"], expected["pass"], "{}", context());
        assert_eq!(
            out.code,
            if expected["pass"] == Value::Bool(true) {
                0
            } else {
                1
            },
            "{}",
            context()
        );
        passes += usize::from(out.code == 0);
    }
    // The generator must exercise both outcomes.
    assert!(
        passes > 0 && passes < CASES as usize,
        "{passes} of {CASES} cases passed"
    );
}
