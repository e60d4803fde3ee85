//! CSV, TSV and Parquet datasets, standard input and FIFOs: every shipped preset scores
//! the same from its sample data converted by tests/fixtures/formats/generate.py as from
//! JSONL, for any thread count; malformed files give located errors
//! (tests/fixtures/bad_formats, snapshots); RFC 4180 details, the format options and
//! the format inferred from a file's extension.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::{evalspec, evalspec_with_env, repo_root, write, Output};

const FORMATS: &str = "tests/fixtures/formats";

/// report.json's metrics and gates, as written.
fn metrics_and_gates(report: &str) -> String {
    let report: serde_json::Value = serde_json::from_str(report).unwrap();
    serde_json::to_string_pretty(&serde_json::json!({
        "metrics": report["metrics"],
        "gates": report["gates"],
    }))
    .unwrap()
}

/// Runs `spec` from the repository root with `datasets` (`NAME=PATH`) and extra
/// arguments; returns the output and report.json.
fn run_in(
    dir: &Path,
    spec: &str,
    datasets: &[String],
    extra: &[&str],
    env: &[(&str, &str)],
) -> (Output, Option<String>) {
    let out = tempfile::tempdir().unwrap();
    let mut args = vec![
        "run",
        spec,
        "--out",
        out.path().to_str().unwrap(),
        "--quiet",
    ];
    for dataset in datasets {
        args.extend(["--dataset", dataset.as_str()]);
    }
    args.extend(extra);
    let output = evalspec_with_env(dir, env, &args);
    let report = std::fs::read_to_string(out.path().join("report.json")).ok();
    (output, report)
}

/// The datasets of one run: `(NAME, FILE)`, for `--dataset NAME=FILE`.
type Datasets = Vec<(&'static str, String)>;

/// Each preset with each conversion of its datasets (files under FORMATS).
fn conversions() -> Vec<(&'static str, Vec<Datasets>)> {
    let each = |preset: &'static str, names: &[&'static str], ext: &str| {
        names
            .iter()
            .map(|name| (*name, format!("{FORMATS}/{preset}/{name}.{ext}")))
            .collect::<Vec<_>>()
    };
    let runs = |ext: &str| ("trace", format!("{FORMATS}/operational/runs/*.{ext}"));
    vec![
        (
            "rag-precision",
            ["csv", "tsv", "parquet"]
                .iter()
                .map(|ext| each("rag-precision", &["gold", "trace"], ext))
                .collect(),
        ),
        (
            "retrieval-spans",
            ["csv", "tsv", "parquet"]
                .iter()
                .map(|ext| each("retrieval-spans", &["questions", "hits"], ext))
                .collect(),
        ),
        (
            "rag-quality-report",
            vec![each("rag-quality-report", &["qaset", "trace"], "parquet")],
        ),
        (
            "operational",
            vec![
                [
                    each("operational", &["gold"], "parquet"),
                    vec![runs("parquet")],
                ]
                .concat(),
                each("operational", &["gold"], "csv"),
                [each("operational", &["gold"], "tsv"), vec![runs("parquet")]].concat(),
                // A folder of runs is read in the format of its files.
                vec![("trace", format!("{FORMATS}/operational/runs"))],
            ],
        ),
        ("trec", vec![each("trec", &["qrels", "run"], "parquet")]),
    ]
}

