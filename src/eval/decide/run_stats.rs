//! One run's intervals and paired changes against the baseline, from its value
//! table: per metric in plan order, `None` where a metric is not computed from
//! items, has no value, or (for a change) the baseline kept no item values.

use std::collections::HashMap;

use foldhash::fast::FixedState;

use crate::base::parallel::map_in_parallel;
use crate::base::typed_json::push_key_json;
use crate::base::value::{Key, Value};
use crate::eval::state::item_values::ValueTable;
use crate::eval::state::slices::SliceValueOutcome;
use crate::ir::MetricId;
use crate::plan::{Plan, ShapePlan};
use crate::report_model::item_values::{ItemValues, ValueRow};
use crate::spec::Better;
use crate::stats::inference::{change, interval, ChangeTest, Interval, Pairing};
use crate::stats::resample::{self, ObservedRows, Recipe, Units};

#[derive(Debug, Clone, Default)]
pub struct RunStats {
    pub intervals: Vec<Option<Interval>>,
    pub changes: Vec<Option<ChangeTest>>,
}

/// `threads`: how many metrics' intervals are computed at once (each is
/// computed alike on any thread).
pub(in crate::eval) fn run_stats(
    plan: &Plan,
    table: &ValueTable,
    metrics: &[Value],
    threads: usize,
) -> RunStats {
    let level = plan.stats.confidence;
    let mut stats = RunStats {
        intervals: vec![None; plan.metrics.len()],
        changes: vec![None; plan.metrics.len()],
    };
    if !plan.stats.keeps_values() {
        return stats;
    }
    let label = |name: &str| match &table.run {
        Some(run) => crate::eval::per_run_name(name, run),
        None => name.to_string(),
    };
    let paired = baseline_pairing(plan, table);
    // Per column: its metric, interval and (`None` when not tested) change.
    let by_column = map_in_parallel(threads, plan.stats.columns.len(), |c| {
        let column = &plan.stats.columns[c];
        let m = column.metric.index();
        if !matches!(metrics[m], Value::Number(_)) {
            return None;
        }
        let name = &plan.metrics[m].name;
        let found = interval(column.kind, table.column(c), level, &label(name));
        let tested = paired.as_ref().and_then(|(prior, rows, pairing)| {
            let old_column = prior.column(name)?;
            if prior.metrics[old_column].kind != column.kind {
                return None;
            }
            let old: Vec<Option<f64>> = rows.iter().map(|row| row.values[old_column]).collect();
            let values: Vec<Option<f64>> = table.column(c).collect();
            Some(change(
                column.kind,
                pairing,
                &values,
                &old,
                level,
                &label(name),
            ))
        });
        Some((m, found, tested))
    });
    for (m, found, tested) in by_column.into_iter().flatten() {
        stats.intervals[m] = found;
        if let Some(tested) = tested {
            stats.changes[m] = tested;
        }
    }
    if plan.stats.formulas.is_empty() {
        return stats;
    }
    let recipe = Recipe::of(plan);
    let units = Units::items(table, 0..table.len());
    // The baseline's observations in this plan's order of aggregates (matched
    // by their text and function), paired with this run's items by key.
    let prior_observed = paired.as_ref().map(|(prior, rows, pairing)| {
        let columns = prior_columns(plan, prior);
        let old_rows = ObservedRows::new(rows.iter().map(|row| row.observed), &columns);
        (columns, old_rows, pairing)
    });
    let shared = prior_observed.as_ref().map(|(_, old_rows, pairing)| {
        let new = Units::paired(pairing.units, pairing.new_units(), table);
        let old = Units::paired(pairing.units, pairing.old_units(), old_rows);
        (new, old)
    });
    // Per formula: its metric, interval and (`None` when not tested) change.
    let by_formula = map_in_parallel(threads, plan.stats.formulas.len(), |j| {
        let formula = &plan.stats.formulas[j];
        let m = plan.stats.formula_metrics[j].index();
        let Value::Number(point) = metrics[m] else {
            return None;
        };
        if !formula.tested {
            return None;
        }
        let name = label(&formula.name);
        let label = format!("interval:{name}");
        let found = resample::interval(&recipe, j, &units, point, level, &label)
            .map(|found| Interval::of(&found, level));
        let tested = match (&prior_observed, &shared) {
            (Some((columns, _, pairing)), Some((new, old))) if recipe.found_in(j, columns) => {
                let label = format!("change:{name}");
                Some(
                    resample::change(&recipe, j, new, old, level, &label).map(|found| {
                        let mut test = ChangeTest::of(&found, level);
                        pairing.count(&mut test);
                        test
                    }),
                )
            }
            _ => None,
        };
        Some((m, found, tested))
    });
    for (m, found, tested) in by_formula.into_iter().flatten() {
        stats.intervals[m] = found;
        if let Some(tested) = tested {
            stats.changes[m] = tested;
        }
    }
    stats
}

