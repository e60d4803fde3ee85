//! Every join gives the same bytes: a spec that joins its items to one other
//! dataset can keep that dataset as a table (`--join table`), stream it past
//! the items in memory (`--join index`), or, under a memory budget too small
//! for the items (`--max-memory`), partition both datasets to temporary files
//! and join one partition at a time (`--join partitioned`). The three give the
//! same bytes (every report, item values, stdout and stderr) under every
//! duplicates policy and join, for any thread count, including offenders whose
//! later record clears them; and what none of them can finish (a bad record, a
//! repeated key, an item that does not evaluate) each reports exactly as the
//! table does, at the true line, without running again another way.

use std::path::Path;

use crate::support::{evalspec_with_env, texts_of, write, Output};

fn spec(trace_duplicates: &str, join: &str, gold_duplicates: &str) -> String {
    format!(
        r#"name: streamed
version: 1.0.0
items: gold
datasets:
  gold: {{path: gold.jsonl, key: qid, duplicates: {gold_duplicates}}}
  trace: {{path: trace.jsonl, key: qid, duplicates: {trace_duplicates}, join: {join}}}
fields:
  answer: trace.answer ?? ""
  correct: answer == gold.answer
  score: trace.score
labels:
  - RIGHT: correct
  - WRONG: true
slices:
  topic: gold.topic
offenders:
  when: not correct
  show: [answer, score]
  limit: 3
metrics:
  accuracy: {{expr: ratio(correct), better: higher, by: topic}}
  n: count()
  mean_score: mean(score)
  p90: percentile(score, 90)
  kappa: kappa(answer, gold.answer)
  ece: ece(trace.conf, correct, 5)
  traces: records(trace)
gates:
  accuracy: {{expr: accuracy >= 0.1}}
reports: [json, markdown, items, junit]
"#
    )
}

/// Gold items and traces: traces out of order, some repeated (a later retry that
/// flips the answer, also of the first items in key order, which are offenders
/// until their retry), some missing, some for no item, some without a key.
fn data(dir: &Path, items: usize) {
    let mut gold = String::new();
    for i in 0..items {
        gold.push_str(&format!(
            "{{\"qid\": \"q{i:05}\", \"answer\": \"a{}\", \"topic\": \"t{}\"}}\n",
            i % 7,
            i % 3
        ));
    }
    let mut trace = String::new();
    let line = |trace: &mut String, i: usize, answer: usize| {
        trace.push_str(&format!(
            "{{\"qid\": \"q{i:05}\", \"answer\": \"a{answer}\", \"score\": {}, \"conf\": {}}}\n",
            (i * 37) % 101,
            ((i * 13) % 100) as f64 / 100.0
        ));
    };
    for block in (0..items).step_by(10) {
        for i in (block..(block + 10).min(items)).rev() {
            if i % 23 == 5 {
                continue; // missing
            }
            line(&mut trace, i, if i % 4 == 0 { 1 } else { i % 7 });
        }
        if block % 50 == 0 {
            trace.push_str(&format!("{{\"qid\": \"zz{block}\", \"answer\": \"a0\"}}\n"));
            trace.push_str("{\"answer\": \"a0\"}\n");
        }
    }
    // Retries, last in the file: right where the first answer was wrong.
    for i in (0..items).filter(|i| i % 4 == 0 || i % 97 == 3) {
        line(&mut trace, i, i % 7);
    }
    write(dir, "gold.jsonl", &gold);
    write(dir, "trace.jsonl", &trace);
}

/// Every file a run wrote, by name, with its bytes.
type Files = Vec<(String, Vec<u8>)>;

