//! The concise terminal summary of a run.

use std::fmt::Write as _;

use crate::base::typed_json::format_typed;
use crate::base::types::Type;
use crate::eval::{GateOutcome, GateStatus, Outcome, SliceValueOutcome};
use crate::lock::LockStamp;
use crate::plan::{GatePlan, GateRule, Plan};

/// `lock`: the spec's lock, when it has one, so that a frozen run with
/// overridden params says the lock does not pin them.
pub fn summary(plan: &Plan, outcome: &Outcome, lock: Option<&LockStamp>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} {} ({})",
        plan.spec_name, plan.spec_version, plan.spec_display
    );
    if let Some(line) = overridden_params(plan, lock) {
        let _ = writeln!(out, "{line}");
    }
    let datasets: Vec<String> = plan
        .datasets
        .iter()
        .zip(&outcome.datasets)
        .map(|(d, o)| format!("{} {} records", d.name, o.read.records))
        .collect();
    let _ = write!(
        out,
        "read {}; scored {} items",
        datasets.join(", "),
        outcome.items
    );
    let runs: Vec<&str> = outcome.runs.iter().map(|r| r.name.as_ref()).collect();
    if !runs.is_empty() {
        let _ = write!(out, " in {} runs", runs.len());
    }
    out.push('\n');
    let metrics = plan.metrics_in_declared_order();
    let width = metrics
        .iter()
        .map(|(_, m)| m.name.len())
        .chain(plan.gates.iter().map(|g| g.name.len()))
        .max()
        .unwrap_or(0);
    if !metrics.is_empty() {
        match runs.is_empty() {
            true => {
                let _ = writeln!(out, "\nmetrics");
            }
            false => {
                let _ = writeln!(out, "\nmetrics (per run: {})", runs.join(" | "));
            }
        }
        for (i, metric) in metrics {
            let value = match (outcome.runs.is_empty(), metric.across) {
                (false, false) => outcome
                    .runs
                    .iter()
                    .map(|r| {
                        let value = &r.metrics[i.index()];
                        with_interval(format_typed(value, &metric.ty), value, &r.stats, i)
                    })
                    .collect::<Vec<_>>()
                    .join(" | "),
                _ => {
                    let value = &outcome.metrics[i.index()];
                    with_interval(format_typed(value, &metric.ty), value, &outcome.stats, i)
                }
            };
            let _ = writeln!(out, "  {:width$}  {value}", metric.name);
        }
    }
    slices(plan, outcome, &mut out);
    if !plan.gates.is_empty() {
        let _ = writeln!(out, "\ngates");
        let expr_width = plan
            .gates
            .iter()
            .map(|g| g.text.chars().count())
            .max()
            .unwrap_or(0);
        for (gate, result) in plan.gates.iter().zip(&outcome.gates) {
            let status = match result.status {
                GateStatus::Pass => "PASS",
                GateStatus::Warn => "WARN",
                GateStatus::Fail => "FAIL",
            };
            let _ = write!(
                out,
                "  {status}  {:width$}  {:expr_width$}  value {}",
                gate.name,
                gate.text,
                format_typed(&result.value, &gate.value_ty)
            );
            if let Some(run) = &result.run {
                let _ = write!(out, " (run {run})");
            }
            if let (false, Some(message)) = (result.pass, &gate.message) {
                let _ = write!(out, "  — {message}");
            }
            out.push('\n');
            // The custom message says what it means; the reasons say why it happened.
            if !result.pass {
                for reason in &result.reasons {
                    let _ = writeln!(out, "        why: {reason}");
                }
            }
            slice_reasons(plan, gate, result, &mut out);
        }
    }
    let count = |s: GateStatus| outcome.gates.iter().filter(|g| g.status == s).count();
    let _ = writeln!(
        out,
        "\nresult: {} ({} passed, {} warned, {} failed)",
        if outcome.pass() { "PASS" } else { "FAIL" },
        count(GateStatus::Pass),
        count(GateStatus::Warn),
        count(GateStatus::Fail)
    );
    out
}

