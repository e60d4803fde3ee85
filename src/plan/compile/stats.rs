//! What intervals and paired tests need from the linked metrics (part of phase 6,
//! linking): which metrics are one `ratio`, `mean`, `sum` or `count` of the
//! items (a column of per-item contributions, tested as a ratio of sums),
//! every other metric computed from items as a [`Formula`] over the aggregates
//! whose per-item observations are kept, and the metrics across runs that
//! summarise such metrics (`run_mean(precision)`), over those formulas.

use std::collections::BTreeSet;

use crate::ir::formula::Formula;
use crate::ir::{AggregateId, MetricId, Op};
use crate::library::aggregates::AggregateFn;
use crate::plan::{Aggregate, MetricPlan, ValueColumnPlan};
use crate::report_model::item_values::ValueKind;

/// The metrics that are one `ratio`, `mean`, `sum` or `count` of the items, in
/// one run: their per-item contributions make a ratio of sums, which intervals
/// and paired tests resample.
pub(super) fn value_columns(
    metrics: &[MetricPlan],
    aggregates: &[Aggregate],
) -> Vec<ValueColumnPlan> {
    metrics
        .iter()
        .enumerate()
        .filter(|(_, m)| !m.across)
        .filter_map(|(i, m)| {
            let Op::Aggregate(id) = m.op else { return None };
            let kind = simple_kind(aggregates[id.index()].function)?;
            Some(ValueColumnPlan {
                metric: MetricId::new(i),
                aggregate: id,
                kind,
            })
        })
        .collect()
}

fn simple_kind(function: AggregateFn) -> Option<ValueKind> {
    Some(match function {
        AggregateFn::Ratio => ValueKind::Ratio,
        AggregateFn::Mean => ValueKind::Mean,
        AggregateFn::Sum => ValueKind::Sum,
        AggregateFn::Count => ValueKind::Count,
        _ => return None,
    })
}

/// The formulas of the metrics computed from items that are not a column
/// (tested), with the metrics they read (kept, untested), in plan order; and
/// the aggregates they observe, in plan order. Per formula, its metric.
pub(super) struct Formulas {
    pub observed: Vec<AggregateId>,
    pub formulas: Vec<Formula>,
    pub metrics: Vec<MetricId>,
    /// Metrics across runs that summarise per-run metrics (`run_mean(m)` and
    /// kin, in arithmetic): their op with each `m` as its formula's index.
    pub across: Vec<(MetricId, Op)>,
}

