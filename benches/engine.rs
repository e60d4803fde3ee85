//! The engine against its yardsticks on generated data: wall time and peak RSS of
//! `evalspec run specs/rag-precision.yaml` (default threads and `--threads 1`),
//! of the hand-written floor scorers in `../shared/bench/floor` (`floor typed`, one
//! thread, and `floor typed-par`, two), and (with `--python`) of seed 000's
//! reference scorer. Each runs as its own process so that its peak RSS can be
//! measured; the subjects of one size run interleaved, `--runs` rounds, medians.
//!
//! ```text
//! cargo bench --bench engine -- [--items 10000,300000,1000000] [--runs 3] [--python]
//!                               [--profile realistic|light]
//! cargo bench --bench engine -- --generate 1000000 DIR [--profile light]
//! cargo bench --bench engine -- --aggregates 1000000 [--runs 3]
//! ```
//!
//! `--aggregates N` times instead a spec of 46 aggregates over 10 class
//! predicates against a 7-metric one on the same N classification items
//! (`support/aggregates.rs`).
//!
//! The realistic profile (the default) is `../shared/bench/gen_rag.py`'s mix:
//! traces out of gold order, 5-20 ids, long claims, unused fields. The light
//! profile (traces in order, 8 ids, short claims) is what `tests/parallel.rs` uses.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::measure::{measure, medians, Measured};
use support::{aggregates, generate, realistic};

const SEED: u64 = 20_261_122;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[derive(Clone, Copy)]
enum Profile {
    Realistic,
    Light,
}

impl Profile {
    fn parse(name: &str) -> Profile {
        match name {
            "realistic" => Profile::Realistic,
            "light" => Profile::Light,
            other => panic!("unknown profile {other}: realistic or light"),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Profile::Realistic => "realistic",
            Profile::Light => "light",
        }
    }

    fn generate(self, dir: &Path, items: u64) -> std::io::Result<()> {
        match self {
            Profile::Realistic => realistic::generate(dir, items, SEED),
            Profile::Light => generate::generate(dir, items, SEED),
        }
    }
}

fn data_dir(profile: Profile, items: u64) -> PathBuf {
    let dir = repo()
        .join("target/bench-data")
        .join(format!("{}-{items}", profile.name()));
    if !dir.join("trace.jsonl").exists() {
        eprintln!("generating {items} items into {} …", dir.display());
        profile.generate(&dir, items).expect("generate data");
    }
    dir
}

/// Builds the floor scorer (`../shared/bench/floor`) into target/floor; `None`
/// when the yardstick is not beside this checkout.
fn floor() -> Option<PathBuf> {
    let manifest = repo().join("../shared/bench/floor/Cargo.toml");
    if !manifest.exists() {
        eprintln!("no floor at {}: its columns stay empty", manifest.display());
        return None;
    }
    let target = repo().join("target/floor");
    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target)
        .status()
        .expect("run cargo");
    assert!(status.success(), "building the floor failed");
    Some(target.join("release/floor"))
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

/// The seed-000 metrics as the floor and the reference scorer print them (rounded
/// to 4 places), and as evalspec's report.json has them, in one order.
const METRICS: [(&str, &str); 7] = [
    ("answered", "answered"),
    ("refused", "refused"),
    ("precision", "precision"),
    ("chr", "chr"),
    ("under_refusal", "under_refusal"),
    ("over_refusal", "over_refusal"),
    ("recall@k", "recall_at_k"),
];

/// The yardsticks must compute the same numbers as the engine.
fn check_same(subject: &str, printed: &str, report: &serde_json::Value) {
    let printed: serde_json::Value = serde_json::from_str(printed)
        .unwrap_or_else(|e| panic!("{subject} printed no JSON ({e}): {printed}"));
    for (theirs, ours) in METRICS {
        let (a, b) = (
            printed[theirs].as_f64().expect("a number"),
            report["metrics"][ours].as_f64().expect("a number"),
        );
        assert!(
            (a - b).abs() <= 5e-5 + 1e-12,
            "{subject} and evalspec disagree on {ours}: {a} vs {b}"
        );
    }
}

