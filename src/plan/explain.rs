//! `evalspec explain`: every metric and gate of a compiled spec in words — what it
//! computes, over which items (its denominator), what it is when that set is empty —
//! with params replaced by their values. Read off the same expressions the plan
//! runs, so the words cannot drift from the numbers.

use std::fmt::Write as _;

use crate::base::typed_json::format_typed;
use crate::base::types::Type;
use crate::library::callables;
use crate::plan::{GatePlan, GateRule, MetricPlan, Plan, Severity};
use crate::syntax::{self, BinaryOp, Expr, ExprKind, UnaryOp};

struct Words<'a> {
    plan: &'a Plan,
    text: &'a str,
}

pub fn explain(plan: &Plan) -> String {
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
            let origin = if p.overridden { ", from --param" } else { "" };
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
        explain_gate(plan, g, &mut out);
    }
    out
}

/// A metric in words: what it computes, its denominator, which way is better.
fn explain_metric(plan: &Plan, m: &MetricPlan, out: &mut String) {
    let _ = writeln!(out, "  {} = {}", m.name, m.text);
    if let Some(description) = &m.description {
        let _ = writeln!(out, "    {}", description.trim());
    }
    let (what, denominator) = match syntax::parse(&m.text) {
        Ok(expr) => {
            let words = Words {
                plan,
                text: &m.text,
            };
            (words.say(&expr), words.denominator(&expr))
        }
        Err(_) => (format!("`{}`", m.text), None),
    };
    let _ = writeln!(out, "    Computes: {what}.");
    match denominator {
        Some(d) => {
            let _ = writeln!(out, "    Denominator: {d}.");
            let empty = match m.empty {
                Some(e) => format!(
                    "{} (its `empty` value)",
                    format_typed(&e.into(), &Type::Float)
                ),
                None => {
                    "no value; a gate on it does not pass (set `empty:` to choose a value)".into()
                }
            };
            let _ = writeln!(out, "    Empty denominator: {empty}.");
        }
        None => {
            let _ = writeln!(out, "    Denominator: none; a total always has a value.");
        }
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
fn explain_gate(plan: &Plan, g: &GatePlan, out: &mut String) {
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
                "    Checks metric `{}` ({} is better) against its thresholds and baseline bounds; {consequence}.",
                shape.metric_name,
                shape.better.keyword()
            );
        }
    }
    if let Some(message) = &g.message {
        let _ = writeln!(out, "    Message: {message}");
    }
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

impl Words<'_> {
    fn source(&self, e: &Expr) -> String {
        self.text
            .get(e.span.start..e.span.end)
            .unwrap_or_default()
            .trim()
            .to_string()
    }

    /// `e` in words.
    fn say(&self, e: &Expr) -> String {
        match &e.kind {
            ExprKind::Call {
                name, args, filter, ..
            } if callables::is_aggregate(name) => self.aggregate(name, args, filter.as_deref()),
            ExprKind::Binary(BinaryOp::Div, a, b) => {
                format!("{} divided by {}", self.say(a), self.say(b))
            }
            ExprKind::Binary(op @ (BinaryOp::And | BinaryOp::Or), a, b) => {
                format!("{} {} {}", self.say(a), op.symbol(), self.say(b))
            }
            ExprKind::Binary(op, a, b) if comparison(*op).is_some() => format!(
                "{} is {} {}",
                self.say(a),
                comparison(*op).unwrap_or_default(),
                self.say(b)
            ),
            ExprKind::Unary(UnaryOp::Not, a) => format!("not ({})", self.say(a)),
            ExprKind::Name(name) => self.name(name),
            ExprKind::Call { name, args, .. } if name.starts_with("run_") && args.len() == 1 => {
                let stat = match name.as_str() {
                    "run_min" => "the smallest",
                    "run_max" => "the largest",
                    "run_mean" => "the mean",
                    _ => "the standard deviation of",
                };
                format!("{stat} {} over the runs", self.say(&args[0]))
            }
            _ => format!("`{}`", self.source(e)),
        }
    }

    fn name(&self, name: &str) -> String {
        if let Some(p) = self.plan.params.iter().find(|p| p.name == name) {
            return format!("`{name}` (= {})", format_typed(&p.value, &Type::Any));
        }
        if self.plan.metrics.iter().any(|m| m.name == name) {
            return format!("metric `{name}`");
        }
        format!("`{name}`")
    }

    fn over(&self, filter: Option<&Expr>) -> String {
        match filter {
            Some(f) => format!("items where `{}`", self.source(f)),
            None => "items".into(),
        }
    }

    fn aggregate(&self, name: &str, args: &[Expr], filter: Option<&Expr>) -> String {
        let arg = args.first().map(|a| format!("`{}`", self.source(a)));
        let over = self.over(filter);
        match (name, arg) {
            ("count", None) => format!("the number of {over}"),
            ("count", Some(a)) => format!("the number of {over} for which {a} holds"),
            ("ratio", Some(a)) => format!("the share of {over} for which {a} holds"),
            ("sum", Some(a)) => format!("the sum of {a} over {over} (nulls skipped)"),
            ("mean", Some(a)) => format!("the mean of {a} over {over} (nulls skipped)"),
            ("min", Some(a)) => format!("the smallest {a} over {over}"),
            ("max", Some(a)) => format!("the largest {a} over {over}"),
            ("kappa" | "agreement", Some(a)) => {
                let b = args.get(1).map(|b| self.source(b)).unwrap_or_default();
                let what = match name {
                    "kappa" => "Cohen's kappa of",
                    _ => "the share of agreement between",
                };
                format!("{what} the labels {a} and `{b}` over {over} per run (items with a null label left out)")
            }
            ("stability", Some(a)) => {
                format!("the share of {over} whose {a} is the same in every run")
            }
            ("percentile", Some(a)) => format!(
                "the {}th percentile of {a} over {over} (numpy's linear interpolation)",
                args.get(1).map(|q| self.source(q)).unwrap_or_default()
            ),
            (p, Some(a)) => format!(
                "the {}th percentile of {a} over {over} (numpy's linear interpolation)",
                p.trim_start_matches('p')
            ),
            (_, None) => format!("`{name}()`"),
        }
    }

    /// The set a metric is taken over, when an empty one leaves it without a value.
    fn denominator(&self, e: &Expr) -> Option<String> {
        match &e.kind {
            ExprKind::Call {
                name, args, filter, ..
            } => {
                let over = self.over(filter.as_deref());
                let arg = args.first().map(|a| self.source(a)).unwrap_or_default();
                match name.as_str() {
                    "ratio" => Some(format!("the number of {over}")),
                    "mean" | "min" | "max" | "p50" | "p95" | "p99" | "percentile" => {
                        Some(format!("the number of {over} with a non-null `{arg}`"))
                    }
                    _ => None,
                }
            }
            ExprKind::Binary(BinaryOp::Div, _, b) => Some(self.say(b)),
            _ => None,
        }
    }
}

fn comparison(op: BinaryOp) -> Option<&'static str> {
    Some(match op {
        BinaryOp::Eq => "equal to",
        BinaryOp::Ne => "not equal to",
        BinaryOp::Lt => "below",
        BinaryOp::Le => "at most",
        BinaryOp::Gt => "above",
        BinaryOp::Ge => "at least",
        _ => return None,
    })
}
