//! TREC files: qrels (`qid iter docno rel`) and runs (`qid Q0 docno rank score tag`),
//! whitespace-separated, one judgement or retrieved document per line. Lines are
//! grouped into one record per query, in order of each query's first line:
//!
//! - qrels: `{qid, judgements: {docno: rel, …}}`;
//! - run: `{qid, docs: [docno, …], scores: [score, …]}`, ranked as trec_eval ranks:
//!   by score descending, ties by docno descending; the rank column is ignored.
//!
//! A document listed twice for one query is an error naming both lines. A file whose
//! queries each sit on consecutive lines (as runs are usually written) is streamed,
//! holding one query at a time, and can be split between queries over threads; any
//! other order is grouped in memory by one reader.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;
use std::io::BufRead;
use std::ops::ControlFlow;
use std::sync::Arc;

use crate::base::decimal::parse_f64;
use crate::base::diagnostic::{Diagnostic, Location};
use crate::base::sha256::Sha256;
use crate::base::value::Value;
use crate::data::error::DataError;
use crate::data::file::{bytes_of, for_each_line, Line};
use crate::data::progress::Progress;
use crate::data::reader::Flow;
use crate::ir::Record;
use crate::plan::{DatasetPlan, ProjectedField};
use crate::spec::Format;

struct Group {
    qid: Arc<str>,
    line: usize,
    /// (docno, number, line): the judged level, or the run's score.
    entries: Vec<(Arc<str>, f64, usize)>,
    /// Each document's entry by its docno's hash, to report one listed twice. Not
    /// by the docno itself: a shared key is two atomic counts per line, which cost
    /// more than the rest of the line's reading.
    seen: HashMap<u64, usize, foldhash::fast::FixedState>,
}

impl Group {
    fn new(qid: &str, line: usize) -> Self {
        Group {
            qid: Arc::from(qid),
            line,
            entries: Vec::new(),
            seen: HashMap::default(),
        }
    }

    /// Adds a document's entry; a document already listed gives back its line.
    fn add(&mut self, docno: &str, number: f64, line: usize) -> Result<(), usize> {
        let hash = foldhash::fast::FixedState::default().hash_one(docno);
        self.add_hashed(hash, docno, number, line)
    }

    fn add_hashed(
        &mut self,
        hash: u64,
        docno: &str,
        number: f64,
        line: usize,
    ) -> Result<(), usize> {
        let index = self.entries.len();
        match self.seen.entry(hash) {
            Entry::Vacant(vacant) => {
                vacant.insert(index);
            }
            Entry::Occupied(occupied) => {
                let earlier = &self.entries[*occupied.get()];
                if &*earlier.0 == docno {
                    return Err(earlier.2);
                }
                // Two docnos with one hash: rare enough to compare with every entry.
                if let Some(earlier) = self.entries.iter().find(|e| &*e.0 == docno) {
                    return Err(earlier.2);
                }
            }
        }
        self.entries.push((Arc::from(docno), number, line));
        Ok(())
    }
}

/// How lines become groups.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Each query's lines are together: a group is handed on as soon as it ends, so
    /// only one query is held at a time.
    Stream,
    /// Lines of a query may be anywhere: every group is held until the end.
    Grouped,
}

pub struct Outcome {
    pub records: usize,
    pub stop: Option<Diagnostic>,
    /// In `Stream` mode: a query came back after its group ended; read again `Grouped`.
    pub restart: bool,
    /// In `Stream` mode: every query read, so that the caller can find one that a
    /// split of the file cut in two.
    pub queries: Vec<Arc<str>>,
}

/// The lines to read: a reader over a range of the file whose first line is line
/// `first_line + 1`, hashed as read when `hasher` is given.
pub struct Lines<'a, R> {
    pub reader: R,
    pub first_line: usize,
    pub hasher: Option<&'a mut Sha256>,
    pub progress: &'a Progress,
}

/// The query id of a line: its first field; `None` for a blank line.
pub fn query_of(line: &[u8]) -> Option<&[u8]> {
    line.split(|b| b.is_ascii_whitespace())
        .find(|f| !f.is_empty())
}

/// Bytes from the start of `reader` to the first line of a query other than that of
/// its first non-blank line: where a split of a file grouped by query may begin.
pub fn query_end(mut reader: impl BufRead) -> std::io::Result<u64> {
    let (mut offset, mut query, mut line) = (0u64, None::<Vec<u8>>, Vec::new());
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(offset);
        }
        match (query_of(&line), &query) {
            (None, _) => {}
            (Some(q), None) => query = Some(q.to_vec()),
            (Some(q), Some(first)) if q == first.as_slice() => {}
            (Some(_), Some(_)) => return Ok(offset),
        }
        offset += n as u64;
    }
}

