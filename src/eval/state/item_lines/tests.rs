//! The spools' and merges' tests: every way of spilling and merging gives
//! the stable sort of the lines in report order.

use std::fs::File;

use super::sorted_file::{release_pages, RELEASE_EVERY};
use super::*;
use crate::base::value::BigInt;
use crate::report_model::push_item_line;
use proptest::prelude::*;

/// A line as a test builds it: key choice, line, ordinal, body.
type Spec = (Option<u8>, u32, String);

fn key(choice: Option<u8>) -> Option<Key> {
    choice.map(|c| match c % 4 {
        0 => Key::Num(f64::from(c).to_bits()),
        1 => Key::Big(BigInt::from_parts(c % 8 == 1, u64::MAX - u64::from(c))),
        _ => Key::Str(Arc::from(format!("q{}", c / 3))),
    })
}

/// The lines of `spools` (each: its lines, a keep mask, run name), put in
/// spools of `limit` bytes; their items.jsonl, and what a stable sort of
/// every kept line in file order gives. `by_ordinal`: each spool's lines are
/// put in report order first and the spool is told so (as a streamed join
/// over a sorted gold set does), so that only lines of different runs are
/// compared by key.
fn both(
    spools: &[(Vec<Spec>, Vec<bool>, Option<&str>)],
    limit: usize,
    by_ordinal: bool,
) -> (String, String) {
    let mut lines = ItemLines::default();
    let mut all: Vec<(Option<Key>, u32, &str, Option<&str>)> = Vec::new();
    for (index, (specs, keep, run)) in spools.iter().enumerate() {
        let mut spool = LineSpool::new(LineLimit::bytes(limit));
        let mut order: Vec<usize> = (0..specs.len()).collect();
        if by_ordinal {
            order.sort_by(|&a, &b| {
                let (key_a, key_b) = (key(specs[a].0), key(specs[b].0));
                report_order(
                    (key_a.as_ref(), None, specs[a].1),
                    (key_b.as_ref(), None, specs[b].1),
                )
            });
            spool.order_by_ordinal();
        }
        for (i, &at) in order.iter().enumerate() {
            let (choice, line, body) = &specs[at];
            if keep[at] {
                all.push((key(*choice), *line, body, *run));
            }
            spool.push(key(*choice), *line, i as u64, |out| out.push_str(body));
        }
        spool.keep_only(order.iter().map(|&at| keep[at]).collect());
        let mut run_lines = ItemLines::default();
        run_lines.add(spool, 0);
        lines.extend_run(run_lines, run.map(Arc::from), index as u32);
    }
    let mut written = Vec::new();
    lines.write_sorted(&mut written, true).unwrap();
    // Stable: ties keep file order (spool by spool, line by line).
    all.sort_by(|(key_a, line_a, _, run_a), (key_b, line_b, _, run_b)| {
        report_order(
            (key_a.as_ref(), *run_a, *line_a),
            (key_b.as_ref(), *run_b, *line_b),
        )
    });
    let mut expected = String::new();
    for (key, line, body, run) in &all {
        push_item_line(&mut expected, key.as_ref(), *line, *run, body);
        expected.push('\n');
    }
    (String::from_utf8(written).unwrap(), expected)
}

fn specs(len: usize) -> impl Strategy<Value = Vec<Spec>> {
    let spec = (
        proptest::option::weighted(0.9, 0u8..24),
        0u32..6,
        "[a-z\"é\\\\]{0,12}",
    );
    proptest::collection::vec(spec, 0..len)
}

fn spool(len: usize) -> impl Strategy<Value = (Vec<Spec>, Vec<bool>)> {
    specs(len).prop_flat_map(|specs| {
        let n = specs.len();
        (
            Just(specs),
            proptest::collection::vec(proptest::bool::weighted(0.8), n),
        )
    })
}