/// The baseline's item values, its rows of this run, and their pairing with
/// this run's items by key (`None` without a baseline that kept item values).
fn baseline_pairing<'p>(
    plan: &'p Plan,
    table: &ValueTable,
) -> Option<(&'p ItemValues, Vec<ValueRow<'p>>, Pairing)> {
    let prior = plan.baseline.as_ref().and_then(|b| b.values.as_ref())?;
    // Each key's JSON text, as the baseline's file writes it, in one buffer.
    let mut text = String::new();
    let ends: Vec<Option<usize>> = table
        .keys
        .iter()
        .map(|k| {
            k.as_ref().map(|k| {
                push_key_json(&mut text, Some(k));
                text.len()
            })
        })
        .collect();
    let mut start = 0;
    let keys: Vec<Option<&str>> = ends
        .iter()
        .map(|end| {
            end.map(|end| {
                let key = &text[start..end];
                start = end;
                key
            })
        })
        .collect();
    let rows: Vec<ValueRow<'_>> = prior
        .rows()
        .filter(|row| row.run == table.run.as_deref())
        .collect();
    let pairing = Pairing::new(
        keys.iter().copied(),
        rows.iter()
            .map(|row| (row.key != "null").then_some(row.key)),
    );
    Some((prior, rows, pairing))
}

/// Intervals of the metrics across runs that summarise per-run metrics
/// (`plan.stats.across`): items are matched across runs by key (each key one
/// unit, in the order runs first meet them; items without a key are left out),
/// and a replicate weighs a unit alike in every run.
pub(in crate::eval) fn across_stats(
    plan: &Plan,
    tables: &[ValueTable],
    metrics: &[Value],
) -> RunStats {
    let mut stats = RunStats {
        intervals: vec![None; plan.metrics.len()],
        changes: vec![None; plan.metrics.len()],
    };
    if plan.stats.across.is_empty() || tables.is_empty() {
        return stats;
    }
    let mut unit_of: HashMap<&Key, u32, FixedState> = HashMap::default();
    let rows: Vec<Vec<(u32, usize)>> = tables
        .iter()
        .map(|table| {
            let keyed = table.keys.iter().enumerate();
            keyed
                .filter_map(|(i, key)| {
                    let next = unit_of.len() as u32;
                    let unit = *unit_of.entry(key.as_ref()?).or_insert(next);
                    Some((unit, i))
                })
                .collect()
        })
        .collect();
    let count = unit_of.len();
    let runs: Vec<Units<'_>> = (rows.into_iter().zip(tables))
        .map(|(rows, table)| Units {
            count,
            rows,
            source: table,
        })
        .collect();
    let recipe = Recipe::of(plan);
    for (metric, op) in &plan.stats.across {
        let Value::Number(point) = metrics[metric.index()] else {
            continue;
        };
        let label = format!("interval:{}", plan.metrics[metric.index()].name);
        stats.intervals[metric.index()] =
            resample::across_interval(&recipe, op, &runs, point, plan.stats.confidence, &label)
                .map(|found| Interval::of(&found, plan.stats.confidence));
    }
    stats
}

/// For `explain`: the smallest change a gate with `significance` on a metric
/// kept as a formula can call significant, from the baseline's items: the
/// distance from the baseline value to the bad side of its bootstrap interval
/// at level 1 − 2α (as `plan::detectable` does for a ratio or a mean), and
/// the items it had.
pub fn detectable_by_formula(plan: &Plan, shape: &ShapePlan, alpha: f64) -> Option<(f64, usize)> {
    let prior = plan.baseline.as_ref()?.values.as_ref()?;
    if plan.has_runs() {
        return None;
    }
    let target = plan.stats.tested_formula(shape.metric)?;
    let recipe = Recipe::of(plan);
    let columns = prior_columns(plan, prior);
    if !recipe.found_in(target, &columns) {
        return None;
    }
    let rows = ObservedRows::new(prior.rows().map(|row| row.observed), &columns);
    let units = Units::items(&rows, 0..prior.len());
    let point = resample::value(&recipe, target, &units)?;
    let label = format!("interval:{}", shape.metric_name);
    let found = resample::interval(&recipe, target, &units, point, 1.0 - 2.0 * alpha, &label)?;
    let distance = match shape.better {
        Better::Higher => point - found.low,
        Better::Lower => found.high - point,
    };
    Some((distance.max(0.0), units.count))
}

