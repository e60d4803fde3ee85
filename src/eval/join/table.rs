//! The table join: every looked-up dataset read into a keyed table (`lookup`),
//! then the items dataset read in parallel chunks past them, each item scored
//! and folded into its chunk's state as it is read. Items whose policy makes
//! them wait for every earlier key (`duplicates: first/last`) are held, their
//! repeats settled across chunks, then scored in parallel stretches. States
//! merge in file order, so the outcome (numbers, counts, and which errors are
//! reported) does not depend on the number of threads.

use std::ops::ControlFlow;
use std::sync::Mutex;

use crate::base::diagnostic::Diagnostic;
use crate::base::parallel::map_in_parallel;
use crate::base::value::Key;
use crate::data::{read_chunked, Flow};
use crate::eval::join::items::{resolve, Held, ItemKeys, Read};
use crate::eval::join::keys::{duplicate_error, stop_line, SeenKeys};
use crate::eval::join::lookup::Lookup;
use crate::eval::join::{item_failure, Pass};
use crate::eval::outcome::DatasetOutcome;
use crate::eval::physical::Bucket;
use crate::eval::score::{Roles, Scorer};
use crate::eval::state::errors::ErrorPlace;
use crate::eval::state::item_lines::LineLimit;
use crate::eval::state::RunState;
use crate::ir::Record;
use crate::plan::{DatasetPlan, Plan};
use crate::spec::Join;

/// What the table join of one run reads: its datasets as this run reads
/// them, and the looked-up ones' tables with what reading them gave.
pub(in crate::eval) struct Tables<'t> {
    pub(in crate::eval) datasets: Vec<&'t DatasetPlan>,
    /// The keys this evaluation covers; `None`: all.
    pub(in crate::eval) bucket: Option<Bucket>,
    pub(in crate::eval) lookups: Vec<(&'t Lookup, &'t DatasetOutcome)>,
}

/// Scores the run's items against its looked-up tables, with up to
/// `threads` threads, keeping each spool of item lines within `limit`.
pub(in crate::eval) fn table_join<'p>(
    plan: &'p Plan,
    roles: &'p Roles,
    tables: &Tables<'_>,
    threads: usize,
    limit: LineLimit,
) -> Result<Pass<'p>, Vec<Diagnostic>> {
    let items = tables.datasets[plan.items_dataset.index()];
    let lookups: Vec<&Lookup> = tables.lookups.iter().map(|(table, _)| *table).collect();
    let join = Joining {
        plan,
        roles,
        bucket: tables.bucket,
        datasets: &tables.datasets,
        lookups: &lookups,
        limit,
    };
    let (chunks, read) = read_chunked(
        items,
        threads,
        || join.chunk(ItemKeys::new(items, false, tables.bucket)),
        |chunk, record| join.record(chunk, record),
    )
    .map_err(|d| vec![d])?;
    let items_rank = plan.items_dataset.index();
    let mut chunks: Vec<TableChunk<'p>> = (chunks.into_iter())
        .map(|chunk| {
            let mut state = chunk.state;
            if let Some(stop) = chunk.stop {
                let place = ErrorPlace::reader(items_rank, stop_line(&stop));
                state.run.errors.stop(place, stop);
            }
            state
        })
        .collect();
    if let Some(repeat) = first_repeat_across(items, &chunks) {
        let place = ErrorPlace::reader(items_rank, stop_line(&repeat));
        chunks[0].run.errors.stop(place, repeat);
    }
    // Items held for `first`/`last`: scored now, in stretches on every thread.
    let held: Vec<ItemKeys> = (chunks.iter_mut())
        .map(|c| std::mem::replace(&mut c.keys, ItemKeys::new(items, false, tables.bucket)))
        .collect();
    let (keyless, mut duplicates) =
        (held.iter()).fold((0, 0), |(k, d), c| (k + c.keyless, d + c.duplicates));
    let (held, more) = resolve(items, held);
    duplicates += more;
    if !held.is_empty() {
        chunks.extend(join.score_held(held, threads));
    }

    let mut outcomes: Vec<DatasetOutcome> = (tables.lookups.iter())
        .map(|(_, outcome)| (*outcome).clone())
        .chain([DatasetOutcome::default()])
        .collect();
    let mut matched: Vec<Vec<bool>> = lookups.iter().map(|l| vec![false; l.len()]).collect();
    let mut runs = Vec::with_capacity(chunks.len());
    for chunk in chunks {
        for (i, outcome) in outcomes.iter_mut().enumerate().take(lookups.len()) {
            outcome.missing += chunk.missing[i];
            outcome.skipped_items += chunk.skipped[i];
            let theirs = chunk.matched[i].iter();
            matched[i].iter_mut().zip(theirs).for_each(|(m, t)| *m |= t);
        }
        runs.push(chunk.run);
    }
    let run = RunState::merge_in_order(runs, threads);
    if let Some(error) = run.lines.spill_error() {
        return Err(vec![error]);
    }
    for (outcome, matched) in outcomes.iter_mut().zip(&matched) {
        outcome.unmatched = matched.iter().filter(|m| !**m).count();
    }
    let items_outcome = &mut outcomes[items_rank];
    items_outcome.read = read;
    items_outcome.keyless = keyless;
    items_outcome.duplicates = duplicates;
    let table_sizes: Vec<usize> = lookups.iter().map(|l| l.len()).collect();
    Ok(Pass::of(plan, outcomes, &table_sizes, run))
}

