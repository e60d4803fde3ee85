//! The parts of `report.json` that only a spec with several runs has (each run,
//! metric spreads, stability and flips, the latency-vs-accuracy points), and
//! the confusion tables of `kappa`/`agreement`.

use serde_json::Value as Json;

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

/// One confusion table per `kappa`/`agreement` subject (and run): rows are the
/// first labels, columns the second, both in natural order.
pub fn agreements(plan: &Plan, outcome: &Outcome) -> Vec<Agreement> {
    outcome
        .agreements
        .iter()
        .map(|a| {
            let aggregate = &plan.aggregates[a.aggregate];
            let labels = a.confusion.labels();
            let table: Vec<Vec<u64>> = labels
                .iter()
                .map(|row| {
                    labels
                        .iter()
                        .map(|col| a.confusion.count(row, col))
                        .collect()
                })
                .collect();
            let (first, second) = split_pair(&aggregate.subject);
            Agreement {
                subject: aggregate.subject.clone(),
                first,
                second,
                run: a.run.as_deref().map(str::to_string),
                labels: labels.iter().map(|l| l.to_string()).collect(),
                table,
                items: a.confusion.total(),
                observed: a.confusion.agreement(),
                expected: a.confusion.expected(),
                kappa: a.confusion.kappa(),
                function: match aggregate.function {
                    AggregateFn::Kappa => "kappa",
                    _ => "agreement",
                }
                .to_string(),
            }
        })
        .collect()
}

/// `scholar, auditor where x` → (`scholar`, `auditor`): the two label sets, for headings.
fn split_pair(subject: &str) -> (String, String) {
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