/// Groups the lines by query and hands one record per query to `sink`, in the order
/// of each query's first line.
pub fn read<S, R: BufRead>(
    dataset: &DatasetPlan,
    lines: Lines<'_, R>,
    mode: Mode,
    state: &mut S,
    sink: &(impl Fn(&mut S, Record) -> Flow + Sync),
) -> Result<Outcome, std::io::Error> {
    let mut outcome = Outcome {
        records: 0,
        stop: None,
        restart: false,
        queries: Vec::new(),
    };
    let mut groups: Vec<Group> = Vec::new();
    let mut by_qid: HashMap<Arc<str>, usize, foldhash::fast::FixedState> = HashMap::default();
    let mut ended: HashSet<Arc<str>, foldhash::fast::FixedState> = HashSet::default();
    let qrels = dataset.format == Format::TrecQrels;
    let columns = if qrels { 4 } else { 6 };
    let Lines {
        mut reader,
        first_line,
        mut hasher,
        progress,
    } = lines;
    let (mut line, mut unreported) = (first_line, 0u64);
    let emit = |group: Group, state: &mut S, outcome: &mut Outcome| -> bool {
        outcome.records += 1;
        match sink(state, record(dataset, group)) {
            Ok(ControlFlow::Continue(())) => true,
            Ok(ControlFlow::Break(())) => false,
            Err(d) => {
                outcome.stop = Some(d);
                false
            }
        }
    };
    // `Some` says the reading stops, its reason in `outcome`.
    let stopped = for_each_line(&mut reader, |read: Line<'_>| -> Option<()> {
        let bytes = bytes_of(read);
        if let Some(hasher) = hasher.as_deref_mut() {
            hasher.update(bytes);
        }
        unreported += bytes.len() as u64;
        if line % 4096 == 0 {
            progress.add(std::mem::take(&mut unreported), 4096);
        }
        line += 1;
        let error = |column: usize, kind: DataError| {
            Diagnostic::of(&kind).at(Location::in_data(&dataset.display_path, line, Some(column)))
        };
        let name = || dataset.name.clone();
        let Ok(line_text) = read else {
            outcome.stop = Some(error(1, DataError::TrecLineNotUtf8 { dataset: name() }));
            return Some(());
        };
        let mut fields = [(0usize, ""); 6];
        let found = split_fields(line_text, &mut fields);
        if found == 0 {
            return None;
        }
        if found != columns {
            let kind = DataError::TrecColumns {
                dataset: name(),
                qrels,
                found,
            };
            outcome.stop = Some(error(1, kind));
            return Some(());
        }
        let (value_column, value_text) = fields[if qrels { 3 } else { 4 }];
        let value = if qrels {
            value_text.parse::<i64>().ok().map(|v| v as f64)
        } else {
            parse_f64(value_text).filter(|s| s.is_finite())
        };
        let Some(value) = value else {
            let kind = DataError::TrecValue {
                dataset: name(),
                qrels,
                text: value_text.to_string(),
            };
            outcome.stop = Some(error(char_column(line_text, value_column), kind));
            return Some(());
        };
        let (qid, (doc_column, docno)) = (fields[0].1, fields[2]);
        let group = match mode {
            Mode::Stream => {
                if groups.last().is_none_or(|g| &*g.qid != qid) {
                    if ended.contains(qid) {
                        outcome.restart = true;
                        return Some(());
                    }
                    let mut next = Group::new(qid, line);
                    if let Some(mut done) = groups.pop() {
                        ended.insert(done.qid.clone());
                        // One query at a time: its duplicate check's table is reused.
                        done.seen.clear();
                        next.seen = std::mem::take(&mut done.seen);
                        if !emit(done, state, &mut outcome) {
                            return Some(());
                        }
                    }
                    groups.push(next);
                }
                groups.last_mut().expect("a current group")
            }
            Mode::Grouped => {
                let index = match by_qid.get(qid) {
                    Some(&index) => index,
                    None => {
                        let group = Group::new(qid, line);
                        by_qid.insert(group.qid.clone(), groups.len());
                        groups.push(group);
                        groups.len() - 1
                    }
                };
                &mut groups[index]
            }
        };
        // Not interned: a streamed query is dropped once scored, and a table of all
        // document ids would cost more than it saves.
        if let Err(first_line) = group.add(docno, value, line) {
            let kind = DataError::TrecDuplicateDocument {
                dataset: name(),
                document: Arc::from(docno),
                query: group.qid.clone(),
                first_line,
            };
            outcome.stop = Some(error(char_column(line_text, doc_column), kind));
            return Some(());
        }
        None
    })?;
    if stopped.is_some() {
        return Ok(outcome);
    }
    progress.add(unreported, (line % 4096) as u64);
    if mode == Mode::Stream {
        outcome.queries = ended.into_iter().collect();
        outcome.queries.extend(groups.last().map(|g| g.qid.clone()));
    }
    for group in groups {
        if !emit(group, state, &mut outcome) {
            return Ok(outcome);
        }
    }
    Ok(outcome)
}