#[test]
fn every_preset_scores_the_same_from_csv_tsv_and_parquet() {
    let root = repo_root();
    let mut used = BTreeSet::new();
    for (preset, variants) in conversions() {
        let spec = format!("specs/{preset}.yaml");
        let (jsonl, report) = run_in(&root, &spec, &[], &[], &[]);
        assert_eq!(jsonl.code, 0, "{preset}: {}", jsonl.stderr);
        let expected = metrics_and_gates(&report.unwrap());
        for datasets in variants {
            let args: Vec<String> = datasets.iter().map(|(n, p)| format!("{n}={p}")).collect();
            for (_, path) in &datasets {
                for file in glob::glob(&root.join(path).to_string_lossy()).unwrap() {
                    let file = file.unwrap();
                    if file.is_dir() {
                        used.extend(std::fs::read_dir(&file).unwrap().map(|e| e.unwrap().path()));
                    } else {
                        used.insert(file);
                    }
                }
            }
            let (out, report) = run_in(&root, &spec, &args, &[], &[]);
            assert_eq!(out.code, 0, "{preset} {args:?}: {}", out.stderr);
            let report = report.unwrap();
            assert_eq!(
                metrics_and_gates(&report),
                expected,
                "{preset} with {args:?}"
            );
            // The format each file was read in is its extension's.
            let json: serde_json::Value = serde_json::from_str(&report).unwrap();
            for (name, path) in &datasets {
                let format = json["datasets"][name]["format"].as_str().unwrap();
                let ext = path.rsplit('.').next().unwrap();
                if ["csv", "tsv", "parquet"].contains(&ext) {
                    assert_eq!(format, ext, "{preset} {name}");
                }
            }
        }
    }
    // Every file generate.py writes is run.
    let mut written: BTreeSet<PathBuf> = BTreeSet::new();
    for entry in walk(&root.join(FORMATS)) {
        if entry.extension().is_some_and(|e| e != "py") {
            written.insert(entry);
        }
    }
    let used: BTreeSet<PathBuf> = used.into_iter().collect();
    assert_eq!(written, used, "fixtures not run (or missing)");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// A CSV file or a JSON array past two chunks' size is hashed on a thread of
/// its own, a smaller one as it is read: either way report.json has the
/// file's SHA-256 and the same metrics.
#[test]
fn csv_and_json_array_digests_are_the_files_hashed_apart_or_not() {
    use sha2::Digest;
    let root = repo_root();
    let runs = [
        (
            "specs/rag-precision.yaml",
            vec![
                ("gold", format!("{FORMATS}/rag-precision/gold.csv")),
                ("trace", format!("{FORMATS}/rag-precision/trace.tsv")),
            ],
        ),
        (
            "specs/rag-quality-report.yaml",
            vec![(
                "qaset",
                "specs/data/rag-quality-report/qaset.json".to_string(),
            )],
        ),
    ];
    for (spec, datasets) in runs {
        let args: Vec<String> = datasets.iter().map(|(n, p)| format!("{n}={p}")).collect();
        let mut metrics = Vec::new();
        // Small files hash as they are read; a one-byte chunk makes every file large.
        for env in [vec![], vec![("EVALSPEC_MIN_CHUNK_BYTES", "1")]] {
            let (out, report) = run_in(&root, spec, &args, &[], &env);
            assert_eq!(out.code, 0, "{spec} {env:?}: {}", out.stderr);
            let report = report.unwrap();
            let json: serde_json::Value = serde_json::from_str(&report).unwrap();
            for (name, path) in &datasets {
                let bytes = std::fs::read(root.join(path)).unwrap();
                assert_eq!(
                    json["datasets"][name]["sha256"],
                    format!("{:x}", sha2::Sha256::digest(&bytes)),
                    "{spec} {name} {env:?}"
                );
            }
            metrics.push(metrics_and_gates(&report));
        }
        assert_eq!(metrics[0], metrics[1], "{spec}");
    }
}

#[test]
fn parquet_and_csv_read_the_same_for_any_thread_count() {
    let root = repo_root();
    // One byte per chunk: every Parquet file is split into as many ranges as threads,
    // across and inside row groups.
    let env = [("EVALSPEC_MIN_CHUNK_BYTES", "1")];
    for (preset, variants) in conversions() {
        let spec = format!("specs/{preset}.yaml");
        for datasets in variants {
            let args: Vec<String> = datasets.iter().map(|(n, p)| format!("{n}={p}")).collect();
            let (first, first_report) = run_in(&root, &spec, &args, &["--threads", "1"], &env);
            assert_eq!(first.code, 0, "{}", first.stderr);
            for threads in ["2", "3", "5"] {
                let (other, report) = run_in(&root, &spec, &args, &["--threads", threads], &env);
                assert_eq!(
                    (first.code, &first.stderr),
                    (other.code, &other.stderr),
                    "{preset} {args:?} with {threads} threads"
                );
                assert_eq!(
                    first_report, report,
                    "{preset} {args:?}: report.json with {threads} threads"
                );
            }
        }
    }
}

#[test]
fn malformed_csv_and_parquet_are_located() {
    insta::glob!("fixtures/bad_formats/err_*", |path| {
        let dir = path.parent().unwrap();
        let file = path.file_name().unwrap().to_str().unwrap();
        let (out, report) = run_in(dir, "spec.yml", &[format!("rows={file}")], &[], &[]);
        assert_eq!(out.code, 2, "{file}: {}", out.stderr);
        assert!(
            report.is_none(),
            "{file}: no report from data that could not be read"
        );
        insta::assert_snapshot!(out.stderr);
    });
}

#[test]
fn csv_and_parquet_cells_are_typed_alike() {
    let dir = repo_root().join("tests/fixtures/bad_formats");
    let (csv, csv_report) = run_in(&dir, "spec.yml", &[], &[], &[]);
    assert_eq!(csv.code, 0, "{}", csv.stderr);
    let (parquet, parquet_report) =
        run_in(&dir, "spec.yml", &["rows=rows.parquet".into()], &[], &[]);
    assert_eq!(parquet.code, 0, "{}", parquet.stderr);
    let csv_report = metrics_and_gates(&csv_report.unwrap());
    assert_eq!(csv_report, metrics_and_gates(&parquet_report.unwrap()));
    // r1 and r3 are good (the second list cell spans two lines); r2's rank is empty.
    assert!(
        csv_report.contains("\"good_share\": 0.6666666666666666"),
        "{csv_report}"
    );
    assert!(csv_report.contains("\"tagged_rows\": 2"), "{csv_report}");
    // `rank` is an integer in the schema, so its `min` is one too.
    assert!(csv_report.contains("\"best_rank\": 1\n"), "{csv_report}");
}

const ROWS_SPEC: &str = "name: rows
version: 1.0.0
datasets:
  rows:
    FORMAT
    key: id
    schema:
      id: { type: string, nonempty: true }
      score: number
      ok: bool
      tags: list<string>?
fields:
  good: rows.ok and rows.score >= 0.5
metrics:
  n: count(true)
  good: count(good)
  tags: sum(len(rows.tags ?? []))
  first_tags:
    expr: max(len(rows.tags ?? []))
reports: []
";

/// The rows spec with `keys` (`key: value`, YAML) for its dataset.
fn rows_spec(dir: &Path, keys: &[&str]) {
    write(
        dir,
        "spec.yml",
        &ROWS_SPEC.replace("FORMAT", &keys.join("\n    ")),
    );
}

fn metric(report: &str, name: &str) -> serde_json::Value {
    let report: serde_json::Value = serde_json::from_str(report).unwrap();
    report["metrics"][name].clone()
}

#[test]
fn rfc_4180_quoting_a_delimiter_and_a_list_separator() {
    let dir = tempfile::tempdir().unwrap();
    rows_spec(
        dir.path(),
        &[
            "format: csv",
            "path: rows.txt",
            "delimiter: \";\"",
            "list_separator: \"|\"",
        ],
    );
    // A byte order mark, CRLF, a blank line, a quoted delimiter, doubled quotes, a
    // line break inside a cell, a JSON array beside separated lists.
    let rows = "\u{feff}id;score;ok;tags;note\r\n\
                \"r;1\";0.9;TRUE;a | b|c;\"she said \"\"hi\"\"\"\r\n\
                \r\n\
                r2;0.25;false;;\"two\r\nlines\"\r\n\
                r3;5e-1;true;[\"x|y\"];\r\n";
    write(dir.path(), "rows.txt", rows);
    let (out, report) = run_in(dir.path(), "spec.yml", &[], &[], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = report.unwrap();
    assert_eq!(metric(&report, "n"), 3.0);
    assert_eq!(metric(&report, "good"), 2.0);
    assert_eq!(metric(&report, "tags"), 4.0);
    assert_eq!(metric(&report, "first_tags"), 3.0);

    // Located through quoted line breaks: r4 runs over lines 7 and 8, its extra cell
    // is on line 8.
    write(
        dir.path(),
        "rows.txt",
        &format!("{rows}\"r4\";0.5;true;;\"a\r\nb\";x\r\n"),
    );
    let (out, _) = run_in(dir.path(), "spec.yml", &[], &[], &[]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("rows: expected 5 cells, as the header has, found 6\n --> rows.txt:8:4"),
        "{}",
        out.stderr
    );
}

#[test]
fn the_format_follows_the_extension_unless_the_spec_says() {
    let dir = tempfile::tempdir().unwrap();
    let rows = "id\tscore\tok\ttags\nr1\t0.9\ttrue\t[\"a\"]\nr2\t0.1\tfalse\t\n";
    write(dir.path(), "rows.tsv", rows);
    write(dir.path(), "other.TSV", rows);
    rows_spec(dir.path(), &["path: rows.tsv"]);
    let (out, report) = run_in(dir.path(), "spec.yml", &[], &[], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = report.unwrap();
    assert_eq!(metric(&report, "good"), 1.0);
    assert!(report.contains("\"format\": \"tsv\""), "{report}");
    // A file on the command line says its own format, in any case.
    let (out, report) = run_in(dir.path(), "spec.yml", &["rows=other.TSV".into()], &[], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(metric(&report.unwrap(), "good"), 1.0);
    // Written, the format wins over the spec's own path.
    rows_spec(dir.path(), &["format: jsonl", "path: rows.tsv"]);
    let (out, _) = run_in(dir.path(), "spec.yml", &[], &[], &[]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("invalid JSON"), "{}", out.stderr);
    // A file without a known extension is read in the spec's format.
    std::fs::rename(dir.path().join("other.TSV"), dir.path().join("rows.data")).unwrap();
    rows_spec(dir.path(), &["format: tsv", "path: rows.jsonl"]);
    let (out, _) = run_in(dir.path(), "spec.yml", &["rows=rows.data".into()], &[], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn csv_options_are_checked_with_the_spec() {
    let dir = tempfile::tempdir().unwrap();
    rows_spec(
        dir.path(),
        &["format: jsonl", "path: rows.jsonl", "delimiter: \";\""],
    );
    let out = evalspec(dir.path(), &["check", "spec.yml"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("`delimiter` applies to csv and tsv datasets, not jsonl"),
        "{}",
        out.stderr
    );
    rows_spec(
        dir.path(),
        &[
            "format: csv",
            "path: rows.csv",
            "delimiter: \"ab\"",
            "list_separator: \"\"",
        ],
    );
    let out = evalspec(dir.path(), &["check", "spec.yml"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("a delimiter is one ASCII character"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("`list_separator` cannot be empty"),
        "{}",
        out.stderr
    );
    // An unknown format is one error, not also "no datasets".
    rows_spec(dir.path(), &["format: xlsx", "path: rows.xlsx"]);
    let out = evalspec(dir.path(), &["check", "spec.yml"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("`xlsx` is not one of: jsonl, json, csv, tsv, parquet"),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains("declares no datasets"),
        "{}",
        out.stderr
    );
}

/// Runs evalspec with `input` on its standard input.
fn run_with_stdin(dir: &Path, args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_evalspec"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // Written from a thread: a reader that stopped early must not block the test.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    Output {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

#[test]
fn a_dataset_is_read_from_standard_input_in_its_format() {
    let root = repo_root();
    let out = tempfile::tempdir().unwrap();
    let out = out.path().to_str().unwrap();
    let (_, expected) = run_in(&root, "specs/rag-precision.yaml", &[], &[], &[]);
    let expected = metrics_and_gates(&expected.unwrap());
    let report = || std::fs::read_to_string(Path::new(out).join("report.json")).unwrap();
    let trace = std::fs::read(root.join("specs/data/rag-precision/trace.jsonl")).unwrap();
    let args = [
        "run",
        "specs/rag-precision.yaml",
        "--dataset",
        "trace=-",
        "--out",
        out,
        "--threads",
        "3",
    ];
    let result = run_with_stdin(&root, &args, &trace);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert_eq!(metrics_and_gates(&report()), expected);
    assert!(report().contains("\"path\": \"<stdin>\""), "{}", report());

    // Parquet needs to seek: standard input is read once into a file first. The
    // spec's path names the format.
    let dir = tempfile::tempdir().unwrap();
    let spec = std::fs::read_to_string(root.join("tests/fixtures/bad_formats/spec.yml"))
        .unwrap()
        .replace("path: rows.csv", "path: rows.parquet");
    write(dir.path(), "spec.yml", &spec);
    let parquet = std::fs::read(root.join("tests/fixtures/bad_formats/rows.parquet")).unwrap();
    let args = ["run", "spec.yml", "--dataset", "rows=-", "--out", out];
    let result = run_with_stdin(dir.path(), &args, &parquet);
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert!(
        report().contains("\"good_share\": 0.6666666666666666"),
        "{}",
        report()
    );
    // Errors name standard input.
    let result = run_with_stdin(dir.path(), &args, &parquet[..parquet.len() / 2]);
    assert_eq!(result.code, 2);
    assert!(
        result
            .stderr
            .contains("rows: `<stdin>` is not a readable Parquet file"),
        "{}",
        result.stderr
    );

    // A run read from standard input is named `stdin`.
    let run = std::fs::read(root.join("specs/data/operational/runs/seed-2.jsonl")).unwrap();
    let args = [
        "run",
        "specs/operational.yaml",
        "--dataset",
        "trace=-",
        "--out",
        out,
    ];
    let result = run_with_stdin(&root, &args, &run);
    assert!(result.code < 2, "{}", result.stderr);
    assert!(report().contains("\"precision@stdin\""), "{}", report());
}

#[test]
fn only_one_dataset_reads_standard_input() {
    let root = repo_root();
    let args = [
        "check",
        "specs/rag-precision.yaml",
        "--dataset",
        "gold=-",
        "--dataset",
        "trace=-",
    ];
    let out = evalspec(&root, &args);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("only one dataset can read; `gold` and `trace` each ask for it"),
        "{}",
        out.stderr
    );
}

#[cfg(unix)]
#[test]
fn a_fifo_is_read_once() {
    let root = repo_root();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("trace.parquet");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let data = std::fs::read(root.join(FORMATS).join("rag-precision/trace.parquet")).unwrap();
    let path = fifo.clone();
    let writer = std::thread::spawn(move || {
        let mut fifo = std::fs::OpenOptions::new().write(true).open(path)?;
        fifo.write_all(&data)
    });
    let (out, report) = run_in(
        &root,
        "specs/rag-precision.yaml",
        &[format!("trace={}", fifo.display())],
        &["--threads", "2"],
        &[("EVALSPEC_MIN_CHUNK_BYTES", "1")],
    );
    // Had evalspec not opened the FIFO, the writer would wait for a reader forever.
    use std::os::unix::fs::OpenOptionsExt;
    let _unblock = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo);
    let written = writer.join().unwrap();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(written.is_ok(), "{written:?}");
    let (_, expected) = run_in(&root, "specs/rag-precision.yaml", &[], &[], &[]);
    assert_eq!(
        metrics_and_gates(&report.unwrap()),
        metrics_and_gates(&expected.unwrap())
    );
}

#[test]
fn damaged_parquet_files_that_panic_the_decoder_are_errors() {
    // Fixtures with a few bytes overwritten (found by fuzzing) on which arrow-rs
    // panics: an error (exit 2) naming the file, never a crash.
    let dir = repo_root().join("tests/fixtures/bad_formats/decoder_panics");
    for (spec, dataset, message) in [
        (
            "rag-precision",
            "trace",
            "column start and length should not be negative",
        ),
        ("retrieval-spans", "hits", "assertion failed: num_bits"),
    ] {
        let spec = repo_root().join(format!("specs/{spec}.yaml"));
        let (out, report) = run_in(
            &dir,
            spec.to_str().unwrap(),
            &[format!("{dataset}={dataset}.parquet")],
            &[],
            &[],
        );
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert!(report.is_none());
        let expected = format!(
            "error: {dataset}: the Parquet reader failed on `{dataset}.parquet` (rows from row group 0): {message}"
        );
        assert!(out.stderr.starts_with(&expected), "{}", out.stderr);
    }
}