struct Subject {
    name: &'static str,
    command: Command,
    runs: Vec<Measured>,
}

fn evalspec(spec: &Path, gold: &Path, trace: &Path, out: &Path, threads: Option<&str>) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_evalspec"));
    command
        .arg("run")
        .arg(spec)
        .arg("--dataset")
        .arg(format!("gold={}", gold.display()))
        .arg("--dataset")
        .arg(format!("trace={}", trace.display()))
        .arg("--out")
        .arg(out)
        .arg("--quiet");
    if let Some(n) = threads {
        command.args(["--threads", n]);
    }
    command
}

fn cell(runs: &[Measured]) -> (String, String) {
    if runs.is_empty() {
        return ("–".into(), "–".into());
    }
    let (s, rss) = medians(runs);
    (format!("{s:.2}"), format!("{rss:.0}"))
}

fn ratio(a: &[Measured], b: &[Measured], pick: fn((f64, f64)) -> f64) -> String {
    if a.is_empty() || b.is_empty() {
        return "–".into();
    }
    format!("{:.2}×", pick(medians(a)) / pick(medians(b)))
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let mut sizes = vec![10_000u64, 300_000, 1_000_000];
    let mut runs = 3;
    let mut python = false;
    let mut profile = Profile::Realistic;
    let mut generate_into: Option<(u64, PathBuf)> = None;
    let mut aggregates_of: Option<u64> = None;
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
            "--profile" => profile = Profile::parse(it.next().expect("--profile NAME")),
            "--generate" => {
                let items = it
                    .next()
                    .expect("--generate N DIR")
                    .parse()
                    .expect("number");
                generate_into = Some((items, PathBuf::from(it.next().expect("--generate N DIR"))));
            }
            "--aggregates" => {
                aggregates_of = Some(it.next().expect("--aggregates N").parse().expect("number"))
            }
            other => panic!("unknown argument {other}"),
        }
    }
    if let Some((items, dir)) = generate_into {
        profile.generate(&dir, items).expect("generate");
        return;
    }
    if let Some(items) = aggregates_of {
        many_against_few(items, runs);
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let spec = repo().join("specs/rag-precision.yaml");
    let floor = floor();
    let scorer = if python {
        python_scorer(work.path())
    } else {
        None
    };
    println!(
        "profile: {}, {runs} interleaved runs, medians",
        profile.name()
    );
    println!("| items | MB | evalspec s | RSS MB | evalspec 1 thread s | floor typed s | RSS MB | floor typed-par s | RSS MB | evalspec / typed-par | 1 thread / typed | RSS / typed | python s | RSS MB | python / evalspec |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for items in sizes {
        let dir = data_dir(profile, items);
        let (gold, trace) = (dir.join("gold.jsonl"), dir.join("trace.jsonl"));
        let mb = (std::fs::metadata(&gold).unwrap().len()
            + std::fs::metadata(&trace).unwrap().len()) as f64
            / 1e6;
        let out = work.path().join("out");
        let mut subjects = vec![
            Subject {
                name: "evalspec",
                command: evalspec(&spec, &gold, &trace, &out, None),
                runs: Vec::new(),
            },
            Subject {
                name: "evalspec --threads 1",
                command: evalspec(&spec, &gold, &trace, &out, Some("1")),
                runs: Vec::new(),
            },
        ];
        for mode in ["typed", "typed-par"] {
            if let Some(floor) = &floor {
                let mut command = Command::new(floor);
                command.arg(mode).arg(&gold).arg(&trace);
                subjects.push(Subject {
                    name: if mode == "typed" {
                        "floor typed"
                    } else {
                        "floor typed-par"
                    },
                    command,
                    runs: Vec::new(),
                });
            }
        }
        if let Some(scorer) = &scorer {
            let mut command = Command::new("python3");
            command
                .arg(scorer)
                .arg("--gold")
                .arg(&gold)
                .arg("--trace")
                .arg(&trace);
            // The reference scorer is slow: one run is its figure.
            subjects.push(Subject {
                name: "python",
                command,
                runs: Vec::new(),
            });
        }
        for round in 0..runs {
            for subject in &mut subjects {
                if subject.name == "python" && round > 0 {
                    continue;
                }
                subject.runs.push(measure(&mut subject.command));
            }
        }
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap())
                .unwrap();
        for subject in subjects.iter().filter(|s| !s.name.starts_with("evalspec")) {
            check_same(subject.name, &subject.runs[0].stdout, &report);
        }
        let runs_of = |name: &str| -> &[Measured] {
            subjects
                .iter()
                .find(|s| s.name == name)
                .map_or(&[], |s| &s.runs)
        };
        let (engine, one, typed, par, py) = (
            runs_of("evalspec"),
            runs_of("evalspec --threads 1"),
            runs_of("floor typed"),
            runs_of("floor typed-par"),
            runs_of("python"),
        );
        let seconds = |m: (f64, f64)| m.0;
        let rss = |m: (f64, f64)| m.1;
        let (engine_s, engine_rss) = cell(engine);
        let (typed_s, typed_rss) = cell(typed);
        let (par_s, par_rss) = cell(par);
        let (py_s, py_rss) = cell(py);
        println!(
            "| {items} | {mb:.0} | {engine_s} | {engine_rss} | {} | {typed_s} | {typed_rss} | {par_s} | {par_rss} | {} | {} | {} | {py_s} | {py_rss} | {} |",
            cell(one).0,
            ratio(engine, par, seconds),
            ratio(one, typed, seconds),
            ratio(engine, typed, rss),
            ratio(py, engine, seconds),
        );
    }
}

