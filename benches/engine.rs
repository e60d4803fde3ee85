//! The engine against its yardsticks on generated data: wall time, peak RSS and
//! throughput of `evalspec run specs/rag-precision.yaml`, of the hand-written Rust
//! scorer in `support/baseline.rs`, and (with `--python`) of seed 000's reference
//! scorer. Each runs as its own process so that its peak RSS can be measured.
//!
//! ```text
//! cargo bench --bench engine -- [--items 10000,100000,1000000] [--runs 3] [--python]
//! cargo bench --bench engine -- --generate 1000000 DIR
//! ```

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::measure::{measure, medians, run_engine, Measured};
use support::{baseline, generate};

const SEED: u64 = 20_261_122;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn data_dir(items: u64) -> PathBuf {
    let dir = repo()
        .join("target/bench-data")
        .join(format!("seed000-{items}"));
    if !dir.join("trace.jsonl").exists() {
        eprintln!("generating {items} items into {} …", dir.display());
        generate::generate(&dir, items, SEED).expect("generate data");
    }
    dir
}

fn python_scorer(work: &Path) -> Option<PathBuf> {
    let seeds = repo().join("../shared/seeds");
    let seed = std::fs::read_dir(&seeds)
        .ok()?
        .filter_map(Result::ok)
        .find(|e| e.file_name().to_string_lossy().starts_with("000"))?;
    let text = std::fs::read_to_string(seed.path()).ok()?;
    let start = text.find("```python\n")? + "```python\n".len();
    let end = text[start..].find("\n```")? + start;
    let path = work.join("score_eval.py");
    std::fs::write(&path, &text[start..end]).ok()?;
    Some(path)
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if let [flag, gold, trace] = args.as_slice() {
        if flag == "--baseline-child" {
            let m = baseline::score(gold, trace, 5);
            println!(
                "{} {} {} {} {} {} {}",
                m.answered,
                m.refused,
                m.precision,
                m.chr,
                m.under_refusal,
                m.over_refusal,
                m.recall_at_k
            );
            return;
        }
    }
    if let [flag, items, dir] = args.as_slice() {
        if flag == "--generate" {
            generate::generate(Path::new(dir), items.parse().expect("item count"), SEED)
                .expect("generate");
            return;
        }
    }
    let mut sizes = vec![10_000u64, 100_000, 1_000_000];
    let mut runs = 3;
    let mut python = false;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--items" => {
                sizes = it
                    .next()
                    .expect("--items N,N")
                    .split(',')
                    .map(|n| n.parse().expect("number"))
                    .collect()
            }
            "--runs" => runs = it.next().expect("--runs N").parse().expect("number"),
            "--python" => python = true,
            other => panic!("unknown argument {other}"),
        }
    }
    let work = tempfile::tempdir().unwrap();
    let spec = repo().join("specs/rag-precision.yaml");
    let scorer = if python {
        python_scorer(work.path())
    } else {
        None
    };
    println!("| items | MB | engine s | engine RSS MB | engine MB/s | items/s | baseline s | baseline RSS MB | engine/baseline | python s | python RSS MB | python/engine |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for items in sizes {
        let dir = data_dir(items);
        let (gold, trace) = (dir.join("gold.jsonl"), dir.join("trace.jsonl"));
        let mb = (std::fs::metadata(&gold).unwrap().len()
            + std::fs::metadata(&trace).unwrap().len()) as f64
            / 1e6;
        let out = work.path().join("out");
        let engine = run_engine(runs, &spec, &[("gold", &gold), ("trace", &trace)], &out);
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap())
                .unwrap();
        let base: Vec<Measured> = (0..runs)
            .map(|_| {
                measure(
                    Command::new(std::env::current_exe().unwrap())
                        .arg("--baseline-child")
                        .arg(&gold)
                        .arg(&trace),
                )
            })
            .collect();
        // The yardstick must compute the same numbers.
        let fields: Vec<&str> = base[0].stdout.split_whitespace().collect();
        let m = &report["metrics"];
        let ours = [
            &m["answered"],
            &m["refused"],
            &m["precision"],
            &m["chr"],
            &m["under_refusal"],
            &m["over_refusal"],
            &m["recall_at_k"],
        ]
        .map(|v| v.as_f64().unwrap());
        for (a, b) in ours.iter().zip(&fields) {
            assert_eq!(
                *a,
                b.parse::<f64>().unwrap(),
                "engine and baseline disagree: {ours:?} vs {fields:?}"
            );
        }
        let (engine_s, engine_rss) = medians(&engine);
        let (base_s, base_rss) = medians(&base);
        let (py_s, py_rss) = match &scorer {
            Some(scorer) => {
                let p = measure(
                    Command::new("python3")
                        .arg(scorer)
                        .arg("--gold")
                        .arg(&gold)
                        .arg("--trace")
                        .arg(&trace),
                );
                (format!("{:.2}", p.seconds), format!("{:.0}", p.max_rss_mb))
            }
            None => ("–".into(), "–".into()),
        };
        let py_ratio = py_s
            .parse::<f64>()
            .map(|p| format!("{:.1}×", p / engine_s))
            .unwrap_or_else(|_| "–".into());
        println!(
            "| {items} | {mb:.0} | {engine_s:.3} | {engine_rss:.0} | {:.0} | {:.0} | {base_s:.3} | {base_rss:.0} | {:.2}× | {py_s} | {py_rss} | {py_ratio} |",
            mb / engine_s,
            items as f64 / engine_s,
            engine_s / base_s
        );
    }
}