proptest! {
    /// Whatever is spilled, merged or skipped, items.jsonl is the stable
    /// sort of the kept lines in report order. A limit of a few bytes
    /// spills every line and merges sorted files (more than `FAN_IN`). Spools
    /// ordered by ordinal in several runs still compare their keys.
    #[test]
    fn spilled_lines_come_out_as_a_stable_sort(
        spools in proptest::collection::vec(spool(60), 1..4),
        limit in prop_oneof![Just(1usize), Just(300), Just(usize::MAX)],
        runs in proptest::bool::ANY,
        by_ordinal in proptest::bool::ANY,
    ) {
        let names = ["run10", "run9", "run10"];
        let spools: Vec<_> = (spools.into_iter().enumerate())
            .map(|(i, (specs, keep))| (specs, keep, runs.then_some(names[i % 3])))
            .collect();
        let (written, expected) = both(&spools, limit, by_ordinal);
        prop_assert_eq!(written, expected);
    }
}

/// Lines numbered in report order, each pushed to one of three spools in
/// any order, some spools ordered by ordinal: items.jsonl is the lines in
/// report order, whichever spools are marked (a mix compares marked lines
/// by ordinal and others by key: the same order).
fn numbered_in_report_order(
    specs: &[Spec],
    spool_of: &[(usize, u32)],
    marked: [bool; 3],
    limit: usize,
) -> (String, String) {
    let mut numbered: Vec<(Option<Key>, u32, &str)> = (specs.iter())
        .map(|(choice, line, body)| (key(*choice), *line, body.as_str()))
        .collect();
    numbered.sort_by(|a, b| report_order((a.0.as_ref(), None, a.1), (b.0.as_ref(), None, b.1)));
    let mut pushes: Vec<(usize, u32, usize)> = (spool_of.iter().enumerate())
        .map(|(ordinal, &(spool, priority))| (spool % 3, priority, ordinal))
        .collect();
    pushes.sort();
    let mut spools: Vec<LineSpool> = (0..3)
        .map(|_| LineSpool::new(LineLimit::bytes(limit)))
        .collect();
    for (spool, marked) in spools.iter_mut().zip(marked) {
        if marked {
            spool.order_by_ordinal();
        }
    }
    for (spool, _, ordinal) in pushes {
        let (key, line, body) = &numbered[ordinal];
        spools[spool].push(key.clone(), *line, ordinal as u64, |out| out.push_str(body));
    }
    let mut lines = ItemLines::default();
    for spool in spools {
        lines.add(spool, 0);
    }
    let mut written = Vec::new();
    lines.write_sorted(&mut written, true).unwrap();
    let mut expected = String::new();
    for (key, line, body) in &numbered {
        push_item_line(&mut expected, key.as_ref(), *line, None, body);
        expected.push('\n');
    }
    (String::from_utf8(written).unwrap(), expected)
}

proptest! {
    #[test]
    fn lines_ordered_by_ordinal_come_out_in_report_order(
        (specs, spool_of) in specs(80).prop_flat_map(|specs| {
            let n = specs.len();
            (Just(specs), proptest::collection::vec((0usize..3, any::<u32>()), n))
        }),
        marked in any::<[bool; 3]>(),
        limit in prop_oneof![Just(1usize), Just(300), Just(usize::MAX)],
    ) {
        let (written, expected) = numbered_in_report_order(&specs, &spool_of, marked, limit);
        prop_assert_eq!(written, expected);
    }
}

/// A spool of `count` lines of about a KiB each, keys descending.
fn large_spool(count: u32) -> LineSpool {
    let mut spool = LineSpool::new(LineLimit::bytes(256 << 10));
    for i in 0..count {
        let key = Key::Str(Arc::from(format!("q{}", count - i)));
        let body = format!("\"n\":\"{}\"", "x".repeat(1000));
        spool.push(Some(key), i, u64::from(i), |out| out.push_str(&body));
    }
    spool
}

#[test]
fn a_report_of_many_batches_is_written_whole_and_in_order() {
    let count = 5_000;
    let mut lines = ItemLines::default();
    lines.add(large_spool(count), 0);
    let mut out = Vec::new();
    lines.write_sorted(&mut out, true).unwrap();
    assert!(out.len() > 4 * BATCH);
    let keys: Vec<u32> = (String::from_utf8(out).unwrap().lines())
        .map(|l| l[9..l.find("\",").unwrap()].parse().unwrap())
        .collect();
    assert_eq!(keys, (1..=count).collect::<Vec<u32>>());
}

