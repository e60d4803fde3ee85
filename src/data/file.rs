//! The dataset's file: opened whole or by byte range, cut into line-aligned
//! ranges for parallel reading (between queries for TREC), the line breaks
//! before each range counted, and hashed.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::ops::Range;

use crate::base::diagnostic::Diagnostic;
use crate::base::sha256::Sha256;
use crate::data::error::DataError;
use crate::data::trec;
use crate::plan::DatasetPlan;

/// The error of a dataset file that cannot be opened or read.
pub(super) fn open_error(dataset: &DatasetPlan, error: &std::io::Error) -> Diagnostic {
    let kind = DataError::CannotRead {
        dataset: dataset.name.clone(),
        path: dataset.display_path.clone(),
        error: error.to_string(),
    };
    Diagnostic::of(&kind).at(dataset.declared_at.clone())
}

pub(super) fn open(dataset: &DatasetPlan) -> Result<File, Diagnostic> {
    refuse_pseudo_file(dataset)?;
    File::open(&dataset.path).map_err(|e| open_error(dataset, &e))
}

/// A kernel pseudo-file given as a dataset is an error before any of it is read.
pub(super) fn refuse_pseudo_file(dataset: &DatasetPlan) -> Result<(), Diagnostic> {
    if !is_pseudo_file(&dataset.path) {
        return Ok(());
    }
    let error = std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        "it is not a regular file (a file of /proc or /sys)",
    );
    Err(open_error(dataset, &error))
}

/// A "file" of size 0 that has content is the kernel's (`/proc/self/environ`):
/// never read as data, so that no error quotes its first line.
fn is_pseudo_file(path: &std::path::Path) -> bool {
    use std::io::Read;
    let empty_file = std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == 0);
    empty_file
        && File::open(path)
            .and_then(|mut f| f.read(&mut [0u8; 1]))
            .is_ok_and(|n| n > 0)
}

/// A buffered reader over `range` of the dataset's file.
pub(super) fn open_range(
    dataset: &DatasetPlan,
    range: Range<u64>,
) -> Result<BufReader<std::io::Take<File>>, Diagnostic> {
    let mut file = open(dataset)?;
    file.seek(SeekFrom::Start(range.start))
        .map_err(|e| open_error(dataset, &e))?;
    Ok(BufReader::with_capacity(
        1 << 20,
        file.take(range.end - range.start),
    ))
}

/// A line as [`for_each_line`] gives it: its text, or its bytes when they
/// are not UTF-8.
pub(super) type Line<'a> = Result<&'a str, &'a [u8]>;

fn line_of(bytes: &[u8]) -> Line<'_> {
    std::str::from_utf8(bytes).map_err(|_| bytes)
}

/// The bytes of a line, text or not.
pub(super) fn bytes_of(line: Line<'_>) -> &[u8] {
    line.map_or_else(|bytes| bytes, str::as_bytes)
}

/// Calls `each` with every line of `reader` (with its `\n`; the last may have
/// none) until it returns `Some`, which is returned. Lines are read where they
/// lie in the reader's buffer, found with a vectorised search; only a line
/// that straddles two fills is gathered. (`read_until` copies every line out,
/// found by a byte-at-a-time search: a twentieth of reading a TREC run.) The
/// whole lines of a fill are checked as UTF-8 at once: a TREC run's lines are
/// a few dozen bytes, and a check per line cost three times as much.
pub(super) fn for_each_line<T>(
    reader: &mut impl BufRead,
    mut each: impl FnMut(Line<'_>) -> Option<T>,
) -> std::io::Result<Option<T>> {
    let mut straddling = Vec::new();
    loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            // As `read_until` does: a read a signal interrupted is tried again.
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(match straddling.is_empty() {
                true => None,
                false => each(line_of(&straddling)),
            });
        }
        let Some(end) = memchr::memrchr(b'\n', available).map(|i| i + 1) else {
            straddling.extend_from_slice(available);
            let n = available.len();
            reader.consume(n);
            continue;
        };
        // The line begun in an earlier fill ends at this fill's first break.
        let mut start = 0;
        if !straddling.is_empty() {
            start = memchr::memchr(b'\n', available).map_or(end, |i| i + 1);
            straddling.extend_from_slice(&available[..start]);
            let stop = each(line_of(&straddling));
            straddling.clear();
            if stop.is_some() {
                reader.consume(start);
                return Ok(stop);
            }
        }
        let block = &available[start..end];
        let stopped = match std::str::from_utf8(block) {
            Ok(text) => lines_in(block, |line| each(Ok(&text[line]))),
            // Some line is not text: each says which, from its own bytes.
            Err(_) => lines_in(block, |line| each(line_of(&block[line]))),
        };
        if let Some((read, stop)) = stopped {
            reader.consume(start + read);
            return Ok(Some(stop));
        }
        reader.consume(end);
    }
}

