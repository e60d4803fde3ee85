//! Reading in parallel chunks changes nothing: reports, warnings and errors are
//! byte-identical for any `--threads`, including errors that fall in a later chunk,
//! for JSONL and for TREC files (split between queries).

use std::path::Path;

use crate::support::{self, generate, repo_root, Output};

const ITEMS: u64 = 4_000;
/// Small chunks, so that both datasets are split several ways.
const CHUNK_BYTES: &str = "65536";

/// Runs a shipped spec with `datasets` (`NAME=PATH`) and `threads`, writing into
/// `out{threads}`; returns the output, report.json and item-values.jsonl.
fn run(
    dir: &Path,
    spec: &str,
    datasets: &[&str],
    threads: usize,
) -> (Output, Option<String>, Option<String>) {
    let spec = repo_root().join("specs").join(spec);
    let out = format!("out{threads}");
    let _ = std::fs::remove_dir_all(dir.join(&out));
    let threads = threads.to_string();
    let mut args = vec![
        "run",
        spec.to_str().unwrap(),
        "--out",
        &out,
        "--threads",
        &threads,
    ];
    for dataset in datasets {
        args.extend(["--dataset", dataset]);
    }
    let result =
        support::evalspec_with_env(dir, &[("EVALSPEC_MIN_CHUNK_BYTES", CHUNK_BYTES)], &args);
    let report = std::fs::read_to_string(dir.join(&out).join("report.json")).ok();
    let item_values = std::fs::read_to_string(dir.join(&out).join("item-values.jsonl")).ok();
    (result, report, item_values)
}

/// Runs with 1, 2 and 3 threads and checks that exit code, stdout, stderr,
/// report.json and item-values.jsonl (rendered in parts on as many threads)
/// agree; returns the single-threaded result.
fn assert_same_for_any_thread_count(
    dir: &Path,
    spec: &str,
    datasets: &[&str],
) -> (Output, Option<String>) {
    let (first, first_report, first_values) = run(dir, spec, datasets, 1);
    for threads in [2, 3] {
        let (other, report, values) = run(dir, spec, datasets, threads);
        assert_eq!(first.code, other.code, "exit code with {threads} threads");
        assert_eq!(
            first.stdout.replace("out1", "outN"),
            other.stdout.replace(&format!("out{threads}"), "outN"),
            "stdout with {threads} threads"
        );
        assert_eq!(first.stderr, other.stderr, "stderr with {threads} threads");
        assert_eq!(first_report, report, "report.json with {threads} threads");
        assert!(
            first_values == values,
            "item-values.jsonl with {threads} threads"
        );
    }
    (first, first_report)
}

fn rag(dir: &Path, gold: &str) -> Output {
    let gold = format!("gold={gold}");
    assert_same_for_any_thread_count(dir, "rag-precision.yaml", &[&gold, "trace=trace.jsonl"]).0
}

fn trec(dir: &Path, run_file: &str) -> (Output, Option<String>) {
    let run_file = format!("run={run_file}");
    assert_same_for_any_thread_count(dir, "trec.yaml", &["qrels=qrels.txt", &run_file])
}

