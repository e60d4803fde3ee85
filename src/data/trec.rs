//! TREC files: qrels (`qid iter docno rel`) and runs (`qid Q0 docno rank score tag`),
//! whitespace-separated, one judgement or retrieved document per line. Lines are
//! grouped into one record per query, in order of each query's first line:
//!
//! - qrels: `{qid, judgements: {docno: rel, …}}`;
//! - run: `{qid, docs: [docno, …], scores: [score, …]}`, ranked as trec_eval ranks:
//!   by score descending, ties by docno descending; the rank column is ignored.
//!
//! A document listed twice for one query is an error naming both lines.

use std::collections::HashMap;
use std::sync::Arc;

use crate::data::project::Interner;
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
}

/// Groups the file's lines by query and hands one record per query to `sink`.
pub fn read<S>(
    dataset: &DatasetPlan,
    text: &str,
    state: &mut S,
    sink: &(impl Fn(&mut S, Record) -> Result<(), Diagnostic> + Sync),
) -> (usize, Option<Diagnostic>) {
    let mut interner = Interner::default();
    let mut groups: Vec<Group> = Vec::new();
    let mut by_qid: HashMap<Arc<str>, usize, foldhash::fast::FixedState> = HashMap::default();
    let columns = if dataset.format == Format::TrecQrels {
        4
    } else {
        6
    };
    for (index, line_text) in text.lines().enumerate() {
        let line = index + 1;
        let fields: Vec<(usize, &str)> = split_fields(line_text);
        if fields.is_empty() {
            continue;
        }
        let error = |column: usize, message: String, help: &str| {
            Diagnostic::error(format!("{}: {message}", dataset.name))
                .at(Location::in_data(&dataset.display_path, line, Some(column)))
                .help(help.to_string())
        };
        if fields.len() != columns {
            let shape = if columns == 4 {
                "`qid iter docno rel`"
            } else {
                "`qid Q0 docno rank score tag`"
            };
            let d = error(
                1,
                format!("expected {columns} columns, found {}", fields.len()),
                &format!("each line is {shape}"),
            );
            return (groups.len(), Some(d));
        }
        let (value_column, value_text) = fields[columns - if columns == 4 { 1 } else { 2 }];
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
                return (
                    groups.len(),
                    Some(error(
                        char_column(line_text, value_column),
                        format!("{message}, found `{value_text}`"),
                        "fix the line",
                    )),
                )
            }
        };
        let qid = fields[0].1;
        let docno = fields[2].1;
        let group = match by_qid.get(qid) {
            Some(&g) => g,
            None => {
                let qid: Arc<str> = Arc::from(qid);
                by_qid.insert(qid.clone(), groups.len());
                groups.push(Group {
                    qid,
                    line,
                    entries: Vec::new(),
                });
                groups.len() - 1
            }
        };
        let group = &mut groups[group];
        if let Some((_, _, first)) = group.entries.iter().find(|(d, _, _)| &**d == docno) {
            let d = error(
                char_column(line_text, fields[2].0),
                format!(
                    "document `{docno}` is listed twice for query `{}` (first on line {first})",
                    group.qid
                ),
                "each document may appear once per query",
            );
            return (groups.len(), Some(d));
        }
        group
            .entries
            .push((interner_string(&mut interner, docno), value, line));
    }
    let mut records = 0;
    for group in groups {
        let record = record(dataset, group);
        records += 1;
        if let Err(d) = sink(state, record) {
            return (records, Some(d));
        }
    }
    (records, None)
}

fn interner_string(interner: &mut Interner, s: &str) -> Arc<str> {
    interner.string(s)
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
