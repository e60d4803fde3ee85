//! `evalspec explain`: every metric and gate of a compiled spec in words — what it
//! computes, over which items (its denominator, for a ratio of item counts), when
//! it can have no value and what it is then — with params replaced by their
//! values. Read off the same expressions the plan runs, so the words cannot drift
//! from the numbers.

mod power;
pub use power::{detectable, detectable_in};
mod words;

use std::fmt::Write as _;

use crate::base::typed_json::format_typed;
use crate::base::types::Type;
use crate::plan::{GatePlan, GateRule, MetricPlan, Plan, Severity, ShapePlan};
use crate::spec::{Better, Change, NoBaseline};
use crate::syntax;
use words::Words;

/// The smallest change a gate with `significance` (its shape, at this alpha) can
/// call significant, and at how many items; `None` when it cannot be known.
pub type Power<'a> = &'a dyn Fn(&Plan, &ShapePlan, f64) -> Option<(f64, usize)>;

pub fn explain(plan: &Plan) -> String {
    explain_with(plan, &power::detectable)
}

/// [`explain`], with the power of gates on metrics this layer cannot
/// resample (a formula needs the evaluator's accumulators) given by `power`.
pub fn explain_with(plan: &Plan, power: Power<'_>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} {} ({})",
        plan.spec_name, plan.spec_version, plan.spec_display
    );
    if plan.spec_files.len() > 1 {
        let chain: Vec<&str> = plan.spec_files.iter().map(|f| f.display.as_str()).collect();
        let _ = writeln!(out, "resolved through extends: {}", chain.join(" ← "));
    }
    let items = &plan.datasets[plan.items_dataset.index()];
    let _ = writeln!(
        out,
        "\nItems: one per record of `{}` ({}){}.",
        items.name,
        items.display_path,
        lookups(plan)
    );
    if !plan.params.is_empty() {
        let _ = writeln!(out, "\nParams");
        for p in &plan.params {
            let origin = match (p.differs(), p.overridden, p.locked) {
                (true, _, _) => format!(
                    ", overridden with --param; spec default {}",
                    format_typed(&p.default, &Type::Any)
                ),
                (false, true, _) => ", from --param".to_string(),
                (false, false, true) => ", locked".to_string(),
                (false, false, false) => String::new(),
            };
            let _ = writeln!(
                out,
                "  {} = {} ({}{origin})",
                p.name,
                format_typed(&p.value, &Type::Any),
                p.ty.keyword()
            );
        }
    }
    let _ = writeln!(out, "\nMetrics");
    let mut metrics: Vec<_> = plan.metrics.iter().collect();
    metrics.sort_by_key(|m| m.declared);
    for m in metrics {
        explain_metric(plan, m, &mut out);
    }
    if !plan.gates.is_empty() {
        let _ = writeln!(out, "\nGates");
    }
    for g in &plan.gates {
        explain_gate(plan, g, power, &mut out);
    }
    out
}

/// A metric in words: what it computes, its denominator, when it has no value,
/// which way is better.
fn explain_metric(plan: &Plan, m: &MetricPlan, out: &mut String) {
    let _ = writeln!(out, "  {} = {}", m.name, m.text);
    if let Some(description) = &m.description {
        let _ = writeln!(out, "    {}", description.trim());
    }
    let (what, denominator, null_when) = match syntax::parse(&m.text) {
        Ok(expr) => {
            let words = Words {
                plan,
                text: &m.text,
            };
            (
                words.say(&expr),
                words.denominator(&expr),
                words.null_when(&expr),
            )
        }
        Err(_) => (format!("`{}`", m.text), None, Vec::new()),
    };
    let _ = writeln!(out, "    Computes: {what}.");
    if let Some(d) = denominator {
        let _ = writeln!(out, "    Denominator: {d}.");
    }
    if null_when.is_empty() {
        let _ = writeln!(out, "    Always has a value.");
    } else {
        let cases = null_when.join("; or when ");
        match m.empty {
            Some(e) => {
                let empty = format_typed(&e.into(), &Type::Float);
                let _ = writeln!(
                    out,
                    "    Is {empty} (its `empty` value) when it would have none: when {cases}."
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "    Has no value when {cases}; a gate on it then does not pass (set `empty:` to choose a value)."
                );
            }
        }
    }
    if !m.by.is_empty() {
        let names: Vec<&str> = m.by.iter().map(|&s| plan.slices[s].name.as_str()).collect();
        let _ = writeln!(out, "    Also per value of: {}.", names.join(", "));
    }
    if let Some(better) = m.better {
        let _ = write!(out, "    Better: {}", better.keyword());
        match m.tolerance {
            Some(t) => {
                let _ = writeln!(out, "; `diff` ignores moves within {t}.");
            }
            None => out.push_str(".\n"),
        }
    }
}

