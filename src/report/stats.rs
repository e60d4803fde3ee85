//! Intervals and paired changes as reports show them: per metric in declared
//! order (`NAME@RUN` per run, as [`crate::report::json::metric_values`] lists
//! them), and the `value ± half-width` text of summaries.

use crate::eval::{per_run_name, Outcome};
use crate::plan::Plan;
use crate::report_model::{ChangeInfo, IntervalInfo, NameMap};
use crate::stats::inference::{ChangeTest, Interval};

/// Per metric value a report lists: its name, interval and change.
pub fn metric_stats<'o>(
    plan: &Plan,
    outcome: &'o Outcome,
) -> Vec<(String, Option<&'o Interval>, Option<&'o ChangeTest>)> {
    let mut found = Vec::new();
    for (i, m) in plan.metrics_in_declared_order() {
        let i = i.index();
        if outcome.runs.is_empty() || m.across {
            let stats = &outcome.stats;
            let interval = stats.intervals.get(i).and_then(Option::as_ref);
            let change = stats.changes.get(i).and_then(Option::as_ref);
            found.push((m.name.clone(), interval, change));
            continue;
        }
        for run in &outcome.runs {
            let interval = run.stats.intervals.get(i).and_then(Option::as_ref);
            let change = run.stats.changes.get(i).and_then(Option::as_ref);
            found.push((per_run_name(&m.name, &run.name), interval, change));
        }
    }
    found
}

pub fn intervals(plan: &Plan, outcome: &Outcome) -> NameMap<IntervalInfo> {
    metric_stats(plan, outcome)
        .into_iter()
        .filter_map(|(name, interval, _)| Some((name, interval_info(interval?))))
        .collect()
}

pub fn interval_info(interval: &Interval) -> IntervalInfo {
    IntervalInfo {
        low: interval.low,
        high: interval.high,
        method: interval.method.to_string(),
        level: interval.level,
    }
}

pub fn change_info(change: &ChangeTest) -> ChangeInfo {
    let down = change.moved_down();
    ChangeInfo {
        delta: change.delta,
        low: (!down).then_some(change.at_least),
        high: down.then_some(change.at_most),
        level: Some(change.level),
        alternative: Some(if down { "decrease" } else { "increase" }.to_string()),
        p_value: change.p_moved(),
        p_adjusted: change.p_adjusted(),
        test: change.test.to_string(),
        items: change.items as u64,
        excluded: (change.only_new + change.only_old + change.keyless) as u64,
    }
}
