//! Expressions in words, for `explain`: what an expression computes, the set of
//! items a metric is a share of (its denominator, only when it is a ratio of
//! item counts), and when it can have no value. Read off the parsed expression,
//! with params replaced by their values and other metrics looked up in the plan.

use crate::base::typed_json::format_typed;
use crate::base::types::Type;
use crate::library::callables;
use crate::plan::Plan;
use crate::syntax::{self, BinaryOp, Expr, ExprKind, UnaryOp};

pub(super) struct Words<'a> {
    pub plan: &'a Plan,
    pub text: &'a str,
}

/// The percentile aggregates: no value without a value to rank.
const PERCENTILES: [&str; 4] = ["p50", "p95", "p99", "percentile"];

impl Words<'_> {
    fn source(&self, e: &Expr) -> String {
        self.text
            .get(e.span.start..e.span.end)
            .unwrap_or_default()
            .trim()
            .to_string()
    }

    /// `e` in words.
    pub fn say(&self, e: &Expr) -> String {
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
            ExprKind::Member(base, name) if matches!(&base.kind, ExprKind::Name(p) if p == "params") => {
                self.name(name)
            }
            ExprKind::Call { name, args, .. } if name.starts_with("run_") && args.len() == 1 => {
                let stat = match name.as_str() {
                    "run_min" => "the smallest",
                    "run_max" => "the largest",
                    "run_mean" => "the mean",
                    _ => "the standard deviation of",
                };
                format!("{stat} {} over the runs", self.say(&args[0]))
            }
            _ => format!("`{}`{}", self.source(e), self.with_params(e)),
        }
    }

    /// ` (with `k` = 5, …)` for the params an expression shown as written reads.
    fn with_params(&self, e: &Expr) -> String {
        let mut names: Vec<&str> = Vec::new();
        names_in(e, &mut names);
        let values: Vec<String> = names
            .into_iter()
            .filter_map(|name| {
                let p = self.plan.params.iter().find(|p| p.name == name)?;
                Some(format!("`{name}` = {}", format_typed(&p.value, &Type::Any)))
            })
            .collect();
        if values.is_empty() {
            String::new()
        } else {
            format!(" (with {})", values.join(", "))
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
            ("confusion", Some(a)) => {
                let b = args.get(1).map(|b| self.source(b)).unwrap_or_default();
                format!("the number of {over} with both labels (the confusion matrix of the true label {a} against the predicted `{b}` is in the reports)")
            }
            ("macro_f1" | "micro_f1" | "weighted_f1", Some(a)) => {
                let b = args.get(1).map(|b| self.source(b)).unwrap_or_default();
                let what = match name {
                    "macro_f1" => "the mean over classes of F1",
                    "micro_f1" => "F1 of the counts pooled over classes (the share of items whose labels agree)",
                    _ => "the mean over classes of F1, weighted by each class's true items,",
                };
                format!("{what} of the true label {a} against the predicted `{b}` over {over} (items with a null label left out)")
            }
            ("ece" | "brier", Some(a)) => {
                let b = args.get(1).map(|b| self.source(b)).unwrap_or_default();
                let what = match name {
                    "ece" => format!(
                        "the expected calibration error, over {} equal-width bins, of the confidence",
                        args.get(2).map(|q| self.source(q)).unwrap_or_default()
                    ),
                    _ => "the Brier score (the mean squared error) of the confidence".to_string(),
                };
                format!("{what} {a} against `{b}` (1 when true, else 0) over {over} (items with a null left out)")
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

    /// The items a metric is a share of: only for a ratio of item counts (a
    /// `ratio`, a `mean`, `agreement`, or a division by a count). A division by
    /// anything else (`score / 5`) has no denominator in this sense.
    pub fn denominator(&self, e: &Expr) -> Option<String> {
        match &e.kind {
            ExprKind::Call {
                name, args, filter, ..
            } => {
                let over = self.over(filter.as_deref());
                let arg = args.first().map(|a| self.source(a)).unwrap_or_default();
                match name.as_str() {
                    "ratio" => Some(format!("the number of {over}")),
                    "mean" => Some(format!("the number of {over} with a value for `{arg}`")),
                    "agreement" => Some(format!("the number of {over} with both labels")),
                    _ => None,
                }
            }
            ExprKind::Binary(BinaryOp::Div, _, b) => self.item_count(b),
            _ => None,
        }
    }

    /// `e` in words when it counts items: `count(…)`, or a metric that is one.
    fn item_count(&self, e: &Expr) -> Option<String> {
        match &e.kind {
            ExprKind::Call { name, .. } if name == "count" => Some(self.say(e)),
            ExprKind::Call { name, args, .. } if name == "records" && args.len() == 1 => Some(
                format!("the number of records of `{}`", self.source(&args[0])),
            ),
            // `if(c, count_a, count_b)`: a count either way.
            ExprKind::Call { name, args, .. } if name == "if" && args.len() == 3 => {
                let (then, otherwise) = (self.item_count(&args[1])?, self.item_count(&args[2])?);
                Some(format!(
                    "{then} if {}, else {otherwise}",
                    self.say(&args[0])
                ))
            }
            ExprKind::Name(name) => {
                let metric = self.plan.metrics.iter().find(|m| &m.name == name)?;
                let expr = syntax::parse(&metric.text).ok()?;
                let words = Words {
                    plan: self.plan,
                    text: &metric.text,
                };
                words
                    .item_count(&expr)
                    .map(|count| format!("{count} (metric `{name}`)"))
            }
            _ => None,
        }
    }

    /// When `e` can have no value (null), each case in words; empty when it
    /// always has one. Aggregates and divisions are exact; for other operators
    /// and functions, which pass null on, a case of an operand is a case of the
    /// whole (it may still have a value then, as `null or true` does).
    pub fn null_when(&self, e: &Expr) -> Vec<String> {
        let mut cases = Vec::new();
        self.collect_null(e, &mut cases);
        cases.dedup();
        cases
    }

    fn collect_null(&self, e: &Expr, cases: &mut Vec<String>) {
        match &e.kind {
            ExprKind::Call {
                name, args, filter, ..
            } if callables::is_aggregate(name) => {
                let over = self.over(filter.as_deref());
                let arg = args.first().map(|a| self.source(a)).unwrap_or_default();
                match name.as_str() {
                    "ratio" => cases.push(format!("there are no {over}")),
                    "mean" | "min" | "max" => {
                        cases.push(format!("no {} has a value for `{arg}`", singular(&over)));
                    }
                    p if PERCENTILES.contains(&p) => {
                        cases.push(format!("no {} has a value for `{arg}`", singular(&over)));
                    }
                    "agreement" => {
                        cases.push(format!("no {} has both labels", singular(&over)));
                    }
                    "kappa" => {
                        cases.push(format!("no {} has both labels", singular(&over)));
                        cases.push(
                            "both sides put every item in one and the same class (chance agreement is 1)"
                                .into(),
                        );
                    }
                    "stability" => cases.push(format!("no {} has a key", singular(&over))),
                    "macro_f1" | "micro_f1" | "weighted_f1" | "ece" | "brier" => {
                        cases.push(format!("no {} has both arguments", singular(&over)));
                    }
                    _ => {} // count, sum and confusion always have a value
                }
            }
            ExprKind::Call { name, args, .. } if name.starts_with("run_") && args.len() == 1 => {
                let inner = self.null_when(&args[0]);
                if !inner.is_empty() {
                    let what = self.say(&args[0]);
                    cases.push(format!("{what} has no value in any run"));
                }
            }
            ExprKind::Name(name) => {
                let Some(metric) = self.plan.metrics.iter().find(|m| &m.name == name) else {
                    return; // a param: a constant
                };
                if metric.empty.is_some() {
                    return; // its `empty:` value stands in for null
                }
                let Ok(expr) = syntax::parse(&metric.text) else {
                    return;
                };
                let words = Words {
                    plan: self.plan,
                    text: &metric.text,
                };
                if !words.null_when(&expr).is_empty() {
                    cases.push(format!("metric `{name}` has no value"));
                }
            }
            ExprKind::Binary(BinaryOp::Coalesce, a, b) => {
                let (left, right) = (self.null_when(a), self.null_when(b));
                if !left.is_empty() && !right.is_empty() {
                    cases.push(format!("both sides of `{}` have no value", self.source(e)));
                }
            }
            ExprKind::Binary(op, a, b) => {
                self.collect_null(a, cases);
                self.collect_null(b, cases);
                let nonzero = matches!(b.kind, ExprKind::Number(n) if n != 0.0);
                if matches!(op, BinaryOp::Div | BinaryOp::Rem) && !nonzero {
                    cases.push(format!("`{}` is 0", self.source(b)));
                }
            }
            ExprKind::Unary(_, a) => self.collect_null(a, cases),
            ExprKind::Call { args, .. } => {
                for arg in args {
                    self.collect_null(arg, cases);
                }
            }
            ExprKind::List(items) => {
                for item in items {
                    self.collect_null(item, cases);
                }
            }
            ExprKind::Null => cases.push("always (it is `null`)".into()),
            _ => {}
        }
    }
}

/// The names `e` reads (`params.k` as `k`), each once, in order of appearance.
fn names_in<'e>(e: &'e Expr, names: &mut Vec<&'e str>) {
    let params = |base: &Expr| matches!(&base.kind, ExprKind::Name(p) if p == "params");
    match &e.kind {
        ExprKind::Name(name) if !names.contains(&name.as_str()) => names.push(name),
        ExprKind::Member(base, name) if params(base) && !names.contains(&name.as_str()) => {
            names.push(name)
        }
        ExprKind::Name(_) => {}
        ExprKind::Member(base, _) if params(base) => {}
        ExprKind::Member(base, _) | ExprKind::Unary(_, base) => names_in(base, names),
        ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) => {
            names_in(a, names);
            names_in(b, names);
        }
        ExprKind::List(items) => items.iter().for_each(|i| names_in(i, names)),
        ExprKind::Call { args, filter, .. } => {
            args.iter().for_each(|a| names_in(a, names));
            if let Some(f) = filter {
                names_in(f, names);
            }
        }
        _ => {}
    }
}

/// `items where …` as `item where …`, for "no item has …".
fn singular(over: &str) -> String {
    over.replacen("items", "item", 1)
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