/// Calls `each` with the range of every line of `block` (which ends with a
/// break; breaks never fall inside a character) until it returns `Some`;
/// then returns that and the bytes read up to the end of that line.
fn lines_in<T>(
    block: &[u8],
    mut each: impl FnMut(std::ops::Range<usize>) -> Option<T>,
) -> Option<(usize, T)> {
    let mut at = 0;
    while at < block.len() {
        let end = memchr::memchr(b'\n', &block[at..]).map_or(block.len(), |i| at + i + 1);
        if let Some(stop) = each(at..end) {
            return Some((end, stop));
        }
        at = end;
    }
    None
}

/// Where chunk `i` of `chunks` nominally starts in a file of `size` bytes.
/// Threads take chunks in order as they end the one before (`reader.rs`), so
/// the threads end at most a chunk apart: the first half of the chunks hold
/// three quarters of the file and the last half a quarter, so that the
/// chunks read last are small. (Four chunks a thread, even: a chunk of the 1M
/// traces took half a second, and one thread ran alone for that long.)
pub(super) fn nominal_start(size: u64, i: usize, chunks: usize) -> u64 {
    let (size, i, chunks) = (u128::from(size), i as u128, chunks as u128);
    let half = chunks / 2;
    let start = if chunks < 4 {
        size * i / chunks
    } else if i <= half {
        size * 3 * i / (4 * half)
    } else {
        size - size * (chunks - i) / (4 * (chunks - half))
    };
    start as u64
}

/// Byte ranges of `chunks` parts of the file, each starting at the beginning
/// of a line (at [`nominal_start`] or past it).
pub(super) fn chunk_ranges(
    dataset: &DatasetPlan,
    size: u64,
    chunks: usize,
) -> Result<Vec<Range<u64>>, Diagnostic> {
    let mut starts = vec![0u64];
    let mut file = open(dataset)?;
    for i in 1..chunks {
        let nominal = nominal_start(size, i, chunks);
        file.seek(SeekFrom::Start(nominal))
            .map_err(|e| open_error(dataset, &e))?;
        let mut reader = BufReader::new(&mut file);
        let mut skipped = Vec::new();
        let n = reader
            .read_until(b'\n', &mut skipped)
            .map_err(|e| open_error(dataset, &e))?;
        let start = nominal + n as u64;
        if start < size && start > *starts.last().unwrap_or(&0) {
            starts.push(start);
        }
    }
    let mut ends: Vec<u64> = starts[1..].to_vec();
    ends.push(size);
    Ok(starts.into_iter().zip(ends).map(|(s, e)| s..e).collect())
}

/// What ends a line.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum LineBreaks {
    /// `\n`, and a lone `\r` (Python's universal newlines, as JSONL is read).
    Universal,
    /// `\n` only (TREC files: a `\r` is whitespace).
    Newline,
}

pub(super) fn count_newlines(bytes: &[u8]) -> usize {
    // memchr's search, counting its hits: 0.03 s for 670 MB of traces, where
    // a plain filtered count, compiled for baseline x86-64, took 0.28 s (four
    // bytes a step), and was a core's work for half a second before a large
    // join's second chunk could start.
    memchr::memchr_iter(b'\n', bytes).count()
}

