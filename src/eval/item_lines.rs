//! items.jsonl's lines, from when each item is scored to when the report is
//! written, in memory bounded by a limit. Each producer (a chunk of items, a
//! part of a streamed dataset) keeps its lines in a [`LineSpool`]: in memory up
//! to its limit, past it sorted in report order and written to an anonymous
//! temporary file (a *run*), which the system removes once it is closed. Runs
//! are merged as they pile up, [`FAN_IN`] runs of one level into one of the
//! next, so the files open at once stay few and each line is rewritten only a
//! few times (a level's runs hold [`FAN_IN`] times the lines of the one below).
//! Writing the report merges every spool's runs and lines in report order
//! (an external merge sort): a million lines cost the spools' limits in memory,
//! not their text.
//!
//! A streamed join scores an item once per record of its key and keeps the
//! winning score; each line carries the number of the score it renders, and
//! lines of scores that lost are skipped when merged ([`LineSpool::keep_only`]).
//!
//! Report order is the key (natural order), the run, the line, then the item's
//! place in file order: the order a stable sort of every line in file order
//! gives, whatever was spilled. When the items' file is in report order already
//! (a gold set sorted by key), a streamed join says so
//! ([`LineSpool::order_by_ordinal`]) and lines are ordered by their place alone:
//! an integer compared in place of two keys read through their pointers.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};
use std::sync::{mpsc, Arc};

use crate::base::diagnostic::Diagnostic;
use crate::base::typed_json::push_key_json;
use crate::base::value::Key;
use crate::data::spill::{read_array, read_key, read_text, write_key, write_text};
use crate::eval::error::EvalError;
use crate::eval::outcome::report_order;
use crate::report_model::push_item_line;

/// Bytes of lines a spool keeps in memory before it writes them to a run,
/// unless the memory budget asks for less.
const DEFAULT_LIMIT: usize = 32 << 20;
/// The least a budget lowers the limit to (a tiny `--max-memory` in tests).
const LEAST_LIMIT: usize = 16 << 10;
/// Runs of one level a spool merges into one run of the next level. Sixteen:
/// a million items' lines (about 600 MB, some twenty runs over two threads)
/// are written once and merged once, as items.jsonl is written; at eight each
/// thread merged its first eight runs first, rewriting most of the lines.
const FAN_IN: usize = 16;
/// What a line costs in memory besides its text: the struct and allocations.
const LINE_OVERHEAD: usize = 64;
/// Bytes of items.jsonl the merge hands over to be written at a time.
const BATCH: usize = 1 << 20;

/// How many bytes of lines a spool may keep in memory: the whole report when a
/// template reads every item (they are all in memory for it anyway); else a
/// slice of the memory budget, at most [`DEFAULT_LIMIT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineLimit(Option<usize>);

impl LineLimit {
    /// Keeps every line in memory.
    pub const UNBOUNDED: LineLimit = LineLimit(None);

    /// The limit for a run with `budget` bytes (`--max-memory`) shared by
    /// `threads` threads, each holding a spool or two.
    pub fn of(budget: Option<u64>, threads: usize) -> Self {
        let share = budget.map_or(usize::MAX, |b| {
            let per_spool = b / (8 * threads.max(1) as u64);
            usize::try_from(per_spool).unwrap_or(usize::MAX)
        });
        LineLimit(Some(share.clamp(LEAST_LIMIT, DEFAULT_LIMIT)))
    }

    #[cfg(test)]
    pub(super) fn bytes(limit: usize) -> Self {
        LineLimit(Some(limit))
    }
}

/// One scored item's line: what orders it, and the rest of the line
/// ([`super::outcome::item_body`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ItemLine {
    pub key: Option<Key>,
    pub line: u32,
    /// The item's place in its spool's file order (plus the spool's base).
    pub ordinal: u64,
    /// Which of its spool's lines this is, in the order pushed.
    score: u32,
    pub body: Box<str>,
}

impl ItemLine {
    /// Appends the item's line of items.jsonl, scored in `run`, without its newline.
    pub fn push_json(&self, run: Option<&str>, out: &mut String) {
        let mut key = String::new();
        push_key_json(&mut key, self.key.as_ref());
        push_item_line(out, &key, self.line, run, &self.body);
    }