/// What every chunk of the join shares.
struct Joining<'j, 'p> {
    plan: &'p Plan,
    roles: &'p Roles,
    bucket: Option<Bucket>,
    datasets: &'j [&'j DatasetPlan],
    lookups: &'j [&'j Lookup],
    limit: LineLimit,
}

/// One chunk of the items: its items scored and folded into its state, and
/// what it saw of keys and lookups.
struct TableChunk<'p> {
    keys: ItemKeys,
    scorer: Scorer<'p>,
    run: RunState<'p>,
    /// Per lookup: which records an item matched, and how many items missed it.
    matched: Vec<Vec<bool>>,
    missing: Vec<usize>,
    skipped: Vec<usize>,
}

impl<'p> Joining<'_, 'p> {
    fn chunk(&self, keys: ItemKeys) -> TableChunk<'p> {
        TableChunk {
            keys,
            scorer: Scorer::new(self.plan, self.roles),
            run: RunState::new(self.plan, self.roles, self.limit),
            matched: (self.lookups.iter())
                .map(|l| vec![false; l.len()])
                .collect(),
            missing: vec![0; self.lookups.len()],
            skipped: vec![0; self.lookups.len()],
        }
    }

    /// Reads one record of the items dataset; breaks once the chunk has as
    /// many errors as are shown.
    fn record(&self, chunk: &mut TableChunk<'p>, record: Record) -> Flow {
        let items = self.datasets[self.plan.items_dataset.index()];
        if let Read::Now(key, record, place) = chunk.keys.read(self.plan, items, record)? {
            self.item(chunk, key.as_ref(), &record, place);
        }
        Ok(if chunk.run.errors.is_full() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        })
    }

    /// Scores the held items, `threads` stretches of them on as many
    /// threads, into a chunk each (in file order).
    fn score_held(&self, held: Vec<Held>, threads: usize) -> Vec<TableChunk<'p>> {
        let threads = threads.clamp(1, held.len().max(1));
        let size = held.len().div_ceil(threads);
        let stretches: Vec<Mutex<&[Held]>> = held.chunks(size).map(Mutex::new).collect();
        let items = self.datasets[self.plan.items_dataset.index()];
        map_in_parallel(threads, stretches.len(), |s| {
            let stretch = *stretches[s].lock().expect("never poisoned");
            let mut chunk = self.chunk(ItemKeys::new(items, false, self.bucket));
            for held in stretch {
                self.item(&mut chunk, held.key.as_ref(), &held.record, held.place);
                if chunk.run.errors.is_full() {
                    break;
                }
            }
            chunk
        })
    }

    /// Scores one item at `place` and folds it into the chunk.
    fn item(&self, chunk: &mut TableChunk<'p>, key: Option<&Key>, record: &Record, place: u64) {
        let plan = self.plan;
        let found: Vec<Option<usize>> = (self.lookups.iter())
            .map(|l| key.and_then(|k| l.position(k)))
            .collect();
        let mut skip = false;
        for (index, position) in found.iter().enumerate() {
            match position {
                Some(position) => chunk.matched[index][*position] = true,
                None => {
                    chunk.missing[index] += 1;
                    if self.datasets[index].join == Join::Inner {
                        chunk.skipped[index] += 1;
                        skip = true;
                    }
                }
            }
        }
        if skip {
            return;
        }
        let mut records: Vec<Option<&Record>> = (found.iter().zip(self.lookups))
            .map(|(p, l)| p.map(|p| l.record(p)))
            .collect();
        records.push(Some(record));
        let scored = chunk.scorer.score(&records).and_then(|()| {
            let score = &chunk.scorer.score;
            chunk.run.fold(score, key, record.line, place, false)
        });
        if let Err(failure) = scored {
            let error = item_failure(plan, self.datasets, key, &records, failure);
            let at = ErrorPlace::record(plan.items_dataset.index(), record.line as usize, place);
            chunk.run.errors.failure(at, error);
        }
    }
}

/// The first key of a later chunk that an earlier chunk already had, in file
/// order (`duplicates: error`). Repeats within a chunk stop that chunk, like
/// any other bad record.
fn first_repeat_across(dataset: &DatasetPlan, chunks: &[TableChunk<'_>]) -> Option<Diagnostic> {
    for (k, chunk) in chunks.iter().enumerate().skip(1) {
        let earlier: Vec<&SeenKeys> = chunks[..k].iter().map(|c| &c.keys.seen).collect();
        let repeat = chunk.keys.seen.first_repeat_of(&earlier);
        if let Some((line, first, key)) = repeat {
            return Some(duplicate_error(dataset, key, first, line));
        }
    }
    None
}