/// Universal line breaks in `bytes` (a `\n`, or a `\r` not followed by one),
/// given whether the bytes before ended in a `\r`; and whether these do. The
/// `\r` of a break split across two buffers is counted when its next byte is seen.
fn count_universal_breaks(bytes: &[u8], previous_cr: bool) -> (usize, bool) {
    let Some(&last) = bytes.last() else {
        return (0, previous_cr);
    };
    let lone_cr_before = usize::from(previous_cr && bytes[0] != b'\n');
    // Files written on Unix have no `\r` at all: count the `\n`s at memory speed.
    if memchr::memchr(b'\r', bytes).is_none() {
        return (lone_cr_before + count_newlines(bytes), false);
    }
    let mut lines = lone_cr_before;
    for pair in bytes.windows(2) {
        lines += usize::from(pair[0] == b'\n' || (pair[0] == b'\r' && pair[1] != b'\n'));
    }
    lines += usize::from(last == b'\n');
    (lines, last == b'\r')
}

/// Lines in a byte range as the reader counts them.
pub(super) fn count_lines(
    dataset: &DatasetPlan,
    range: Range<u64>,
    breaks: LineBreaks,
) -> Result<usize, Diagnostic> {
    let mut reader = open_range(dataset, range)?;
    let (mut lines, mut previous_cr) = (0usize, false);
    loop {
        let buffer = reader.fill_buf().map_err(|e| open_error(dataset, &e))?;
        if buffer.is_empty() {
            break;
        }
        if breaks == LineBreaks::Newline {
            lines += count_newlines(buffer);
        } else {
            let (n, ends_in_cr) = count_universal_breaks(buffer, previous_cr);
            lines += n;
            previous_cr = ends_in_cr;
        }
        let n = buffer.len();
        reader.consume(n);
    }
    // A trailing lone `\r` ends a line too. (A last line without any break needs no
    // count: only the lines before a chunk matter, and chunks end after a `\n`.)
    Ok(lines + usize::from(previous_cr))
}

pub(super) fn hash_file(dataset: &DatasetPlan) -> Result<String, Diagnostic> {
    let mut reader = BufReader::with_capacity(1 << 20, open(dataset)?);
    let mut hasher = Sha256::new();
    loop {
        let buffer = reader.fill_buf().map_err(|e| open_error(dataset, &e))?;
        if buffer.is_empty() {
            break;
        }
        hasher.update(buffer);
        let n = buffer.len();
        reader.consume(n);
    }
    Ok(hasher.hex())
}