    /// Report order within one spool (its run is every line's): key, line,
    /// place in file order.
    fn spool_order(&self, other: &Self) -> Ordering {
        report_order(
            (self.key.as_ref(), None, self.line),
            (other.key.as_ref(), None, other.line),
        )
        .then(self.ordinal.cmp(&other.ordinal))
    }

    fn cost(&self) -> usize {
        let key = match &self.key {
            Some(Key::Str(text)) => text.len(),
            _ => 0,
        };
        LINE_OVERHEAD + key + self.body.len()
    }
}

/// A spool's sorted lines written to an anonymous temporary file.
#[derive(Debug)]
struct Run {
    file: File,
    lines: usize,
    /// 0 for lines spilled from memory; one more than its runs' for a merge.
    level: u32,
}

/// One producer's lines: in memory, and sorted runs on disk.
#[derive(Debug)]
pub struct LineSpool {
    limit: LineLimit,
    lines: Vec<ItemLine>,
    bytes: usize,
    runs: Vec<Run>,
    pushed: u32,
    /// The first temporary file that could not be written or read: the pass
    /// reports it (`ItemLines::spill_error`), and items.jsonl is then never
    /// written short.
    failed: Option<io::Error>,
    /// Per score (in the order pushed): whether its line is kept. `None`: all.
    kept: Option<Vec<bool>>,
    /// Added to every line's ordinal: the items of earlier spools of a pass.
    base: u64,
    /// The run the lines were scored in (with several runs), and its place.
    run: Option<Arc<str>>,
    run_index: u32,
    /// The lines' ordinals (with the base) follow report order.
    by_ordinal: bool,
}

impl LineSpool {
    pub fn new(limit: LineLimit) -> Self {
        LineSpool {
            limit,
            lines: Vec::new(),
            bytes: 0,
            runs: Vec::new(),
            pushed: 0,
            failed: None,
            kept: None,
            base: 0,
            run: None,
            run_index: 0,
            by_ordinal: false,
        }
    }

    /// Orders the lines by their ordinals alone: the caller numbers the items
    /// in one file order that is report order (every spool marked so shares
    /// that numbering, and its run).
    pub fn order_by_ordinal(&mut self) {
        self.by_ordinal = true;
    }

    /// Sorts `lines` (this spool's) in report order.
    fn sort<L: std::borrow::Borrow<ItemLine>>(&self, lines: &mut [L]) {
        if self.by_ordinal {
            lines.sort_unstable_by_key(|line| line.borrow().ordinal);
        } else {
            lines.sort_unstable_by(|a, b| a.borrow().spool_order(b.borrow()));
        }
    }

    /// Keeps the line of the item with `key` on `line`, `ordinal` in file order.
    pub fn push(&mut self, key: Option<Key>, line: u32, ordinal: u64, body: Box<str>) {
        let line = ItemLine {
            key,
            line,
            ordinal,
            score: self.pushed,
            body,
        };
        self.pushed = self.pushed.saturating_add(1);
        self.bytes += line.cost();
        self.lines.push(line);
        if self.limit.0.is_some_and(|limit| self.bytes > limit) {
            self.spill();
        }
    }

    /// Lines pushed so far.
    pub fn pushed(&self) -> u32 {
        self.pushed
    }

    /// Keeps only the lines whose score `keep` says, by the order pushed.
    pub fn keep_only(&mut self, keep: Vec<bool>) {
        self.kept = Some(keep);
    }

    /// Moves the lines in memory to a run when the spool has runs already (its
    /// lines are many): what is kept after a producer is done stays small.
    pub fn seal(&mut self) {
        if !self.runs.is_empty() && !self.lines.is_empty() {
            self.spill();
        }
    }

    fn spill(&mut self) {
        let mut lines = std::mem::take(&mut self.lines);
        self.bytes = 0;
        if self.failed.is_some() {
            return;
        }
        self.sort(&mut lines);
        let written = write_run(lines.iter()).and_then(|run| {
            self.runs.push(run);
            self.merge_runs()
        });
        if let Err(error) = written {
            self.failed = Some(error);
        }
    }

