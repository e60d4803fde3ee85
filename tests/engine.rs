//! The engine in process, as a library caller drives it: compile a spec,
//! evaluate it over its files or over Arrow tables in memory, evaluate it a
//! bucket of keys at a time into partial states sent as bytes and merged; each
//! way gives the bytes `evalspec run` writes.

use std::path::Path;

use evalspec::{Bucket, Options, ReportFormat, Resources, Spec, Table};

use crate::support::{evalspec, repo_root};

const SPEC: &str = "specs/rag-precision.yaml";
const PARQUET: &str = "tests/fixtures/formats/rag-precision";

/// Every file in `dir`, by name, with its bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    files.sort();
    files
}

/// What `evalspec run` writes for the spec, with `args` after it.
fn command_run(args: &[&str]) -> Vec<(String, Vec<u8>)> {
    let out = tempfile::tempdir().unwrap();
    let folder = out.path().to_str().unwrap();
    let mut argv = vec!["run", SPEC, "--out", folder, "--format", "items", "--quiet"];
    argv.extend(args);
    let output = evalspec(&repo_root(), &argv);
    assert!(output.code <= 1, "{}", output.stderr);
    files(out.path())
}

fn compile(options: Options) -> Spec {
    let options = options.format(ReportFormat::Items);
    // Relative, as the command is given it: report.json names the spec so.
    Spec::compile(SPEC, &options).unwrap_or_else(|errors| {
        panic!("{}", errors.iter().map(|e| e.render()).collect::<String>())
    })
}

fn written(evaluation: &evalspec::Evaluation<'_>) -> Vec<(String, Vec<u8>)> {
    let out = tempfile::tempdir().unwrap();
    evaluation.write_reports(out.path()).unwrap();
    files(out.path())
}

fn assert_same(a: &[(String, Vec<u8>)], b: &[(String, Vec<u8>)], what: &str) {
    let names = |f: &[(String, Vec<u8>)]| f.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(a), names(b), "{what}");
    for ((name, x), (_, y)) in a.iter().zip(b) {
        assert!(
            x == y,
            "{what}: {name} differs:\n{}\n---\n{}",
            String::from_utf8_lossy(x),
            String::from_utf8_lossy(y)
        );
    }
}

#[test]
fn the_engine_writes_the_commands_bytes() {
    let expected = command_run(&[]);
    let spec = compile(Options::new());
    let evaluation = spec.evaluate(Resources::threads(2)).unwrap();
    assert!(evaluation.passed());
    assert_same(&written(&evaluation), &expected, "the engine");
    let report = expected.iter().find(|(n, _)| n == "report.json").unwrap();
    assert_eq!(evaluation.report_json().as_bytes(), report.1.as_slice());
    // Typed values, as report.json has them.
    let json: serde_json::Value = serde_json::from_slice(&report.1).unwrap();
    let precision = evaluation.metric("precision").and_then(|v| v.as_f64());
    assert_eq!(precision, json["metrics"]["precision"].as_f64());
    let gates = evaluation.gates();
    assert_eq!(gates.len(), json["gates"].as_array().unwrap().len());
    assert!(gates
        .iter()
        .all(|g| g.status == "pass" || g.severity == "warn"));
}

#[test]
fn buckets_evaluated_apart_and_merged_as_bytes_give_the_same_bytes() {
    let expected = command_run(&[]);
    let spec = compile(Options::new());
    let resources = Resources::threads(2);
    for of in [1, 3, 7] {
        let mut states: Vec<Vec<u8>> = (0..of)
            .map(|index| {
                let bucket = Some(Bucket { index, of });
                let mut state = spec.evaluate_partial(resources, bucket).unwrap();
                state.encode().unwrap()
            })
            .collect();
        // Merged in another order than evaluated.
        states.reverse();
        let mut states = states
            .iter()
            .map(|b| spec.decode_partial(b, resources).unwrap());
        let mut whole = states.next().unwrap();
        for state in states {
            whole.merge(state).unwrap();
        }
        let evaluation = spec.finish(whole, resources).unwrap();
        assert_same(&written(&evaluation), &expected, &format!("{of} buckets"));
    }
}

#[test]
fn a_state_of_another_spec_or_damaged_is_refused() {
    let spec = compile(Options::new());
    let other = compile(Options::new().param("k", "3"));
    let resources = Resources::threads(1);
    let bytes = other
        .evaluate_partial(resources, None)
        .unwrap()
        .encode()
        .unwrap();
    let refused = |bytes: &[u8]| match spec.decode_partial(bytes, resources) {
        Ok(_) => panic!("decoded"),
        Err(error) => error.code,
    };
    assert_eq!(refused(&bytes), "state_of_another_plan");
    assert_eq!(refused(b"not a state"), "state_not_decoded");
    let mine = spec
        .evaluate_partial(resources, None)
        .unwrap()
        .encode()
        .unwrap();
    for end in [mine.len() / 2, mine.len() - 1] {
        assert_eq!(refused(&mine[..end]), "state_not_decoded");
    }
}

/// A Parquet file read into Arrow record batches, as a caller holds a table.
fn table(path: &Path) -> Table {
    let file = std::fs::File::open(path).unwrap();
    let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .with_batch_size(2);
    let schema = builder.schema().clone();
    let reader = builder.build().unwrap();
    let batches = reader.collect::<Result<Vec<_>, _>>().unwrap();
    Table::new(schema, batches).unwrap()
}