/// The params this run set to something other than the spec's default, or
/// `None` when it kept every default. A lock pins the spec's text, defaults
/// included, but not what `--param` changes, so a frozen run says so.
fn overridden_params(plan: &Plan, lock: Option<&LockStamp>) -> Option<String> {
    let changed: Vec<String> = plan
        .params
        .iter()
        .filter(|p| p.differs())
        .map(|p| {
            format!(
                "{} = {} (spec: {})",
                p.name,
                format_typed(&p.value, &Type::Any),
                format_typed(&p.default, &Type::Any)
            )
        })
        .collect();
    if changed.is_empty() {
        return None;
    }
    let pinned = match lock {
        Some(_) => "; the lock pins the spec, not these values",
        None => "",
    };
    Some(format!(
        "params overridden with --param: {}{pinned}",
        changed.join(", ")
    ))
}

/// A metric's value, then `± half-width` when it has an interval.
fn with_interval(
    shown: serde_json::Value,
    value: &crate::base::value::Value,
    stats: &crate::eval::RunStats,
    metric: crate::ir::MetricId,
) -> String {
    let interval = stats.intervals.get(metric.index()).and_then(Option::as_ref);
    match (value, interval) {
        (crate::base::value::Value::Number(v), Some(i)) => {
            format!(
                "{shown} {}",
                crate::base::stats::half_width::plus_minus(*v, i.low, i.high)
            )
        }
        _ => shown.to_string(),
    }
}

/// Per slice, each value's items and the metrics computed by it (per run: `a | b`).
fn slices(plan: &Plan, outcome: &Outcome, out: &mut String) {
    let declared = plan.metrics_in_declared_order();
    for (s, slice) in plan.slices.iter().enumerate() {
        let sliced: Vec<_> = declared.iter().filter(|(_, m)| m.by.contains(&s)).collect();
        let runs: Vec<&[SliceValueOutcome]> = match outcome.runs.is_empty() {
            true => vec![&outcome.slices[s]],
            false => outcome
                .runs
                .iter()
                .map(|r| r.slices[s].as_slice())
                .collect(),
        };
        let values = super::slices::across_runs(&runs);
        let _ = writeln!(out, "\nslice {} ({} values)", slice.name, values.len());
        for (value, found) in values {
            let items: Vec<String> = (found.iter())
                .map(|v| v.map_or(0, |v| v.items).to_string())
                .collect();
            let noun = if items.iter().all(|n| n == "1") {
                "item"
            } else {
                "items"
            };
            let _ = write!(
                out,
                "  {}={value} ({} {noun})",
                slice.name,
                items.join(" | ")
            );
            for (i, m) in &sliced {
                let per_run: Vec<String> = (found.iter())
                    .map(|v| match v {
                        Some(v) => format_typed(&v.metrics[i.index()], &m.ty).to_string(),
                        None => "null".into(),
                    })
                    .collect();
                let _ = write!(out, "  {} {}", m.name, per_run.join(" | "));
            }
            out.push('\n');
        }
    }
}

/// Under a gate over slices that did not pass: why, value by value; and which
/// values were skipped.
fn slice_reasons(plan: &Plan, gate: &GatePlan, result: &GateOutcome, out: &mut String) {
    let over_slices = gate.by.is_some() || matches!(gate.rule, GateRule::SliceValues { .. });
    if !over_slices {
        return;
    }
    let skipped: Vec<String> = (result.slices.iter())
        .filter(|row| row.status.is_none())
        .map(|row| {
            let noun = if row.items == 1 { "item" } else { "items" };
            let name = &plan.slices[row.slice].name;
            format!("{name}={} ({} {noun})", row.value, row.items)
        })
        .collect();
    if let (false, Some(by)) = (skipped.is_empty(), &gate.by) {
        let _ = writeln!(
            out,
            "        skipped (fewer than {} items): {}",
            by.min_items,
            skipped.join(", ")
        );
    }
}