#[test]
fn results_do_not_depend_on_the_number_of_threads() {
    let dir = tempfile::tempdir().unwrap();
    generate::generate(dir.path(), ITEMS, 7).unwrap();
    let gold_size = std::fs::metadata(dir.path().join("gold.jsonl"))
        .unwrap()
        .len();
    assert!(
        gold_size > 3 * 65536,
        "the gold file must span several chunks ({gold_size} bytes)"
    );

    let clean = rag(dir.path(), "gold.jsonl");
    assert!(clean.code == 0 || clean.code == 1, "{}", clean.stderr);
    // Each file's hash, read on a thread of its own for one chunk or several,
    // is its bytes' SHA-256.
    let report = run(
        dir.path(),
        "rag-precision.yaml",
        &["gold=gold.jsonl", "trace=trace.jsonl"],
        1,
    )
    .1;
    let report: serde_json::Value = serde_json::from_str(&report.unwrap()).unwrap();
    for name in ["gold", "trace"] {
        use sha2::Digest;
        let bytes = std::fs::read(dir.path().join(format!("{name}.jsonl"))).unwrap();
        let expected = format!("{:x}", sha2::Sha256::digest(&bytes));
        assert_eq!(
            report["datasets"][name]["sha256"],
            expected.as_str(),
            "{name}"
        );
    }
    assert!(
        clean.stderr.contains("record(s) repeat an earlier key"),
        "{}",
        clean.stderr
    );

    // Errors late in the file: a bad line in the trace's second half and a repeated
    // gold key far from its first occurrence.
    let gold = std::fs::read_to_string(dir.path().join("gold.jsonl")).unwrap();
    let lines: Vec<&str> = gold.lines().collect();
    let mut repeated = lines.clone();
    repeated.insert(lines.len() - 10, lines[3]);
    std::fs::write(
        dir.path().join("gold-repeated.jsonl"),
        repeated.join("\n") + "\n",
    )
    .unwrap();
    let repeated = rag(dir.path(), "gold-repeated.jsonl");
    assert_eq!(repeated.code, 2);
    assert!(
        repeated
            .stderr
            .contains("duplicate key `Q0000003` (first on line 4)"),
        "{}",
        repeated.stderr
    );

    let trace = std::fs::read_to_string(dir.path().join("trace.jsonl")).unwrap();
    let mut trace_lines: Vec<&str> = trace.lines().collect();
    let bad = trace_lines.len() * 3 / 4;
    trace_lines[bad] = "{\"qid\": oops}";
    std::fs::write(
        dir.path().join("trace.jsonl"),
        trace_lines.join("\n") + "\n",
    )
    .unwrap();
    let broken = rag(dir.path(), "gold.jsonl");
    assert_eq!(broken.code, 2);
    assert!(
        broken.stderr.contains(&format!("trace.jsonl:{}:", bad + 1)),
        "{}",
        broken.stderr
    );
}

/// Rewrites `run.txt` into `name` with `edit` applied to its lines.
fn edited_run(dir: &Path, name: &str, edit: impl FnOnce(&mut Vec<String>)) {
    let run = std::fs::read_to_string(dir.join("run.txt")).unwrap();
    let mut lines: Vec<String> = run.lines().map(str::to_string).collect();
    edit(&mut lines);
    std::fs::write(dir.join(name), lines.join("\n") + "\n").unwrap();
}

#[test]
fn trec_results_do_not_depend_on_the_number_of_threads() {
    let dir = tempfile::tempdir().unwrap();
    support::generate_trec::dense(dir.path(), 2_000, 20, 11).unwrap();
    let run_size = std::fs::metadata(dir.path().join("run.txt")).unwrap().len();
    assert!(
        run_size > 3 * 65536,
        "the run must span several chunks ({run_size} bytes)"
    );
    let (clean, clean_report) = trec(dir.path(), "run.txt");
    assert_eq!(clean.code, 0, "{}", clean.stderr);
    let metrics = |report: &Option<String>| {
        let report: serde_json::Value = serde_json::from_str(report.as_ref().unwrap()).unwrap();
        report["metrics"].clone()
    };

    // One query's line moved to the end: the file is no longer grouped by query, so
    // the chunked read gives way to one grouped read, with the same numbers.
    edited_run(dir.path(), "split.txt", |lines| {
        let line = lines.remove(lines.len() / 3);
        lines.push(line);
    });
    let (split, split_report) = trec(dir.path(), "split.txt");
    assert_eq!(split.code, 0, "{}", split.stderr);
    assert_eq!(metrics(&clean_report), metrics(&split_report));

    // Errors late in the file name their true line, whatever the chunk.
    let bad = 2_000 * 20 * 3 / 4;
    edited_run(dir.path(), "bad.txt", |lines| {
        lines[bad] = lines[bad].replace(" bench", " x bench");
    });
    let (broken, _) = trec(dir.path(), "bad.txt");
    assert_eq!(broken.code, 2);
    assert!(
        broken.stderr.contains(&format!("bad.txt:{}:1", bad + 1))
            && broken.stderr.contains("expected 6 columns, found 7"),
        "{}",
        broken.stderr
    );

    // A document listed twice for one query, in the last chunk.
    let twice = 2_000 * 20 - 5;
    edited_run(dir.path(), "twice.txt", |lines| {
        let doc = lines[twice - 1].split(' ').nth(2).unwrap().to_string();
        let fields: Vec<&str> = lines[twice].split(' ').collect();
        lines[twice] = format!("{} Q0 {doc} {} {} bench", fields[0], fields[3], fields[4]);
    });
    let (twice_out, _) = trec(dir.path(), "twice.txt");
    assert_eq!(twice_out.code, 2);
    assert!(
        twice_out
            .stderr
            .contains(&format!("(first on line {twice})")),
        "{}",
        twice_out.stderr
    );
}

