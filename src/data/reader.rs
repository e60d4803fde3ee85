//! Reading a dataset file record by record, optionally in parallel chunks.
//!
//! JSONL and TREC files are split at line boundaries into a few chunks per
//! thread, each parsed into a state of its own with its records' true line
//! numbers, which the caller merges in file order (the pool and the hash:
//! `chunks.rs`; the ranges and the line counts: `file.rs`). A JSON array is
//! read whole and split into elements, so that each element's errors still
//! name a line.

use std::io::{BufReader, Read};
use std::ops::{ControlFlow, Range};

use crate::base::diagnostic::{Diagnostic, Location};
use crate::base::python::{is_python_space, python_strip};
use crate::base::sha256::{sha256_hex, Sha256};
use crate::base::value::Value;
use crate::data::chunks::{chunk_count, hash_apart, read_ranges, CHUNKS_PER_THREAD};
use crate::data::error::DataError;
use crate::data::file::{
    bytes_of, chunk_ranges, count_lines, for_each_line, open, open_error, open_range, trec_ranges,
    Line, LineBreaks,
};
use crate::data::position::{char_column, line_col, utf8_error, LineCursor};
use crate::data::progress::Progress;
use crate::data::{csv, json_array, parquet, project, trec};
use crate::ir::Record;
use crate::plan::DatasetPlan;
use crate::spec::Format;

#[derive(Debug, Clone, Default)]
pub struct ReadStats {
    pub records: usize,
    pub sha256: String,
    pub bytes: u64,
    /// JSON formats: per slot of the projection, whether any record had its
    /// field (`None`: the format does not say; CSV and Parquet refuse a
    /// missing column outright).
    pub seen: Option<Vec<bool>>,
}

impl ReadStats {
    /// Adds that some records had the fields `seen` says.
    pub fn saw(&mut self, seen: &[bool]) {
        let all = self.seen.get_or_insert_with(Vec::new);
        if all.len() < seen.len() {
            all.resize(seen.len(), false);
        }
        all.iter_mut().zip(seen).for_each(|(a, b)| *a |= *b);
    }
}

/// What a record's sink tells the reader: read on (`Continue`), stop because
/// nothing more is needed (`Break`), or stop at an error, which becomes the
/// chunk's [`Chunk::stop`].
pub type Flow = Result<ControlFlow<()>, Diagnostic>;

/// One chunk's result: the caller's state, and the error that stopped it, if any.
pub struct Chunk<S> {
    pub state: S,
    pub stop: Option<Diagnostic>,
}

/// Reads every record of `dataset` into per-chunk states made by `make`, handing each
/// record (in file order within its chunk) to `sink`. A chunk stops at its first
/// error (a malformed record, or an error returned by `sink`) and when `sink`
/// breaks. Chunks come back in file order; a missing or unreadable file is an
/// error of its own.
pub fn read_chunked<S: Send>(
    dataset: &DatasetPlan,
    threads: usize,
    make: impl Fn() -> S + Sync,
    sink: impl Fn(&mut S, Record) -> Flow + Sync,
) -> Result<(Vec<Chunk<S>>, ReadStats), Diagnostic> {
    read_chunked_ahead(dataset, threads, None, make, sink)
}

/// As [`read_chunked`], in at most one chunk per thread: for states that
/// hold something per chunk until the read ends (a spill's partition files,
/// open and buffered: chunks × partitions of them).
pub fn read_chunked_per_thread<S: Send>(
    dataset: &DatasetPlan,
    threads: usize,
    make: impl Fn() -> S + Sync,
    sink: impl Fn(&mut S, Record) -> Flow + Sync,
) -> Result<(Vec<Chunk<S>>, ReadStats), Diagnostic> {
    read_in_chunks(dataset, (threads, 1), None, make, sink)
}

/// As [`read_chunked`], with the JSONL chunks' lines counted ahead by
/// [`count_ahead`] (ignored if the file's size has changed since).
pub fn read_chunked_ahead<S: Send>(
    dataset: &DatasetPlan,
    threads: usize,
    ahead: Option<CountedAhead>,
    make: impl Fn() -> S + Sync,
    sink: impl Fn(&mut S, Record) -> Flow + Sync,
) -> Result<(Vec<Chunk<S>>, ReadStats), Diagnostic> {
    read_in_chunks(dataset, (threads, CHUNKS_PER_THREAD), ahead, make, sink)
}