    /// Merges the last [`FAN_IN`] runs while they are of one level. Levels
    /// never rise from the first run to the last, as the digits of a counter.
    fn merge_runs(&mut self) -> io::Result<()> {
        while let Some(last) = self.runs.last() {
            let level = last.level;
            let tail = self.runs.len().saturating_sub(FAN_IN);
            if self.runs.len() < FAN_IN || self.runs[tail].level != level {
                return Ok(());
            }
            let runs = self.runs.split_off(tail);
            let place = Place {
                by_ordinal: self.by_ordinal,
                ..Place::default()
            };
            let cursors = (runs.iter())
                .map(|run| Cursor::of_run(run, place))
                .collect::<io::Result<Vec<_>>>()?;
            let file = tempfile::tempfile()?;
            let mut out = BufWriter::with_capacity(64 << 10, &file);
            merge(cursors, |head| write_line(&mut out, head.line()))?;
            out.into_inner().map_err(io::IntoInnerError::into_error)?;
            self.runs.push(Run {
                file,
                lines: runs.iter().map(|run| run.lines).sum(),
                level: level + 1,
            });
        }
        Ok(())
    }
}

impl Default for LineSpool {
    /// A spool that keeps every line in memory.
    fn default() -> Self {
        LineSpool::new(LineLimit::UNBOUNDED)
    }
}

/// Every line of a run (or of several), from each spool that produced them.
#[derive(Debug, Default)]
pub struct ItemLines {
    spools: Vec<LineSpool>,
}

impl ItemLines {
    /// Adds a spool whose ordinals count from `base` (the items of the spools
    /// added before it, when their ordinals count from 0 each).
    pub fn add(&mut self, mut spool: LineSpool, base: u64) {
        spool.seal();
        spool.base = base;
        self.spools.push(spool);
    }

    /// Adds every spool of `other`, whose lines were scored in run `run`,
    /// the `index`th.
    pub fn extend_run(&mut self, other: ItemLines, run: Option<Arc<str>>, index: u32) {
        for mut spool in other.spools {
            spool.run = run.clone();
            spool.run_index = index;
            self.spools.push(spool);
        }
    }

    /// The error of the first spool whose temporary file failed.
    pub fn spill_error(&self) -> Option<Diagnostic> {
        let error = self.spools.iter().find_map(|spool| spool.failed.as_ref())?;
        Some(Diagnostic::of(&EvalError::ItemLinesNotSpilled {
            dir: std::env::temp_dir().display().to_string(),
            error: error.to_string(),
        }))
    }

    /// Writes the lines of items.jsonl in report order (module comment). The
    /// merge (reading runs, ordering, rendering lines) runs on a thread of its
    /// own and hands this one batches to write: copying a large report into
    /// its file costs about as much as merging it, and the two overlap.
    pub fn write_sorted(&self, out: &mut dyn Write) -> io::Result<()> {
        let mut cursors = Vec::new();
        for spool in &self.spools {
            if let Some(error) = &spool.failed {
                return Err(io::Error::new(error.kind(), error.to_string()));
            }
            let place = Place::of(spool);
            for run in &spool.runs {
                cursors.push(Cursor::of_run(run, place)?);
            }
            let mut lines: Vec<&ItemLine> = spool.lines.iter().collect();
            spool.sort(&mut lines);
            let source = Source::Lines(lines.into_iter());
            cursors.push(Cursor { source, place });
        }
        // Written batches go back to the merge to be filled again.
        let (full, to_write) = mpsc::sync_channel::<String>(2);
        let (emptied, to_fill) = mpsc::channel::<String>();
        std::thread::scope(|scope| {
            let merging = scope.spawn(move || {
                let stopped = |_| io::Error::other("items.jsonl's writer stopped");
                let mut batch = String::with_capacity(BATCH);
                merge(cursors, |head| {
                    head.line().push_json(head.place.run, &mut batch);
                    batch.push('\n');
                    if batch.len() >= BATCH {
                        let next =
                            (to_fill.try_recv()).unwrap_or_else(|_| String::with_capacity(BATCH));
                        full.send(std::mem::replace(&mut batch, next))
                            .map_err(stopped)?;
                    }
                    Ok(())
                })?;
                full.send(batch).map_err(stopped)
            });
            let mut written = Ok(());
            // On an error the batches stop being taken, and the merge stops.
            for mut batch in to_write {
                written = out.write_all(batch.as_bytes());
                if written.is_err() {
                    break;
                }
                batch.clear();
                let _ = emptied.send(batch);
            }
            let merged = merging.join().expect("merging does not panic");
            written.and(merged)
        })
    }

