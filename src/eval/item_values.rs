//! Each item's contribution to the metrics computed from items
//! (`plan.stats.columns`) and its observation of every aggregate that other
//! metrics computed from items read (`plan.stats.observed`): what intervals
//! resample, what paired tests match by key against the baseline, and what
//! item-values.jsonl keeps. Filled item by
//! item in each chunk and concatenated in file order, so it does not depend on
//! the thread count.

use std::sync::Arc;

use crate::base::value::Key;
use crate::library::aggregates::AggregateFn;
use crate::plan::Plan;
use crate::report_model::item_values::Observation;

/// One run's items, each with one contribution per column.
#[derive(Debug, Clone, Default)]
pub struct ValueTable {
    /// The run, with several.
    pub run: Option<Arc<str>>,
    pub keys: Vec<Option<Key>>,
    /// Row by row: item `i`'s contribution to column `c` is `values[i * columns + c]`;
    /// `None` where the item does not count (see `report_model::item_values`).
    pub values: Vec<Option<f64>>,
    pub columns: usize,
    /// Row by row: item `i`'s observation of the `k`-th observed aggregate
    /// (`plan.stats.observed`) is `observed[i * observed_columns + k]`.
    pub observed: Vec<Observation>,
    pub observed_columns: usize,
    /// Row by row: item `i`'s value of slice `s` is `slices[i * plan.slices.len() + s]`.
    pub slices: Vec<Arc<str>>,
}

impl ValueTable {
    pub fn new(columns: usize, observed_columns: usize) -> Self {
        ValueTable {
            columns,
            observed_columns,
            ..ValueTable::default()
        }
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub fn row(&self, item: usize) -> &[Option<f64>] {
        &self.values[item * self.columns..(item + 1) * self.columns]
    }

    pub fn observed_row(&self, item: usize) -> &[Observation] {
        let width = self.observed_columns;
        &self.observed[item * width..(item + 1) * width]
    }

    /// Every item's contribution to column `c`, in item order.
    pub fn column(&self, c: usize) -> impl Iterator<Item = Option<f64>> + '_ {
        self.values
            .iter()
            .skip(c)
            .step_by(self.columns.max(1))
            .copied()
    }

    pub(super) fn merge(&mut self, other: ValueTable) {
        self.keys.extend(other.keys);
        self.values.extend(other.values);
        self.observed.extend(other.observed);
        self.slices.extend(other.slices);
    }
}

/// What an item contributes to an aggregate it was not folded into (filtered
/// out by `where`): nothing, except 0 to a `count`.
pub(super) fn untouched(function: AggregateFn) -> Observation {
    match function {
        AggregateFn::Count => Observation::Number(0.0),
        _ => Observation::Out,
    }
}

/// Adds one item: `contributions` holds one entry per aggregate of the plan.
pub(super) fn push(
    table: &mut ValueTable,
    plan: &Plan,
    key: Option<&Key>,
    contributions: &[Observation],
) {
    table.keys.push(key.cloned());
    table.values.extend(
        plan.stats
            .columns
            .iter()
            .map(|c| contributions[c.aggregate.index()].number()),
    );
    table.observed.extend(
        plan.stats
            .observed
            .iter()
            .map(|a| contributions[a.index()].clone()),
    );
}
