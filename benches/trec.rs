//! specs/trec.yaml against a straight-line Rust yardstick and pytrec_eval (with
//! `--python`; `pip install pytrec-eval-terrier`) on generated TREC files: wall time,
//! peak RSS, throughput. Loading and computing are both timed; the subjects take
//! turns, round by round, so that a change in the machine's speed falls on all.
//!
//! ```text
//! cargo bench --bench trec -- [--queries 100000] [--depth 100] [--runs 3] [--python]
//!                             [--profile sparse|dense]
//! ```
//!
//! `sparse` (the default) is the shape of `../shared/bench/gen_ir.py`: 1-3 relevant
//! documents per query; `dense` judges half of each query's candidates.

mod support;

use std::path::PathBuf;
use std::process::Command;

use support::measure::{measure, medians, run_engine};
use support::{generate_trec, trec_baseline};

const PYTREC: &str = r#"
import json, sys, pytrec_eval
with open(sys.argv[1]) as f: qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f: run = pytrec_eval.parse_run(f)
measures = {"map", "recip_rank", "P_5", "P_10", "P_20", "recall_5", "recall_10", "recall_20", "ndcg_cut_5", "ndcg_cut_10", "ndcg_cut_20"}
per_query = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
print(json.dumps({m: sum(q[m] for q in per_query.values()) / len(per_query) for m in sorted(measures)}))
"#;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if let [flag, qrels, run] = args.as_slice() {
        if flag == "--baseline-child" {
            let values = trec_baseline::evaluate(qrels, run);
            println!("{}", values.map(|v| v.to_string()).join(" "));
            return;
        }
    }
    let (mut queries, mut depth, mut runs, mut python) = (100_000usize, 100usize, 3usize, false);
    let mut profile = "sparse".to_string();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        if arg == "--profile" {
            profile = it.next().expect("a profile").clone();
            continue;
        }
        let mut number = || it.next().expect("a value").parse().expect("a number");
        match arg.as_str() {
            "--queries" => queries = number(),
            "--depth" => depth = number(),
            "--runs" => runs = number(),
            "--python" => python = true,
            other => panic!("unknown argument {other}"),
        }
    }
    let generate = match profile.as_str() {
        "sparse" => generate_trec::sparse,
        "dense" => generate_trec::dense,
        other => panic!("unknown profile {other}: sparse or dense"),
    };
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = repo
        .join("target/bench-data")
        .join(format!("trec-{profile}-{queries}x{depth}"));
    if !dir.join("run.txt").exists() {
        eprintln!(
            "generating {queries} queries × {depth} documents ({profile}) into {} …",
            dir.display()
        );
        generate(&dir, queries, depth, 7).expect("generate");
    }
    let (qrels, run) = (dir.join("qrels.txt"), dir.join("run.txt"));
    let mb = (std::fs::metadata(&qrels).unwrap().len() + std::fs::metadata(&run).unwrap().len())
        as f64
        / 1e6;
    if python {
        // Said before any timing: a missing module otherwise surfaces as an
        // empty output that fails to parse, after the runs.
        let found = Command::new("python3")
            .args(["-c", "import pytrec_eval"])
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            found,
            "--python needs pytrec_eval: pip install pytrec-eval-terrier (or leave out --python)"
        );
    }
    let work = tempfile::tempdir().unwrap();
    let spec = repo.join("specs/trec.yaml");
    let script = work.path().join("pytrec.py");
    std::fs::write(&script, PYTREC).unwrap();
    let (mut engine, mut base, mut py) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        engine.extend(run_engine(
            1,
            &spec,
            &[("qrels", &qrels), ("run", &run)],
            work.path(),
        ));
        base.push(measure(
            Command::new(std::env::current_exe().unwrap())
                .arg("--baseline-child")
                .arg(&qrels)
                .arg(&run),
        ));
        if python {
            py.push(measure(
                Command::new("python3").arg(&script).arg(&qrels).arg(&run),
            ));
        }
    }
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(work.path().join("report.json")).unwrap())
            .unwrap();
    for (name, value) in trec_baseline::MEASURES
        .iter()
        .zip(base[0].stdout.split_whitespace())
    {
        let (ours, theirs) = (
            report["metrics"][*name].as_f64().unwrap(),
            value.parse::<f64>().unwrap(),
        );
        assert!(
            (ours - theirs).abs() <= 1e-9,
            "{name}: engine {ours}, yardstick {theirs}"
        );
    }
    let (engine_s, engine_rss) = medians(&engine);
    let (base_s, base_rss) = medians(&base);
    let (py_s, py_rss) = match py.first() {
        Some(first) => {
            let theirs: serde_json::Value =
                serde_json::from_str(first.stdout.trim()).expect("pytrec_eval prints its averages");
            for (name, value) in theirs.as_object().unwrap() {
                let ours = report["metrics"][name].as_f64().unwrap();
                assert!(
                    (ours - value.as_f64().unwrap()).abs() <= 1e-9,
                    "{name}: engine {ours}, pytrec_eval {value}"
                );
            }
            let (s, rss) = medians(&py);
            (format!("{s:.2}"), format!("{rss:.0}"))
        }
        None => ("–".into(), "–".into()),
    };
    let ratio = py_s
        .parse::<f64>()
        .map(|p| format!("{:.1}×", p / engine_s))
        .unwrap_or_else(|_| "–".into());
    println!("| profile | queries × depth | MB | engine s | engine RSS MB | engine MB/s | yardstick s | yardstick RSS MB | engine/yardstick | pytrec_eval s | pytrec_eval RSS MB | pytrec_eval/engine |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    println!(
        "| {profile} | {queries} × {depth} | {mb:.0} | {engine_s:.2} | {engine_rss:.0} | {:.0} | {base_s:.2} | {base_rss:.0} | {:.2}× | {py_s} | {py_rss} | {ratio} |",
        mb / engine_s,
        engine_s / base_s
    );
}