pub(super) fn formulas(
    metrics: &[MetricPlan],
    aggregates: &[Aggregate],
    columns: &[ValueColumnPlan],
) -> Formulas {
    let n = metrics.len();
    // Per metric: whether it can be a formula, and whether it reads an aggregate.
    let mut convertible = vec![false; n];
    let mut reads_items = vec![false; n];
    for (i, metric) in metrics.iter().enumerate() {
        if metric.across {
            continue;
        }
        let mut ok = true;
        let mut reads = false;
        metric.op.walk(&mut |op| match op {
            Op::Aggregate(a) => {
                reads = true;
                ok &= aggregates[a.index()].function != AggregateFn::Stability;
            }
            Op::Metric(m) => {
                ok &= convertible[m.index()];
                reads |= reads_items[m.index()];
            }
            op => ok &= is_arithmetic(op),
        });
        convertible[i] = ok;
        reads_items[i] = reads;
    }
    // Across runs: ops over run statistics of per-run metrics that are formulas.
    let across: Vec<bool> = metrics
        .iter()
        .map(|metric| {
            let mut ok = metric.across;
            let mut reads = false;
            metric.op.walk(&mut |op| match op {
                Op::RunStat(_, m) => {
                    ok &= convertible[m.index()] && reads_items[m.index()];
                    reads = true;
                }
                op => ok &= is_arithmetic(op),
            });
            ok && reads
        })
        .collect();
    let tested: Vec<bool> = (0..n)
        .map(|i| convertible[i] && reads_items[i] && !columns.iter().any(|c| c.metric.index() == i))
        .collect();
    // Keep the tested ones and, latest first, every metric a kept one reads.
    let mut kept = tested.clone();
    for i in (0..n).rev() {
        if kept[i] || across[i] {
            metrics[i].op.walk(&mut |op| match op {
                Op::Metric(m) | Op::RunStat(_, m) => kept[m.index()] = true,
                _ => {}
            });
        }
    }
    // Across metrics come after what they read, so the loop above kept those.
    for i in 0..n {
        kept[i] &= !metrics[i].across;
    }
    let mut read = BTreeSet::new();
    for metric in metrics
        .iter()
        .zip(&kept)
        .filter(|(_, k)| **k)
        .map(|(m, _)| m)
    {
        metric.op.walk(&mut |op| {
            if let Op::Aggregate(a) = op {
                read.insert(*a);
            }
        });
    }
    let observed: Vec<AggregateId> = read.into_iter().collect();
    let mut observed_index = vec![None; aggregates.len()];
    for (k, a) in observed.iter().enumerate() {
        observed_index[a.index()] = Some(k);
    }
    let mut formula_index = vec![None; n];
    let mut found = Formulas {
        observed,
        formulas: Vec::new(),
        metrics: Vec::new(),
        across: Vec::new(),
    };
    for (i, metric) in metrics.iter().enumerate() {
        if !kept[i] {
            continue;
        }
        let op = relabel(&metric.op, &observed_index, &formula_index)
            .expect("a kept metric reads only aggregates and kept metrics");
        formula_index[i] = Some(found.formulas.len());
        found.formulas.push(Formula {
            name: metric.name.clone(),
            op,
            empty: metric.empty,
            tested: tested[i],
        });
        found.metrics.push(MetricId::new(i));
    }
    for (i, metric) in metrics.iter().enumerate() {
        if across[i] {
            let op = relabel(&metric.op, &observed_index, &formula_index)
                .expect("an across metric reads only run statistics of kept metrics");
            found.across.push((MetricId::new(i), op));
        }
    }
    found
}

/// Whether an op is one a formula may be built from around its references:
/// constants, arithmetic, `if`, lists, fields, indexing, built-in functions.
fn is_arithmetic(op: &Op) -> bool {
    matches!(
        op,
        Op::Const(_)
            | Op::Binary(..)
            | Op::Not(..)
            | Op::Neg(..)
            | Op::If(..)
            | Op::List(_)
            | Op::Field(..)
            | Op::Index(..)
            | Op::Call(..)
    )
}

/// The op with aggregates as observed indices and metrics as formula indices.
fn relabel(op: &Op, aggregates: &[Option<usize>], metrics: &[Option<usize>]) -> Option<Op> {
    let one = |op: &Op| relabel(op, aggregates, metrics).map(Box::new);
    let all = |ops: &[Op]| -> Option<Vec<Op>> {
        ops.iter()
            .map(|op| relabel(op, aggregates, metrics))
            .collect()
    };
    Some(match op {
        Op::Const(value) => Op::Const(value.clone()),
        Op::Aggregate(a) => Op::Aggregate(AggregateId::new(aggregates[a.index()]?)),
        Op::Metric(m) => Op::Metric(MetricId::new(metrics[m.index()]?)),
        Op::RunStat(stat, m) => Op::RunStat(*stat, MetricId::new(metrics[m.index()]?)),
        Op::Binary(operator, a, b, at) => Op::Binary(*operator, one(a)?, one(b)?, *at),
        Op::Not(a, at) => Op::Not(one(a)?, *at),
        Op::Neg(a, at) => Op::Neg(one(a)?, *at),
        Op::If(c, t, e, at) => Op::If(one(c)?, one(t)?, one(e)?, *at),
        Op::List(items) => Op::List(all(items)?),
        Op::Field(base, name, at) => Op::Field(one(base)?, name.clone(), *at),
        Op::Index(base, index, at) => Op::Index(one(base)?, one(index)?, *at),
        Op::Call(builtin, args, at) => Op::Call(builtin, all(args)?, *at),
        _ => return None,
    })
}
