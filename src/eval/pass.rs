//! One pass of a plan over its datasets (one run). Looked-up datasets are read into
//! keyed tables (`lookup`); the items dataset is then streamed, each item evaluated
//! and folded into the aggregates as it is read (`item`). Both are read in parallel
//! chunks and merged in file order, so that the outcome (numbers, counts, and which
//! errors are reported) does not depend on the number of threads.

use std::sync::Arc;

use crate::base::diagnostic::Diagnostic;
use crate::base::value::Value;
use crate::data::{read_chunked, Chunk, ReadStats};
use crate::eval::error::{EvalError, EvalWarning};
use crate::eval::item::{ItemChunk, MAX_ITEM_ERRORS};
use crate::eval::item_lines::{ItemLines, LineLimit};
use crate::eval::item_values::ValueTable;
use crate::eval::keys::{duplicate_error, stop_line, SeenKeys};
use crate::eval::lookup::Lookup;
use crate::eval::outcome::{DatasetOutcome, ItemRow, OffenderRow};
use crate::eval::slices::SliceFold;
use crate::plan::{DatasetPlan, Plan};
use crate::spec::{Duplicates, Join};
use crate::stats::aggregate::Accumulator;

/// One pass over the datasets of one run: every item evaluated and folded into
/// the accumulators, which the caller finishes.
pub(super) struct Pass {
    pub datasets: Vec<DatasetOutcome>,
    pub items: usize,
    pub accumulators: Vec<Accumulator>,
    /// `records(d)`: a looked-up dataset's table size (one per key); the items read.
    pub dataset_records: Vec<Value>,
    pub label_counts: Vec<usize>,
    pub lines: ItemLines,
    pub offenders: Vec<OffenderRow>,
    /// Per slice: its values, folded in the same pass.
    pub slices: Vec<SliceFold>,
    /// Each item's contribution to the metrics computed from items.
    pub values: ValueTable,
}

/// Reads the items dataset `items` (the plan's, or one run's file of it) against
/// the looked-up tables, with up to `threads` threads, keeping each spool of
/// item lines within `limit`.
pub(super) fn pass(
    plan: &Plan,
    items: &DatasetPlan,
    lookups: &[(&Lookup, &DatasetOutcome)],
    threads: usize,
    limit: LineLimit,
) -> Result<Pass, Vec<Diagnostic>> {
    let mut outcomes: Vec<DatasetOutcome> = lookups
        .iter()
        .map(|(_, outcome)| (*outcome).clone())
        .chain([DatasetOutcome::default()])
        .collect();
    let tables: Vec<&Lookup> = lookups.iter().map(|(table, _)| *table).collect();
    let streamed = stream_items(plan, items, &tables, threads, limit, &mut outcomes)?;
    for (outcome, matched) in outcomes.iter_mut().zip(&streamed.matched) {
        outcome.unmatched = matched.iter().filter(|m| !**m).count();
    }
    let table_sizes: Vec<usize> = tables.iter().map(|l| l.records.len()).collect();
    Ok(Pass::of(plan, outcomes, &table_sizes, streamed))
}

impl Pass {
    /// The pass from its datasets' outcomes, the looked-up tables' sizes (one
    /// record per key) and the items' contribution.
    pub(super) fn of(
        plan: &Plan,
        outcomes: Vec<DatasetOutcome>,
        table_sizes: &[usize],
        items: Items,
    ) -> Pass {
        let dataset_records: Vec<Value> = table_sizes
            .iter()
            .copied()
            .chain([outcomes[plan.items_dataset.index()].read.records])
            .map(|n| Value::Number(n as f64))
            .collect();
        Pass {
            datasets: outcomes,
            items: items.count,
            accumulators: items.accumulators,
            dataset_records,
            label_counts: items.label_counts,
            lines: items.lines,
            offenders: items.offenders,
            slices: items.slices,
            values: items.values,
        }
    }
}

