//! One run's intervals and paired changes against the baseline, from its value
//! table: per metric in plan order, `None` where a metric is not computed from
//! items, has no value, or (for a change) the baseline kept no item values.

use crate::base::typed_json::key_json;
use crate::base::value::Value;
use crate::eval::item_values::ValueTable;
use crate::eval::stats::{change, interval, ChangeTest, Interval, Pairing};
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
    if plan.stats.columns.is_empty() {
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
    stats
}
