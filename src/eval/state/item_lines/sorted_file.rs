//! A sorted file: a spool's lines sorted in report order in an anonymous temporary
//! file, each its head (what orders it, how long it is) and then its text.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, BufRead, BufWriter, Write};

use crate::data::spill::{read_array, read_key, skip_key, write_key};

use super::merge::{Head, Place, Text};
use super::Entry;

/// A spool's sorted lines written to an anonymous temporary file.
#[derive(Debug)]
pub(super) struct SortedFile {
    pub(super) file: File,
    pub(super) lines: usize,
    /// 0 for lines spilled from memory; one more than its sources' for a merge.
    pub(super) level: u32,
}

/// A sorted file, read once from its start. With `release`, the pages read
/// are given back as the reading goes (see [`release_pages`]): the merge that
/// reads a file last needs no copy of what it has read.
pub(super) struct SortedFileReader<'a> {
    pub(super) file: &'a File,
    pub(super) release: bool,
    pub(super) read: u64,
    pub(super) released: u64,
}

impl io::Read for SortedFileReader<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read(buffer)?;
        self.read += n as u64;
        if self.release && self.read - self.released >= RELEASE_EVERY {
            release_pages(self.file, self.released..self.read);
            self.released = self.read;
        }
        Ok(n)
    }
}

/// Bytes a sorted file's reader gives back at a time.
pub(super) const RELEASE_EVERY: u64 = 1 << 20;

/// Gives the bytes `range` of a temporary file back to the system (a hole
/// punched in it), best effort: each sorted file's text is read once, by the merge
/// that writes it on, so a large report does not hold its text twice, in the
/// sorted files and in items.jsonl, and the pages freed are the ones that writing
/// items.jsonl takes next.
#[cfg(target_os = "linux")]
pub(super) fn release_pages(file: &File, range: std::ops::Range<u64>) {
    use rustix::fs::{fallocate, FallocateFlags};
    let flags = FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE;
    // A file system without holes keeps the pages until the file is closed.
    let _ = fallocate(file, flags, range.start, range.end - range.start);
}

#[cfg(not(target_os = "linux"))]
pub(super) fn release_pages(_file: &File, _range: std::ops::Range<u64>) {}

pub(super) fn write_sorted_file(lines: &[Entry], text: &str) -> io::Result<SortedFile> {
    let file = tempfile::tempfile()?;
    let mut out = BufWriter::with_capacity(64 << 10, &file);
    for line in lines {
        write_head(&mut out, &Head::of_entry(line, text, 0, Place::default()))?;
        out.write_all(line.text(text).as_bytes())?;
    }
    out.into_inner().map_err(io::IntoInnerError::into_error)?;
    Ok(SortedFile {
        file,
        lines: lines.len(),
        level: 0,
    })
}

/// A line in a sorted file: its key, line, score, ordinal, length and split, then
/// its text.
pub(super) fn write_head(out: &mut impl Write, head: &Head<'_>) -> io::Result<()> {
    write_key(out, head.key.as_deref())?;
    out.write_all(&head.line.to_le_bytes())?;
    out.write_all(&head.score.to_le_bytes())?;
    out.write_all(&head.ordinal.to_le_bytes())?;
    out.write_all(&head.len.to_le_bytes())?;
    out.write_all(&head.split.to_le_bytes())
}

/// Reads a line's head written by [`write_head`], leaving its text unread.
pub(super) fn read_head<'a>(
    input: &mut impl BufRead,
    cursor: usize,
    place: Place<'a>,
) -> io::Result<Head<'a>> {
    let key = if place.keys_unread {
        skip_key(input)?;
        None
    } else {
        read_key(input)?.map(Cow::Owned)
    };
    Ok(Head {
        key,
        line: u32::from_le_bytes(read_array(input)?),
        score: u32::from_le_bytes(read_array(input)?),
        ordinal: u64::from_le_bytes(read_array(input)?),
        len: u32::from_le_bytes(read_array(input)?),
        split: u32::from_le_bytes(read_array(input)?),
        text: Text::Unread,
        cursor,
        place,
    })
}
