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
use crate::report_model::item_values::{Observation, ValueKind};

/// One run's items, each with one contribution per column.
#[derive(Debug, Clone, Default)]
pub struct ValueTable {
    /// The run, with several.
    pub run: Option<Arc<str>>,
    pub keys: Vec<Option<Key>>,
    /// Per column (`plan.stats.columns`), every item's contribution in item
    /// order; `None` where the item does not count (see `report_model::item_values`).
    columns: Vec<Contributions>,
    /// Row by row: item `i`'s observation of the `k`-th observed aggregate
    /// (`plan.stats.observed`) is `observed[i * observed_columns + k]`.
    pub observed: Vec<Observation>,
    pub observed_columns: usize,
    /// Row by row: item `i`'s value of slice `s` is `slices[i * plan.slices.len() + s]`.
    pub slices: Vec<Arc<str>>,
}

/// One column's contributions: a `ratio` or `count` contributes 1, 0 or
/// nothing, kept in a byte (a sixteenth of an `Option<f64>`: at 1M items and
/// 47 such metrics, 47 MB instead of 750 MB); a `mean` or `sum` its number.
#[derive(Debug, Clone)]
enum Contributions {
    Flags(Vec<u8>),
    Numbers(Vec<Option<f64>>),
}

/// A flag that is not 0 or 1: the item does not count.
const NOT_COUNTED: u8 = 2;

impl Contributions {
    fn push(&mut self, value: Option<f64>) {
        match self {
            Contributions::Flags(flags) => flags.push(match value {
                Some(x) => u8::from(x != 0.0),
                None => NOT_COUNTED,
            }),
            Contributions::Numbers(numbers) => numbers.push(value),
        }
    }

    fn get(&self, item: usize) -> Option<f64> {
        match self {
            Contributions::Flags(flags) => match flags[item] {
                NOT_COUNTED => None,
                flag => Some(f64::from(flag)),
            },
            Contributions::Numbers(numbers) => numbers[item],
        }
    }

    fn extend(&mut self, other: Contributions) {
        match (self, other) {
            (Contributions::Flags(a), Contributions::Flags(b)) => a.extend(b),
            (Contributions::Numbers(a), Contributions::Numbers(b)) => a.extend(b),
            _ => unreachable!("a column keeps one kind"),
        }
    }
}

impl ValueTable {
    /// An empty table with `plan`'s columns and observed aggregates.
    pub fn new(plan: &Plan) -> Self {
        let columns = plan
            .stats
            .columns
            .iter()
            .map(|c| match c.kind {
                ValueKind::Ratio | ValueKind::Count => Contributions::Flags(Vec::new()),
                ValueKind::Mean | ValueKind::Sum => Contributions::Numbers(Vec::new()),
            })
            .collect();
        ValueTable {
            columns,
            observed_columns: plan.stats.observed.len(),
            ..ValueTable::default()
        }
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Item `item`'s contribution to column `c`.
    pub fn value(&self, item: usize, c: usize) -> Option<f64> {
        self.columns[c].get(item)
    }

    /// Item `item`'s contributions, column by column.
    pub fn row(&self, item: usize) -> impl Iterator<Item = Option<f64>> + '_ {
        self.columns.iter().map(move |column| column.get(item))
    }

    pub fn observed_row(&self, item: usize) -> &[Observation] {
        let width = self.observed_columns;
        &self.observed[item * width..(item + 1) * width]
    }

    /// Every item's contribution to column `c`, in item order.
    pub fn column(&self, c: usize) -> impl Iterator<Item = Option<f64>> + '_ {
        (0..self.len()).map(move |item| self.columns[c].get(item))
    }

    pub(super) fn merge(&mut self, other: ValueTable) {
        self.keys.extend(other.keys);
        for (column, theirs) in self.columns.iter_mut().zip(other.columns) {
            column.extend(theirs);
        }
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
    for (column, plan_column) in table.columns.iter_mut().zip(&plan.stats.columns) {
        column.push(contributions[plan_column.aggregate.index()].number());
    }
    table.observed.extend(
        plan.stats
            .observed
            .iter()
            .map(|a| contributions[a.index()].clone()),
    );
}