    /// Every line kept in memory, in file order (run by run), with its run:
    /// what a template reading `items` lists. Lines spilled to disk are not
    /// here: a plan whose templates read items keeps them all
    /// ([`LineLimit::UNBOUNDED`]).
    pub fn in_file_order(&self) -> Vec<(&ItemLine, Option<&str>)> {
        let mut lines: Vec<(u32, u64, &ItemLine, Option<&str>)> = Vec::new();
        for spool in &self.spools {
            let place = Place::of(spool);
            let kept = spool.lines.iter().filter(|line| place.keeps(line));
            lines.extend(kept.map(|line| {
                let at = place.base + line.ordinal;
                (place.run_index, at, line, place.run)
            }));
        }
        lines.sort_by_key(|&(run, at, _, _)| (run, at));
        lines
            .into_iter()
            .map(|(_, _, line, run)| (line, run))
            .collect()
    }
}

/// Where a merge reads lines from: a spool's sorted lines in memory, or one of
/// its runs; with the spool's place among the others.
struct Cursor<'a> {
    source: Source<'a>,
    place: Place<'a>,
}

/// What a spool's lines share: which are kept, and what orders them among
/// other spools' (their run, its place, the spool's base, whether ordinals
/// follow report order). Merging one spool's own runs needs only the default
/// and the last: every line kept, one run.
#[derive(Clone, Copy, Default)]
struct Place<'a> {
    kept: Option<&'a [bool]>,
    run: Option<&'a str>,
    run_index: u32,
    base: u64,
    by_ordinal: bool,
}

impl<'a> Place<'a> {
    fn of(spool: &'a LineSpool) -> Self {
        Place {
            kept: spool.kept.as_deref(),
            run: spool.run.as_deref(),
            run_index: spool.run_index,
            base: spool.base,
            by_ordinal: spool.by_ordinal,
        }
    }

    fn keeps(&self, line: &ItemLine) -> bool {
        self.kept.is_none_or(|kept| kept[line.score as usize])
    }
}

enum Source<'a> {
    Lines(std::vec::IntoIter<&'a ItemLine>),
    Run(BufReader<&'a File>, usize),
}

impl<'a> Cursor<'a> {
    fn of_run(run: &'a Run, place: Place<'a>) -> io::Result<Self> {
        let mut file = &run.file;
        file.seek(SeekFrom::Start(0))?;
        let reader = BufReader::with_capacity(64 << 10, file);
        let source = Source::Run(reader, run.lines);
        Ok(Cursor { source, place })
    }

    /// The next line kept, if any.
    fn next(&mut self) -> io::Result<Option<Held<'a>>> {
        loop {
            let line = match &mut self.source {
                Source::Lines(lines) => lines.next().map(Held::Borrowed),
                Source::Run(_, 0) => None,
                Source::Run(reader, left) => {
                    *left -= 1;
                    Some(Held::Owned(read_line(reader)?))
                }
            };
            match line {
                Some(line) if !self.place.keeps(line.get()) => continue,
                line => return Ok(line),
            }
        }
    }
}

enum Held<'a> {
    Borrowed(&'a ItemLine),
    Owned(ItemLine),
}

impl Held<'_> {
    fn get(&self) -> &ItemLine {
        match self {
            Held::Borrowed(line) => line,
            Held::Owned(line) => line,
        }
    }
}

/// A cursor's current line, ordered for the merge's heap (smallest first).
struct Head<'a> {
    line: Held<'a>,
    cursor: usize,
    place: Place<'a>,
}

impl Head<'_> {
    fn line(&self) -> &ItemLine {
        self.line.get()
    }

    /// Report order (module comment).
    fn order(&self, other: &Self) -> Ordering {
        let (a, b) = (self.line(), other.line());
        let (p, q) = (self.place, other.place);
        if p.by_ordinal && q.by_ordinal && p.run_index == q.run_index {
            return (p.base + a.ordinal).cmp(&(q.base + b.ordinal));
        }
        report_order(
            (a.key.as_ref(), p.run, a.line),
            (b.key.as_ref(), q.run, b.line),
        )
        .then(p.run_index.cmp(&q.run_index))
        .then((p.base + a.ordinal).cmp(&(q.base + b.ordinal)))
    }
}

