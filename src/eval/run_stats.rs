//! One run's intervals and paired changes against the baseline, from its value
//! table: per metric in plan order, `None` where a metric is not computed from
//! items, has no value, or (for a change) the baseline kept no item values.

use crate::base::typed_json::key_json;
use crate::base::value::Value;
use crate::eval::item_values::ValueTable;
use crate::eval::stats::{change, interval, ChangeTest, Interval, Side};
use crate::plan::Plan;

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
    let keys: Vec<Option<String>> = match prior {
        Some(_) => table
            .keys
            .iter()
            .map(|k| k.as_ref().map(|k| key_json(Some(k)).to_string()))
            .collect(),
        None => Vec::new(),
    };
    for (c, column) in plan.stats.columns.iter().enumerate() {
        let m = column.metric.index();
        if !matches!(metrics[m], Value::Number(_)) {
            continue;
        }
        let name = &plan.metrics[m].name;
        let values: Vec<Option<f64>> = table.column(c).collect();
        stats.intervals[m] = interval(column.kind, &values, level, &label(name));
        let Some(prior) = prior else { continue };
        let Some(old_column) = prior.column(name) else {
            continue;
        };
        if prior.metrics[old_column].kind != column.kind {
            continue;
        }
        let old: Side<'_> = prior
            .rows
            .iter()
            .filter(|row| row.run.as_deref() == table.run.as_deref())
            .map(|row| {
                let key = (row.key != "null").then_some(row.key.as_str());
                (key, row.values[old_column])
            })
            .collect();
        let new: Side<'_> = keys.iter().map(|k| k.as_deref()).zip(values).collect();
        stats.changes[m] = change(column.kind, &new, &old, level, &label(name));
    }
    stats
}