/// Per observed aggregate of the plan: its column in a prior run's file
/// (matched by its text and function).
fn prior_columns(plan: &Plan, prior: &ItemValues) -> Vec<Option<usize>> {
    plan.stats
        .observed
        .iter()
        .map(|a| {
            let aggregate = &plan.aggregates[a.index()];
            let keyword = aggregate.function.keyword();
            prior
                .aggregates
                .iter()
                .position(|c| c.text == aggregate.text && c.function == keyword)
        })
        .collect()
}

/// A metric's contributions in this run and in the baseline's rows.
type BothColumns = (Vec<Option<f64>>, Vec<Option<f64>>);

/// Each slice value's intervals and paired changes: the metrics computed per
/// value (`by:`) on that value's items, as `run_stats` computes them on all of
/// them (labels `interval:METRIC[SLICE=VALUE]` and `change:METRIC[SLICE=VALUE]`).
/// A change is tested for a metric that is one `ratio`, `mean`, `sum` or `count`
/// of the items, on the units of this run whose items have the value, paired
/// with the baseline's items of the same keys (one test, `inference::change`).
pub(in crate::eval) fn slice_intervals(
    plan: &Plan,
    table: &ValueTable,
    slices: &mut [Vec<SliceValueOutcome>],
) {
    let width = plan.slices.len();
    if width == 0 || table.slices.len() != table.len() * width {
        return;
    }
    let level = plan.stats.confidence;
    let recipe = Recipe::of(plan);
    let paired = baseline_pairing(plan, table);
    // Per metric with a column, both runs' contributions, read once.
    let mut columns: HashMap<usize, Option<BothColumns>, FixedState> = HashMap::default();
    let mut old_items = None;
    for (s, values) in slices.iter_mut().enumerate() {
        let mut items: HashMap<&str, Vec<usize>, FixedState> = HashMap::default();
        for i in 0..table.len() {
            items
                .entry(&table.slices[i * width + s])
                .or_default()
                .push(i);
        }
        let slice = &plan.slices[s].name;
        for value in values.iter_mut() {
            let Some(members) = items.get(value.value.as_ref()) else {
                continue;
            };
            // This value's items, paired with the baseline's: built once per value.
            let mut within: Option<(Pairing, Vec<usize>)> = None;
            for (m, metric) in plan.metrics.iter().enumerate() {
                let Value::Number(point) = value.metrics[m] else {
                    continue;
                };
                if !metric.by.contains(&s) {
                    continue;
                }
                let metric_name = &metric.name;
                let metric = match &table.run {
                    Some(run) => crate::eval::per_run_name(&metric.name, run),
                    None => metric.name.clone(),
                };
                let name = format!("{metric}[{slice}={}]", value.value);
                value.intervals[m] = match plan.value_column(MetricId::new(m)) {
                    Some((c, column)) => {
                        let values = members.iter().map(|&i| table.value(i, c));
                        if let Some((prior, rows, pairing)) = &paired {
                            let both = columns.entry(m).or_insert_with(|| {
                                let old_column = prior.column(metric_name)?;
                                if prior.metrics[old_column].kind != column.kind {
                                    return None;
                                }
                                let old = rows.iter().map(|row| row.values[old_column]).collect();
                                Some((table.column(c).collect(), old))
                            });
                            if let Some((new, old)) = both {
                                let old_items =
                                    old_items.get_or_insert_with(|| pairing.old_items());
                                let (within, old_members) = within
                                    .get_or_insert_with(|| pairing.subset(members, old_items));
                                let new: Vec<Option<f64>> =
                                    members.iter().map(|&i| new[i]).collect();
                                let old: Vec<Option<f64>> =
                                    old_members.iter().map(|&j| old[j]).collect();
                                value.changes[m] =
                                    change(column.kind, within, &new, &old, level, &name);
                            }
                        }
                        interval(column.kind, values, level, &name)
                    }
                    None => {
                        let Some(j) = plan.stats.tested_formula(MetricId::new(m)) else {
                            continue;
                        };
                        let units = Units::items(table, members.iter().copied());
                        let label = format!("interval:{name}");
                        resample::interval(&recipe, j, &units, point, level, &label)
                            .map(|found| Interval::of(&found, level))
                    }
                };
            }
        }
    }
}