impl PartialEq for Head<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.order(other) == Ordering::Equal
    }
}

impl Eq for Head<'_> {}

impl PartialOrd for Head<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Head<'_> {
    /// Reversed: `BinaryHeap` pops its greatest.
    fn cmp(&self, other: &Self) -> Ordering {
        other.order(self)
    }
}

/// Hands `sink` every line of `cursors` in report order; each cursor's lines
/// are in that order already.
fn merge<'a>(
    mut cursors: Vec<Cursor<'a>>,
    mut sink: impl FnMut(&Head<'a>) -> io::Result<()>,
) -> io::Result<()> {
    let head = |cursors: &mut Vec<Cursor<'a>>, i: usize| -> io::Result<Option<Head<'a>>> {
        let cursor = &mut cursors[i];
        Ok(cursor.next()?.map(|line| Head {
            line,
            cursor: i,
            place: cursor.place,
        }))
    };
    let mut heap = BinaryHeap::with_capacity(cursors.len());
    for i in 0..cursors.len() {
        heap.extend(head(&mut cursors, i)?);
    }
    while let Some(smallest) = heap.pop() {
        sink(&smallest)?;
        heap.extend(head(&mut cursors, smallest.cursor)?);
    }
    Ok(())
}

fn write_run<'a>(lines: impl ExactSizeIterator<Item = &'a ItemLine>) -> io::Result<Run> {
    let count = lines.len();
    let file = tempfile::tempfile()?;
    let mut out = BufWriter::with_capacity(64 << 10, &file);
    for line in lines {
        write_line(&mut out, line)?;
    }
    out.into_inner().map_err(io::IntoInnerError::into_error)?;
    Ok(Run {
        file,
        lines: count,
        level: 0,
    })
}

/// A line in a run: its key, line, ordinal and score, then its body (the
/// pieces of `data::spill`'s records).
fn write_line(out: &mut impl Write, line: &ItemLine) -> io::Result<()> {
    write_key(out, line.key.as_ref())?;
    out.write_all(&line.line.to_le_bytes())?;
    out.write_all(&line.ordinal.to_le_bytes())?;
    out.write_all(&line.score.to_le_bytes())?;
    write_text(out, &line.body)
}

