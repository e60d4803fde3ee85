//! Phase 4: gates. Reads [`Names`] and [`Metrics`] (each metric's type, and
//! whether it is computed across runs); lowers each gate's rule (an expression,
//! or a metric with thresholds and change bounds) and its severity, and works
//! out whether it is decided per run. Adds the gates, as declared.

use crate::base::types::Type;
use crate::base::value::Value;
use crate::ir::{evaluate_constant, Op};
use crate::plan::compile::declared::{Declared, DeclaredMetric};
use crate::plan::compile::error::CompileError as E;
use crate::plan::compile::expr::{DeclaredOp, ExprCtx, Lowering, Scope};
use crate::plan::compile::metrics::Metrics;
use crate::plan::compile::slices;
use crate::plan::{GatePlan, GateRule, Severity, ShapePlan};
use crate::spec::{self, Better, Change, ExprText, GateRuleDecl, GateShapeDecl, SeveritySpec};
use crate::syntax::ExprKind;

pub fn compile(lowering: &mut Lowering<'_>, metrics: &Metrics) -> Vec<GatePlan<Declared>> {
    let spec = lowering.names.spec;
    let scope = Scope::Gate {
        metric_types: &metrics.types,
    };
    let mut gates = Vec::new();
    for gate in &spec.gates {
        let compiled = match &gate.rule {
            GateRuleDecl::Expr(expr) => expr_gate(lowering, scope, &gate.name.text, expr),
            GateRuleDecl::Shape(shape) => shaped_gate(lowering, scope, metrics, shape),
        };
        let severity = match &gate.severity {
            SeveritySpec::Fail => Some(Severity::Fail),
            SeveritySpec::Warn => Some(Severity::Warn),
            SeveritySpec::Expr(expr) => severity(lowering, expr),
        };
        let (Some((rule, value_ty, text)), Some(severity)) = (compiled, severity) else {
            continue;
        };
        let Some(by) = slices::gate_by(lowering, gate, &rule, metrics) else {
            continue;
        };
        let mut per_run =
            matches!(&rule, GateRule::Shape(shape) if !metrics.is_across(shape.metric));
        for op in rule.ops() {
            op.walk(&mut |op| match op {
                Op::Aggregate(_) | Op::DatasetRecords(_) => per_run = true,
                Op::Metric(m) | Op::Baseline(m) => per_run |= !metrics.is_across(*m),
                _ => {}
            });
        }
        gates.push(GatePlan {
            name: gate.name.text.clone(),
            rule,
            per_run,
            runs: gate.runs,
            value_ty,
            severity,
            message: gate.message.clone(),
            text,
            by,
        });
    }
    gates
}

type Compiled = (GateRule<Declared>, Type, String);

fn expr_gate(
    lowering: &mut Lowering<'_>,
    scope: Scope<'_>,
    name: &str,
    expr: &ExprText,
) -> Option<Compiled> {
    let parsed = lowering.parse_expr(expr)?;
    let mut ctx = ExprCtx {
        text: expr,
        deps: Vec::new(),
    };
    let (op, ty) = lowering.lower(&parsed, scope, &mut ctx)?;
    if !Type::Bool.accepts(&ty) || ty == Type::Null {
        let kind = E::GateNotBool {
            name: name.to_string(),
            found: ty,
        };
        lowering.report(kind, expr.whole());
        return None;
    }
    // The reported value and threshold: the sides of a top-level comparison.
    let (value, value_ty, bound) = match &parsed.kind {
        ExprKind::Binary(op, left, right) if op.is_comparison() => {
            let (value, value_ty) = lowering.lower(left, scope, &mut ctx)?;
            let (bound, _) = lowering.lower(right, scope, &mut ctx)?;
            (Some(value), value_ty, Some(bound))
        }
        _ => (None, Type::Bool, None),
    };
    Some((
        GateRule::Expr { op, value, bound },
        value_ty,
        expr.text.clone(),
    ))
}

