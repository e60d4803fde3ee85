//! The parts of `report.json` that only a spec with several runs has (each run,
//! metric spreads, stability and flips, the latency-vs-accuracy points), and
//! the confusion tables of `kappa`/`agreement`.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value as Json;

use crate::base::natural::natural_cmp;
use crate::base::typed_json::format_typed;
use crate::base::types::Type;
use crate::base::value::Value;
use crate::eval::Outcome;
use crate::ir::MetricId;
use crate::library::aggregates::AggregateFn;
use crate::library::run_stats::RunStat;
use crate::plan::Plan;
use crate::report::json::gate_status;
use crate::report_model::{
    Agreement, Flip, MetricValue, NameMap, Report, RunFileInfo, RunGate, RunReport, Spread,
    Stability, Tradeoff, TradeoffPoint,
};
use crate::stats::aggregate::Confusion;

pub fn add_runs(report: &mut Report, plan: &Plan, outcome: &Outcome) {
    for (index, (dataset, (_, info))) in plan
        .datasets
        .iter()
        .zip(report.datasets.iter_mut())
        .enumerate()
    {
        if dataset.runs.is_empty() {
            continue;
        }
        let runs: NameMap<RunFileInfo> = outcome
            .runs
            .iter()
            .map(|run| {
                let read = &run.datasets[index].read;
                let path = run
                    .files
                    .iter()
                    .find(|(name, _)| *name == dataset.name)
                    .map(|(_, path)| path.clone());
                let file = RunFileInfo {
                    path,
                    sha256: read.sha256.clone(),
                    records: read.records as u64,
                };
                (run.name.to_string(), file)
            })
            .collect();
        info.runs = Some(runs);
    }
    let per_run: Vec<(MetricId, &crate::plan::MetricPlan)> = plan
        .metrics_in_declared_order()
        .into_iter()
        .filter(|(_, m)| !m.across)
        .collect();
    let runs: Vec<RunReport> = outcome
        .runs
        .iter()
        .map(|run| {
            let metrics: NameMap<MetricValue> = per_run
                .iter()
                .map(|(i, m)| {
                    let value = format_typed(&run.metrics[i.index()], &m.ty);
                    (m.name.clone(), MetricValue::from_typed(value))
                })
                .collect();
            let gates: NameMap<RunGate> = plan
                .gates
                .iter()
                .zip(&run.gates)
                .filter(|(g, _)| g.per_run)
                .map(|(g, o)| {
                    let gate = RunGate {
                        status: gate_status(o.status),
                        value: format_typed(&o.value, &g.value_ty),
                        threshold: o.threshold.as_ref().map(|t| format_typed(t, &Type::Any)),
                    };
                    (g.name.clone(), gate)
                })
                .collect();
            RunReport {
                name: run.name.to_string(),
                files: run.files.iter().cloned().collect(),
                scored: run.items as u64,
                metrics,
                gates,
                labels: (!plan.labels.is_empty()).then(|| {
                    plan.labels
                        .iter()
                        .zip(&run.label_counts)
                        .map(|(l, n)| (l.clone(), *n as u64))
                        .collect()
                }),
            }
        })
        .collect();
    report.runs = Some(runs);
    let spread: NameMap<Spread> = per_run
        .iter()
        .filter(|(_, m)| m.ty != Type::Bool)
        .map(|(i, m)| {
            let values: Vec<f64> = outcome
                .runs
                .iter()
                .filter_map(|r| match r.metrics[i.index()] {
                    Value::Number(x) => Some(x),
                    _ => None,
                })
                .collect();
            let spread = Spread {
                min: RunStat::Min.of(&values),
                max: RunStat::Max.of(&values),
                mean: RunStat::Mean.of(&values),
                std: RunStat::Std.of(&values),
            };
            (m.name.clone(), spread)
        })
        .collect();
    report.spread = Some(spread);
    let stability = outcome
        .stability
        .iter()
        .map(|s| {
            let aggregate = &plan.aggregates[s.aggregate];
            let flips: Vec<Flip> = s
                .flips
                .iter()
                .map(|flip| {
                    let values: NameMap<Json> = outcome
                        .runs
                        .iter()
                        .zip(&flip.values)
                        .map(|(run, v)| {
                            let value = v
                                .as_ref()
                                .map_or(Json::Null, |v| format_typed(v, &Type::Any));
                            (run.name.to_string(), value)
                        })
                        .collect();
                    Flip {
                        key: flip.key.to_string(),
                        values,
                    }
                })
                .collect();
            Stability {
                expr: aggregate.text.clone(),
                subject: aggregate.subject.clone(),
                items: s.items as u64,
                stable: s.stable as u64,
                flipped: (s.items - s.stable) as u64,
                flips,
            }
        })
        .collect();
    report.stability = Some(stability);
    if let Some(tradeoff) = &plan.tradeoff {
        let name = |i: MetricId| plan.metrics[i.index()].name.clone();
        let mut points: Vec<(Option<f64>, TradeoffPoint)> = outcome
            .runs
            .iter()
            .map(|run| {
                let latency = &run.metrics[tradeoff.latency.index()];
                let accuracy: NameMap<MetricValue> = tradeoff
                    .accuracy
                    .iter()
                    .map(|&a| {
                        let value =
                            format_typed(&run.metrics[a.index()], &plan.metrics[a.index()].ty);
                        (name(a), MetricValue::from_typed(value))
                    })
                    .collect();
                let x = match latency {
                    Value::Number(x) => Some(*x),
                    _ => None,
                };
                let point = TradeoffPoint {
                    run: run.name.to_string(),
                    latency: MetricValue::from_typed(format_typed(
                        latency,
                        &plan.metrics[tradeoff.latency.index()].ty,
                    )),
                    accuracy,
                };
                (x, point)
            })
            .collect();
        // Along the curve: by latency (runs without one last), then run order.
        points.sort_by(|(a, _), (b, _)| match (a, b) {
            (Some(a), Some(b)) => a.total_cmp(b),
            (a, b) => b.is_some().cmp(&a.is_some()),
        });
        report.tradeoff = Some(Tradeoff {
            latency: name(tradeoff.latency),
            accuracy: tradeoff.accuracy.iter().map(|&a| name(a)).collect(),
            points: points.into_iter().map(|(_, p)| p).collect(),
        });
    }
}

