//! The merge of spools' lines and sorted files in report order: a heap of each
//! source's next line, whose text stays where it is until it is written.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::binary_heap::{BinaryHeap, PeekMut};
use std::io::{self, BufReader, Seek, SeekFrom, Write};
use std::ops::Range;

use crate::base::value::Key;
use crate::data::spill::copy_bytes;
use crate::eval::outcome::report_order;

use super::sorted_file::{read_head, SortedFile, SortedFileReader};
use super::{Entry, LineSpool};

/// Where a merge reads lines from: a spool's sorted lines in memory, or one of
/// its sorted files; with the spool's place among the others.
pub(super) struct Cursor<'a> {
    pub(super) source: Source<'a>,
    pub(super) place: Place<'a>,
}

/// What a spool's lines share: which are kept, and what orders them among
/// other spools' (their run, its place, the spool's base, whether ordinals
/// follow report order). Merging one spool's own sorted files needs only the default
/// and the last: every line kept, one run.
#[derive(Clone, Copy, Default)]
pub(super) struct Place<'a> {
    pub(super) kept: Option<&'a [bool]>,
    pub(super) run: Option<&'a str>,
    pub(super) run_index: u32,
    pub(super) base: u64,
    pub(super) by_ordinal: bool,
    /// The run as its lines' entry (`"run":…,`), when items.jsonl is written.
    pub(super) run_entry: Option<&'a str>,
    /// Whether a sorted file's keys are passed over unread: when every line
    /// merged is ordered by its place alone, no key is compared (nor written
    /// on).
    pub(super) keys_unread: bool,
}

impl<'a> Place<'a> {
    pub(super) fn of(spool: &'a LineSpool) -> Self {
        Place {
            kept: spool.kept.as_deref(),
            run: spool.run.as_deref(),
            run_index: spool.run_index,
            base: spool.base,
            by_ordinal: spool.by_ordinal,
            run_entry: None,
            keys_unread: false,
        }
    }

    pub(super) fn keeps(&self, score: u32) -> bool {
        self.kept.is_none_or(|kept| kept[score as usize])
    }
}

pub(super) enum Source<'a> {
    /// A spool's text and its lines in memory, in order.
    Lines(&'a str, std::vec::IntoIter<&'a Entry>),
    /// A sorted file: its reader, and the lines left in it.
    File(BufReader<SortedFileReader<'a>>, usize),
}

/// Where a line's text is: in memory, or the next bytes of its sorted file.
pub(super) enum Text<'a> {
    InMemory(&'a str),
    Unread,
}

/// A cursor's current line, ordered for the merge's heap (smallest first).
pub(super) struct Head<'a> {
    pub(super) key: Option<Cow<'a, Key>>,
    pub(super) line: u32,
    pub(super) score: u32,
    pub(super) ordinal: u64,
    pub(super) len: u32,
    pub(super) split: u32,
    pub(super) text: Text<'a>,
    pub(super) cursor: usize,
    pub(super) place: Place<'a>,
}

impl<'a> Cursor<'a> {
    /// Reads `file` from its start; with `release`, for the last time.
    pub(super) fn of_file(
        sorted: &'a SortedFile,
        place: Place<'a>,
        release: bool,
    ) -> io::Result<Self> {
        let mut file = &sorted.file;
        file.seek(SeekFrom::Start(0))?;
        let reader = SortedFileReader {
            file,
            release,
            read: 0,
            released: 0,
        };
        let reader = BufReader::with_capacity(64 << 10, reader);
        let source = Source::File(reader, sorted.lines);
        Ok(Cursor { source, place })
    }