/// The items' contribution, merged over chunks.
pub(super) struct Items {
    pub(super) accumulators: Vec<Accumulator>,
    pub(super) count: usize,
    pub(super) matched: Vec<Vec<bool>>,
    pub(super) label_counts: Vec<usize>,
    pub(super) lines: ItemLines,
    pub(super) offenders: Vec<OffenderRow>,
    pub(super) slices: Vec<SliceFold>,
    pub(super) values: ValueTable,
}

pub(super) fn stream_items(
    plan: &Plan,
    dataset: &DatasetPlan,
    lookups: &[&Lookup],
    threads: usize,
    limit: LineLimit,
    outcomes: &mut [DatasetOutcome],
) -> Result<Items, Vec<Diagnostic>> {
    // `first` and `last` need to see every earlier key before scoring an item.
    let threads = match dataset.duplicates {
        Duplicates::Keep | Duplicates::Error => threads,
        Duplicates::First | Duplicates::Last => 1,
    };
    let (chunks, read) = read_chunked(
        dataset,
        threads,
        || ItemChunk::new(plan, dataset, lookups, limit),
        |chunk, record| chunk.record(lookups, record),
    )
    .map_err(|d| vec![d])?;
    let mut chunks: Vec<Chunk<ItemChunk<'_>>> = chunks;
    // `duplicates: last` scores the buffered items now, at their first positions.
    for chunk in &mut chunks {
        let buffered = std::mem::take(&mut chunk.state.buffered);
        for (ordinal, (key, record)) in (0..).zip(&buffered) {
            chunk.state.ordinal = ordinal;
            chunk.state.item(lookups, key.as_ref(), record);
        }
    }
    merge_items(
        plan,
        dataset,
        chunks,
        read,
        lookups.len(),
        threads,
        outcomes,
    )
}

/// Merges the chunks of items in file order: reports what a single reader would
/// have (errors in line order, up to the first stop), else folds the chunks'
/// contributions together and fills in the items dataset's outcome and, per
/// looked-up dataset (`lookups` of them), its missing and skipped items.
pub(super) fn merge_items<'p>(
    plan: &'p Plan,
    dataset: &DatasetPlan,
    mut chunks: Vec<Chunk<ItemChunk<'p>>>,
    read: ReadStats,
    lookups: usize,
    threads: usize,
    outcomes: &mut [DatasetOutcome],
) -> Result<Items, Vec<Diagnostic>> {
    let first_duplicate = (dataset.duplicates == Duplicates::Error)
        .then(|| first_duplicate(dataset, &chunks))
        .flatten();
    // Report what a single reader would have: errors in line order, up to the first
    // stop (a bad record, a repeated key, or the error limit).
    let mut errors: Vec<Diagnostic> = Vec::new();
    let duplicate_line = first_duplicate.as_ref().map_or(usize::MAX, stop_line);
    'chunks: for chunk in &mut chunks {
        let stop = chunk.state.errors.len() < MAX_ITEM_ERRORS;
        for (line, error) in chunk.state.errors.drain(..) {
            if line > duplicate_line {
                break 'chunks;
            }
            errors.push(error);
            if errors.len() == MAX_ITEM_ERRORS {
                let kind = EvalError::TooManyItemErrors {
                    shown: MAX_ITEM_ERRORS,
                };
                errors.push(Diagnostic::of(&kind));
                return Err(errors);
            }
        }
        if let (Some(data_error), true) = (chunk.stop.take(), stop) {
            if stop_line(&data_error) < duplicate_line {
                errors.push(data_error);
                return Err(errors);
            }
            break;
        }
    }
    if let Some(duplicate) = first_duplicate {
        errors.push(duplicate);
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut chunks = chunks.into_iter().map(|c| {
        let mut chunk = c.state;
        chunk.count_columns();
        chunk
    });
    let mut total = chunks.next().expect("at least one chunk");
    // Each chunk's lines count their items from the chunks' before it.
    let mut lines = ItemLines::default();
    let mut base = total.numbered;
    lines.add(std::mem::take(&mut total.lines), 0);
    let mut values = Vec::new();
    for mut part in chunks {
        for (a, b) in total.accumulators.iter_mut().zip(&part.accumulators) {
            a.merge(b);
        }
        for (a, b) in total.slices.iter_mut().zip(part.slices) {
            a.merge(b);
        }
        total.count += part.count;
        total.keyless += part.keyless;
        for (a, b) in total.label_counts.iter_mut().zip(&part.label_counts) {
            *a += b;
        }
        lines.add(std::mem::take(&mut part.lines), base);
        base += part.numbered;
        values.push(part.values);
        total.offenders.extend(part.offenders);
        for (a, b) in total.matched.iter_mut().zip(part.matched) {
            a.iter_mut().zip(b).for_each(|(x, y)| *x |= y);
        }
        for i in 0..lookups {
            total.missing[i] += part.missing[i];
            total.skipped[i] += part.skipped[i];
        }
    }
    total.values.merge_all(values, threads);
    for (i, outcome) in outcomes.iter_mut().enumerate().take(lookups) {
        outcome.missing = total.missing[i];
        outcome.skipped_items = total.skipped[i];
    }
    let items = &mut outcomes[plan.items_dataset.index()];
    items.read = read;
    items.keyless = total.keyless;
    items.duplicates = total.duplicates;
    if let Some(error) = lines.spill_error() {
        return Err(vec![error]);
    }
    let mut offenders = total.offenders;
    offenders.sort_by(ItemRow::report_order);
    offenders.truncate(plan.offenders.as_ref().map_or(0, |o| o.limit));
    Ok(Items {
        accumulators: total.accumulators,
        count: total.count,
        matched: total.matched,
        label_counts: total.label_counts,
        lines,
        offenders,
        slices: total.slices,
        values: total.values,
    })
}

