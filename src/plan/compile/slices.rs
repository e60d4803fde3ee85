//! Slices (between phases 3 and 4, and after linking). Reads [`Names`] and
//! [`Metrics`]; lowers each slice's per-item expression (a string, number or
//! bool), resolves the `by:` of metrics and gates, and adds the checks that
//! slices with `values:` imply. After linking it works out, per slice, which
//! metrics and aggregates are computed per value, so one pass folds them all.

use std::sync::Arc;

use crate::base::types::Type;
use crate::ir::Op;
use crate::library::aggregates::AggregateFn;
use crate::plan::compile::declared::{Declared, DeclaredMetric};
use crate::plan::compile::error::{CompileError as E, SliceError};
use crate::plan::compile::expr::{Lowering, Scope};
use crate::plan::compile::metrics::Metrics;
use crate::plan::{Aggregate, GateBy, GatePlan, GateRule, MetricPlan, Severity, SlicePlan};
use crate::spec::{GateDecl, GateRuns, GateSlices, Name, Unexpected};

/// Every slice as declared; a slice that fails to compile is reported and left out
/// (the plan is not built then).
pub fn compile(lowering: &mut Lowering<'_>) -> Vec<SlicePlan<Declared>> {
    let spec = lowering.names.spec;
    let mut slices = Vec::new();
    for slice in &spec.slices {
        let Some(lowered) = lowering.compile_expr(&slice.expr, Scope::ITEM) else {
            continue;
        };
        if matches!(lowered.ty, Type::List(_) | Type::Object) {
            let kind = SliceError::NotScalar {
                slice: slice.name.text.clone(),
                found: lowered.ty,
            };
            lowering.report(E::Slice(kind), slice.expr.whole());
            continue;
        }
        slices.push(SlicePlan {
            name: slice.name.text.clone(),
            op: lowered.op,
            text: slice.expr.text.clone(),
            at: slice.expr.whole(),
            values: slice.values.as_ref().map(|values| {
                values
                    .iter()
                    .map(|(text, _)| Arc::from(text.as_str()))
                    .collect()
            }),
            unexpected: match slice.unexpected {
                Unexpected::Warn => Severity::Warn,
                Unexpected::Fail => Severity::Fail,
            },
            metrics: Vec::new(),
            aggregates: Vec::new(),
        });
    }
    slices
}

/// `by:` as slice indices; `None` (reported) when one names no slice.
fn resolve(lowering: &mut Lowering<'_>, by: &[Name]) -> Option<Vec<usize>> {
    let spec = lowering.names.spec;
    let mut out = Vec::new();
    let mut ok = true;
    for name in by {
        match spec.slices.iter().position(|s| s.name.text == name.text) {
            Some(index) => out.push(index),
            None => {
                let kind = SliceError::UnknownSlice {
                    name: name.text.clone(),
                    slices: spec.slices.iter().map(|s| s.name.text.clone()).collect(),
                };
                lowering.report(E::Slice(kind), name.location());
                ok = false;
            }
        }
    }
    ok.then_some(out)
}

/// Each metric's `by:`; a metric across runs cannot be sliced.
pub fn metrics_by(lowering: &mut Lowering<'_>, metrics: &mut Metrics) {
    let spec = lowering.names.spec;
    for metric in &mut metrics.ordered.items {
        let decl = &spec.metrics[metric.declared];
        if decl.by.is_empty() {
            continue;
        }
        let Some(by) = resolve(lowering, &decl.by) else {
            continue;
        };
        if metric.across {
            let kind = SliceError::MetricAcross {
                metric: metric.name.clone(),
            };
            lowering.report(E::Slice(kind), decl.by[0].location());
            continue;
        }
        metric.by = by;
    }
}