/// The Parquet fixture's rows as tables in memory, and what the command
/// writes over the same rows read from the files.
fn parquet_tables_and_the_commands_files() -> (Options, Vec<(String, Vec<u8>)>) {
    let root = repo_root();
    let (gold, trace) = (
        format!("{PARQUET}/gold.parquet"),
        format!("{PARQUET}/trace.parquet"),
    );
    let expected = command_run(&[
        "--dataset",
        &format!("gold={gold}"),
        "--dataset",
        &format!("trace={trace}"),
    ]);
    let options = Options::new()
        .table("gold", table(&root.join(&gold)))
        .table("trace", table(&root.join(&trace)));
    (options, expected)
}

/// Asserts that a run over tables wrote the command's bytes but where they
/// name the datasets: items.jsonl to the byte, item-values.jsonl and
/// report.json but for the datasets' names and the run id (the digest of
/// report.json's bytes, which name them).
fn assert_same_but_dataset_names(
    got: &[(String, Vec<u8>)],
    expected: &[(String, Vec<u8>)],
    what: &str,
) {
    let file =
        |f: &[(String, Vec<u8>)], name: &str| f.iter().find(|(n, _)| n == name).unwrap().1.clone();
    assert!(
        file(got, "items.jsonl") == file(expected, "items.jsonl"),
        "items.jsonl, {what}"
    );
    let values = |f: &[(String, Vec<u8>)]| {
        let text = String::from_utf8(file(f, "item-values.jsonl")).unwrap();
        let (header, rows) = text.split_once('\n').unwrap();
        let mut header: serde_json::Value = serde_json::from_str(header).unwrap();
        assert!(header["run_id"].is_string());
        header.as_object_mut().unwrap().remove("run_id");
        (header, rows.to_string())
    };
    assert!(values(got) == values(expected), "item-values.jsonl, {what}");
    let report = |f: &[(String, Vec<u8>)]| {
        let mut json: serde_json::Value = serde_json::from_slice(&file(f, "report.json")).unwrap();
        json.as_object_mut().unwrap().remove("datasets");
        json.as_object_mut().unwrap().remove("run_id");
        json
    };
    assert_eq!(report(got), report(expected), "report.json, {what}");
}

#[test]
fn tables_in_memory_score_as_their_files_do() {
    let (options, expected) = parquet_tables_and_the_commands_files();
    let spec = compile(options);
    for threads in [1, 3] {
        let evaluation = spec.evaluate(Resources::threads(threads)).unwrap();
        let what = format!("{threads} threads");
        assert_same_but_dataset_names(&written(&evaluation), &expected, &what);
        let json: serde_json::Value = serde_json::from_str(&evaluation.report_json()).unwrap();
        assert_eq!(json["datasets"]["gold"]["path"], "<gold>");
    }
}

#[test]
fn a_table_for_an_unknown_dataset_is_refused_by_name() {
    let root = repo_root();
    let table = table(&root.join(PARQUET).join("gold.parquet"));
    let options = Options::new().table("gld", table);
    let errors = match Spec::compile(root.join(SPEC), &options) {
        Ok(_) => panic!("compiled"),
        Err(errors) => errors,
    };
    assert_eq!(errors[0].code, "unknown_table");
    assert!(
        errors[0].render().contains("did you mean `gold`"),
        "{}",
        errors[0].render()
    );
}

/// `table` without its column `name`.
fn without_column(table: &Table, name: &str) -> Table {
    let keep: Vec<usize> = (0..table.schema().fields().len())
        .filter(|&i| table.schema().field(i).name() != name)
        .collect();
    let schema = std::sync::Arc::new(table.schema().project(&keep).unwrap());
    let batches = (table.batches().iter())
        .map(|b| b.project(&keep).unwrap())
        .collect();
    Table::new(schema, batches).unwrap()
}

#[test]
fn a_column_no_row_of_a_table_has_reads_as_absent_as_in_a_jsonl_file() {
    // A table made of records has a column for each field some record has;
    // the traces' `q_id` (a fallback key no trace uses) is then no column at
    // all. It reads as absent from every record, as from each JSONL line;
    // a Parquet file without the column is refused (its schema says what the
    // file holds).
    let root = repo_root();
    let trace = table(&root.join(PARQUET).join("trace.parquet"));
    assert!(trace.schema().field_with_name("q_id").is_ok());
    let options = Options::new()
        .table("gold", table(&root.join(PARQUET).join("gold.parquet")))
        .table("trace", without_column(&trace, "q_id"));
    let (spec, files) = (compile(options), compile(Options::new()));
    let evaluation = spec.evaluate(Resources::threads(1)).unwrap();
    let expected = files.evaluate(Resources::threads(1)).unwrap();
    let metrics = |e: &evalspec::Evaluation<'_>| -> Vec<(String, evalspec::Value)> {
        e.metrics()
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect()
    };
    assert_eq!(metrics(&evaluation), metrics(&expected));
}

#[test]
fn buckets_of_tables_in_memory_merge_into_the_commands_bytes() {
    // An Arrow source through the whole distributed path: each bucket
    // evaluated over the tables, encoded, decoded, merged in another order,
    // finished; the bytes are the command's over the same rows as Parquet.
    let (options, expected) = parquet_tables_and_the_commands_files();
    let spec = compile(options);
    let resources = Resources::threads(2);
    let of = 3;
    let states: Vec<Vec<u8>> = (0..of)
        .rev()
        .map(|index| {
            let mut state = spec
                .evaluate_partial(resources, Some(Bucket { index, of }))
                .unwrap();
            state.encode().unwrap()
        })
        .collect();
    let mut decoded = states
        .iter()
        .map(|b| spec.decode_partial(b, resources).unwrap());
    let mut whole = decoded.next().unwrap();
    for state in decoded {
        whole.merge(state).unwrap();
    }
    let got = written(&spec.finish(whole, resources).unwrap());
    assert_same_but_dataset_names(&got, &expected, &format!("{of} buckets"));
}