/// Splits a line at ASCII whitespace into `out` (fields with their byte offsets);
/// returns how many fields the line has, which may be more than `out` holds.
fn split_fields<'a>(line: &'a str, out: &mut [(usize, &'a str)]) -> usize {
    let bytes = line.as_bytes();
    let (mut count, mut i) = (0, 0);
    while i < bytes.len() {
        if bytes[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && !bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if let Some(slot) = out.get_mut(count) {
            // ASCII whitespace never falls inside a UTF-8 sequence: both ends are
            // character boundaries.
            *slot = (start, &line[start..i]);
        }
        count += 1;
    }
    count
}

fn char_column(line: &str, byte: usize) -> usize {
    line[..byte].chars().count() + 1
}

fn record(dataset: &DatasetPlan, mut group: Group) -> Record {
    let fields: Vec<(Arc<str>, Value)> = if dataset.format == Format::TrecQrels {
        let judgements = group
            .entries
            .into_iter()
            .map(|(doc, rel, _)| (doc, Value::Number(rel)))
            .collect();
        vec![
            (Arc::from("qid"), Value::String(group.qid)),
            (Arc::from("judgements"), Value::Object(judgements)),
        ]
    } else {
        // `+ 0.0` makes -0 equal 0: trec_eval ties them (then by docno).
        group.entries.sort_by(|a, b| {
            (b.1 + 0.0)
                .total_cmp(&(a.1 + 0.0))
                .then_with(|| b.0.as_bytes().cmp(a.0.as_bytes()))
        });
        let (docs, scores): (Vec<Value>, Vec<Value>) = group
            .entries
            .into_iter()
            .map(|(doc, score, _)| (Value::String(doc), Value::Number(score)))
            .unzip();
        vec![
            (Arc::from("qid"), Value::String(group.qid)),
            (Arc::from("docs"), Value::list(docs)),
            (Arc::from("scores"), Value::list(scores)),
        ]
    };
    let object = Value::Object(fields.into());
    let mut slots = vec![Value::Null; dataset.projection.slot_count].into_boxed_slice();
    match dataset.projection.whole {
        Some(slot) => slots[slot.index()] = object,
        None => fill(&dataset.projection.fields, &object, &mut slots),
    }
    Record {
        slots,
        line: u32::try_from(group.line).unwrap_or(u32::MAX),
    }
}

/// Copies the projected fields of a synthesised record into its slots.
fn fill(fields: &[(String, ProjectedField)], object: &Value, slots: &mut [Value]) {
    for (name, field) in fields {
        let value = object.field(name).unwrap_or_default();
        match field {
            ProjectedField::Slot(slot) => slots[slot.index()] = value,
            ProjectedField::Nested(inner) => fill(inner, &value, slots),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_document_is_found_past_a_hash_collision() {
        let mut group = Group::new("q", 1);
        // Every docno given one hash: each repeat is told apart by its text.
        for (line, doc) in ["a", "b", "c"].iter().enumerate() {
            assert_eq!(group.add_hashed(7, doc, 1.0, line + 1), Ok(()));
        }
        assert_eq!(group.add_hashed(7, "b", 1.0, 4), Err(2));
        assert_eq!(group.add_hashed(7, "a", 1.0, 5), Err(1));
        assert_eq!(group.entries.len(), 3);
        let mut group = Group::new("q", 1);
        assert_eq!(group.add("c", 1.0, 1), Ok(()));
        assert_eq!(group.add("c", 1.0, 2), Err(1));
    }

    #[test]
    fn fields_keep_their_offsets() {
        let mut fields = [(0, ""); 6];
        assert_eq!(split_fields("  q1 0\td1  2 ", &mut fields), 4);
        assert_eq!(fields[..4], [(2, "q1"), (5, "0"), (7, "d1"), (11, "2")]);
    }

    #[test]
    fn fields_beyond_the_buffer_are_counted() {
        let mut fields = [(0, ""); 2];
        assert_eq!(split_fields("a b c d é", &mut fields), 5);
        assert_eq!(fields, [(0, "a"), (2, "b")]);
    }

    #[test]
    fn a_split_moves_past_the_current_query() {
        let text = "q1 0 a 1\n\nq1 0 b 1\nq2 0 a 1\nq1 0 c 1\n";
        assert_eq!(query_end(text.as_bytes()).unwrap(), 19);
        assert_eq!(&text[19..21], "q2");
        assert_eq!(query_end("q1 0 a 1\nq1 0 b".as_bytes()).unwrap(), 15);
        assert_eq!(query_end("".as_bytes()).unwrap(), 0);
    }

    #[test]
    fn a_query_is_the_first_field() {
        assert_eq!(query_of(b"  q7 Q0 d 1 2 t\n"), Some(&b"q7"[..]));
        assert_eq!(query_of(b" \t\r\n"), None);
    }
}