/// A gate's `by:`: every metric it reads must be computed by each of its slices,
/// it reads no aggregate directly, and `worst` needs a metric's `better`.
pub fn gate_by(
    lowering: &mut Lowering<'_>,
    decl: &GateDecl,
    rule: &GateRule<Declared>,
    metrics: &Metrics,
) -> Option<Option<GateBy>> {
    if decl.by.is_empty() {
        return Some(None);
    }
    let slices = resolve(lowering, &decl.by)?;
    let spec = lowering.names.spec;
    let by_of = |m: DeclaredMetric| -> Option<&Vec<usize>> {
        let position = *metrics.ordered.position.get(m.0)?;
        metrics.ordered.items.get(position).map(|m| &m.by)
    };
    let mut read: Vec<DeclaredMetric> = Vec::new();
    let mut aggregate = false;
    if let GateRule::Shape(shape) = rule {
        read.push(shape.metric);
    }
    for op in rule.ops() {
        op.walk(&mut |op| match op {
            Op::Metric(m) | Op::Baseline(m) => read.push(*m),
            Op::Aggregate(_) => aggregate = true,
            _ => {}
        });
    }
    let gate = decl.name.text.clone();
    let mut ok = true;
    if aggregate {
        let kind = SliceError::AggregateInGate { gate: gate.clone() };
        lowering.report(E::Slice(kind), decl.by[0].location());
        ok = false;
    }
    read.dedup();
    for m in read {
        let by = by_of(m).cloned().unwrap_or_default();
        // A metric that did not compile has no `by` yet: what it declares
        // decides (its own error says what is wrong with it).
        let declared = &spec.metrics[m.0].by;
        for (name, slice) in decl.by.iter().zip(&slices) {
            let declares = declared.iter().any(|d| d.text == name.text);
            let unknown = declares && by_of(m).is_none_or(|b| b.is_empty());
            if !(by.contains(slice) || unknown) {
                let kind = SliceError::MetricNotBy {
                    gate: gate.clone(),
                    metric: spec.metrics[m.0].name.text.clone(),
                    slice: name.text.clone(),
                };
                lowering.report(E::Slice(kind), name.location());
                ok = false;
            }
        }
    }
    let (mode, mode_node) = &decl.slices;
    if *mode == GateSlices::Worst && !matches!(rule, GateRule::Shape(_)) {
        let path = format!("gates.{}.slices", decl.name.text);
        let at = mode_node.as_ref().map_or_else(
            || decl.name.location(),
            |n| n.location().with_key_path(&path),
        );
        let kind = SliceError::WorstNeedsMetric { gate };
        lowering.report(E::Slice(kind), at);
        ok = false;
    }
    // `significance` per slice value needs a paired test of each value, known now.
    if let GateRule::Shape(shape) = rule {
        if shape.significance.is_some() {
            let testable = by_metric(metrics, shape.metric).is_some_and(|m| {
                matches!(&m.op, Op::Aggregate(a) if lowering.aggregates.get(a.index()).is_some_and(|a| {
                    matches!(a.function, AggregateFn::Ratio | AggregateFn::Mean | AggregateFn::Sum | AggregateFn::Count)
                }))
            });
            let worst = *mode == GateSlices::Worst;
            if worst || !testable {
                let kind = SliceError::SignificanceUntestable {
                    gate: decl.name.text.clone(),
                    metric: spec.metrics[shape.metric.0].name.text.clone(),
                    worst,
                };
                lowering.report(E::Slice(kind), decl.by[0].location());
                ok = false;
            }
        }
    }
    ok.then_some(Some(GateBy {
        slices,
        mode: *mode,
        min_items: decl.min_items,
    }))
}

/// The compiled metric declared at `m`.
fn by_metric(metrics: &Metrics, m: DeclaredMetric) -> Option<&MetricPlan<Declared>> {
    let position = *metrics.ordered.position.get(m.0)?;
    metrics.ordered.items.get(position)
}

/// One check per slice with `values:`, named `slices.NAME`: it warns (or fails,
/// with `unexpected: fail`) when a value is seen but not listed, or listed but
/// not seen. Decided per run.
pub fn value_checks(slices: &[SlicePlan<Declared>]) -> Vec<GatePlan<Declared>> {
    slices
        .iter()
        .enumerate()
        .filter_map(|(index, slice)| {
            let values = slice.values.as_ref()?;
            let listed: Vec<&str> = values.iter().map(|v| v.as_ref()).collect();
            Some(GatePlan {
                name: format!("slices.{}", slice.name),
                rule: GateRule::SliceValues { slice: index },
                per_run: true,
                runs: GateRuns::Every,
                value_ty: Type::Int,
                severity: slice.unexpected,
                message: None,
                text: format!("{} values are [{}]", slice.name, listed.join(", ")),
                by: None,
            })
        })
        .collect()
}

/// After linking: per slice, the metrics computed per value (its `by` metrics
/// and every metric they read) and the aggregates those read.
pub fn needs(slices: &mut [SlicePlan], metrics: &[MetricPlan], aggregates: &[Aggregate]) {
    for (index, slice) in slices.iter_mut().enumerate() {
        let mut needed: Vec<bool> = metrics.iter().map(|m| m.by.contains(&index)).collect();
        let mut folded = vec![false; aggregates.len()];
        // Metrics read only earlier metrics: from the last, mark what each reads.
        for i in (0..metrics.len()).rev() {
            if !needed[i] {
                continue;
            }
            metrics[i].op.walk(&mut |op| match op {
                Op::Metric(m) => needed[m.index()] = true,
                Op::Aggregate(a) if aggregates[a.index()].function != AggregateFn::Stability => {
                    folded[a.index()] = true;
                }
                _ => {}
            });
        }
        slice.metrics = needed;
        slice.aggregates = (0..aggregates.len()).filter(|&a| folded[a]).collect();
    }
}