    /// The next line kept, if any, as cursor `cursor`'s head. A sorted file's line
    /// leaves its text unread: [`Cursor::copy_text`] copies it on.
    pub(super) fn next(&mut self, cursor: usize) -> io::Result<Option<Head<'a>>> {
        loop {
            let head = match &mut self.source {
                Source::Lines(text, lines) => {
                    (lines.next()).map(|line| Head::of_entry(line, text, cursor, self.place))
                }
                Source::File(_, 0) => None,
                Source::File(reader, left) => {
                    *left -= 1;
                    Some(read_head(reader, cursor, self.place)?)
                }
            };
            match head {
                Some(head) if !self.place.keeps(head.score) => self.skip_text(&head)?,
                head => return Ok(head),
            }
        }
    }

    /// Copies `head`'s text (its line, newline included) to `out`, with
    /// `run` (its entry, `"run":…,`) after the line's head.
    pub(super) fn copy_text(
        &mut self,
        head: &Head<'_>,
        run: Option<&str>,
        out: &mut impl Write,
    ) -> io::Result<()> {
        let (len, split) = (head.len as usize, head.split as usize);
        let Some(run) = run else {
            return self.copy_part(head, 0..len, out);
        };
        self.copy_part(head, 0..split, out)?;
        out.write_all(run.as_bytes())?;
        self.copy_part(head, split..len, out)
    }

    /// Copies the bytes `range` of `head`'s text, the next ones of a sorted file's.
    fn copy_part(
        &mut self,
        head: &Head<'_>,
        range: Range<usize>,
        out: &mut impl Write,
    ) -> io::Result<()> {
        match (&head.text, &mut self.source) {
            (Text::InMemory(text), _) => out.write_all(&text.as_bytes()[range]),
            (Text::Unread, Source::File(reader, _)) => copy_bytes(reader, range.len(), out),
            (Text::Unread, Source::Lines(..)) => unreachable!("a line in memory is read"),
        }
    }

    /// Passes over `head`'s text, a line not kept.
    pub(super) fn skip_text(&mut self, head: &Head<'_>) -> io::Result<()> {
        match (&head.text, &mut self.source) {
            (Text::Unread, Source::File(reader, _)) => {
                copy_bytes(reader, head.len as usize, &mut io::sink())
            }
            _ => Ok(()),
        }
    }
}

impl<'a> Head<'a> {
    /// The head of a line kept in memory, its text in `text`.
    pub(super) fn of_entry(
        entry: &'a Entry,
        text: &'a str,
        cursor: usize,
        place: Place<'a>,
    ) -> Self {
        Head {
            key: entry.key.as_ref().map(Cow::Borrowed),
            line: entry.line,
            score: entry.score,
            ordinal: entry.ordinal,
            len: entry.len,
            split: entry.split,
            text: Text::InMemory(entry.text(text)),
            cursor,
            place,
        }
    }

    /// The line's ordinal with its spool's base: its place among the run's
    /// items.
    pub(super) fn base_ordinal(&self) -> u64 {
        self.place.base + self.ordinal
    }

    /// Report order (module comment).
    pub(super) fn order(&self, other: &Self) -> Ordering {
        let (p, q) = (self.place, other.place);
        if p.by_ordinal && q.by_ordinal && p.run_index == q.run_index {
            return (p.base + self.ordinal).cmp(&(q.base + other.ordinal));
        }
        report_order(
            (self.key.as_deref(), p.run, self.line),
            (other.key.as_deref(), q.run, other.line),
        )
        .then(p.run_index.cmp(&q.run_index))
        .then((p.base + self.ordinal).cmp(&(q.base + other.ordinal)))
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

/// Hands `sink` every line of `cursors` in report order, with the cursor it
/// came from (whose reader holds its text); each cursor's lines are in that
/// order already.
pub(super) fn merge<'a>(
    mut cursors: Vec<Cursor<'a>>,
    mut sink: impl FnMut(&Head<'a>, &mut Cursor<'a>) -> io::Result<()>,
) -> io::Result<()> {
    let mut heap = BinaryHeap::with_capacity(cursors.len());
    for (i, cursor) in cursors.iter_mut().enumerate() {
        heap.extend(cursor.next(i)?);
    }
    // The smallest line is replaced by its cursor's next in place: one
    // sift down per line instead of a pop's and a push's.
    while let Some(mut smallest) = heap.peek_mut() {
        let cursor = &mut cursors[smallest.cursor];
        sink(&smallest, cursor)?;
        match cursor.next(smallest.cursor)? {
            Some(next) => *smallest = next,
            None => drop(PeekMut::pop(smallest)),
        }
    }
    Ok(())
}