/// Reads on `threads` threads, in up to `per_thread` chunks each.
fn read_in_chunks<S: Send>(
    dataset: &DatasetPlan,
    (threads, per_thread): (usize, usize),
    ahead: Option<CountedAhead>,
    make: impl Fn() -> S + Sync,
    sink: impl Fn(&mut S, Record) -> Flow + Sync,
) -> Result<(Vec<Chunk<S>>, ReadStats), Diagnostic> {
    if let Some(table) = &dataset.table {
        return parquet::table::read(dataset, table, threads, &make, &sink);
    }
    let size = std::fs::metadata(&dataset.path)
        .map_err(|e| open_error(dataset, &e))?
        .len();
    crate::data::file::refuse_pseudo_file(dataset)?;
    let chunks = chunk_count(threads, per_thread, size);
    let ahead = ahead.filter(|ahead| ahead.size == size);
    match dataset.format {
        Format::Jsonl => read_jsonl(dataset, size, (chunks, threads), ahead, &make, &sink),
        Format::Json => {
            let mut state = make();
            let (stop, stats) = read_json_array(dataset, &mut state, &sink)?;
            Ok((vec![Chunk { state, stop }], stats))
        }
        Format::TrecQrels | Format::TrecRun => {
            read_trec(dataset, size, (chunks, threads), &make, &sink)
        }
        Format::Csv | Format::Tsv => {
            let mut state = make();
            let (stop, stats) = csv::read(dataset, &mut state, &sink)?;
            Ok((vec![Chunk { state, stop }], stats))
        }
        Format::Parquet => parquet::read(dataset, threads, &make, &sink),
    }
}

/// A JSONL file's chunks as [`read_chunked`] splits it, with the line each
/// chunk starts on, counted before the read.
pub struct CountedAhead {
    size: u64,
    ranges: Vec<Range<u64>>,
    first_lines: Vec<usize>,
}

/// Splits a JSONL `dataset` into the chunks [`read_chunked`] reads it in on
/// `threads` threads and counts the lines before each. A read given them
/// ([`read_chunked_ahead`]) starts every chunk at once; otherwise the thread
/// of each chunk after the first counts the chunk before it first, and ends
/// that much later. For a caller with a core idle before the read (a streamed
/// join building its key index). `None` when the file is not JSONL, is one
/// chunk, or cannot be read: the read then counts, and reports why.
pub fn count_ahead(dataset: &DatasetPlan, threads: usize) -> Option<CountedAhead> {
    if dataset.format != Format::Jsonl || dataset.table.is_some() {
        return None;
    }
    let size = std::fs::metadata(&dataset.path).ok()?.len();
    let chunks = chunk_count(threads, CHUNKS_PER_THREAD, size);
    if chunks < 2 {
        return None;
    }
    let ranges = chunk_ranges(dataset, size, chunks).ok()?;
    if ranges.len() < 2 {
        return None;
    }
    let mut first_lines = vec![0];
    for range in &ranges[..ranges.len() - 1] {
        let lines = count_lines(dataset, range.clone(), LineBreaks::Universal).ok()?;
        first_lines.push(first_lines[first_lines.len() - 1] + lines);
    }
    Some(CountedAhead {
        size,
        ranges,
        first_lines,
    })
}

fn read_jsonl<S: Send>(
    dataset: &DatasetPlan,
    size: u64,
    (chunks, threads): (usize, usize),
    ahead: Option<CountedAhead>,
    make: &(impl Fn() -> S + Sync),
    sink: &(impl Fn(&mut S, Record) -> Flow + Sync),
) -> Result<(Vec<Chunk<S>>, ReadStats), Diagnostic> {
    let (ranges, first_lines) = match ahead {
        Some(ahead) => (ahead.ranges, Some(ahead.first_lines)),
        None => (chunk_ranges(dataset, size, chunks)?, None),
    };
    let (results, sha256) = read_ranges(
        dataset,
        size,
        &ranges,
        threads,
        first_lines.as_deref(),
        LineBreaks::Universal,
        make,
        &|range, first_line, state, hasher, progress| {
            read_jsonl_range(dataset, range, first_line, state, sink, hasher, progress)
        },
    )?;
    let mut stats = ReadStats {
        bytes: size,
        sha256,
        records: 0,
        seen: Some(Vec::new()),
    };
    let mut out = Vec::with_capacity(results.len());
    for (state, result) in results {
        let (records, stop, seen) = result?;
        stats.records += records;
        stats.saw(&seen);
        out.push(Chunk { state, stop });
    }
    Ok((out, stats))
}

