//! items.jsonl's lines, from when each item is scored to when the report is
//! written, in memory bounded by a limit. Each producer (a chunk of items, a
//! part of a streamed dataset) keeps its lines in a [`LineSpool`]: in memory up
//! to its limit, past it sorted in report order and written to an anonymous
//! temporary file (a *sorted file*), which the system removes once it is
//! closed. Sorted files are merged as they pile up, [`FAN_IN`] of one level
//! into one of the
//! next, so the files open at once stay few and each line is rewritten only a
//! few times (a level's files hold [`FAN_IN`] times the lines of the one below).
//! Writing the report merges every spool's sorted files and lines in report order
//! (an external merge sort): a million lines cost the spools' limits in memory,
//! not their text.
//!
//! A spool keeps its lines' text back to back in one buffer, each rendered
//! there whole as its item is scored (all but the run, which goes in as the
//! line is written out), and reused once spilled. A merge reads a line's order
//! and length and leaves its text in the sorted file's reader until the line is
//! written: each byte is copied from a sorted file straight to where it goes, with no
//! allocation per line.
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
use std::io::{self, BufWriter, Write};
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::{mpsc, Arc};

use crate::base::diagnostic::Diagnostic;
use crate::base::value::Key;
use crate::eval::error::EvalError;
use crate::eval::outcome::report_order;
use crate::report_model::{push_item_head, push_item_run};

use merge::{merge, Cursor, Place, Source};
use sorted_file::{write_head, write_sorted_file, SortedFile};

mod merge;
mod sorted_file;
#[cfg(test)]
mod tests;

/// Bytes of lines a spool keeps in memory before it writes them to a sorted file,
/// unless the memory budget asks for less. Sixteen MiB: a streamed join holds
/// a spool per part, eight parts on two threads, and each spool's buffer is
/// taken whole; at 32 MiB a million items' run peaked 100-150 MB higher.
const DEFAULT_LIMIT: usize = 16 << 20;
/// The least a budget lowers the limit to (a tiny `--max-memory` in tests).
const LEAST_LIMIT: usize = 16 << 10;
/// Sorted files of one level a spool merges into one of the next level. Sixteen:
/// a million items' lines (about 560 MB, some forty files over eight parts)
/// are written once and merged once, as items.jsonl is written; at eight each
/// thread merged its first eight files first, rewriting most of the lines.
const FAN_IN: usize = 16;
/// The most sorted files the final merge reads at once, one open file each (a
/// system's limit on open files is often 256 or 1024).
const MAX_OPEN_FILES: usize = 128;
/// What a line costs in memory besides its text: its entry (key, order, place).
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

    /// The limit for an evaluation with `budget` bytes (`--max-memory`) shared by
    /// `threads` threads, each holding a spool or two.
    pub fn of(budget: Option<u64>, threads: usize) -> Self {
        let share = budget.map_or(usize::MAX, |b| {
            let per_spool = b / (8 * threads.max(1) as u64);
            usize::try_from(per_spool).unwrap_or(usize::MAX)
        });
        LineLimit(Some(share.clamp(LEAST_LIMIT, DEFAULT_LIMIT)))
    }

    #[cfg(test)]
    pub(in crate::eval) fn bytes(limit: usize) -> Self {
        LineLimit(Some(limit))
    }
}

/// One scored item's line as a spool keeps it: what orders it, and where its
/// text is in the spool's buffer.
#[derive(Debug, Clone)]
struct Entry {
    key: Option<Key>,
    line: u32,
    /// Which of its spool's lines this is, in the order pushed.
    score: u32,
    /// The item's place in its spool's file order (plus the spool's base).
    ordinal: u64,
    /// The line's text: its head, body, `}` and newline.
    start: usize,
    len: u32,
    /// Where in it the run goes: the head's length.
    split: u32,
}

impl Entry {
    fn text<'a>(&self, buffer: &'a str) -> &'a str {
        &buffer[self.start..self.start + self.len as usize]
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
        LINE_OVERHEAD + key + self.len as usize
    }
}

/// An item's line of items.jsonl as kept in memory, without its run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ItemLine<'a> {
    /// Its head, body, `}` and newline.
    text: &'a str,
    /// Where the run goes: the head's length.
    split: usize,
}

impl ItemLine<'_> {
    /// Appends the item's line of items.jsonl, scored in `run`, without its newline.
    pub fn push_json(&self, run: Option<&str>, out: &mut String) {
        let (head, rest) = self.text.split_at(self.split);
        out.push_str(head);
        if let Some(run) = run {
            push_item_run(out, run);
        }
        out.push_str(rest.strip_suffix('\n').unwrap_or(rest));
    }
}