/// The first key of a later chunk that an earlier chunk already had, in file order.
/// Repeats within a chunk stop that chunk, like any other bad record.
pub(super) fn first_duplicate(
    dataset: &DatasetPlan,
    chunks: &[Chunk<ItemChunk<'_>>],
) -> Option<Diagnostic> {
    for (k, chunk) in chunks.iter().enumerate().skip(1) {
        let earlier: Vec<&SeenKeys> = chunks[..k].iter().map(|c| &c.state.seen).collect();
        let repeat = chunk.state.seen.first_repeat_of(&earlier);
        if let Some((line, first, key)) = repeat {
            return Some(duplicate_error(dataset, key, first, line));
        }
    }
    None
}

/// What a pass (of the run `run`, when there are several) noticed about its
/// datasets that does not stop it.
pub(super) fn data_warnings(
    plan: &Plan,
    outcomes: &[DatasetOutcome],
    run: Option<&Arc<str>>,
) -> Vec<Diagnostic> {
    let mut warnings = Vec::new();
    let items = &plan.datasets[plan.items_dataset.index()].name;
    for (dataset, outcome) in plan.datasets.iter().zip(outcomes) {
        let mut say = |kind: EvalWarning| warnings.push(Diagnostic::warning_of(&kind));
        let (run, name) = (run.cloned(), dataset.name.clone());
        if outcome.keyless > 0 {
            say(EvalWarning::Keyless {
                run: run.clone(),
                dataset: name.clone(),
                records: outcome.keyless,
                key: dataset.key_text.clone(),
            });
        }
        if outcome.unmatched > 0 {
            say(EvalWarning::Unmatched {
                run: run.clone(),
                dataset: name.clone(),
                records: outcome.unmatched,
                items: items.clone(),
            });
        }
        if outcome.missing > 0 {
            say(EvalWarning::Missing {
                run: run.clone(),
                dataset: name.clone(),
                items: outcome.missing,
                items_dataset: items.clone(),
                skipped: dataset.join == Join::Inner,
            });
        }
        if outcome.duplicates > 0 && dataset.duplicates != Duplicates::Keep {
            say(EvalWarning::Duplicates {
                run,
                dataset: name,
                records: outcome.duplicates,
                kept_last: dataset.duplicates == Duplicates::Last,
            });
        }
    }
    warnings
}
