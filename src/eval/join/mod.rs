//! Joins: how one run's records become scored items. Each join is a producer
//! of the run's partial state (`state::RunState`): it reads the datasets,
//! pairs each item with its records, has the one scorer (`score::Scorer`)
//! score it, and folds the score in; what differs is only where records wait
//! for their partners.
//!
//! - `table`: every looked-up dataset in memory as a keyed table (`lookup`),
//!   the items streamed past them. Any number of looked-up datasets.
//! - `index`: the items in memory by key (`item_index`), the one other
//!   dataset streamed past them in parallel chunks; each item's winning score
//!   kept compactly (`score::saved`) and folded in item order at the end.
//!   Memory holds the items, never the streamed records.
//! - `partitioned`: both datasets written by key to partition files on disk,
//!   each partition joined as the index join does. Memory holds one
//!   partition's items.
//!
//! Which join runs is decided once, by the physical plan (`physical`). All
//! of them read the items the same way (`items`), settle repeated keys with
//! one function (`duplicates`), and report errors as state: each part of the
//! work keeps the errors it met with their places, and the first by place are
//! reported (`state::errors`), never by running again another way.

pub(in crate::eval) mod duplicates;
pub(in crate::eval) mod index;
mod item_index;
pub(in crate::eval) mod items;
pub(in crate::eval) mod keys;
pub(in crate::eval) mod lookup;
pub(in crate::eval) mod partitioned;
pub(in crate::eval) mod table;

use std::sync::Arc;

use crate::base::diagnostic::Diagnostic;
use crate::base::value::{Key, Value};
use crate::eval::error::{EvalError, EvalWarning};
use crate::eval::outcome::DatasetOutcome;
use crate::eval::score::ItemFailure;
use crate::eval::state::RunState;
use crate::ir::Record;
use crate::plan::{DatasetPlan, Plan};
use crate::spec::{Duplicates, Join};

/// What one run's join gives: every item scored and folded into the run's
/// state, which the caller finishes, and what was read of each dataset.
pub(in crate::eval) struct Pass<'p> {
    pub(in crate::eval) datasets: Vec<DatasetOutcome>,
    /// Per looked-up dataset, its distinct keys (its table's size).
    pub(in crate::eval) table_sizes: Vec<usize>,
    pub(in crate::eval) run: RunState<'p>,
}

impl<'p> Pass<'p> {
    /// The pass from its datasets' outcomes, the looked-up datasets' sizes
    /// (one record per key) and the items' state.
    pub(in crate::eval) fn of(
        _plan: &Plan,
        outcomes: Vec<DatasetOutcome>,
        table_sizes: &[usize],
        run: RunState<'p>,
    ) -> Pass<'p> {
        Pass {
            datasets: outcomes,
            table_sizes: table_sizes.to_vec(),
            run,
        }
    }

    /// A pass that stopped before its items were joined: at `error`, a record
    /// of looked-up dataset `dataset` that could not be read or repeated a
    /// key (the first such in reading order), which is all it reports.
    pub(in crate::eval) fn stopped(
        plan: &'p Plan,
        roles: &'p crate::eval::score::Roles,
        limit: crate::eval::state::item_lines::LineLimit,
        dataset: usize,
        error: Diagnostic,
    ) -> Pass<'p> {
        let mut run = RunState::new(plan, roles, limit);
        let line = error.location.as_ref().map_or(0, |l| l.line);
        let place = crate::eval::state::errors::ErrorPlace::reader(dataset, line);
        run.errors.stop(place, error);
        Pass {
            datasets: vec![DatasetOutcome::default(); plan.datasets.len()],
            table_sizes: vec![0; plan.items_dataset.index()],
            run,
        }
    }

    /// `records(d)` of each dataset: a looked-up dataset's distinct keys,
    /// the items dataset's records read.
    pub(in crate::eval) fn dataset_records(&self, plan: &Plan) -> Vec<Value> {
        let items = self.datasets[plan.items_dataset.index()].read.records;
        (self.table_sizes.iter().copied())
            .chain([items])
            .map(|n| Value::Number(n as f64))
            .collect()
    }

    /// Merges the pass of other keys of the same run (another bucket's):
    /// counts add, the files read are the same files.
    pub(in crate::eval) fn merge(&mut self, other: Pass<'p>) {
        for (mine, theirs) in self.datasets.iter_mut().zip(other.datasets) {
            mine.merge(theirs);
        }
        for (mine, theirs) in self.table_sizes.iter_mut().zip(other.table_sizes) {
            *mine += theirs;
        }
        self.run.merge(other.run);
    }
}

/// The error of an item that did not evaluate: where (`failure`), the item's
/// key, and the file and line of each of its records (`records`, one per
/// dataset of `datasets`, as this run reads them). The failure comes boxed,
/// as scoring returns it.
#[allow(clippy::boxed_local)]
pub(in crate::eval) fn item_failure(
    plan: &Plan,
    datasets: &[&DatasetPlan],
    key: Option<&Key>,
    records: &[Option<&Record>],
    failure: Box<ItemFailure>,
) -> Diagnostic {
    let (at, within, error) = *failure;
    let sources: Vec<String> = (datasets.iter().zip(records))
        .filter_map(|(d, r)| r.map(|r| format!("{}:{}", d.display_path, r.line)))
        .collect();
    let kind = EvalError::ItemNotEvaluated {
        item: key.cloned(),
        sources,
        within,
        error,
    };
    kind.report(&plan.locations).at(at)
}

/// What a pass (of the run `run`, when there are several) noticed about its
/// datasets that does not stop it.
pub(in crate::eval) fn data_warnings(
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
                run: run.clone(),
                dataset: name.clone(),
                records: outcome.duplicates,
                kept_last: dataset.duplicates == Duplicates::Last,
            });
        }
        // A field the plan reads that no record has: located where it is read.
        if let (Some(seen), true) = (&outcome.read.seen, outcome.read.records > 0) {
            for read in &dataset.reads {
                if seen.get(read.slot.index()).copied().unwrap_or(false) {
                    continue;
                }
                let kind = EvalWarning::FieldInNoRecord {
                    run: run.clone(),
                    dataset: name.clone(),
                    field: read.path.clone(),
                    path: dataset.display_path.clone(),
                    records: outcome.read.records,
                };
                let at = plan.locations.get(read.at).clone();
                warnings.push(Diagnostic::warning_of(&kind).at(at));
            }
        }
    }
    warnings
}
