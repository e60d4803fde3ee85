//! The concise terminal summary of a run.

use std::fmt::Write as _;

use crate::base::typed_json::format_typed;
use crate::eval::{GateStatus, Outcome};
use crate::plan::Plan;

pub fn summary(plan: &Plan, outcome: &Outcome) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} {} ({})",
        plan.spec_name, plan.spec_version, plan.spec_display
    );
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
                    .map(|r| format_typed(&r.metrics[i.index()], &metric.ty).to_string())
                    .collect::<Vec<_>>()
                    .join(" | "),
                _ => format_typed(&outcome.metrics[i.index()], &metric.ty).to_string(),
            };
            let _ = writeln!(out, "  {:width$}  {value}", metric.name);
        }
    }
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