/// Parses one record's text into a [`Record`], locating errors at `line`.
fn parse_record(
    dataset: &DatasetPlan,
    interner: &mut project::Interner,
    text: &str,
    line: usize,
    column_offset: usize,
) -> Result<Record, Diagnostic> {
    let mut slots = vec![Value::Null; dataset.projection.slot_count].into_boxed_slice();
    project::parse_into(text, &dataset.projection, &mut slots, interner).map_err(|error| {
        let offset = if error.line() == 1 { column_offset } else { 0 };
        let column = offset + char_column(text, error.line(), error.column());
        let message = error.to_string();
        let message = message
            .split(" at line ")
            .next()
            .unwrap_or(&message)
            .to_string();
        let syntax = matches!(
            error.classify(),
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof
        );
        let kind = DataError::InvalidRecord {
            dataset: dataset.name.clone(),
            syntax,
            message,
        };
        Diagnostic::of(&kind).at(Location::in_data(
            &dataset.display_path,
            line + error.line() - 1,
            Some(column),
        ))
    })?;
    Ok(Record {
        slots,
        line: u32::try_from(line).unwrap_or(u32::MAX),
    })
}

/// Reads the JSONL lines of `range`, whose first line is line `first_line + 1`.
/// Returns the number of records read, the error that stopped the chunk, and
/// which slots' fields its records had.
#[allow(clippy::type_complexity)]
fn read_jsonl_range<S>(
    dataset: &DatasetPlan,
    range: Range<u64>,
    first_line: usize,
    state: &mut S,
    sink: &(impl Fn(&mut S, Record) -> Flow + Sync),
    mut hasher: Option<&mut Sha256>,
    progress: &Progress,
) -> Result<(usize, Option<Diagnostic>, Vec<bool>), Diagnostic> {
    let mut reader = open_range(dataset, range)?;
    let mut interner = project::Interner::default();
    let (mut line, mut records, mut unreported) = (first_line, 0usize, 0u64);
    // One line (with its `\n`), as text or as bytes that are not UTF-8: its
    // records are parsed and handed on; `Some` says the chunk stops.
    let read_line = |read: Line<'_>| -> Option<Option<Diagnostic>> {
        let bytes = bytes_of(read);
        if let Some(hasher) = hasher.as_deref_mut() {
            hasher.update(bytes);
        }
        unreported += bytes.len() as u64;
        if line % 4096 == 0 {
            progress.add(std::mem::take(&mut unreported), 4096);
        }
        line += 1;
        let text = match read {
            Ok(text) => text,
            Err(bytes) => {
                let valid = std::str::from_utf8(bytes).map_or_else(|e| e.valid_up_to(), str::len);
                let column = String::from_utf8_lossy(&bytes[..valid]).chars().count() + 1;
                let kind = DataError::NotUtf8 {
                    dataset: dataset.name.clone(),
                };
                let d = Diagnostic::of(&kind).at(Location::in_data(
                    &dataset.display_path,
                    line,
                    Some(column),
                ));
                return Some(Some(d));
            }
        };
        // A byte-order mark opens the file, not its first record (editors on Windows
        // write one); the spec loader skips it too.
        let text = match line {
            1 => text.strip_prefix('\u{feff}').unwrap_or(text),
            _ => text,
        };
        // Python's universal newlines also end a line at a lone `\r`.
        let text = text.strip_suffix('\n').unwrap_or(text);
        let text = text.strip_suffix('\r').unwrap_or(text);
        let pieces = match memchr::memchr(b'\r', text.as_bytes()) {
            None => Pieces::One(Some(text)),
            Some(_) => Pieces::Split(text.split('\r')),
        };
        for (i, piece) in pieces.enumerate() {
            line += usize::from(i > 0);
            let trimmed = python_strip(piece);
            if trimmed.is_empty() {
                continue;
            }
            let leading = piece[..piece.len() - piece.trim_start_matches(is_python_space).len()]
                .chars()
                .count();
            let record = match parse_record(dataset, &mut interner, trimmed, line, leading) {
                Ok(record) => record,
                Err(d) => return Some(Some(d)),
            };
            records += 1;
            match sink(state, record) {
                Ok(ControlFlow::Continue(())) => {}
                Ok(ControlFlow::Break(())) => return Some(None),
                Err(d) => return Some(Some(d)),
            }
        }
        None
    };
    match for_each_line(&mut reader, read_line) {
        Ok(stop) => Ok((records, stop.flatten(), interner.seen)),
        Err(e) => Err(open_error(dataset, &e)),
    }
}

