//! Paired tests between the two runs of a diff, from the item-values.jsonl
//! beside each report: a metric `NAME` (or `NAME@RUN`) present as a column in
//! both files, of one kind, is tested on the items both share, as `--baseline`
//! tests it (`eval::stats`); any other metric computed from items, by the new
//! run's formula over both runs' observations of its aggregates (matched by
//! their text), with the resampler `--baseline` uses (`eval::resample`). Items
//! are paired once per run and reused for every metric. A slice value's metric
//! (`NAME[SLICE=VALUE]`, a column or a formula) is tested on the new run's items
//! with that value (item-values version 4 keeps each item's slice values), paired with the
//! old run's by key, as `--baseline` tests it per slice value.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use foldhash::fast::FixedState;

use crate::base::diagnostic::Location;
use crate::ir::formula::{op_from_json, well_formed, Formula};
use crate::ir::ExprLocations;
use crate::library::aggregates::AggregateFn;
use crate::report_model::item_values::{ItemValues, ITEM_VALUES_FILE};
use crate::stats::inference::{change, ChangeTest, Pairing, UnitItems};
use crate::stats::resample::{self, ObservedRows, Recipe, Units};

/// The level of the change intervals a diff shows.
pub const DIFF_CONFIDENCE: f64 = crate::plan::DEFAULT_CONFIDENCE;

/// The two runs' item values, with their items paired per run as needed.
pub struct Paired<'v> {
    old: Option<&'v ItemValues>,
    new: Option<&'v ItemValues>,
    /// Per run (`None`: no runs): the rows of each side in it, and their pairing.
    runs: BTreeMap<Option<String>, (Vec<usize>, Vec<usize>, Pairing)>,
    /// The new run's formulas, read once (`None` inside: unreadable).
    recipe: Option<Option<(Vec<AggregateFn>, Vec<Formula>)>>,
    /// Per run, the old side's items per unit of its pairing.
    old_items: BTreeMap<Option<String>, UnitItems>,
    /// Per run and slice, each value's items (positions in the run's new rows).
    members: BTreeMap<(Option<String>, usize), SliceMembers>,
}

/// A slice's values, each with its items.
type SliceMembers = HashMap<Arc<str>, Vec<usize>, FixedState>;

impl<'v> Paired<'v> {
    pub fn new(old: Option<&'v ItemValues>, new: Option<&'v ItemValues>) -> Self {
        Paired {
            old,
            new,
            runs: BTreeMap::new(),
            recipe: None,
            old_items: BTreeMap::new(),
            members: BTreeMap::new(),
        }
    }

    /// The test of metric `name` (as a report lists it), when both runs kept it.
    pub fn test(&mut self, name: &str) -> Option<ChangeTest> {
        let (old, new) = (self.old?, self.new?);
        // `NAME@RUN[SLICE=VALUE]`: a slice value's metric.
        let (head, slice) = match name.split_once('[') {
            Some((head, inner)) => (head, Some(inner.strip_suffix(']')?.split_once('=')?)),
            None => (name, None),
        };
        let (metric, run) = match head.split_once('@') {
            Some((metric, run)) => (metric, Some(run)),
            None => (head, None),
        };
        // A slice value's items (a file before version 4 has no slice values:
        // no test), as their own pairing.
        let within = match slice {
            Some((slice, value)) => {
                let s = new.slices.iter().position(|x| x == slice)?;
                Some(self.slice_members(run, s, value)?)
            }
            None => None,
        };
        let (Some(a), Some(b)) = (old.column(metric), new.column(metric)) else {
            return self.formula_test(name, metric, run, within.as_ref());
        };
        let kind = new.metrics[b].kind;
        if old.metrics[a].kind != kind {
            return None;
        }
        let (old_rows, new_rows, pairing) = self.pairing(run);
        let gather = |values: &ItemValues, rows: &[usize], at: Option<&[usize]>, c: usize| match at
        {
            Some(at) => at.iter().map(|&k| values.row(rows[k]).values[c]).collect(),
            None => rows
                .iter()
                .map(|&i| values.row(i).values[c])
                .collect::<Vec<_>>(),
        };
        match &within {
            Some((sub, members, old_members)) => {
                let y = gather(new, new_rows, Some(members), b);
                let x = gather(old, old_rows, Some(old_members), a);
                change(kind, sub, &y, &x, DIFF_CONFIDENCE, name)
            }
            None => {
                let (x, y) = (
                    gather(old, old_rows, None, a),
                    gather(new, new_rows, None, b),
                );
                change(kind, pairing, &y, &x, DIFF_CONFIDENCE, name)
            }
        }
    }

