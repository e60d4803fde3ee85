//! One pass of a plan over its datasets (one run). Looked-up datasets are read into
//! keyed tables (`lookup`); the items dataset is then streamed, each item evaluated
//! and folded into the aggregates as it is read (`item`). Both are read in parallel
//! chunks and merged in file order, so that the outcome (numbers, counts, and which
//! errors are reported) does not depend on the number of threads.

use std::sync::Arc;

use crate::base::diagnostic::Diagnostic;
use crate::base::value::Value;
use crate::data::{read_chunked, Chunk, ReadStats};
use crate::eval::error::EvalWarning;
use crate::eval::item::ItemChunk;
use crate::eval::item_lines::LineLimit;
use crate::eval::keys::{duplicate_error, stop_line, SeenKeys};
use crate::eval::lookup::Lookup;
use crate::eval::outcome::DatasetOutcome;
use crate::eval::score::Roles;
use crate::eval::state::errors::ErrorPlace;
use crate::eval::state::RunState;
use crate::plan::{DatasetPlan, Plan};
use crate::spec::{Duplicates, Join};

/// One pass over the datasets of one run: every item evaluated and folded into
/// the run's state, which the caller finishes.
pub(super) struct Pass<'p> {
    pub datasets: Vec<DatasetOutcome>,
    /// `records(d)`: a looked-up dataset's table size (one per key); the items read.
    pub dataset_records: Vec<Value>,
    pub run: RunState<'p>,
}

/// Reads the items dataset `items` (the plan's, or one run's file of it) against
/// the looked-up tables, with up to `threads` threads, keeping each spool of
/// item lines within `limit`.
pub(super) fn pass<'p>(
    plan: &'p Plan,
    roles: &'p Roles,
    items: &DatasetPlan,
    lookups: &[(&Lookup, &DatasetOutcome)],
    threads: usize,
    limit: LineLimit,
) -> Result<Pass<'p>, Vec<Diagnostic>> {
    let mut outcomes: Vec<DatasetOutcome> = lookups
        .iter()
        .map(|(_, outcome)| (*outcome).clone())
        .chain([DatasetOutcome::default()])
        .collect();
    let tables: Vec<&Lookup> = lookups.iter().map(|(table, _)| *table).collect();
    let streamed = stream_items(plan, roles, items, &tables, threads, limit, &mut outcomes)?;
    for (outcome, matched) in outcomes.iter_mut().zip(&streamed.matched) {
        outcome.unmatched = matched.iter().filter(|m| !**m).count();
    }
    let table_sizes: Vec<usize> = tables.iter().map(|l| l.records.len()).collect();
    Ok(Pass::of(plan, outcomes, &table_sizes, streamed.run))
}

impl<'p> Pass<'p> {
    /// The pass from its datasets' outcomes, the looked-up tables' sizes (one
    /// record per key) and the items' state.
    pub(super) fn of(
        plan: &Plan,
        outcomes: Vec<DatasetOutcome>,
        table_sizes: &[usize],
        run: RunState<'p>,
    ) -> Pass<'p> {
        let dataset_records: Vec<Value> = table_sizes
            .iter()
            .copied()
            .chain([outcomes[plan.items_dataset.index()].read.records])
            .map(|n| Value::Number(n as f64))
            .collect();
        Pass {
            datasets: outcomes,
            dataset_records,
            run,
        }
    }
}

/// The items' contribution, merged over chunks: the run's state, and which
/// looked-up records some item matched.
pub(super) struct Items<'p> {
    pub(super) run: RunState<'p>,
    pub(super) matched: Vec<Vec<bool>>,
}

pub(super) fn stream_items<'p>(
    plan: &'p Plan,
    roles: &'p Roles,
    dataset: &DatasetPlan,
    lookups: &[&Lookup],
    threads: usize,
    limit: LineLimit,
    outcomes: &mut [DatasetOutcome],
) -> Result<Items<'p>, Vec<Diagnostic>> {
    // `first` and `last` need to see every earlier key before scoring an item.
    let threads = match dataset.duplicates {
        Duplicates::Keep | Duplicates::Error => threads,
        Duplicates::First | Duplicates::Last => 1,
    };
    let (chunks, read) = read_chunked(
        dataset,
        threads,
        || ItemChunk::new(plan, roles, dataset, lookups, limit),
        |chunk, record| chunk.record(lookups, record),
    )
    .map_err(|d| vec![d])?;
    let mut chunks: Vec<Chunk<ItemChunk<'_, '_>>> = chunks;
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
    mut chunks: Vec<Chunk<ItemChunk<'p, '_>>>,
    read: ReadStats,
    lookups: usize,
    threads: usize,
    outcomes: &mut [DatasetOutcome],
) -> Result<Items<'p>, Vec<Diagnostic>> {
    // What a single reader would report: errors in line order, up to the
    // first stop (a bad record, a repeated key, or the error limit).
    let items_rank = plan.items_dataset.index();
    if dataset.duplicates == Duplicates::Error {
        if let Some(duplicate) = first_duplicate(dataset, &chunks) {
            let place = ErrorPlace::reader(items_rank, stop_line(&duplicate));
            chunks[0].state.run.errors.stop(place, duplicate);
        }
    }
    for chunk in &mut chunks {
        if let Some(stop) = chunk.stop.take() {
            let place = ErrorPlace::reader(items_rank, stop_line(&stop));
            chunk.state.run.errors.stop(place, stop);
        }
    }
    let (mut keyless, mut duplicates) = (0, 0);
    let mut missing = vec![0; lookups];
    let mut skipped = vec![0; lookups];
    let mut matched: Option<Vec<Vec<bool>>> = None;
    let mut runs = Vec::with_capacity(chunks.len());
    for chunk in chunks {
        let chunk = chunk.state;
        keyless += chunk.keyless;
        duplicates += chunk.duplicates;
        for i in 0..lookups {
            missing[i] += chunk.missing[i];
            skipped[i] += chunk.skipped[i];
        }
        match &mut matched {
            None => matched = Some(chunk.matched),
            Some(total) => {
                for (a, b) in total.iter_mut().zip(chunk.matched) {
                    a.iter_mut().zip(b).for_each(|(x, y)| *x |= y);
                }
            }
        }
        runs.push(chunk.run);
    }
    let run = RunState::merge_in_order(runs, threads);
    if !run.errors.is_empty() {
        return Err(run.errors.into_diagnostics());
    }
    for (i, outcome) in outcomes.iter_mut().enumerate().take(lookups) {
        outcome.missing = missing[i];
        outcome.skipped_items = skipped[i];
    }
    let items = &mut outcomes[plan.items_dataset.index()];
    items.read = read;
    items.keyless = keyless;
    items.duplicates = duplicates;
    if let Some(error) = run.lines.spill_error() {
        return Err(vec![error]);
    }
    Ok(Items {
        run,
        matched: matched.unwrap_or_default(),
    })
}

/// The first key of a later chunk that an earlier chunk already had, in file order.
/// Repeats within a chunk stop that chunk, like any other bad record.
pub(super) fn first_duplicate(
    dataset: &DatasetPlan,
    chunks: &[Chunk<ItemChunk<'_, '_>>],
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
