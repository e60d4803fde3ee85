//! The concise terminal summary of a run.

use std::fmt::Write as _;

use crate::eval::{GateStatus, Outcome};
use crate::plan::Plan;
use crate::report::format_typed;

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
    let _ = writeln!(
        out,
        "read {}; scored {} items",
        datasets.join(", "),
        outcome.items
    );
    let metrics = plan.metrics_in_declared_order();
    let width = metrics
        .iter()
        .map(|(_, m)| m.name.len())
        .chain(plan.gates.iter().map(|g| g.name.len()))
        .max()
        .unwrap_or(0);
    if !metrics.is_empty() {
        let _ = writeln!(out, "\nmetrics");
        for (i, metric) in metrics {
            let _ = writeln!(
                out,
                "  {:width$}  {}",
                metric.name,
                format_typed(&outcome.metrics[i], &metric.ty)
            );
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
