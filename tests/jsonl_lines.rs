//! JSONL records are found wherever their lines fall in the reader's 1 MiB
//! buffer: across a refill, longer than the buffer, at the end of a file
//! without a final break; with Python's universal line breaks (`\n`, `\r\n`,
//! a lone `\r`), a byte-order mark, blank and indented lines; and every record
//! and error keeps its true line, read by one thread or several.

use std::path::Path;

use crate::support::{self, evalspec_with_env, write};

const SPEC: &str = r#"name: lines
version: 1.0.0
datasets:
  items: { path: items.jsonl, key: id }
fields:
  width: len(items.pad)
metrics:
  n: count()
reports: [json, items]
"#;

/// Record `i`'s text, its `pad` field `pad` characters long (the spec reads
/// it, so a long line is parsed, not skipped).
fn record(i: usize, pad: usize) -> String {
    format!(r#"{{"id": "r{i}", "pad": "{}"}}"#, "x".repeat(pad))
}

/// The file's records as Python's universal newlines read it: each record's
/// key and 1-based line, blank lines skipped.
fn expected(text: &str) -> Vec<(String, usize)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut records = Vec::new();
    let (mut line, mut rest) = (1, text);
    while !rest.is_empty() {
        let end = rest.find(['\n', '\r']).unwrap_or(rest.len());
        let piece = rest[..end].trim();
        if !piece.is_empty() {
            let value: serde_json::Value = serde_json::from_str(piece).unwrap();
            records.push((value["id"].as_str().unwrap().to_string(), line));
        }
        let skip = match &rest.as_bytes()[end..] {
            [b'\r', b'\n', ..] => 2,
            [] => 0,
            _ => 1,
        };
        rest = &rest[end + skip..];
        line += 1;
    }
    records
}

/// The records the run listed in items.jsonl: key and line.
fn listed(dir: &Path, out: &str) -> Vec<(String, usize)> {
    let items = std::fs::read_to_string(dir.join(out).join("items.jsonl")).unwrap();
    let mut records: Vec<(String, usize)> = items
        .lines()
        .map(|line| {
            let item: serde_json::Value = serde_json::from_str(line).unwrap();
            let key = item["key"].as_str().unwrap().to_string();
            (key, item["line"].as_u64().unwrap() as usize)
        })
        .collect();
    records.sort_by_key(|(_, line)| *line);
    records
}

/// Runs the spec on one thread and on three (ranges of 64 KiB at least).
fn run(dir: &Path, threads: &str) -> support::Output {
    let out = format!("out-{threads}");
    let env = [("EVALSPEC_MIN_CHUNK_BYTES", "65536")];
    let args = ["run", "spec.yaml", "--out", &out, "--threads", threads];
    evalspec_with_env(dir, &env, &args)
}

/// Writes `text` as the items and checks that one thread and three list its
/// records at the lines Python's universal newlines give them.
fn assert_read_as_python_reads(dir: &Path, text: &str) {
    write(dir, "items.jsonl", text);
    write(dir, "spec.yaml", SPEC);
    let want = expected(text);
    for threads in ["1", "3"] {
        let output = run(dir, threads);
        assert_eq!(output.code, 0, "{threads} threads: {}", output.stderr);
        let found = listed(dir, &format!("out-{threads}"));
        assert_eq!(found, want, "{threads} threads");
    }
}

#[test]
fn records_keep_their_lines_wherever_the_buffer_cuts_them() {
    let dir = tempfile::tempdir().unwrap();
    // A byte-order mark, then lines of many lengths (so that refills fall
    // inside lines), every kind of break, blank and indented lines, a lone
    // `\r` between two records, a line longer than the buffer, and no final
    // break.
    let mut text = String::from("\u{feff}");
    for i in 0..3000 {
        let pad = (i * 7919) % 2000;
        let brk = match i % 5 {
            0 => "\r\n",
            1 => "\r",
            2 => "\n\n",
            _ => "\n",
        };
        let indent = if i % 11 == 0 { "  \t" } else { "" };
        text.push_str(&format!("{indent}{}{brk}", record(i, pad)));
        if i == 1500 {
            text.push_str(&format!("{}\n", record(100_000, 1_500_000)));
        }
    }
    text.push_str(&record(3000, 10));
    assert_eq!(expected(&text).len(), 3002);
    assert_read_as_python_reads(dir.path(), &text);
}

#[test]
fn a_bad_byte_past_a_refill_is_placed_at_its_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = Vec::new();
    for i in 0..2000 {
        bytes.extend_from_slice(record(i, 1000).as_bytes());
        bytes.push(b'\n');
    }
    // Line 2001: a byte that is not UTF-8, on a line longer than the buffer
    // (so that a refill falls inside it), its column counted in characters.
    let before = format!("{{\"pad\": \"{}\", \"id\": \"é", "z".repeat(1_100_000));
    bytes.extend_from_slice(before.as_bytes());
    bytes.push(0xff);
    bytes.extend_from_slice(b"\"}\n");
    std::fs::write(dir.path().join("items.jsonl"), bytes).unwrap();
    write(dir.path(), "spec.yaml", SPEC);
    let at = format!("items.jsonl:2001:{}", before.chars().count() + 1);
    for threads in ["1", "3"] {
        let output = run(dir.path(), threads);
        assert_eq!(output.code, 2, "{threads} threads: {}", output.stderr);
        assert!(
            output.stderr.contains(&at),
            "{threads} threads, {at}: {}",
            output.stderr
        );
    }
}

#[test]
fn a_break_cut_by_a_refill_is_one_break() {
    // On one thread the buffer is refilled at every MiB of the file: a `\r\n`
    // whose `\r` ends the first fill is one break, and a lone `\r` that ends
    // the second is a break before the record that opens the third.
    const FILL: usize = 1 << 20;
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    let mut i = 0;
    let mut record_ending_at = |text: &mut String, end: usize, brk: &str| {
        while text.len() + 2000 < end {
            text.push_str(&record(i, 900));
            text.push('\n');
            i += 1;
        }
        let pad = end - text.len() - record(i, 0).len();
        text.push_str(&record(i, pad));
        text.push_str(brk);
        i += 1;
    };
    record_ending_at(&mut text, FILL - 1, "\r\n");
    assert_eq!(&text.as_bytes()[FILL - 1..FILL + 1], b"\r\n");
    record_ending_at(&mut text, 2 * FILL - 1, "\r");
    assert_eq!(text.as_bytes()[2 * FILL - 1], b'\r');
    text.push_str(&record(i, 0));
    text.push('\n');
    assert_read_as_python_reads(dir.path(), &text);
}