/// Written before the last report, the lines come out whole each time;
/// after it (their sorted files released as read), writing again is an error,
/// never a report of released bytes.
#[test]
fn lines_are_written_until_their_last_report() {
    let mut lines = ItemLines::default();
    lines.add(large_spool(2_000), 0);
    assert!(!lines.spools[0].files.is_empty());
    let write = |last| {
        let mut out = Vec::new();
        lines.write_sorted(&mut out, last).map(|()| out)
    };
    let first = write(false).unwrap();
    assert_eq!(write(false).unwrap(), first);
    assert_eq!(write(true).unwrap(), first);
    assert!(write(false).is_err());
}

/// A sorted file read for the last time gives its pages back as it is read (where
/// the temporary folder's file system punches holes).
#[cfg(target_os = "linux")]
#[test]
fn a_run_read_for_the_last_time_gives_its_pages_back() {
    use std::os::unix::fs::MetadataExt;
    let allocated = |file: &File| file.metadata().unwrap().blocks() * 512;
    let mut spool = LineSpool::new(LineLimit::bytes(64 << 20));
    for i in 0..8_000u32 {
        let body = format!("\"n\":\"{}\"", "x".repeat(1000));
        spool.push(
            Some(Key::Str(Arc::from(format!("q{i}")))),
            i,
            u64::from(i),
            |out| out.push_str(&body),
        );
    }
    spool.spill();
    let sorted = &spool.files[0];
    let before = allocated(&sorted.file);
    assert!(before > 8 << 20);
    let mut cursor = Cursor::of_file(sorted, Place::default(), true).unwrap();
    while let Some(head) = cursor.next(0).unwrap() {
        cursor.copy_text(&head, None, &mut io::sink()).unwrap();
    }
    let after = allocated(&sorted.file);
    // The release is best effort: where the temporary folder's file system
    // punches no holes, the file keeps its pages until it is closed.
    let scratch = tempfile::tempfile().unwrap();
    (&scratch).write_all(&vec![b'x'; 4 << 20]).unwrap();
    let full = allocated(&scratch);
    release_pages(&scratch, 0..4 << 20);
    if allocated(&scratch) < full {
        assert!(
            after <= RELEASE_EVERY + (64 << 10),
            "{after} of {before} bytes still allocated"
        );
    } else {
        assert_eq!(after, before);
    }
}

/// Takes `room` bytes, then fails as a full disk does.
struct Full {
    room: usize,
}

impl Write for Full {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.room == 0 {
            return Err(io::Error::from(io::ErrorKind::StorageFull));
        }
        let taken = buf.len().min(self.room);
        self.room -= taken;
        Ok(taken)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_write_that_fails_stops_the_merge_and_is_the_error() {
    let mut lines = ItemLines::default();
    lines.add(large_spool(5_000), 0);
    let error = lines
        .write_sorted(&mut Full { room: BATCH + 7 }, true)
        .unwrap_err();
    assert_eq!(error.kind(), io::ErrorKind::StorageFull);
}

#[test]
fn a_spool_past_its_limit_writes_runs_and_merges_them_by_level() {
    let mut spool = LineSpool::new(LineLimit::bytes(1));
    let count = FAN_IN * FAN_IN + 2 * FAN_IN + 3;
    for i in 0..count as u32 {
        let key = Key::Str(Arc::from(format!("q{}", 1000 - i)));
        spool.push(Some(key), i, u64::from(i), |out| out.push_str("\"x\":1"));
    }
    // Every line was a sorted file; every FAN_IN files of a level became one of the
    // next: one of FAN_IN² lines, two of FAN_IN, three of 1, as the count
    // is written in base FAN_IN.
    assert!(spool.lines.is_empty());
    let levels: Vec<(u32, usize)> = (spool.files.iter())
        .map(|run| (run.level, run.lines))
        .collect();
    let (one, square) = (FAN_IN, FAN_IN * FAN_IN);
    assert_eq!(
        levels,
        [(2, square), (1, one), (1, one), (0, 1), (0, 1), (0, 1)]
    );
    let mut lines = ItemLines::default();
    lines.add(spool, 0);
    let mut out = Vec::new();
    lines.write_sorted(&mut out, true).unwrap();
    let out = String::from_utf8(out).unwrap();
    let keys: Vec<String> = (out.lines())
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["key"].to_string())
        .collect();
    assert_eq!(keys.len(), count);
    let lowest = format!("\"q{}\"", 1000 - count + 1);
    assert_eq!(keys.first(), Some(&lowest));
    assert_eq!(keys.last().map(String::as_str), Some("\"q1000\""));
}