/// A gate in words: when it passes, and what follows when it does not.
fn explain_gate(plan: &Plan, g: &GatePlan, power: Power<'_>, out: &mut String) {
    let consequence = match g.severity {
        Severity::Fail => "if it does not pass, the run fails (exit 1)",
        Severity::Warn => "if it does not pass, the run warns and still passes",
    };
    let _ = writeln!(out, "  {}: {}", g.name, g.text);
    match &g.rule {
        GateRule::Expr { .. } => {
            let condition = match syntax::parse(&g.text) {
                Ok(expr) => Words {
                    plan,
                    text: &g.text,
                }
                .say(&expr),
                Err(_) => format!("`{}`", g.text),
            };
            let _ = writeln!(out, "    Passes when {condition}; {consequence}.");
        }
        GateRule::Shape(shape) => {
            let _ = writeln!(
                out,
                "    Checks metric `{}` ({} is better); {consequence}:",
                shape.metric_name,
                shape.better.keyword()
            );
            for rule in shape_rules(plan, shape, power) {
                let _ = writeln!(out, "    - {rule}");
            }
        }
        GateRule::SliceValues { slice } => {
            let _ = writeln!(
                out,
                "    Checks that the values of slice `{}` seen are exactly those listed; {consequence}.",
                plan.slices[*slice].name
            );
        }
    }
    if let Some(by) = &g.by {
        let names: Vec<&str> = by
            .slices
            .iter()
            .map(|&s| plan.slices[s].name.as_str())
            .collect();
        let how = match by.mode {
            crate::spec::GateSlices::Every => "must hold in every value of",
            crate::spec::GateSlices::Worst => "is decided on the worst value over",
        };
        let _ = write!(out, "    By slice: {how} {}", names.join(", "));
        match by.min_items {
            0 => out.push_str(".\n"),
            n => {
                let _ = writeln!(out, "; values with fewer than {n} items are skipped.");
            }
        }
        if let GateRule::Shape(shape) = &g.rule {
            slice_power(plan, shape, by, out);
        }
    }
    if let Some(message) = &g.message {
        let _ = writeln!(out, "    Message: {message}");
    }
}

/// Per slice value of the baseline, the smallest change a gate with `by:` and
/// `significance` can call significant there (each value is tested on its own
/// items against the baseline's).
fn slice_power(plan: &Plan, shape: &ShapePlan, by: &crate::plan::GateBy, out: &mut String) {
    let (Some(alpha), Some(prior)) = (shape.significance, &plan.baseline) else {
        return;
    };
    for &s in &by.slices {
        let slice = &plan.slices[s].name;
        let mut found = Vec::new();
        for (value, items) in prior.slice_values(slice) {
            if (items as usize) < by.min_items {
                continue;
            }
            let Some((change, n)) = power::detectable_in(plan, shape, alpha, Some((slice, value)))
            else {
                continue;
            };
            found.push(format!(
                "{slice}={value} ({n} items) about {}",
                crate::base::value::format_significant(change)
            ));
        }
        if !found.is_empty() {
            let _ = writeln!(
                out,
                "    Smallest change it can call significant per value, at the baseline's items: {}.",
                found.join("; ")
            );
        }
    }
}

/// Each bound of a shaped gate in words, params resolved.
fn shape_rules(plan: &Plan, shape: &ShapePlan, power: Power<'_>) -> Vec<String> {
    let bound = |text: &str| match syntax::parse(text) {
        Ok(expr) => Words { plan, text }.say(&expr),
        Err(_) => format!("`{text}`"),
    };
    let (at_least, worse) = match shape.better {
        Better::Higher => ("at least", "below"),
        Better::Lower => ("at most", "above"),
    };
    let name = &shape.metric_name;
    let mut rules = Vec::new();
    if let Some(t) = &shape.threshold_text {
        rules.push(format!("it must be {at_least} {}", bound(t)));
    }
    if let Some(t) = &shape.warn_threshold_text {
        rules.push(format!("it warns unless {at_least} {}", bound(t)));
    }
    for ((change, _), text) in shape.changes.iter().zip(&shape.change_texts) {
        let amount = bound(text);
        rules.push(match change {
            Change::MaxDrop => format!("it may be at most {amount} {worse} its baseline value"),
            Change::MaxDropRelative => {
                format!("it may be at most {amount} × |baseline| {worse} its baseline value")
            }
            Change::MinGain => {
                format!("it must improve on its baseline value by at least {amount}")
            }
            Change::MinGainRelative => {
                format!("it must improve on its baseline value by at least {amount} × |baseline|")
            }
        });
    }
    if !shape.changes.is_empty() {
        let missing = match shape.when_no_baseline {
            NoBaseline::Pass => "the change is not checked",
            NoBaseline::Warn => "it warns",
            NoBaseline::Fail => "it does not pass",
        };
        rules.push(format!(
            "without a baseline value for `{name}` (no --baseline, or none there), {missing}"
        ));
    }
    if let Some(alpha) = shape.significance {
        let level = crate::base::value::format_number(alpha);
        rules.push(format!(
            "a drop beyond `max_drop` or `max_drop_relative` fails only when significant: a one-sided paired test on the items both runs share (McNemar for a ratio whose filter holds on the same items, else the paired bootstrap) gives p < {level} after Holm's adjustment over every such test of the run (each gate, slice value and run that can fail it), so a change with no real effect fails the run with probability at most {level}"
        ));
        rules.push(match power(plan, shape, alpha) {
            Some((change, items)) => format!(
                "at the baseline's {items} items, the smallest change it can call significant is about {} (from the baseline value to the bad side of its {}% interval)",
                crate::base::value::format_significant(change),
                crate::base::value::format_number((1.0 - 2.0 * alpha) * 100.0)
            ),
            None => "with a --baseline that kept its item values, explain states the smallest change this gate can call significant".to_string(),
        });
    }
    rules.push(format!("without a value for `{name}`, it does not pass"));
    rules
}

fn lookups(plan: &Plan) -> String {
    let others: Vec<String> = plan
        .datasets
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != plan.items_dataset.index())
        .map(|(_, d)| {
            format!(
                "`{}` ({} join on `{}`)",
                d.name,
                d.join.keyword(),
                d.key_text
            )
        })
        .collect();
    if others.is_empty() {
        String::new()
    } else {
        format!(", each joined with {}", others.join(" and "))
    }
}