/// A line's pieces between lone `\r`s: the line itself when it has none (no
/// search of its own), else split.
enum Pieces<'t> {
    One(Option<&'t str>),
    Split(std::str::Split<'t, char>),
}

impl<'t> Iterator for Pieces<'t> {
    type Item = &'t str;

    fn next(&mut self) -> Option<&'t str> {
        match self {
            Pieces::One(text) => text.take(),
            Pieces::Split(pieces) => pieces.next(),
        }
    }
}

fn read_whole(dataset: &DatasetPlan) -> Result<Vec<u8>, Diagnostic> {
    let mut bytes = Vec::new();
    BufReader::new(open(dataset)?)
        .read_to_end(&mut bytes)
        .map_err(|e| open_error(dataset, &e))?;
    Ok(bytes)
}

/// A TREC file, streamed query by query in ranges that each hold whole queries;
/// read again by one thread, every query grouped in memory, if a query turns out
/// to be split over the file.
fn read_trec<S: Send>(
    dataset: &DatasetPlan,
    size: u64,
    (chunks, threads): (usize, usize),
    make: &(impl Fn() -> S + Sync),
    sink: &(impl Fn(&mut S, Record) -> Flow + Sync),
) -> Result<(Vec<Chunk<S>>, ReadStats), Diagnostic> {
    let ranges = trec_ranges(dataset, size, chunks)?;
    let read = |range: Range<u64>,
                first_line,
                state: &mut S,
                hasher: Option<&mut Sha256>,
                progress: &Progress| {
        let lines = trec::Lines {
            reader: open_range(dataset, range)?,
            first_line,
            hasher,
            progress,
        };
        trec::read(dataset, lines, trec::Mode::Stream, state, sink)
            .map_err(|e| open_error(dataset, &e))
    };
    let breaks = LineBreaks::Newline;
    let (results, sha256) =
        read_ranges(dataset, size, &ranges, threads, None, breaks, make, &read)?;
    let mut stats = ReadStats {
        bytes: size,
        sha256,
        records: 0,
        seen: None,
    };
    let mut out = Vec::with_capacity(results.len());
    let mut split = false;
    let mut queries: std::collections::HashSet<std::sync::Arc<str>, foldhash::fast::FixedState> =
        Default::default();
    for (state, result) in results {
        let outcome = result?;
        // A query in two ranges was split: its lines are not together.
        split |= outcome.restart
            || (!out.is_empty() && outcome.queries.iter().any(|q| queries.contains(q)));
        if split {
            break;
        }
        queries.extend(outcome.queries);
        stats.records += outcome.records;
        out.push(Chunk {
            state,
            stop: outcome.stop,
        });
    }
    if !split {
        return Ok((out, stats));
    }
    let mut state = make();
    let lines = trec::Lines {
        reader: BufReader::with_capacity(1 << 20, open(dataset)?),
        first_line: 0,
        hasher: None,
        progress: &Progress::default(),
    };
    let outcome = trec::read(dataset, lines, trec::Mode::Grouped, &mut state, sink)
        .map_err(|e| open_error(dataset, &e))?;
    stats.records = outcome.records;
    Ok((
        vec![Chunk {
            state,
            stop: outcome.stop,
        }],
        stats,
    ))
}

fn read_json_array<S>(
    dataset: &DatasetPlan,
    state: &mut S,
    sink: &(impl Fn(&mut S, Record) -> Flow + Sync),
) -> Result<(Option<Diagnostic>, ReadStats), Diagnostic> {
    let bytes = read_whole(dataset)?;
    let mut stats = ReadStats {
        bytes: bytes.len() as u64,
        ..ReadStats::default()
    };
    let mut seen = Vec::new();
    let stop = if hash_apart(stats.bytes) {
        std::thread::scope(|scope| {
            let digest = scope.spawn(|| sha256_hex(&bytes));
            let stop = read_array(dataset, &bytes, &mut stats.records, state, sink, &mut seen);
            stats.sha256 = digest.join().expect("hashing does not panic");
            stop
        })
    } else {
        stats.sha256 = sha256_hex(&bytes);
        read_array(dataset, &bytes, &mut stats.records, state, sink, &mut seen)
    };
    stats.saw(&seen);
    Ok((stop, stats))
}

