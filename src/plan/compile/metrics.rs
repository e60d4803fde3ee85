//! Phase 3: metrics. Reads [`Names`] and the aggregates that lowering collects;
//! lowers each metric (a metric expanded from `ks` sees its cutoff as `k`),
//! orders them by their dependencies and classifies each as computed per run or
//! once across runs. Adds [`Metrics`]: the ordered metrics with their types and
//! classes by declaration, which gates and the tradeoff read. Then `tradeoff:`.

use crate::base::types::Type;
use crate::ir::Op;
use crate::library::aggregates::AggregateFn;
use crate::plan::compile::declared::{Declared, DeclaredMetric};
use crate::plan::compile::error::CompileError as E;
use crate::plan::compile::expr::{Lowering, Scope};
use crate::plan::compile::order::{self, Ordered};
use crate::plan::MetricPlan;
use crate::spec::Name;

/// The compiled metrics, and what later phases need to know of each.
#[derive(Debug, Default)]
pub struct Metrics {
    pub ordered: Ordered<MetricPlan<Declared>>,
    /// By declaration: each metric's type (empty when a metric failed to compile).
    pub types: Vec<Type>,
    /// By declaration: computed once across runs rather than per run.
    pub across: Vec<bool>,
}

impl Metrics {
    pub fn is_across(&self, metric: DeclaredMetric) -> bool {
        self.across.get(metric.0).copied().unwrap_or(false)
    }
}

/// One metric and the metrics it reads.
struct WithDeps {
    metric: MetricPlan<Declared>,
    deps: Vec<usize>,
}

pub fn compile(lowering: &mut Lowering<'_>) -> Metrics {
    let spec = lowering.names.spec;
    let mut decls: Vec<Option<WithDeps>> = Vec::new();
    for (declared, metric) in spec.metrics.iter().enumerate() {
        let scope = Scope::Metric {
            cutoff: metric.cutoff,
        };
        let decl = lowering
            .compile_expr(&metric.expr, scope)
            .and_then(|lowered| {
                let ty = lowered.ty;
                if !ty.is_numeric() && ty != Type::Any && ty != Type::Bool {
                    let kind = E::MetricNotNumber {
                        name: metric.name.text.clone(),
                        found: ty,
                    };
                    lowering.report(kind, metric.expr.whole());
                    return None;
                }
                Some(WithDeps {
                    metric: MetricPlan {
                        name: metric.name.text.clone(),
                        op: lowered.op,
                        ty,
                        empty: metric.empty.as_ref().map(|(v, _)| *v),
                        better: metric.better,
                        text: metric.expr.text.clone(),
                        description: metric.description.clone(),
                        tolerance: metric.tolerance,
                        declared,
                        across: false,
                        by: Vec::new(),
                    },
                    deps: lowered.deps,
                })
            });
        decls.push(decl);
    }
    let names: Vec<String> = spec.metrics.iter().map(|m| m.name.text.clone()).collect();
    let deps: Vec<Vec<usize>> = decls
        .iter()
        .map(|d| d.as_ref().map_or_else(Vec::new, |d| d.deps.clone()))
        .collect();
    let locate = |i: usize| spec.metrics[i].name.location();
    let order = order::by_dependencies(&names, &deps, "metric", locate, &mut lowering.errors);
    let (Some(order), Some(mut metrics)) = (
        order,
        decls
            .into_iter()
            .map(|d| d.map(|d| d.metric))
            .collect::<Option<Vec<_>>>(),
    ) else {
        return Metrics::default();
    };
    let types = metrics.iter().map(|m| m.ty.clone()).collect();
    let Some(across) = classify(lowering, &order, &mut metrics) else {
        return Metrics {
            types,
            ..Metrics::default()
        };
    };
    Metrics {
        ordered: Ordered::new(metrics, &order),
        types,
        across,
    }
}

/// Which metrics are computed once across runs: those reading a cross-run
/// aggregate (`stability`) or summary (`run_mean`, …), or such a metric. A
/// metric may not also read per-run values outside those summaries, and a
/// summary must summarise a per-run metric.
fn classify(
    lowering: &mut Lowering<'_>,
    order: &[usize],
    metrics: &mut [MetricPlan<Declared>],
) -> Option<Vec<bool>> {
    let spec = lowering.names.spec;
    let n = metrics.len();
    let (mut across, mut per_run) = (vec![false; n], vec![false; n]);
    let mut ok = true;
    for &i in order {
        let mut summarised = Vec::new();
        metrics[i].op.walk(&mut |op| match op {
            Op::Aggregate(a)
                if lowering.aggregates[a.index()].function == AggregateFn::Stability =>
            {
                across[i] = true;
            }
            Op::Aggregate(_) | Op::DatasetRecords(_) => per_run[i] = true,
            Op::RunStat(_, m) => {
                across[i] = true;
                summarised.push(m.0);
            }
            Op::Metric(m) => {
                across[i] |= across[m.0];
                per_run[i] |= per_run[m.0];
            }
            _ => {}
        });
        let metric = &spec.metrics[i];
        if across[i] && per_run[i] {
            let kind = E::MixedRuns {
                name: metric.name.text.clone(),
            };
            lowering.report(kind, metric.expr.whole());
            ok = false;
        }
        for m in summarised {
            if across[m] {
                let kind = E::SummaryOfAcross {
                    name: spec.metrics[m].name.text.clone(),
                };
                lowering.report(kind, metric.expr.whole());
                ok = false;
            }
        }
        metrics[i].across = across[i];
    }
    ok.then_some(across)
}

/// `tradeoff:` by metric declaration; each must be a per-run metric.
pub fn tradeoff(
    lowering: &mut Lowering<'_>,
    metrics: &Metrics,
) -> Option<(DeclaredMetric, Vec<DeclaredMetric>)> {
    let spec = lowering.names.spec;
    let decl = spec.tradeoff.as_ref()?;
    let mut find = |name: &Name| -> Option<DeclaredMetric> {
        let Some(index) = lowering.names.metric(&name.text) else {
            let kind = E::UnknownTradeoffMetric {
                name: name.text.clone(),
                metrics: spec.metrics.iter().map(|m| m.name.text.clone()).collect(),
            };
            lowering.report(kind, name.location());
            return None;
        };
        if metrics.is_across(DeclaredMetric(index)) {
            let kind = E::TradeoffAcross {
                name: name.text.clone(),
            };
            lowering.report(kind, name.location());
            return None;
        }
        Some(DeclaredMetric(index))
    };
    let latency = find(&decl.latency);
    let accuracy: Vec<Option<DeclaredMetric>> = decl.accuracy.iter().map(&mut find).collect();
    Some((latency?, accuracy.into_iter().collect::<Option<_>>()?))
}