/// Spools of many sorted files each: past `MAX_OPEN_FILES` in all, the largest
/// spools' sorted files are merged into one, and the report does not change.
#[test]
fn open_sorted_files_are_bounded_and_the_report_is_the_same() {
    let spools = 12;
    let per_spool = FAN_IN - 1;
    let spec = |s: usize, i: usize| {
        (
            Some((s * 7 + i * 5) as u8 % 24),
            (i % 6) as u32,
            format!("\"n\":{i}"),
        )
    };
    let spools: Vec<(Vec<Spec>, Vec<bool>, Option<&str>)> = (0..spools)
        .map(|s| {
            (
                (0..per_spool).map(|i| spec(s, i)).collect(),
                vec![true; per_spool],
                None,
            )
        })
        .collect();
    let mut lines = ItemLines::default();
    for (s, (specs, _, _)) in spools.iter().enumerate() {
        let mut spool = LineSpool::new(LineLimit::bytes(1));
        for (i, (choice, line, body)) in specs.iter().enumerate() {
            spool.push(key(*choice), *line, i as u64, |out| out.push_str(body));
        }
        lines.add(spool, (s * per_spool) as u64);
    }
    let open: usize = lines.spools.iter().map(|spool| spool.files.len()).sum();
    assert!(open <= MAX_OPEN_FILES, "{open} sorted files open");
    assert!(lines.spools.iter().any(|spool| spool.files.len() == 1));
    let mut written = Vec::new();
    lines.write_sorted(&mut written, true).unwrap();
    let (_, expected) = both(&spools, usize::MAX, false);
    assert_eq!(String::from_utf8(written).unwrap(), expected);
}

#[test]
fn file_order_follows_runs_then_bases() {
    let mut first = LineSpool::default();
    first.push(Some(Key::Str("b".into())), 3, 0, |out| {
        out.push_str("\"n\":0")
    });
    let mut second = LineSpool::default();
    second.push(Some(Key::Str("a".into())), 9, 0, |out| {
        out.push_str("\"n\":1")
    });
    second.push(Some(Key::Str("c".into())), 10, 1, |out| {
        out.push_str("\"n\":2")
    });
    second.keep_only(vec![true, false]);
    let mut run = ItemLines::default();
    run.add(first, 0);
    run.add(second, 1);
    let mut lines = ItemLines::default();
    lines.extend_run(run, Some(Arc::from("r")), 0);
    let order: Vec<String> = (lines.in_file_order().into_iter())
        .map(|(line, run)| {
            let mut json = String::new();
            line.push_json(run, &mut json);
            json
        })
        .collect();
    assert_eq!(
        order,
        [
            r#"{"key":"b","line":3,"run":"r","n":0}"#,
            r#"{"key":"a","line":9,"run":"r","n":1}"#,
        ]
    );
}

#[test]
fn a_limit_is_a_slice_of_the_budget_within_bounds() {
    assert_eq!(LineLimit::of(None, 2), LineLimit(Some(DEFAULT_LIMIT)));
    assert_eq!(LineLimit::of(Some(1), 2), LineLimit(Some(LEAST_LIMIT)));
    let two_gib = 2u64 << 30;
    assert_eq!(
        LineLimit::of(Some(two_gib), 2),
        LineLimit(Some(DEFAULT_LIMIT))
    );
    assert_eq!(LineLimit::of(Some(64 << 20), 2), LineLimit(Some(4 << 20)));
}