/// `metric:` with thresholds and change bounds; each bound is a number
/// computed from params and metrics.
fn shaped_gate(
    lowering: &mut Lowering<'_>,
    scope: Scope<'_>,
    metrics: &Metrics,
    shape: &GateShapeDecl,
) -> Option<Compiled> {
    let spec = lowering.names.spec;
    let Some(index) = lowering.names.metric(&shape.metric.text) else {
        let kind = E::UnknownGateMetric {
            name: shape.metric.text.clone(),
            metrics: spec.metrics.iter().map(|m| m.name.text.clone()).collect(),
        };
        lowering.report(kind, shape.metric.location());
        return None;
    };
    let Some(better) = shape.better.or(spec.metrics[index].better) else {
        let kind = E::GateNeedsBetter {
            metric: shape.metric.text.clone(),
        };
        lowering.report(kind, shape.metric.location());
        return None;
    };
    let mut bound = |expr: &ExprText| -> Option<DeclaredOp> {
        let lowered = lowering.compile_expr(expr, scope)?;
        if !Type::Float.accepts(&lowered.ty) {
            let kind = E::GateBoundNotNumber { found: lowered.ty };
            lowering.report(kind, expr.whole());
            return None;
        }
        Some(lowered.op)
    };
    let threshold = shape.threshold.as_ref().map(&mut bound);
    let warn_threshold = shape.warn_threshold.as_ref().map(&mut bound);
    let changes: Vec<_> = shape
        .changes
        .iter()
        .map(|(change, e)| bound(e).map(|op| (*change, op)))
        .collect();
    // A drop allowance below zero would demand a gain: refuse it when it is known now.
    for ((change, e), op) in shape.changes.iter().zip(&changes) {
        let allowance = matches!(change, Change::MaxDrop | Change::MaxDropRelative);
        if let (true, Some((_, op))) = (allowance, op) {
            if let Some(Ok(Value::Number(x))) =
                constant(op.clone()).map(|op| evaluate_constant(&op))
            {
                if x < 0.0 {
                    let kind = E::NegativeAllowance {
                        change: change.keyword(),
                        value: x,
                    };
                    lowering.report(kind, e.whole());
                }
            }
        }
    }
    let threshold = threshold.map_or(Some(None), |t| t.map(Some))?;
    let warn_threshold = warn_threshold.map_or(Some(None), |t| t.map(Some))?;
    let changes: Vec<_> = changes.into_iter().collect::<Option<_>>()?;
    let ty = metrics.types.get(index).cloned().unwrap_or(Type::Float);
    Some((
        GateRule::Shape(ShapePlan {
            metric: DeclaredMetric(index),
            metric_name: shape.metric.text.clone(),
            better,
            threshold,
            warn_threshold,
            changes,
            when_no_baseline: shape.when_no_baseline,
            threshold_text: shape.threshold.as_ref().map(|t| t.text.clone()),
            warn_threshold_text: shape.warn_threshold.as_ref().map(|t| t.text.clone()),
            change_texts: shape.changes.iter().map(|(_, e)| e.text.clone()).collect(),
            significance: shape.significance,
        }),
        ty,
        describe_shape(shape, better),
    ))
}

/// A shaped gate in words, as `check` and the reports show it.
fn describe_shape(shape: &GateShapeDecl, better: Better) -> String {
    let name = &shape.metric.text;
    let (at_least, at_most) = match better {
        Better::Higher => (">=", "below"),
        Better::Lower => ("<=", "above"),
    };
    let mut parts = Vec::new();
    if let Some(t) = &shape.threshold {
        parts.push(format!("{name} {at_least} {}", t.text));
    }
    if let Some(t) = &shape.warn_threshold {
        parts.push(format!("warn unless {name} {at_least} {}", t.text));
    }
    for (change, e) in &shape.changes {
        parts.push(match change {
            spec::Change::MaxDrop => format!("at most {} {at_most} baseline", e.text),
            spec::Change::MaxDropRelative => {
                format!("at most {} × |baseline| {at_most} baseline", e.text)
            }
            spec::Change::MinGain => format!("at least {} better than baseline", e.text),
            spec::Change::MinGainRelative => {
                format!("at least {} × |baseline| better than baseline", e.text)
            }
        });
    }
    if let (Some(level), false) = (shape.significance, shape.changes.is_empty()) {
        parts.push(format!(
            "a drop fails only when significant at {}",
            crate::base::value::format_number(level)
        ));
    }
    parts.join("; ")
}

/// A severity decided by params: evaluated now, since params are constants.
fn severity(lowering: &mut Lowering<'_>, expr: &ExprText) -> Option<Severity> {
    let lowered = lowering.compile_expr(expr, Scope::Params)?;
    // Params are constants, so the op reads nothing to link.
    let value = match constant(lowered.op) {
        Some(op) => crate::ir::evaluate_constant(&op).map_err(|e| e.to_string()),
        None => Err("a value that is not a constant".to_string()),
    };
    match value {
        Ok(Value::String(s)) if &*s == "fail" => Some(Severity::Fail),
        Ok(Value::String(s)) if &*s == "warn" => Some(Severity::Warn),
        other => {
            let found = match other {
                Ok(v) => v.preview(),
                Err(e) => e,
            };
            lowering.report(E::BadSeverity { found }, expr.whole());
            None
        }
    }
}

/// An op over constants alone, as the evaluator runs it; `None` when it reads
/// anything (a params scope resolves every name to a constant, so it never does).
fn constant(op: DeclaredOp) -> Option<Op> {
    let mut reads = false;
    op.walk(&mut |op| {
        reads |= !matches!(
            op,
            Op::Const(_)
                | Op::Field(..)
                | Op::Index(..)
                | Op::Not(..)
                | Op::Neg(..)
                | Op::Binary(..)
                | Op::List(_)
                | Op::Call(..)
                | Op::If(..)
                | Op::Matcher(..)
        )
    });
    (!reads).then(|| op.map(&crate::plan::compile::link::NoReferences))
}