/// The most labels a confusion table shows; the others are counted together
/// under [`OTHER_LABEL`]. 3,000 labels would be a 9-million-cell table.
pub const MAX_TABLE_LABELS: usize = 20;

/// The row and column that count the labels a table does not show.
pub const OTHER_LABEL: &str = "(other)";

/// One confusion table per `kappa`/`agreement` subject (and run): rows are the
/// first labels, columns the second, both in natural order.
pub fn agreements(plan: &Plan, outcome: &Outcome) -> Vec<Agreement> {
    outcome
        .agreements
        .iter()
        .map(|a| {
            let aggregate = &plan.aggregates[a.aggregate];
            let (labels, table, folded) = confusion_table(&a.confusion);
            let scores = a.confusion.table();
            let (first, second) = split_pair(&aggregate.subject);
            Agreement {
                subject: aggregate.subject.clone(),
                first,
                second,
                run: a.run.as_deref().map(str::to_string),
                labels,
                table,
                folded,
                items: a.confusion.total(),
                observed: scores.agreement(),
                expected: scores.expected(),
                kappa: scores.kappa(),
                function: match aggregate.function {
                    AggregateFn::Kappa => "kappa",
                    _ => "agreement",
                }
                .to_string(),
            }
        })
        .collect()
}

/// The table of a confusion: every label when there are at most
/// [`MAX_TABLE_LABELS`], else the most used ones (by items either side labelled
/// so; ties in natural order) and an `(other)` row and column for the rest,
/// whose count is returned. Cells are read once: the table costs the cells,
/// not the square of the labels.
fn confusion_table(confusion: &Confusion) -> (Vec<String>, Vec<Vec<u64>>, u64) {
    let all = confusion.labels();
    let shown: Vec<Arc<str>> = if all.len() <= MAX_TABLE_LABELS {
        all.clone()
    } else {
        let mut used: BTreeMap<&str, u64> = BTreeMap::new();
        for ((a, b), n) in confusion.cells() {
            *used.entry(a).or_default() += n;
            *used.entry(b).or_default() += n;
        }
        let mut ranked: Vec<&Arc<str>> = all.iter().collect();
        ranked.sort_by(|x, y| {
            used[&***y]
                .cmp(&used[&***x])
                .then_with(|| natural_cmp(x, y))
        });
        let mut kept: Vec<Arc<str>> = ranked
            .into_iter()
            .take(MAX_TABLE_LABELS - 1)
            .cloned()
            .collect();
        kept.sort_by(|x, y| natural_cmp(x, y));
        kept
    };
    let folded = (all.len() - shown.len()) as u64;
    let size = shown.len() + usize::from(folded > 0);
    let index: BTreeMap<&str, usize> = shown.iter().enumerate().map(|(i, l)| (&**l, i)).collect();
    let at = |label: &str| index.get(label).copied().unwrap_or(size - 1);
    let mut table = vec![vec![0u64; size]; size];
    for ((a, b), n) in confusion.cells() {
        table[at(a)][at(b)] += n;
    }
    let mut labels: Vec<String> = shown.iter().map(|l| l.to_string()).collect();
    if folded > 0 {
        labels.push(OTHER_LABEL.to_string());
    }
    (labels, table, folded)
}

/// `scholar, auditor where x` → (`scholar`, `auditor`): the two label sets, for headings.
pub(super) fn split_pair(subject: &str) -> (String, String) {
    let labels = subject.split(" where ").next().unwrap_or(subject);
    let mut depth = 0i32;
    for (i, c) in labels.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                return (
                    labels[..i].trim().to_string(),
                    labels[i + 1..].trim().to_string(),
                )
            }
            _ => {}
        }
    }
    (labels.trim().to_string(), String::new())
}
