//! One run's intervals and paired changes against the baseline, from its value
//! table: per metric in plan order, `None` where a metric is not computed from
//! items, has no value, or (for a change) the baseline kept no item values.

use crate::base::typed_json::key_json;
use crate::base::value::Value;
use crate::eval::aggregate::Observation;
use crate::eval::item_values::ValueTable;
use crate::eval::resample::{self, Recipe, Units};
use crate::eval::stats::{change, interval, ChangeTest, Interval, Pairing};
use crate::library::aggregates::AggregateFn;
use crate::plan::Plan;
use crate::report_model::item_values::ValueRow;

#[derive(Debug, Clone, Default)]
pub struct RunStats {
    pub intervals: Vec<Option<Interval>>,
    pub changes: Vec<Option<ChangeTest>>,
}

pub(super) fn run_stats(plan: &Plan, table: &ValueTable, metrics: &[Value]) -> RunStats {
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
    let prior = plan.baseline.as_ref().and_then(|b| b.values.as_ref());
    // The baseline's items of this run, paired with this run's by key once.
    let paired = prior.map(|prior| {
        let keys: Vec<Option<String>> = table
            .keys
            .iter()
            .map(|k| k.as_ref().map(|k| key_json(Some(k)).to_string()))
            .collect();
        let rows: Vec<&ValueRow> = prior
            .rows
            .iter()
            .filter(|row| row.run.as_deref() == table.run.as_deref())
            .collect();
        let pairing = Pairing::new(
            keys.iter().map(Option::as_deref),
            rows.iter()
                .map(|row| (row.key != "null").then_some(row.key.as_str())),
        );
        (prior, rows, pairing)
    });
    for (c, column) in plan.stats.columns.iter().enumerate() {
        let m = column.metric.index();
        if !matches!(metrics[m], Value::Number(_)) {
            continue;
        }
        let name = &plan.metrics[m].name;
        let values: Vec<Option<f64>> = table.column(c).collect();
        stats.intervals[m] = interval(column.kind, &values, level, &label(name));
        let Some((prior, rows, pairing)) = &paired else {
            continue;
        };
        let Some(old_column) = prior.column(name) else {
            continue;
        };
        if prior.metrics[old_column].kind != column.kind {
            continue;
        }
        let old: Vec<Option<f64>> = rows.iter().map(|row| row.values[old_column]).collect();
        stats.changes[m] = change(column.kind, pairing, &values, &old, level, &label(name));
    }
    if plan.stats.formulas.is_empty() {
        return stats;
    }
    let functions: Vec<AggregateFn> = plan
        .stats
        .observed
        .iter()
        .map(|a| plan.aggregates[a.index()].function)
        .collect();
    let recipe = Recipe {
        functions: &functions,
        formulas: &plan.stats.formulas,
    };
    let units: Units<'_> = (0..table.len())
        .map(|i| vec![table.observed_row(i)])
        .collect();
    // The baseline's observations in this plan's order of aggregates (matched
    // by their text and function), and the units both runs share.
    let prior_observed = paired.as_ref().map(|(prior, rows, pairing)| {
        let columns: Vec<Option<usize>> = plan
            .stats
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
            .collect();
        let old_rows: Vec<Vec<Observation>> = rows
            .iter()
            .map(|row| {
                let at = |c: &Option<usize>| c.and_then(|c| row.observed.get(c).cloned());
                columns
                    .iter()
                    .map(|c| at(c).unwrap_or(Observation::Out))
                    .collect()
            })
            .collect();
        (columns, old_rows, pairing.members())
    });
    for (j, formula) in plan.stats.formulas.iter().enumerate() {
        let m = plan.stats.formula_metrics[j].index();
        let Value::Number(point) = metrics[m] else {
            continue;
        };
        if !formula.tested {
            continue;
        }
        let name = label(&formula.name);
        stats.intervals[m] = resample::interval(
            &recipe,
            j,
            &units,
            point,
            level,
            &format!("interval:{name}"),
        )
        .map(|found| Interval {
            low: found.low,
            high: found.high,
            method: found.method.name(),
            level,
        });
        let (Some((_, _, pairing)), Some((columns, old_rows, (new_units, old_units)))) =
            (&paired, &prior_observed)
        else {
            continue;
        };
        let reads = recipe.reads(j);
        if reads
            .iter()
            .zip(columns)
            .any(|(read, c)| *read && c.is_none())
            || pairing.units == 0
        {
            continue;
        }
        let new: Units<'_> = new_units
            .iter()
            .map(|items| items.iter().map(|&i| table.observed_row(i)).collect())
            .collect();
        let old: Units<'_> = old_units
            .iter()
            .map(|items| items.iter().map(|&i| old_rows[i].as_slice()).collect())
            .collect();
        let label = format!("change:{name}");
        stats.changes[m] = resample::change(&recipe, j, &new, &old, level, &label).map(|found| {
            let mut test = ChangeTest::of(&found, level);
            pairing.count(&mut test);
            test
        });
    }
    stats
}