/// Every file a run wrote into `out`, by name.
fn written(dir: &Path, out: &str) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.join(out))
        .map(|entries| {
            entries
                .map(|e| e.unwrap().path())
                .map(|p| {
                    let name = p.file_name().unwrap().to_string_lossy().into_owned();
                    (name, std::fs::read(&p).unwrap())
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// How a run joins: `--join` and a memory budget.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Way {
    Table,
    Stream,
    Partition,
    /// The table under a tiny budget: not partitioned (`--join table`), but
    /// items.jsonl's lines spilled to sorted runs on disk and merged.
    TableSpilled,
    /// Streamed under a budget the items fit (not partitioned) but items.jsonl's
    /// lines do not: spilled to sorted runs, ordered by item number when the
    /// gold set is in key order.
    StreamSpilled,
}

/// Runs `spec.yaml` joined the `way` with `threads`; its output and files.
fn run(dir: &Path, way: Way, threads: usize) -> (Output, Vec<(String, Vec<u8>)>) {
    let (mode, budget) = match way {
        Way::Table => ("table", None),
        Way::Stream => ("index", None),
        // One byte: as many partitions as there can be.
        Way::Partition => ("partitioned", Some("1")),
        Way::TableSpilled => ("table", Some("1")),
        Way::StreamSpilled => ("index", Some("512K")),
    };
    let out = format!("out-{mode}-{}-{threads}", budget.unwrap_or("none"));
    let _ = std::fs::remove_dir_all(dir.join(&out));
    let threads = threads.to_string();
    let env = [("EVALSPEC_MIN_CHUNK_BYTES", "4096")];
    let mut args = vec![
        "run",
        "spec.yaml",
        "--out",
        &out,
        "--threads",
        &threads,
        "--join",
        mode,
    ];
    args.extend(budget.iter().flat_map(|b| ["--max-memory", b]));
    let output = evalspec_with_env(dir, &env, &args);
    let files = written(dir, &out);
    let output = Output {
        stdout: output.stdout.replace(&out, "OUT"),
        ..output
    };
    (output, files)
}

/// The index and the partitioned join give what the table gives, for 1 and 3
/// threads; returns the table's output and their stderr.
fn assert_same_every_way(dir: &Path) -> (Output, String) {
    let (table, table_files) = run(dir, Way::Table, 1);
    let mut streamed_stderr = String::new();
    for way in [
        Way::Stream,
        Way::Partition,
        Way::TableSpilled,
        Way::StreamSpilled,
    ] {
        for threads in [1, 3] {
            let (streamed, files) = run(dir, way, threads);
            let how = format!("{way:?} on {threads} threads");
            assert_eq!(table.code, streamed.code, "exit code, {how}");
            assert_eq!(table.stdout, streamed.stdout, "stdout, {how}");
            assert_eq!(table.stderr, streamed.stderr, "stderr, {how}");
            let names = |files: &[(String, Vec<u8>)]| -> Vec<String> {
                files.iter().map(|(n, _)| n.clone()).collect()
            };
            assert_eq!(names(&table_files), names(&files));
            for ((name, a), (_, b)) in table_files.iter().zip(&files) {
                assert!(a == b, "{name} differs, {how}");
            }
            streamed_stderr.push_str(&streamed.stderr);
        }
    }
    (table, streamed_stderr)
}

/// Every way gives the table's bytes under each policy and join, with the spec
/// `edit` makes.
fn assert_same_under_every_policy(edit: impl Fn(String) -> String) {
    let dir = tempfile::tempdir().unwrap();
    data(dir.path(), 800);
    for (trace_duplicates, join, gold_duplicates) in [
        ("last", "left", "error"),
        ("first", "left", "error"),
        ("first", "inner", "error"),
        ("last", "inner", "keep"),
        ("last", "left", "last"),
        ("first", "inner", "first"),
    ] {
        let what = format!("trace {trace_duplicates}, {join} join, gold {gold_duplicates}");
        {
            write(
                dir.path(),
                "spec.yaml",
                &edit(spec(trace_duplicates, join, gold_duplicates)),
            );
            let (table, _) = assert_same_every_way(dir.path());
            assert!(table.code <= 1, "{what}: {}", table.stderr);
            assert!(table.stderr.contains("repeat an earlier key"), "{what}");
            let report =
                std::fs::read_to_string(dir.path().join("out-table-none-1/report.json")).unwrap();
            assert!(report.contains("\"offenders\""), "{what}");
        }
    }
}

// With the items report every item's values are kept; without it, only the
// first offenders'.
#[test]
fn every_join_gives_the_tables_bytes_under_every_policy_with_the_items_report() {
    assert_same_under_every_policy(|spec| spec);
}

#[test]
fn every_join_gives_the_tables_bytes_under_every_policy_without_the_items_report() {
    assert_same_under_every_policy(|spec| spec.replace(" items,", ""));
}

#[test]
fn a_template_that_reads_items_lists_them_in_file_order_every_way() {
    let dir = tempfile::tempdir().unwrap();
    data(dir.path(), 800);
    let template = "{% for item in items %}{{ item.line }} {{ item.key }} {{ item.fields.answer }}\n{% endfor %}";
    write(dir.path(), "listed.txt.j2", template);
    let reports = "reports: [json, items, { template: listed.txt.j2, path: listed.txt }]";
    let spec =
        spec("last", "left", "error").replace("reports: [json, markdown, items, junit]", reports);
    write(dir.path(), "spec.yaml", &spec);
    let (table, _) = assert_same_every_way(dir.path());
    assert!(table.code <= 1, "{}", table.stderr);
    // Every item, in the gold file's order (the traces are out of order).
    let listed = std::fs::read_to_string(dir.path().join("out-table-none-1/listed.txt")).unwrap();
    let lines: Vec<u32> = (listed.lines())
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(lines, (1..=800).collect::<Vec<u32>>());
}

#[test]
fn items_repeated_in_the_gold_set_each_take_the_trace_of_their_key() {
    let dir = tempfile::tempdir().unwrap();
    data(dir.path(), 400);
    let gold = std::fs::read_to_string(dir.path().join("gold.jsonl")).unwrap();
    let lines: Vec<&str> = gold.lines().collect();
    let doubled = format!("{gold}{}\n{}\n", lines[0], lines[10]);
    write(dir.path(), "gold.jsonl", &doubled);
    write(dir.path(), "spec.yaml", &spec("last", "left", "keep"));
    let (table, _) = assert_same_every_way(dir.path());
    assert!(table.code <= 1, "{}", table.stderr);
}

/// Items without a key are folded in their place, joined to nothing: the
/// partitioned join keeps them in a file of their own per chunk and merges
/// them back in item order.
#[test]
fn items_without_a_key_are_folded_in_their_place_every_way() {
    let dir = tempfile::tempdir().unwrap();
    data(dir.path(), 400);
    let gold = std::fs::read_to_string(dir.path().join("gold.jsonl")).unwrap();
    let mut lines: Vec<String> = gold.lines().map(str::to_string).collect();
    for i in [0, 7, 150, 151, 399] {
        lines[i] = format!("{{\"answer\": \"a{}\", \"topic\": \"t1\"}}", i % 7);
    }
    write(dir.path(), "gold.jsonl", &(lines.join("\n") + "\n"));
    write(dir.path(), "spec.yaml", &spec("last", "left", "keep"));
    let (table, _) = assert_same_every_way(dir.path());
    assert!(table.code <= 1, "{}", table.stderr);
    assert!(
        table.stderr.contains("gold: 5 record(s) have no key"),
        "{}",
        table.stderr
    );
}

#[test]
fn what_no_join_can_finish_each_reports_as_the_table_reports_it() {
    let dir = tempfile::tempdir().unwrap();
    data(dir.path(), 1_500);
    let trace = std::fs::read_to_string(dir.path().join("trace.jsonl")).unwrap();
    let lines: Vec<String> = trace.lines().map(str::to_string).collect();
    type Edit = Box<dyn Fn(&mut Vec<String>)>;
    let cases: [(&str, &str, Edit, &str); 4] = [
        (
            "last",
            "error",
            Box::new(|l| l[1200] = "{\"qid\": oops}".into()),
            "trace.jsonl:1201:",
        ),
        ("error", "error", Box::new(|_| {}), "duplicate key"),
        (
            "last",
            "error",
            Box::new(|l| l[700] = l[700].replace("\"score\": ", "\"score\": \"x\", \"s\": ")),
            "mean(score)",
        ),
        (
            "last",
            "error",
            Box::new(|l| l[900] = l[900].replace("\"conf\": ", "\"conf\": 7, \"c\": ")),
            "ece(",
        ),
    ];
    for (trace_duplicates, gold_duplicates, edit, expected) in cases {
        let mut edited = lines.clone();
        edit(&mut edited);
        write(dir.path(), "trace.jsonl", &(edited.join("\n") + "\n"));
        write(
            dir.path(),
            "spec.yaml",
            &spec(trace_duplicates, "left", gold_duplicates),
        );
        let (table, _) = assert_same_every_way(dir.path());
        assert_eq!(table.code, 2, "{expected}: {}", table.stderr);
        assert!(
            table.stderr.contains(expected),
            "{expected}: {}",
            table.stderr
        );
    }
}

#[test]
fn offenders_cleared_by_a_later_record_leave_the_right_offenders_listed() {
    // Items 0..200 answer wrongly and are retried right at the end of the file;
    // of the rest, every tenth stays wrong. The index join keeps the shown
    // values of only the first offenders in key order (all to be cleared), so it
    // scores the true ones again from their records (on one thread; on three,
    // each chunk keeps its own first offenders): the bytes are the table's.
    let dir = tempfile::tempdir().unwrap();
    let mut gold = String::new();
    let mut trace = String::new();
    for i in 0..600 {
        gold.push_str(&format!(
            "{{\"qid\": \"q{i:05}\", \"answer\": \"a\", \"topic\": \"t\"}}\n"
        ));
        let wrong = i < 200 || i % 10 == 0;
        let answer = if wrong { "b" } else { "a" };
        trace.push_str(&format!(
            "{{\"qid\": \"q{i:05}\", \"answer\": \"{answer}\", \"score\": 1, \"conf\": 0.5}}\n"
        ));
    }
    for i in 0..200 {
        trace.push_str(&format!(
            "{{\"qid\": \"q{i:05}\", \"answer\": \"a\", \"score\": 2, \"conf\": 0.5}}\n"
        ));
    }
    write(dir.path(), "gold.jsonl", &gold);
    write(dir.path(), "trace.jsonl", &trace);
    // Without the items report, which keeps every item's values anyway.
    let spec = |duplicates| spec(duplicates, "left", "error").replace(" items,", "");
    write(dir.path(), "spec.yaml", &spec("last"));
    let (table, _) = assert_same_every_way(dir.path());
    assert!(table.code <= 1, "{}", table.stderr);
    let report = std::fs::read_to_string(dir.path().join("out-table-none-1/report.json")).unwrap();
    assert!(report.contains("q00200"), "{report}");

    // With the first record kept, the first offenders are the ones listed.
    write(dir.path(), "spec.yaml", &spec("first"));
    assert_same_every_way(dir.path());
}

#[test]
fn the_offenders_listed_are_the_first_in_key_order_whatever_order_the_items_come_in() {
    // Two items in three are offenders and three are listed: each chunk trims
    // its rows often and skips any past its third so far. Keys are unpadded,
    // so their natural order (q9 before q10) is not their byte order.
    let n = 400;
    let orders: [(&str, Vec<usize>); 3] = [
        ("ascending", (0..n).collect()),
        ("descending", (0..n).rev().collect()),
        ("scattered", (0..n).map(|i| (i * 131) % n).collect()),
    ];
    for (name, order) in orders {
        let dir = tempfile::tempdir().unwrap();
        let gold: String = (order.iter())
            .map(|i| format!("{{\"qid\": \"q{i}\", \"answer\": \"a\", \"topic\": \"t\"}}\n"))
            .collect();
        let trace: String = (0..n)
            .map(|i| {
                let answer = if i % 3 == 0 { "a" } else { "b" };
                format!("{{\"qid\": \"q{i}\", \"answer\": \"{answer}\", \"score\": 1, \"conf\": 0.5}}\n")
            })
            .collect();
        write(dir.path(), "gold.jsonl", &gold);
        write(dir.path(), "trace.jsonl", &trace);
        write(dir.path(), "spec.yaml", &spec("last", "left", "error"));
        let (table, _) = assert_same_every_way(dir.path());
        assert!(table.code <= 1, "{name}: {}", table.stderr);
        let report = dir.path().join("out-table-none-1/report.json");
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
        let listed = texts_of(&report["offenders"]["items"], "key");
        assert_eq!(listed, ["q1", "q2", "q4"], "{name}");
    }
}

#[test]
fn a_join_that_cannot_be_partitioned_says_so_and_runs_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    data(dir.path(), 100);
    // Items joined to two datasets: only the table join pairs them.
    write(dir.path(), "again.jsonl", "{\"qid\": \"q00001\"}\n");
    let spec = spec("last", "left", "error").replace(
        "  trace: {",
        "  again: {path: again.jsonl, key: qid, join: left}\n  trace: {",
    );
    write(dir.path(), "spec.yaml", &spec);
    let args = ["run", "spec.yaml", "--out", "out", "--max-memory", "1"];
    let output = evalspec_with_env(dir.path(), &[], &args);
    assert!(output.code <= 1, "{}", output.stderr);
    assert!(
        output.stderr.contains(
            "note: --max-memory: the join is kept in memory, as its items join more than one dataset"
        ),
        "{}",
        output.stderr
    );
    let args = ["run", "spec.yaml", "--out", "out", "--join", "index"];
    let output = evalspec_with_env(dir.path(), &[], &args);
    assert_eq!(output.code, 2, "{}", output.stderr);
    assert!(
        output
            .stderr
            .contains("--join index cannot run this spec: its items join more than one dataset"),
        "{}",
        output.stderr
    );
}

/// A run of `items` items under a one-byte budget, joined `join`, whose
/// TMPDIR does not exist: it must fail (exit 2) saying `what` and `help`,
/// naming the folder, and write no report.
fn assert_missing_tmpdir_fails(items: usize, join: &str, what: &str, help: &str) {
    let dir = tempfile::tempdir().unwrap();
    data(dir.path(), items);
    write(dir.path(), "spec.yaml", &spec("last", "left", "error"));
    let missing = dir.path().join("no-such-folder");
    let env = [("TMPDIR", missing.to_str().unwrap())];
    let args = [
        "run",
        "spec.yaml",
        "--out",
        "out",
        "--max-memory",
        "1",
        "--join",
        join,
    ];
    let output = evalspec_with_env(dir.path(), &env, &args);
    assert_eq!(output.code, 2, "{}", output.stderr);
    let stderr = &output.stderr;
    assert!(
        stderr.contains(what) && stderr.contains("no-such-folder") && stderr.contains(help),
        "{stderr}"
    );
    assert!(!dir.path().join("out/report.json").exists());
}

#[test]
fn temporary_files_that_cannot_be_written_are_an_error_not_a_fallback() {
    let what = "cannot write or read the temporary file";
    assert_missing_tmpdir_fails(100, "auto", what, "point TMPDIR at a disk");
}

#[test]
fn item_lines_that_cannot_be_spilled_are_an_error_not_a_lost_report() {
    // The table join: not partitioned, but items.jsonl's lines spill past 16 KiB.
    let what = "cannot write the items report's sorted lines";
    let help = "point TMPDIR at a disk with room for items.jsonl";
    assert_missing_tmpdir_fails(800, "table", what, help);
}

#[test]
fn a_size_that_is_not_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    data(dir.path(), 10);
    write(dir.path(), "spec.yaml", &spec("last", "left", "error"));
    let args = ["run", "spec.yaml", "--max-memory", "2 gigs"];
    let output = evalspec_with_env(dir.path(), &[], &args);
    assert_eq!(output.code, 2, "{}", output.stderr);
    assert!(output.stderr.contains("--max-memory"), "{}", output.stderr);
}

/// The items report asked for twice, its lines spilled to disk: the last
/// report written releases the runs as it reads them, and both files are
/// the one the table writes without spilling.
#[test]
fn an_items_report_written_twice_from_spilled_lines_is_whole_both_times() {
    let dir = tempfile::tempdir().unwrap();
    data(dir.path(), 1_200);
    let reports = "reports: [json, items, { format: items, path: again.jsonl }]";
    let spec =
        spec("last", "left", "error").replace("reports: [json, markdown, items, junit]", reports);
    write(dir.path(), "spec.yaml", &spec);
    let (_, table) = run(dir.path(), Way::Table, 1);
    let file = |files: &[(String, Vec<u8>)], name: &str| {
        let found = files.iter().find(|(n, _)| n == name);
        found.map(|(_, bytes)| bytes.clone()).expect(name)
    };
    let expected = file(&table, "items.jsonl");
    assert_eq!(expected.iter().filter(|&&b| b == b'\n').count(), 1_200);
    for way in [Way::TableSpilled, Way::StreamSpilled, Way::Partition] {
        let (output, files) = run(dir.path(), way, 3);
        assert!(output.code <= 1, "{way:?}: {}", output.stderr);
        assert!(
            file(&files, "items.jsonl") == expected,
            "{way:?}: items.jsonl"
        );
        assert!(
            file(&files, "again.jsonl") == expected,
            "{way:?}: again.jsonl"
        );
    }
}

/// A spec read as runs (the shipped operational preset: one trace file per
/// run) joins each run as a single-run spec does: partitioned to disk under a
/// tiny budget, streamed past the items, or as tables, with the same bytes.
#[test]
fn a_spec_read_as_runs_is_partitioned_and_streamed_like_one_run() {
    let root = crate::support::repo_root();
    let out = tempfile::tempdir().unwrap();
    let spec = "specs/operational.yaml";
    let check = ["check", spec, "--max-memory", "1", "--threads", "3"];
    let planned = crate::support::evalspec(&root, &check);
    assert_eq!(planned.code, 0, "{}", planned.stderr);
    let partitioned = "partitioned join: `trace` and `gold` written by key to 64 partitions";
    assert!(planned.stdout.contains(partitioned), "{}", planned.stdout);
    let mut reference: Option<(Output, Files)> = None;
    for (join, budget) in [("table", None), ("index", None), ("partitioned", Some("1"))] {
        for threads in ["1", "3"] {
            let name = format!("{join}-{threads}");
            let folder = out.path().join(&name);
            let folder = folder.to_str().unwrap();
            let mut args = vec![
                "run",
                spec,
                "--out",
                folder,
                "--join",
                join,
                "--threads",
                threads,
            ];
            args.extend(budget.iter().flat_map(|b| ["--max-memory", b]));
            let output = crate::support::evalspec(&root, &args);
            assert!(output.code <= 1, "{name}: {}", output.stderr);
            let files = written(out.path(), &name);
            let output = Output {
                stdout: output.stdout.replace(folder, "OUT"),
                ..output
            };
            match &reference {
                None => reference = Some((output, files)),
                Some((first, first_files)) => {
                    assert_eq!(first.stdout, output.stdout, "stdout, {name}");
                    assert_eq!(first.stderr, output.stderr, "stderr, {name}");
                    assert_eq!(first_files.len(), files.len(), "{name}");
                    for ((file, a), (_, b)) in first_files.iter().zip(&files) {
                        assert!(a == b, "{file} differs, {name}");
                    }
                }
            }
        }
    }
}

/// The keys split into buckets, each evaluated apart by the engine under a
/// given join, each state sent as bytes and the states merged in another
/// order, give the table's bytes: the shape of a distributed run, under
/// every duplicates policy, with retries, missing traces, keyless records
/// and offenders cleared by later records.
#[test]
fn buckets_evaluated_apart_give_the_tables_bytes_under_every_join() {
    use evalspec::{Bucket, JoinChoice, Options, Resources, Spec};
    let dir = tempfile::tempdir().unwrap();
    data(dir.path(), 600);
    for (trace_duplicates, join, gold_duplicates) in [
        ("last", "left", "error"),
        ("first", "inner", "keep"),
        ("last", "left", "last"),
    ] {
        write(
            dir.path(),
            "spec.yaml",
            &spec(trace_duplicates, join, gold_duplicates),
        );
        let (table, expected) = run(dir.path(), Way::Table, 1);
        assert!(table.code <= 1, "{}", table.stderr);
        let spec = Spec::compile(dir.path().join("spec.yaml"), &Options::new()).unwrap();
        for (choice, budget) in [
            (JoinChoice::Table, None),
            (JoinChoice::Index, None),
            (JoinChoice::Partitioned, Some(1)),
        ] {
            let resources = Resources {
                threads: 2,
                max_memory: budget,
                join: choice,
            };
            let mut states: Vec<Vec<u8>> = (0..4)
                .map(|index| {
                    let bucket = Some(Bucket { index, of: 4 });
                    let mut state = spec.evaluate_partial(resources, bucket).unwrap();
                    state.encode().unwrap()
                })
                .collect();
            states.rotate_left(1);
            let mut states = states
                .iter()
                .map(|b| spec.decode_partial(b, resources).unwrap());
            let mut whole = states.next().unwrap();
            states.for_each(|state| whole.merge(state).unwrap());
            let evaluation = spec.finish(whole, resources).unwrap();
            let out = dir.path().join("out-buckets");
            let _ = std::fs::remove_dir_all(&out);
            evaluation.write_reports(&out).unwrap();
            let files = written(dir.path(), "out-buckets");
            let what =
                format!("{choice:?}, trace {trace_duplicates}, {join}, gold {gold_duplicates}");
            assert_eq!(files.len(), expected.len(), "{what}");
            // The engine was given the spec's full path; the command, a relative one.
            let prefix = format!("{}/", dir.path().display());
            // So is the run id, which digests the report (its paths too).
            for ((name, a), (_, b)) in expected.iter().zip(&files) {
                let b = String::from_utf8_lossy(b).replace(&prefix, "");
                let a = String::from_utf8_lossy(a);
                let (a, b) = (
                    crate::support::without_run_id(&a),
                    crate::support::without_run_id(&b),
                );
                assert!(a == b, "{name} differs, {what}");
            }
        }
    }
}
