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
//! holding one query at a time; any other order is grouped in memory.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::data::Record;
use crate::diagnostic::{Diagnostic, Location};
use crate::plan::{DatasetPlan, ProjectedField};
use crate::spec::Format;
use crate::value::Value;

struct Group {
    qid: Arc<str>,
    line: usize,
    /// (docno, number, line): the judged level, or the run's score.
    entries: Vec<(Arc<str>, f64, usize)>,
    /// Each document's line, to report one listed twice.
    seen: HashMap<Arc<str>, usize, foldhash::fast::FixedState>,
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
    pub sha256: String,
    pub bytes: u64,
}

/// Groups the file's lines by query and hands one record per query to `sink`, in the
/// order of each query's first line.
pub fn read<S>(
    dataset: &DatasetPlan,
    mode: Mode,
    state: &mut S,
    sink: &(impl Fn(&mut S, Record) -> Result<(), Diagnostic> + Sync),
) -> Result<Outcome, std::io::Error> {
    let mut reader = BufReader::with_capacity(1 << 20, File::open(&dataset.path)?);
    let mut hasher = Sha256::new();
    let mut outcome = Outcome {
        records: 0,
        stop: None,
        restart: false,
        sha256: String::new(),
        bytes: 0,
    };
    let mut groups: Vec<Group> = Vec::new();
    let mut by_qid: HashMap<Arc<str>, usize, foldhash::fast::FixedState> = HashMap::default();
    let mut ended: HashSet<Arc<str>, foldhash::fast::FixedState> = HashSet::default();
    let columns = if dataset.format == Format::TrecQrels {
        4
    } else {
        6
    };
    let mut buffer = Vec::new();
    let mut line = 0usize;
    let emit = |group: Group, state: &mut S, outcome: &mut Outcome| -> bool {
        outcome.records += 1;
        match sink(state, record(dataset, group)) {
            Ok(()) => true,
            Err(d) => {
                outcome.stop = Some(d);
                false
            }
        }
    };
    loop {
        buffer.clear();
        let n = reader.read_until(b'\n', &mut buffer)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer);
        outcome.bytes += n as u64;
        line += 1;
        let error = |column: usize, message: String, help: &str| {
            Diagnostic::error(format!("{}: {message}", dataset.name))
                .at(Location::in_data(&dataset.display_path, line, Some(column)))
                .help(help.to_string())
        };
        let Ok(line_text) = std::str::from_utf8(&buffer) else {
            outcome.stop = Some(error(
                1,
                "the line is not valid UTF-8".into(),
                "save the file as UTF-8",
            ));
            return Ok(outcome);
        };
        let fields = split_fields(line_text);
        if fields.is_empty() {
            continue;
        }
        if fields.len() != columns {
            let shape = if columns == 4 {
                "`qid iter docno rel`"
            } else {
                "`qid Q0 docno rank score tag`"
            };
            outcome.stop = Some(error(
                1,
                format!("expected {columns} columns, found {}", fields.len()),
                &format!("each line is {shape}"),
            ));
            return Ok(outcome);
        }
        let (value_column, value_text) = fields[if columns == 4 { 3 } else { 4 }];
        let value = if columns == 4 {
            value_text
                .parse::<i64>()
                .map(|v| v as f64)
                .map_err(|_| "a relevance level must be a whole number")
        } else {
            value_text
                .parse::<f64>()
                .ok()
                .filter(|s| s.is_finite())
                .ok_or("a score must be a finite number")
        };
        let value = match value {
            Ok(value) => value,
            Err(message) => {
                outcome.stop = Some(error(
                    char_column(line_text, value_column),
                    format!("{message}, found `{value_text}`"),
                    "fix the line",
                ));
                return Ok(outcome);
            }
        };
        let (qid, (doc_column, docno)) = (fields[0].1, fields[2]);
        let group = match mode {
            Mode::Stream => {
                if groups.last().is_none_or(|g| &*g.qid != qid) {
                    if ended.contains(qid) {
                        outcome.restart = true;
                        return Ok(outcome);
                    }
                    let mut next = Group::new(qid, line);
                    if let Some(mut done) = groups.pop() {
                        ended.insert(done.qid.clone());
                        // One query at a time: its duplicate check's table is reused.
                        done.seen.clear();
                        next.seen = std::mem::take(&mut done.seen);
                        if !emit(done, state, &mut outcome) {
                            return Ok(outcome);
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
        let docno: Arc<str> = Arc::from(docno);
        if let Some(first) = group.seen.insert(docno.clone(), line) {
            outcome.stop = Some(error(
                char_column(line_text, doc_column),
                format!(
                    "document `{docno}` is listed twice for query `{}` (first on line {first})",
                    group.qid
                ),
                "each document may appear once per query",
            ));
            return Ok(outcome);
        }
        group.entries.push((docno, value, line));
    }
    for group in groups {
        if !emit(group, state, &mut outcome) {
            return Ok(outcome);
        }
    }
    outcome.sha256 = format!("{:x}", hasher.finalize());
    Ok(outcome)
}

/// Fields with their byte offsets.
fn split_fields(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        match (c.is_ascii_whitespace(), start) {
            (true, Some(s)) => {
                out.push((s, &line[s..i]));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, &line[s..]));
    }
    out
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
        group.entries.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then_with(|| b.0.as_bytes().cmp(a.0.as_bytes()))
        });
        let docs = group
            .entries
            .iter()
            .map(|(doc, _, _)| Value::String(doc.clone()))
            .collect();
        let scores = group
            .entries
            .iter()
            .map(|(_, score, _)| Value::Number(*score))
            .collect();
        vec![
            (Arc::from("qid"), Value::String(group.qid)),
            (Arc::from("docs"), Value::list(docs)),
            (Arc::from("scores"), Value::list(scores)),
        ]
    };
    let object = Value::Object(fields.into());
    let mut slots = vec![Value::Null; dataset.projection.slot_count].into_boxed_slice();
    match dataset.projection.whole {
        Some(slot) => slots[slot] = object,
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
            ProjectedField::Slot(slot) => slots[*slot] = value,
            ProjectedField::Nested(inner) => fill(inner, &value, slots),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_keep_their_offsets() {
        assert_eq!(
            split_fields("  q1 0\td1  2 "),
            vec![(2, "q1"), (5, "0"), (7, "d1"), (11, "2")]
        );
    }
}