/// The 46-aggregate spec against the 7-metric one, interleaved, medians.
fn many_against_few(items: u64, runs: usize) {
    let dir = repo()
        .join("target/bench-data")
        .join(format!("aggregates-{items}"));
    let data = dir.join("items.jsonl");
    if !data.exists() {
        std::fs::create_dir_all(&dir).unwrap();
        eprintln!("generating {items} items into {} …", data.display());
        aggregates::generate(&data, items).expect("generate data");
    }
    let mb = std::fs::metadata(&data).unwrap().len() as f64 / 1e6;
    let specs = [
        ("few", aggregates::few(), 7),
        ("many", aggregates::many(), 56),
    ];
    let mut subjects: Vec<Subject> = Vec::new();
    for (name, text, _) in &specs {
        let spec = dir.join(format!("{name}.yaml"));
        std::fs::write(&spec, text).unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_evalspec"));
        command
            .arg("run")
            .arg(&spec)
            .arg("--out")
            .arg(dir.join(format!("out-{name}")))
            .arg("--quiet");
        subjects.push(Subject {
            name,
            command,
            runs: Vec::new(),
        });
    }
    for _ in 0..runs {
        for subject in &mut subjects {
            subject.runs.push(measure(&mut subject.command));
        }
    }
    for (name, _, metrics) in &specs {
        let report = std::fs::read_to_string(dir.join(format!("out-{name}/report.json")))
            .unwrap_or_else(|e| panic!("{name} wrote no report: {e}"));
        let report: serde_json::Value = serde_json::from_str(&report).unwrap();
        let computed = report["metrics"].as_object().map_or(0, |m| m.len());
        assert_eq!(computed, *metrics, "{name}: metrics in report.json");
    }
    let (few, many) = (&subjects[0].runs, &subjects[1].runs);
    let (few_s, few_rss) = cell(few);
    let (many_s, many_rss) = cell(many);
    println!("{runs} interleaved runs, medians");
    println!("| items | MB | 7 metrics s | RSS MB | 46 aggregates s | RSS MB | 46 / 7 |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    println!(
        "| {items} | {mb:.0} | {few_s} | {few_rss} | {many_s} | {many_rss} | {} |",
        ratio(many, few, |m| m.0)
    );
}