fn read_line(input: &mut impl BufRead) -> io::Result<ItemLine> {
    Ok(ItemLine {
        key: read_key(input)?,
        line: u32::from_le_bytes(read_array(input)?),
        ordinal: u64::from_le_bytes(read_array(input)?),
        score: u32::from_le_bytes(read_array(input)?),
        body: read_text(input)?.into_boxed_str(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::value::BigInt;
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
    /// every kept line in file order gives.
    fn both(spools: &[(Vec<Spec>, Vec<bool>, Option<&str>)], limit: usize) -> (String, String) {
        let mut lines = ItemLines::default();
        let mut all: Vec<(ItemLine, Option<&str>)> = Vec::new();
        for (index, (specs, keep, run)) in spools.iter().enumerate() {
            let mut spool = LineSpool::new(LineLimit::bytes(limit));
            for (i, (choice, line, body)) in specs.iter().enumerate() {
                let body: Box<str> = body.clone().into();
                if keep[i] {
                    let (ordinal, score) = (i as u64, i as u32);
                    let line = *line;
                    let key = key(*choice);
                    let body = body.clone();
                    all.push((
                        ItemLine {
                            key,
                            line,
                            ordinal,
                            score,
                            body,
                        },
                        *run,
                    ));
                }
                spool.push(key(*choice), *line, i as u64, body);
            }
            spool.keep_only(keep.clone());
            let mut run_lines = ItemLines::default();
            run_lines.add(spool, 0);
            lines.extend_run(run_lines, run.map(Arc::from), index as u32);
        }
        let mut written = Vec::new();
        lines.write_sorted(&mut written).unwrap();
        // Stable: ties keep file order (spool by spool, line by line).
        all.sort_by(|(a, run_a), (b, run_b)| {
            report_order(
                (a.key.as_ref(), *run_a, a.line),
                (b.key.as_ref(), *run_b, b.line),
            )
        });
        let mut expected = String::new();
        for (line, run) in &all {
            line.push_json(*run, &mut expected);
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
        /// spills every line and merges runs (more than `FAN_IN`).
        #[test]
        fn spilled_lines_come_out_as_a_stable_sort(
            spools in proptest::collection::vec(spool(60), 1..4),
            limit in prop_oneof![Just(1usize), Just(300), Just(usize::MAX)],
            runs in proptest::bool::ANY,
        ) {
            let names = ["run10", "run9", "run10"];
            let spools: Vec<_> = (spools.into_iter().enumerate())
                .map(|(i, (specs, keep))| (specs, keep, runs.then_some(names[i % 3])))
                .collect();
            let (written, expected) = both(&spools, limit);
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
            spools[spool].push(key.clone(), *line, ordinal as u64, Box::from(*body));
        }
        let mut lines = ItemLines::default();
        for spool in spools {
            lines.add(spool, 0);
        }
        let mut written = Vec::new();
        lines.write_sorted(&mut written).unwrap();
        let mut expected = String::new();
        for (ordinal, (key, line, body)) in numbered.iter().enumerate() {
            let line = ItemLine {
                key: key.clone(),
                line: *line,
                ordinal: ordinal as u64,
                score: 0,
                body: Box::from(*body),
            };
            line.push_json(None, &mut expected);
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
            spool.push(Some(key), i, u64::from(i), body.into());
        }
        spool
    }

    #[test]
    fn a_report_of_many_batches_is_written_whole_and_in_order() {
        let count = 5_000;
        let mut lines = ItemLines::default();
        lines.add(large_spool(count), 0);
        let mut out = Vec::new();
        lines.write_sorted(&mut out).unwrap();
        assert!(out.len() > 4 * BATCH);
        let keys: Vec<u32> = (String::from_utf8(out).unwrap().lines())
            .map(|l| l[9..l.find("\",").unwrap()].parse().unwrap())
            .collect();
        assert_eq!(keys, (1..=count).collect::<Vec<u32>>());
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
            .write_sorted(&mut Full { room: BATCH + 7 })
            .unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::StorageFull);
    }

    #[test]
    fn a_spool_past_its_limit_writes_runs_and_merges_them_by_level() {
        let mut spool = LineSpool::new(LineLimit::bytes(1));
        let count = FAN_IN * FAN_IN + 2 * FAN_IN + 3;
        for i in 0..count as u32 {
            let key = Key::Str(Arc::from(format!("q{}", 1000 - i)));
            spool.push(Some(key), i, u64::from(i), "\"x\":1".into());
        }
        // Every line was a run; every FAN_IN runs of a level became one of the
        // next: one of FAN_IN² lines, two of FAN_IN, three of 1, as the count
        // is written in base FAN_IN.
        assert!(spool.lines.is_empty());
        let levels: Vec<(u32, usize)> = (spool.runs.iter())
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
        lines.write_sorted(&mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        let keys: Vec<String> = (out.lines())
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["key"].to_string())
            .collect();
        assert_eq!(keys.len(), count);
        let lowest = format!("\"q{}\"", 1000 - count + 1);
        assert_eq!(keys.first(), Some(&lowest));
        assert_eq!(keys.last().map(String::as_str), Some("\"q1000\""));
    }

    #[test]
    fn file_order_follows_runs_then_bases() {
        let mut first = LineSpool::default();
        first.push(Some(Key::Str("b".into())), 3, 0, "\"n\":0".into());
        let mut second = LineSpool::default();
        second.push(Some(Key::Str("a".into())), 9, 0, "\"n\":1".into());
        second.push(Some(Key::Str("c".into())), 10, 1, "\"n\":2".into());
        second.keep_only(vec![true, false]);
        let mut run = ItemLines::default();
        run.add(first, 0);
        run.add(second, 1);
        let mut lines = ItemLines::default();
        lines.extend_run(run, Some(Arc::from("r")), 0);
        let order: Vec<(&str, Option<&str>)> = (lines.in_file_order().into_iter())
            .map(|(line, run)| (&*line.body, run))
            .collect();
        assert_eq!(order, [("\"n\":0", Some("r")), ("\"n\":1", Some("r"))]);
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
}