/// One producer's lines: in memory, and sorted files on disk.
#[derive(Debug)]
pub struct LineSpool {
    limit: LineLimit,
    lines: Vec<Entry>,
    /// The text of `lines`, back to back.
    text: String,
    bytes: usize,
    files: Vec<SortedFile>,
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
            text: String::new(),
            bytes: 0,
            files: Vec::new(),
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
    fn sort<L: std::borrow::Borrow<Entry>>(&self, lines: &mut [L]) {
        if self.by_ordinal {
            lines.sort_unstable_by_key(|line| line.borrow().ordinal);
        } else {
            lines.sort_unstable_by(|a, b| a.borrow().spool_order(b.borrow()));
        }
    }

    /// Keeps the line of the item with `key` on `line`, `ordinal` in file
    /// order, whose body (label, fields, matchers: see
    /// [`crate::report_model::push_item_line`]) `body` appends.
    pub fn push(
        &mut self,
        key: Option<Key>,
        line: u32,
        ordinal: u64,
        body: impl FnOnce(&mut String),
    ) {
        // Taken whole at the first line after a spill: grown by doubling,
        // each step copied the text so far into fresh memory.
        if self.text.capacity() == 0 {
            if let Some(limit) = self.limit.0 {
                self.text.reserve_exact(limit.min(DEFAULT_LIMIT));
            }
        }
        let start = self.text.len();
        push_item_head(&mut self.text, key.as_ref(), line);
        let split = self.text.len() - start;
        body(&mut self.text);
        self.text.push_str("}\n");
        let (Ok(len), Ok(split)) = (u32::try_from(self.text.len() - start), u32::try_from(split))
        else {
            // Reported as a spill that failed: items.jsonl is never written short.
            self.text.truncate(start);
            self.pushed = self.pushed.saturating_add(1);
            let error = io::Error::other(format!("line {line}'s item is over 4 GiB as JSON"));
            self.failed.get_or_insert(error);
            return;
        };
        let entry = Entry {
            key,
            line,
            score: self.pushed,
            ordinal,
            start,
            len,
            split,
        };
        self.pushed = self.pushed.saturating_add(1);
        self.bytes += entry.cost();
        self.lines.push(entry);
        if self.limit.0.is_some_and(|limit| self.bytes > limit) {
            self.spill();
        }
    }