/// Reads a JSON array's elements into records for `sink`, counting them;
/// returns the error that stopped it.
fn read_array<S>(
    dataset: &DatasetPlan,
    bytes: &[u8],
    records: &mut usize,
    state: &mut S,
    sink: &(impl Fn(&mut S, Record) -> Flow + Sync),
    seen: &mut Vec<bool>,
) -> Option<Diagnostic> {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text.strip_prefix('\u{feff}').unwrap_or(text),
        Err(e) => return Some(utf8_error(dataset, bytes, &e)),
    };
    let elements = match json_array::split(text) {
        Ok(elements) => elements,
        Err((offset, problem)) => {
            let (line, column) = line_col(text, offset);
            let kind = DataError::InvalidArray {
                dataset: dataset.name.clone(),
                problem,
            };
            return Some(Diagnostic::of(&kind).at(Location::in_data(
                &dataset.display_path,
                line,
                Some(column),
            )));
        }
    };
    let mut interner = project::Interner::default();
    let mut cursor = LineCursor::new(text);
    for range in elements {
        let (line, column) = cursor.at(range.start);
        let record = match parse_record(dataset, &mut interner, &text[range], line, column - 1) {
            Ok(record) => record,
            Err(d) => {
                *seen = std::mem::take(&mut interner.seen);
                return Some(d);
            }
        };
        *records += 1;
        match sink(state, record) {
            Ok(ControlFlow::Continue(())) => {}
            Ok(ControlFlow::Break(())) => break,
            Err(d) => {
                *seen = std::mem::take(&mut interner.seen);
                return Some(d);
            }
        }
    }
    *seen = interner.seen;
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inputs::{gather, Overrides};

    /// Every record's line and id, in file order, as `read` reads `dataset`.
    fn lines_read(
        read: impl FnOnce(&(dyn Fn() -> Vec<(u32, Value)> + Sync)) -> Vec<Chunk<Vec<(u32, Value)>>>,
    ) -> Vec<(u32, Value)> {
        let chunks = read(&Vec::new);
        chunks.into_iter().flat_map(|c| c.state).collect()
    }

    #[test]
    fn chunks_counted_ahead_read_every_record_at_its_line() {
        let dir = tempfile::tempdir().unwrap();
        // Seven default chunks, with every universal break and blank lines.
        let breaks = ["\n", "\r\n", "\r", "\n\n"];
        let text: String = (0..40_000)
            .map(|i| {
                format!(
                    "{{\"id\": \"r{i}\", \"pad\": \"{}\"}}{}",
                    "x".repeat(i % 40),
                    breaks[i % 4]
                )
            })
            .collect();
        std::fs::write(dir.path().join("items.jsonl"), &text).unwrap();
        let spec = dir.path().join("spec.yaml");
        let body = "datasets:\n  items: {path: items.jsonl, key: id}\nfields:\n  width: len(items.pad)\nmetrics:\n  n: count()\n";
        std::fs::write(&spec, format!("name: t\nversion: 1.0.0\n{body}")).unwrap();
        let spec = crate::spec::load(&spec).unwrap();
        let (inputs, _) = gather(&spec, &Overrides::default());
        let plan = crate::plan::compile(&spec, &[], inputs).unwrap();
        let dataset = &plan.datasets[0];
        let sink = |seen: &mut Vec<(u32, Value)>, record: Record| -> Flow {
            seen.push((record.line, record.slots[0].clone()));
            Ok(ControlFlow::Continue(()))
        };
        let threads = 4;
        let counted = lines_read(|make| read_chunked(dataset, threads, make, sink).unwrap().0);
        let ahead = count_ahead(dataset, threads).expect("several chunks");
        // More chunks than threads: threads read several each, in turn.
        assert_eq!(ahead.ranges.len(), 7, "one per 256 KiB");
        let ahead = lines_read(|make| {
            (read_chunked_ahead(dataset, threads, Some(ahead), make, sink).unwrap()).0
        });
        let one = lines_read(|make| read_chunked(dataset, 1, make, sink).unwrap().0);
        assert_eq!(one.len(), 40_000);
        assert_eq!(
            one[39_999].0, 49_999,
            "a blank line after every fourth record"
        );
        assert_eq!(counted, one);
        assert_eq!(ahead, one);
    }
}
