//! `item-values.jsonl` written from a run's value tables: one line per item
//! (run by run, in file order), each metric's contribution in the header's order.
//! The format is described once, in `report_model::item_values`.

use std::ops::Range;

use crate::base::typed_json::push_key_json;
use crate::eval::{Outcome, ValueTable};
use crate::ir::formula::op_to_json;
use crate::plan::Plan;
use crate::report_model::item_values::{
    header_line_with_slices, push_row, FormulaColumn, ObservedColumn, ValueKind,
};
use serde_json::Value as Json;

/// Whether the run writes the file: the spec keeps item values (the default)
/// and has a metric computed from items.
pub fn writes_item_values(plan: &Plan) -> bool {
    plan.stats.keep_item_values && plan.stats.keeps_values()
}

/// Writes the file's lines to `out`, a batch of rows at a time (a million items
/// with many metrics make hundreds of megabytes, never held in memory whole);
/// each batch's rows are rendered on `threads` threads, in parts written in
/// order, so the bytes do not depend on the thread count.
pub fn write_item_values_jsonl(
    plan: &Plan,
    outcome: &Outcome,
    run_id: Option<&str>,
    threads: usize,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let metrics: Vec<(&str, ValueKind)> = plan
        .stats
        .columns
        .iter()
        .map(|c| (plan.metrics[c.metric.index()].name.as_str(), c.kind))
        .collect();
    let aggregates: Vec<ObservedColumn> = plan
        .stats
        .observed
        .iter()
        .map(|a| {
            let aggregate = &plan.aggregates[a.index()];
            ObservedColumn {
                text: aggregate.text.clone(),
                function: aggregate.function.keyword(),
                metric: plan.stats.column_of(*a),
            }
        })
        .collect();
    let formulas: Vec<FormulaColumn> = plan
        .stats
        .formulas
        .iter()
        .map(|f| FormulaColumn {
            name: f.name.clone(),
            formula: op_to_json(&f.op).expect("plan formulas are written whole"),
            empty: f.empty,
            tested: f.tested,
        })
        .collect();
    let runs = plan.has_runs();
    // The items' slice values, when every table has them (version 4).
    let width = plan.slices.len();
    let sliced =
        width > 0 && (outcome.item_values.iter()).all(|t| t.slices.len() == t.len() * width);
    let slices: Vec<&str> = match sliced {
        true => plan.slices.iter().map(|s| s.name.as_str()).collect(),
        false => Vec::new(),
    };
    let header = header_line_with_slices(&metrics, runs, &aggregates, &formulas, &slices, run_id);
    out.write_all(header.as_bytes())?;
    for table in &outcome.item_values {
        let run = table.run.as_deref().filter(|_| runs);
        let width = slices.len();
        let render = |rows, part: &mut Vec<u8>| render_rows(table, run, width, rows, part);
        write_batched(table.len(), BATCH_ROWS, threads, &render, out)?;
    }
    Ok(())
}

/// Writes rows `0..len`, each batch of `batch` rows cut into parts that
/// `render` renders on up to `threads` threads, in order. With threads to
/// spare, a batch is rendered while the one before it is written; with one,
/// each in turn.
fn write_batched(
    len: usize,
    batch: usize,
    threads: usize,
    render: &(impl Fn(Range<usize>, &mut Vec<u8>) + Sync),
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let threads = threads.max(1);
    let mut rendering: Vec<Vec<u8>> = vec![Vec::new(); threads];
    let mut rendered: Vec<Vec<u8>> = vec![Vec::new(); threads];
    for parts in batches(len, batch, threads) {
        if threads == 1 {
            for rows in parts {
                render(rows, &mut rendering[0]);
            }
            write_parts(out, &mut rendering)?;
            continue;
        }
        std::thread::scope(|scope| {
            for (part, rows) in rendering.iter_mut().zip(parts) {
                // A thread the system cannot start is an error, not a panic.
                std::thread::Builder::new().spawn_scoped(scope, move || render(rows, part))?;
            }
            write_parts(out, &mut rendered)
        })?;
        std::mem::swap(&mut rendering, &mut rendered);
    }
    write_parts(out, &mut rendered)
}

/// Writes the parts in order and empties them for the next batch.
fn write_parts(out: &mut dyn std::io::Write, parts: &mut [Vec<u8>]) -> std::io::Result<()> {
    for part in parts {
        out.write_all(part)?;
        part.clear();
    }
    Ok(())
}

/// Rows rendered per batch: enough to keep threads busy, few enough that a batch
/// of wide rows stays a few tens of megabytes.
const BATCH_ROWS: usize = 1 << 15;

/// The rows of a table of `len`, a batch of `batch` rows at a time, each batch
/// cut into at most `threads` parts: ranges that together cover `0..len` in order.
fn batches(len: usize, batch: usize, threads: usize) -> impl Iterator<Item = Vec<Range<usize>>> {
    (0..len).step_by(batch.max(1)).map(move |start| {
        let end = (start + batch.max(1)).min(len);
        let per_part = (end - start).div_ceil(threads.max(1));
        (start..end)
            .step_by(per_part)
            .map(|from| from..(from + per_part).min(end))
            .collect()
    })
}

/// Appends the lines of `rows` of `table` to `out`, each ending with the
/// item's values of the first `width` slices.
fn render_rows(
    table: &ValueTable,
    run: Option<&str>,
    width: usize,
    rows: Range<usize>,
    out: &mut Vec<u8>,
) {
    let mut key = String::new();
    let entries = table.line_writer();
    for i in rows {
        key.clear();
        push_key_json(&mut key, table.keys[i].as_ref());
        push_row(out, &key, run, |out| {
            entries.push_entries(i, out);
            for value in &table.slices[i * width..(i + 1) * width] {
                out.push(b',');
                out.extend_from_slice(Json::from(value.as_ref()).to_string().as_bytes());
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn batches_cover_every_row_once_in_order(
            len in 0usize..200, batch in 1usize..50, threads in 1usize..6,
        ) {
            let mut next = 0;
            for parts in batches(len, batch, threads) {
                prop_assert!(!parts.is_empty() && parts.len() <= threads);
                prop_assert!(parts.iter().map(ExactSizeIterator::len).sum::<usize>() <= batch);
                for rows in parts {
                    prop_assert_eq!(rows.start, next);
                    prop_assert!(rows.end > rows.start);
                    next = rows.end;
                }
            }
            prop_assert_eq!(next, len);
        }

        /// Rendered on any number of threads, a batch written while the next
        /// renders, the rows come out once each, in order.
        #[test]
        fn batched_writing_keeps_the_rows_in_order(
            len in 0usize..200, batch in 1usize..50, threads in 1usize..6,
        ) {
            let render = |rows: Range<usize>, out: &mut Vec<u8>| {
                for i in rows {
                    out.extend_from_slice(format!("{i}\n").as_bytes());
                }
            };
            let mut out = Vec::new();
            write_batched(len, batch, threads, &render, &mut out).unwrap();
            let expected: String = (0..len).map(|i| format!("{i}\n")).collect();
            prop_assert_eq!(String::from_utf8(out).unwrap(), expected);
        }
    }
}
