//! The slices of `report.json`: each slice value's items and metrics (per run as
//! `NAME@RUN`, with several runs), and how a gate with `by:` decided per value.

use std::collections::HashMap;

use crate::base::natural::natural_cmp;
use crate::base::typed_json::format_typed;
use crate::base::types::Type;
use crate::eval::{per_run_name, GateOutcome, Outcome, SliceValueOutcome};
use crate::plan::{GatePlan, Plan};
use crate::report::stats::{change_info, interval_info};
use crate::report_model::{
    GateBy, MetricValue, NameMap, SliceGate, SliceMode, SliceStatus, SliceValue, Slices,
};
use crate::spec::GateSlices;

/// `slices`, when the spec declares any.
pub(super) fn slices(plan: &Plan, outcome: &Outcome) -> Option<Slices> {
    if plan.slices.is_empty() {
        return None;
    }
    let declared = plan.metrics_in_declared_order();
    let mut out = Slices::new();
    for (s, slice) in plan.slices.iter().enumerate() {
        // (run name, that run's values of this slice): one unnamed run without runs.
        let runs: Vec<(Option<&str>, &[SliceValueOutcome])> = match outcome.runs.is_empty() {
            true => vec![(None, &outcome.slices[s])],
            false => (outcome.runs.iter())
                .map(|r| (Some(&*r.name), r.slices[s].as_slice()))
                .collect(),
        };
        let run_values: Vec<&[SliceValueOutcome]> = runs.iter().map(|(_, v)| *v).collect();
        let mut entries = NameMap::new();
        for (value, found_in_runs) in across_runs(&run_values) {
            let mut items = 0;
            let mut per_run = NameMap::new();
            let mut metrics = NameMap::new();
            let mut intervals = NameMap::new();
            let mut changes = NameMap::new();
            for ((run, _), found) in runs.iter().zip(found_in_runs) {
                let n = found.map_or(0, |v| v.items);
                items += n;
                if let Some(run) = run {
                    per_run.insert(run.to_string(), n as u64);
                }
                for (i, m) in declared.iter().filter(|(_, m)| m.by.contains(&s)) {
                    let name = match run {
                        Some(run) => per_run_name(&m.name, run),
                        None => m.name.clone(),
                    };
                    let metric = found.map_or(crate::base::value::Value::Null, |v| {
                        v.metrics[i.index()].clone()
                    });
                    if let Some(interval) = found.and_then(|v| v.intervals[i.index()].as_ref()) {
                        intervals.insert(name.clone(), interval_info(interval));
                    }
                    if let Some(change) = found.and_then(|v| v.changes[i.index()].as_ref()) {
                        changes.insert(name.clone(), change_info(change));
                    }
                    metrics.insert(name, MetricValue::from_typed(format_typed(&metric, &m.ty)));
                }
            }
            let entry = SliceValue {
                items: items as u64,
                runs: (!outcome.runs.is_empty()).then_some(per_run),
                metrics,
                intervals,
                changes,
            };
            entries.insert(value.to_string(), entry);
        }
        out.insert(slice.name.clone(), entries);
    }
    Some(out)
}

/// Every value of a slice in any of `runs`, in natural order, with its
/// outcome in each run (`None` where a run has no item of it). A run's values
/// are found by their text: searched for value by value, a slice of 20,000
/// values (an id) took seconds.
pub(super) fn across_runs<'a>(
    runs: &[&'a [SliceValueOutcome]],
) -> Vec<(&'a str, Vec<Option<&'a SliceValueOutcome>>)> {
    let mut values: Vec<&str> = runs
        .iter()
        .flat_map(|r| r.iter())
        .map(|v| &*v.value)
        .collect();
    values.sort_by(|a, b| natural_cmp(a, b).then_with(|| a.cmp(b)));
    values.dedup();
    let found_in: Vec<HashMap<&str, &SliceValueOutcome>> = (runs.iter())
        .map(|r| r.iter().map(|v| (&*v.value, v)).collect())
        .collect();
    (values.into_iter())
        .map(|value| {
            let found = found_in.iter().map(|r| r.get(value).copied()).collect();
            (value, found)
        })
        .collect()
}

/// A gate's `by`, with each slice value's outcome (the deciding run's, with several).
pub(super) fn gate_by(plan: &Plan, gate: &GatePlan, outcome: &GateOutcome) -> Option<GateBy> {
    let by = gate.by.as_ref()?;
    let values = outcome
        .slices
        .iter()
        .map(|row| SliceGate {
            slice: plan.slices[row.slice].name.clone(),
            value: row.value.to_string(),
            items: row.items as u64,
            status: match row.status {
                None => SliceStatus::Skipped,
                Some(status) => match super::json::gate_status(status) {
                    crate::report_model::GateStatus::Pass => SliceStatus::Pass,
                    crate::report_model::GateStatus::Warn => SliceStatus::Warn,
                    crate::report_model::GateStatus::Fail => SliceStatus::Fail,
                },
            },
            gated: format_typed(&row.gated, &gate.value_ty),
            threshold: row.threshold.as_ref().map(|t| format_typed(t, &Type::Any)),
            reasons: row.reasons.clone(),
            run: outcome.run.as_deref().map(str::to_string),
        })
        .collect();
    Some(GateBy {
        slices: by
            .slices
            .iter()
            .map(|&s| plan.slices[s].name.clone())
            .collect(),
        metric: match &gate.rule {
            crate::plan::GateRule::Shape(shape) => Some(shape.metric_name.clone()),
            _ => None,
        },
        mode: match by.mode {
            GateSlices::Every => SliceMode::Every,
            GateSlices::Worst => SliceMode::Worst,
        },
        min_items: by.min_items as u64,
        values,
    })
}