/// A repeated key of the items dataset (`duplicates: error`) is found, with the
/// same error, however the file is split: in order (each chunk's keys only
/// appended while they increase) or not, in one chunk or across two, adjacent
/// to its first line or far from it.
#[test]
fn a_repeated_item_key_is_found_in_any_order_and_any_chunk() {
    let dir = tempfile::tempdir().unwrap();
    support::write(
        dir.path(),
        "spec.yaml",
        "name: keys\nversion: 1.0.0\ndatasets:\n  items: { format: jsonl, path: items.jsonl, key: id }\nmetrics:\n  n: count()\n  right: ratio(items.ok)\n",
    );
    const N: usize = 3_000;
    let line = |id: &str| format!("{{\"id\": {id}, \"ok\": true}}");
    let numbers: Vec<String> = (0..N).map(|i| line(&i.to_string())).collect();
    let texts: Vec<String> = (0..N).map(|i| line(&format!("\"k{i:05}\""))).collect();
    let reversed: Vec<String> = numbers.iter().rev().cloned().collect();
    /// Where a repeat goes and which line it repeats.
    type Repeat = Option<(usize, usize)>;
    let mut cases: Vec<(&[String], Repeat)> =
        vec![(&numbers, None), (&texts, None), (&reversed, None)];
    for at in [N / 3, N / 2, 2 * N / 3, N - 10] {
        for lines in [&numbers, &texts, &reversed] {
            cases.push((lines, Some((at, at - 1))));
            cases.push((lines, Some((at, 5))));
        }
    }
    for (lines, repeat) in cases {
        let mut lines = lines.to_vec();
        if let Some((at, of)) = repeat {
            lines.insert(at, lines[of].clone());
        }
        support::write(dir.path(), "items.jsonl", &(lines.join("\n") + "\n"));
        let outputs: Vec<Output> = [1, 2, 3]
            .iter()
            .map(|threads| {
                support::evalspec_with_env(
                    dir.path(),
                    &[("EVALSPEC_MIN_CHUNK_BYTES", "4096")],
                    &[
                        "run",
                        "spec.yaml",
                        "--out",
                        "out",
                        "--threads",
                        &threads.to_string(),
                    ],
                )
            })
            .collect();
        let first = &outputs[0];
        match repeat {
            None => assert_eq!(first.code, 0, "{}", first.stderr),
            Some((at, of)) => {
                assert_eq!(first.code, 2, "{}", first.stderr);
                let record: serde_json::Value = serde_json::from_str(&lines[of]).unwrap();
                let key = match &record["id"] {
                    serde_json::Value::String(text) => text.clone(),
                    number => number.to_string(),
                };
                let expected = format!("duplicate key `{key}` (first on line {})", of + 1);
                assert!(
                    first.stderr.contains(&expected),
                    "{expected}: {}",
                    first.stderr
                );
                assert!(
                    first.stderr.contains(&format!("items.jsonl:{}", at + 1)),
                    "line {}: {}",
                    at + 1,
                    first.stderr
                );
            }
        }
        for (threads, other) in outputs.iter().enumerate().skip(1) {
            assert_eq!(
                (first.code, &first.stderr),
                (other.code, &other.stderr),
                "{} threads, repeat {repeat:?}",
                threads + 1
            );
        }
    }
}