    /// The new run's items in `run` with `value` of slice `s` (positions in its
    /// rows of the run), the old run's items of the same keys, and their
    /// pairing. Each value's items are found once per slice, so a slice of many
    /// values costs its items.
    fn slice_members(
        &mut self,
        run: Option<&str>,
        s: usize,
        value: &str,
    ) -> Option<(Pairing, Vec<usize>, Vec<usize>)> {
        let new = self.new?;
        let key = run.map(str::to_string);
        self.pairing(run);
        let (_, new_rows, pairing) = &self.runs[&key];
        let old_items = self
            .old_items
            .entry(key.clone())
            .or_insert_with(|| pairing.old_items());
        let by_value = self.members.entry((key, s)).or_insert_with(|| {
            let mut by_value: SliceMembers = HashMap::default();
            for (k, &i) in new_rows.iter().enumerate() {
                by_value
                    .entry(new.row(i).slices[s].clone())
                    .or_default()
                    .push(k);
            }
            by_value
        });
        let members = by_value.get(value)?.clone();
        let (sub, old_members) = pairing.subset(&members, old_items);
        Some((sub, members, old_members))
    }

    /// The rows of each side in `run`, and their pairing (built once per run).
    fn pairing(&mut self, run: Option<&str>) -> &(Vec<usize>, Vec<usize>, Pairing) {
        let (old, new) = (self.old.expect("both sides"), self.new.expect("both sides"));
        self.runs.entry(run.map(str::to_string)).or_insert_with(|| {
            let rows = |values: &ItemValues| -> Vec<usize> {
                (0..values.len())
                    .filter(|&i| values.row(i).run == run)
                    .collect()
            };
            let (old_rows, new_rows) = (rows(old), rows(new));
            let keys = |values: &'v ItemValues, rows: &[usize]| -> Vec<Option<&'v str>> {
                rows.iter()
                    .map(|&i| values.row(i).key)
                    .map(|key| (key != "null").then_some(key))
                    .collect()
            };
            let pairing = Pairing::new(
                keys(new, &new_rows).into_iter(),
                keys(old, &old_rows).into_iter(),
            );
            (old_rows, new_rows, pairing)
        })
    }

    /// The test of a metric the new run keeps as a formula (see the module doc).
    /// `within`: a slice value's pairing and items (see `slice_members`).
    fn formula_test(
        &mut self,
        name: &str,
        metric: &str,
        run: Option<&str>,
        within: Option<&(Pairing, Vec<usize>, Vec<usize>)>,
    ) -> Option<ChangeTest> {
        let (old, new) = (self.old?, self.new?);
        let target = new
            .formulas
            .iter()
            .position(|f| f.name == metric && f.tested)?;
        self.pairing(run);
        self.recipe.get_or_insert_with(|| read_recipe(new));
        let (functions, formulas) = self.recipe.as_ref()?.as_ref()?;
        let recipe = Recipe {
            functions: functions.clone(),
            formulas,
        };
        // Per aggregate of the new run: its column in the old run's file.
        let columns: Vec<Option<usize>> = new
            .aggregates
            .iter()
            .map(|a| old.aggregates.iter().position(|o| o.same_aggregate(a)))
            .collect();
        if !recipe.found_in(target, &columns) {
            return None;
        }
        let (old_rows, new_rows, pairing) = &self.runs[&run.map(str::to_string)];
        // The rows tested: all of the run's, or a slice value's.
        let (pairing, old_rows, new_rows): (&Pairing, Vec<usize>, Vec<usize>) = match within {
            Some((sub, members, old_members)) => (
                sub,
                old_members.iter().map(|&j| old_rows[j]).collect(),
                members.iter().map(|&k| new_rows[k]).collect(),
            ),
            None => (pairing, old_rows.clone(), new_rows.clone()),
        };
        if pairing.units == 0 {
            return None;
        }
        let old_observed =
            ObservedRows::new(old_rows.iter().map(|&i| old.row(i).observed), &columns);
        // The recipe is the new file's: its rows are in the recipe's order.
        let new_observed =
            ObservedRows::Same(new_rows.iter().map(|&i| new.row(i).observed).collect());
        let new_side = Units::paired(pairing.units, pairing.new_units(), &new_observed);
        let old_side = Units::paired(pairing.units, pairing.old_units(), &old_observed);
        let label = format!("change:{name}");
        let found = resample::change(
            &recipe,
            target,
            &new_side,
            &old_side,
            DIFF_CONFIDENCE,
            &label,
        )?;
        let mut test = ChangeTest::of(&found, DIFF_CONFIDENCE);
        pairing.count(&mut test);
        Some(test)
    }
}

/// The new run's aggregates and formulas as the resampler reads them; `None`
/// when the file names a function or an op this evalspec does not know.
fn read_recipe(values: &ItemValues) -> Option<(Vec<AggregateFn>, Vec<Formula>)> {
    let functions = values
        .aggregates
        .iter()
        .map(|a| AggregateFn::from_keyword(&a.function))
        .collect::<Option<Vec<_>>>()?;
    let at = ExprLocations::default().add(Location::in_data(ITEM_VALUES_FILE, 1, None));
    let formulas = values
        .formulas
        .iter()
        .map(|f| {
            Some(Formula {
                name: f.name.clone(),
                op: op_from_json(&f.formula, at)?,
                empty: f.empty,
                tested: f.tested,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    well_formed(&formulas, functions.len()).then_some((functions, formulas))
}