/// Line-aligned ranges, each boundary moved on past the lines of the query it fell
/// in, so that a file whose queries sit on consecutive lines splits between queries.
pub(super) fn trec_ranges(
    dataset: &DatasetPlan,
    size: u64,
    chunks: usize,
) -> Result<Vec<Range<u64>>, Diagnostic> {
    let ranges = chunk_ranges(dataset, size, chunks)?;
    let mut starts = vec![0u64];
    for range in &ranges[1..] {
        let offset = range.start
            // To the end of the file: a query may run past the nominal range.
            + trec::query_end(open_range(dataset, range.start..size)?)
                .map_err(|e| open_error(dataset, &e))?;
        if offset < size && offset > *starts.last().unwrap_or(&0) {
            starts.push(offset);
        }
    }
    let mut ends: Vec<u64> = starts[1..].to_vec();
    ends.push(size);
    Ok(starts.into_iter().zip(ends).map(|(s, e)| s..e).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Read;

    /// The lines `for_each_line` gives from `text` read `capacity` bytes at a
    /// time, each with whether it was given as text.
    fn lines_of(text: &[u8], capacity: usize) -> Vec<(Vec<u8>, bool)> {
        let mut reader = BufReader::with_capacity(capacity, text);
        let mut lines = Vec::new();
        let stop = for_each_line(&mut reader, |line| {
            lines.push((bytes_of(line).to_vec(), line.is_ok()));
            None::<()>
        });
        assert_eq!(stop.unwrap(), None);
        lines
    }

    proptest! {
        /// Every line with its break, the last without one if the text has
        /// none: what splitting after each `\n` gives, however the reader's
        /// fills cut the text; given as text exactly when it is UTF-8 (a
        /// two-byte letter, a lone continuation byte and a lone lead byte
        /// among the bytes).
        #[test]
        fn lines_are_given_whole_across_fills(
            pieces in proptest::collection::vec(
                prop_oneof![Just(&b"\n"[..]), Just(&b"\r"[..]), Just(&b"a"[..]), Just("é".as_bytes()), Just(&[0x80u8][..]), Just(&[0xC3u8][..])],
                0..40,
            ),
            capacity in 1usize..9,
        ) {
            let text = pieces.concat();
            let expected: Vec<(Vec<u8>, bool)> = text
                .split_inclusive(|&b| b == b'\n')
                .map(|line| (line.to_vec(), std::str::from_utf8(line).is_ok()))
                .collect();
            prop_assert_eq!(lines_of(&text, capacity), expected);
        }
    }

    #[test]
    fn lines_stop_where_asked_and_say_why() {
        for capacity in [3, 64] {
            let text = b"one\ntwo\nthree\n";
            let mut reader = BufReader::with_capacity(capacity, &text[..]);
            let mut seen = 0;
            let stop = for_each_line(&mut reader, |line| {
                seen += 1;
                bytes_of(line).starts_with(b"two").then_some(seen)
            });
            assert_eq!(stop.unwrap(), Some(2));
            // The reader is left after the line that stopped it.
            let mut rest = String::new();
            reader.read_to_string(&mut rest).unwrap();
            assert_eq!(rest, "three\n");
        }
    }

    /// Universal line breaks, byte by byte: the definition the fast count keeps.
    fn breaks_one_by_one(bytes: &[u8]) -> usize {
        let (mut lines, mut previous_cr) = (0, false);
        for &b in bytes {
            lines += usize::from(previous_cr && b != b'\n') + usize::from(b == b'\n');
            previous_cr = b == b'\r';
        }
        lines + usize::from(previous_cr)
    }

    fn counted_in_buffers(bytes: &[u8], split: usize) -> usize {
        let (head, tail) = bytes.split_at(split.min(bytes.len()));
        let (a, cr) = count_universal_breaks(head, false);
        let (b, cr) = count_universal_breaks(tail, cr);
        a + b + usize::from(cr)
    }

    proptest! {
        /// Chunks start in order within the file, the last half no larger
        /// than any of the first half.
        #[test]
        fn nominal_chunks_cover_the_file_larger_first(size in 0u64..1 << 40, chunks in 1usize..300) {
            let starts: Vec<u64> = (0..chunks).map(|i| nominal_start(size, i, chunks)).collect();
            prop_assert_eq!(starts[0], 0);
            let ends: Vec<u64> = starts[1..].iter().copied().chain([size]).collect();
            prop_assert_eq!(nominal_start(size, chunks, chunks), size);
            let lengths: Vec<u64> = starts.iter().zip(&ends).map(|(s, e)| e - s).collect();
            prop_assert!(starts.iter().zip(&ends).all(|(s, e)| s <= e));
            if chunks >= 4 && size >= 1 << 20 {
                let half = chunks / 2;
                let smallest_first = lengths[..half].iter().min().unwrap();
                let largest_last = lengths[half..].iter().max().unwrap();
                prop_assert!(largest_last <= smallest_first, "{lengths:?}");
            }
        }
    }

    #[test]
    fn a_break_split_across_buffers_is_counted_once() {
        assert_eq!(counted_in_buffers(b"a\r\nb", 2), 1);
        assert_eq!(counted_in_buffers(b"a\rb", 2), 1);
        assert_eq!(counted_in_buffers(b"a\r", 2), 1);
        assert_eq!(counted_in_buffers(b"a\n\n", 1), 2);
        assert_eq!(count_universal_breaks(b"", true), (0, true));
    }

    proptest! {
        #[test]
        fn the_fast_count_is_the_byte_by_byte_count(
            bytes in proptest::collection::vec(
                prop_oneof![Just(b'\n'), Just(b'\r'), Just(b'x')], 0..64),
            split in 0usize..64,
        ) {
            prop_assert_eq!(counted_in_buffers(&bytes, split), breaks_one_by_one(&bytes));
            let unix: Vec<u8> = bytes.iter().map(|&b| if b == b'\r' { b'x' } else { b }).collect();
            prop_assert_eq!(count_newlines(&unix), breaks_one_by_one(&unix));
        }
    }
}