    /// Keeps a line already rendered whole (`text`: head, body, `}` and
    /// newline, the run after `split` bytes): a line decoded from a state.
    fn push_rendered(&mut self, key: Option<Key>, line: u32, ordinal: u64, text: &str, split: u32) {
        let start = self.text.len();
        self.text.push_str(text);
        let Ok(len) = u32::try_from(text.len()) else {
            self.text.truncate(start);
            let error = io::Error::other(format!("line {line}'s item is over 4 GiB as JSON"));
            self.failed.get_or_insert(error);
            return;
        };
        let entry = Entry {
            key,
            line,
            score: self.pushed,
            ordinal,
            start,
            len,
            split,
        };
        self.pushed = self.pushed.saturating_add(1);
        self.bytes += entry.cost();
        self.lines.push(entry);
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

    /// Moves the lines in memory to a sorted file when the spool has some already (its
    /// lines are many): what is kept after a producer is done stays small.
    pub fn seal(&mut self) {
        if !self.files.is_empty() && !self.lines.is_empty() {
            self.spill();
        }
        self.text.shrink_to_fit();
        self.lines.shrink_to_fit();
    }

    /// Writes the lines in memory to a sorted file and frees them: a producer that
    /// is done holds only the lines it has not spilled.
    fn spill(&mut self) {
        let mut lines = std::mem::take(&mut self.lines);
        if self.failed.is_none() {
            self.sort(&mut lines);
            let written = write_sorted_file(&lines, &self.text).and_then(|file| {
                self.files.push(file);
                self.merge_files()
            });
            if let Err(error) = written {
                self.failed = Some(error);
            }
        }
        self.text = String::new();
        self.bytes = 0;
    }

    /// Merges the last [`FAN_IN`] sorted files while they are of one level.
    /// Levels never rise from the first file to the last, as the digits of a
    /// counter.
    fn merge_files(&mut self) -> io::Result<()> {
        while let Some(last) = self.files.last() {
            let tail = self.files.len().saturating_sub(FAN_IN);
            if self.files.len() < FAN_IN || self.files[tail].level != last.level {
                return Ok(());
            }
            self.merge_last(FAN_IN)?;
        }
        Ok(())
    }

    /// Merges the last `count` sorted files into one, a level above the highest.
    fn merge_last(&mut self, count: usize) -> io::Result<()> {
        let merged = self.files.split_off(self.files.len().saturating_sub(count));
        let place = Place {
            by_ordinal: self.by_ordinal,
            ..Place::default()
        };
        let cursors = (merged.iter())
            .map(|sorted| Cursor::of_file(sorted, place, true))
            .collect::<io::Result<Vec<_>>>()?;
        let file = tempfile::tempfile()?;
        let mut out = BufWriter::with_capacity(64 << 10, &file);
        merge(cursors, |head, cursor| {
            write_head(&mut out, head)?;
            cursor.copy_text(head, None, &mut out)
        })?;
        out.into_inner().map_err(io::IntoInnerError::into_error)?;
        self.files.push(SortedFile {
            file,
            lines: merged.iter().map(|sorted| sorted.lines).sum(),
            level: merged.iter().map(|sorted| sorted.level).max().unwrap_or(0) + 1,
        });
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
    /// The sorted files were read for the last time (`write_sorted`'s `last`).
    released: AtomicBool,
}

impl ItemLines {
    /// The lines of one spool, to which a producer pushes ([`ItemLines::spool`]).
    pub fn of(spool: LineSpool) -> Self {
        ItemLines {
            spools: vec![spool],
            released: AtomicBool::new(false),
        }
    }

    /// The last spool added: the one a producer pushes its lines to.
    pub fn spool(&mut self) -> &mut LineSpool {
        if self.spools.is_empty() {
            self.spools.push(LineSpool::default());
        }
        self.spools.last_mut().expect("one spool at least")
    }

    /// Adds every spool of `other`, sealed.
    pub fn append(&mut self, other: ItemLines) {
        for mut spool in other.spools {
            spool.seal();
            self.spools.push(spool);
        }
        self.bound_open_files();
    }

    /// Adds a spool whose ordinals count from `base` (the items of the spools
    /// added before it, when their ordinals count from 0 each).
    pub fn add(&mut self, mut spool: LineSpool, base: u64) {
        spool.seal();
        spool.base = base;
        self.spools.push(spool);
        self.bound_open_files();
    }

    /// Adds every spool of `other`, whose lines were scored in run `run`,
    /// the `index`th.
    pub fn extend_run(&mut self, other: ItemLines, run: Option<Arc<str>>, index: u32) {
        for mut spool in other.spools {
            spool.run = run.clone();
            spool.run_index = index;
            self.spools.push(spool);
        }
        self.bound_open_files();
    }

    /// Past [`MAX_OPEN_FILES`] sorted files in all, merges each spool's into one,
    /// the spool with the most first, until they are few enough.
    fn bound_open_files(&mut self) {
        let open = |spools: &[LineSpool]| spools.iter().map(|s| s.files.len()).sum::<usize>();
        while open(&self.spools) > MAX_OPEN_FILES {
            let most = (self.spools.iter_mut()).max_by_key(|spool| spool.files.len());
            let Some(spool) = most.filter(|s| s.files.len() > 1 && s.failed.is_none()) else {
                return;
            };
            if let Err(error) = spool.merge_last(spool.files.len()) {
                spool.failed = Some(error);
            }
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

    /// Every line kept, spool by spool in report order, for a partial
    /// state sent elsewhere: each spool's run, its place among the runs and
    /// whether its ordinals follow report order, then its lines (key, line,
    /// ordinal, where the run goes, text).
    pub fn encode(&self, w: &mut crate::base::codec::Writer) -> io::Result<()> {
        w.usize(self.spools.len());
        for spool in &self.spools {
            if let Some(error) = &spool.failed {
                return Err(io::Error::new(error.kind(), error.to_string()));
            }
            w.option(spool.run.as_deref(), crate::base::codec::Writer::str);
            w.u64(u64::from(spool.run_index));
            w.bool(spool.by_ordinal);
            let place = Place::of(spool);
            let mut cursors = Vec::new();
            for sorted in &spool.files {
                cursors.push(Cursor::of_file(sorted, place, false)?);
            }
            let mut lines: Vec<&Entry> = spool.lines.iter().collect();
            spool.sort(&mut lines);
            cursors.push(Cursor {
                source: Source::Lines(&spool.text, lines.into_iter()),
                place,
            });
            let mut encoded = crate::base::codec::Writer::default();
            let mut count = 0u64;
            let mut text = Vec::new();
            merge(cursors, |head, cursor| {
                text.clear();
                cursor.copy_text(head, None, &mut text)?;
                encoded.option(head.key.as_deref(), crate::base::codec::Writer::key);
                encoded.u64(u64::from(head.line));
                encoded.u64(head.base_ordinal());
                encoded.u64(u64::from(head.split));
                encoded.raw(&text);
                count += 1;
                Ok(())
            })?;
            w.u64(count);
            let encoded = encoded.into_bytes();
            w.raw(&encoded);
        }
        Ok(())
    }

    /// The lines [`ItemLines::encode`] wrote, each spool's kept within `limit`.
    pub fn decode(
        r: &mut crate::base::codec::Reader<'_>,
        limit: LineLimit,
    ) -> crate::base::codec::Decoded<ItemLines> {
        use crate::base::codec::Reader;
        let spools = r.usize()?;
        let mut lines = ItemLines::default();
        for _ in 0..spools {
            let mut spool = LineSpool::new(limit);
            spool.run = r.option(Reader::arc_str)?;
            spool.run_index = r.u32()?;
            spool.by_ordinal = r.bool()?;
            let count = r.u64()?;
            let bytes = r.raw()?;
            let mut each = Reader::new(bytes);
            for _ in 0..count {
                let key = each.option(Reader::key)?;
                let line = each.u32()?;
                let ordinal = each.u64()?;
                let split = each.u32()?;
                let text = std::str::from_utf8(each.raw()?)
                    .map_err(|_| each.expected("a line's UTF-8 text"))?;
                spool.push_rendered(key, line, ordinal, text, split);
            }
            if !each.is_done() {
                return Err(each.expected("the end of a spool's lines"));
            }
            spool.seal();
            lines.spools.push(spool);
        }
        lines.bound_open_files();
        Ok(lines)
    }

    /// Writes the lines of items.jsonl in report order (module comment). The
    /// merge (reading sorted files, ordering, copying lines) works on a thread of its
    /// own and hands this one batches to write: copying a large report into
    /// its file costs about as much as merging it, and the two overlap.
    /// `last`: no report is written from these lines after this one, so the
    /// sorted files' pages are given back as they are read; writing again then fails.
    pub fn write_sorted(&self, out: &mut dyn Write, last: bool) -> io::Result<()> {
        if self.released.swap(last, AtomicOrdering::Relaxed) {
            return Err(io::Error::other(
                "the items' lines were released after their last report",
            ));
        }
        // Each spool's run as its lines' entry, rendered once.
        let runs: Vec<Option<String>> = (self.spools.iter())
            .map(|spool| {
                spool.run.as_deref().map(|run| {
                    let mut entry = String::new();
                    push_item_run(&mut entry, run);
                    entry
                })
            })
            .collect();
        // Lines all of one evaluated run (`run_index`) and ordered by their
        // place compare no keys (`Head::order`): the sorted files' keys need
        // not be read back (each an allocation and a UTF-8 check, on the
        // merge's one thread).
        let first_run = self.spools.first().map(|spool| spool.run_index);
        let keys_unread = (self.spools.iter())
            .all(|spool| spool.by_ordinal && Some(spool.run_index) == first_run);
        let mut cursors = Vec::new();
        for (spool, run_entry) in self.spools.iter().zip(&runs) {
            if let Some(error) = &spool.failed {
                return Err(io::Error::new(error.kind(), error.to_string()));
            }
            let place = Place {
                run_entry: run_entry.as_deref(),
                keys_unread,
                ..Place::of(spool)
            };
            for run in &spool.files {
                cursors.push(Cursor::of_file(run, place, last)?);
            }
            let mut lines: Vec<&Entry> = spool.lines.iter().collect();
            spool.sort(&mut lines);
            let source = Source::Lines(&spool.text, lines.into_iter());
            cursors.push(Cursor { source, place });
        }
        // Written batches go back to the merge to be filled again.
        let (full, to_write) = mpsc::sync_channel::<Vec<u8>>(2);
        let (emptied, to_fill) = mpsc::channel::<Vec<u8>>();
        std::thread::scope(|scope| {
            let merging = scope.spawn(move || {
                let stopped = |_| io::Error::other("items.jsonl's writer stopped");
                let mut batch = Vec::with_capacity(BATCH);
                merge(cursors, |head, cursor| {
                    cursor.copy_text(head, head.place.run_entry, &mut batch)?;
                    if batch.len() >= BATCH {
                        let next =
                            (to_fill.try_recv()).unwrap_or_else(|_| Vec::with_capacity(BATCH));
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
                written = out.write_all(&batch);
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
    pub fn in_file_order(&self) -> Vec<(ItemLine<'_>, Option<&str>)> {
        let mut lines: Vec<(u32, u64, ItemLine<'_>, Option<&str>)> = Vec::new();
        for spool in &self.spools {
            let place = Place::of(spool);
            let kept = spool.lines.iter().filter(|line| place.keeps(line.score));
            lines.extend(kept.map(|line| {
                let at = place.base + line.ordinal;
                let text = line.text(&spool.text);
                let item = ItemLine {
                    text,
                    split: line.split as usize,
                };
                (place.run_index, at, item, place.run)
            }));
        }
        lines.sort_by_key(|&(run, at, _, _)| (run, at));
        lines
            .into_iter()
            .map(|(_, _, line, run)| (line, run))
            .collect()
    }
}
