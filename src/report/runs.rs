//! The parts of `report.json` that only a spec with several runs has (each run,
//! metric spreads, stability and flips, the latency-vs-accuracy points), and
//! the confusion tables of `kappa`/`agreement`.

use serde_json::{json, Map, Value as Json};

use crate::base::typed_json::format_typed;
use crate::base::types::Type;
use crate::base::value::Value;
use crate::eval::Outcome;
use crate::ir::MetricId;
use crate::library::aggregates::AggregateFn;
use crate::library::run_stats::RunStat;
use crate::plan::Plan;

pub fn add_runs(report: &mut Json, plan: &Plan, outcome: &Outcome) {
    for (index, dataset) in plan.datasets.iter().enumerate() {
        if dataset.runs.is_empty() {
            continue;
        }
        let runs: Map<String, Json> = outcome
            .runs
            .iter()
            .map(|run| {
                let read = &run.datasets[index].read;
                let path = run
                    .files
                    .iter()
                    .find(|(name, _)| *name == dataset.name)
                    .map(|(_, path)| path.clone());
                (
                    run.name.to_string(),
                    json!({ "path": path, "sha256": read.sha256, "records": read.records }),
                )
            })
            .collect();
        report["datasets"][&dataset.name]["runs"] = Json::Object(runs);
    }
    let per_run: Vec<(MetricId, &crate::plan::MetricPlan)> = plan
        .metrics_in_declared_order()
        .into_iter()
        .filter(|(_, m)| !m.across)
        .collect();
    let runs: Vec<Json> = outcome
        .runs
        .iter()
        .map(|run| {
            let metrics: Map<String, Json> = per_run
                .iter()
                .map(|(i, m)| (m.name.clone(), format_typed(&run.metrics[i.index()], &m.ty)))
                .collect();
            let gates: Map<String, Json> = plan
                .gates
                .iter()
                .zip(&run.gates)
                .filter(|(g, _)| g.per_run)
                .map(|(g, o)| {
                    let mut gate = json!({
                        "status": o.status.keyword(),
                        "value": format_typed(&o.value, &g.value_ty),
                    });
                    if let Some(threshold) = &o.threshold {
                        gate["threshold"] = format_typed(threshold, &Type::Any);
                    }
                    (g.name.clone(), gate)
                })
                .collect();
            let mut entry = json!({
                "name": run.name.as_ref(),
                "files": run.files.iter().map(|(d, p)| (d.clone(), json!(p))).collect::<Map<_, _>>(),
                "scored": run.items,
                "metrics": metrics,
                "gates": gates,
            });
            if !plan.labels.is_empty() {
                entry["labels"] = plan
                    .labels
                    .iter()
                    .zip(&run.label_counts)
                    .map(|(l, n)| (l.clone(), json!(n)))
                    .collect::<Map<_, _>>()
                    .into();
            }
            entry
        })
        .collect();
    report["runs"] = Json::Array(runs);
    let spread: Map<String, Json> = per_run
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
            let stats: Map<String, Json> =
                [RunStat::Min, RunStat::Max, RunStat::Mean, RunStat::Std]
                    .into_iter()
                    .map(|stat| {
                        let value = stat.of(&values).map_or(Value::Null, Value::Number);
                        (
                            stat.keyword().to_string(),
                            format_typed(&value, &Type::Float),
                        )
                    })
                    .collect();
            (m.name.clone(), Json::Object(stats))
        })
        .collect();
    report["spread"] = Json::Object(spread);
    report["stability"] = outcome
        .stability
        .iter()
        .map(|s| {
            let aggregate = &plan.aggregates[s.aggregate];
            let flips: Vec<Json> = s
                .flips
                .iter()
                .map(|flip| {
                    let values: Map<String, Json> = outcome
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
                    json!({ "key": flip.key.to_string(), "values": values })
                })
                .collect();
            json!({
                "expr": aggregate.text,
                "subject": aggregate.subject,
                "items": s.items,
                "stable": s.stable,
                "flipped": s.items - s.stable,
                "flips": flips,
            })
        })
        .collect();
    if let Some(tradeoff) = &plan.tradeoff {
        let name = |i: MetricId| plan.metrics[i.index()].name.clone();
        let mut points: Vec<(Option<f64>, Json)> = outcome
            .runs
            .iter()
            .map(|run| {
                let latency = &run.metrics[tradeoff.latency.index()];
                let accuracy: Map<String, Json> = tradeoff
                    .accuracy
                    .iter()
                    .map(|&a| {
                        (
                            name(a),
                            format_typed(&run.metrics[a.index()], &plan.metrics[a.index()].ty),
                        )
                    })
                    .collect();
                let x = match latency {
                    Value::Number(x) => Some(*x),
                    _ => None,
                };
                let point = json!({
                    "run": run.name.as_ref(),
                    "latency": format_typed(latency, &plan.metrics[tradeoff.latency.index()].ty),
                    "accuracy": accuracy,
                });
                (x, point)
            })
            .collect();
        // Along the curve: by latency (runs without one last), then run order.
        points.sort_by(|(a, _), (b, _)| match (a, b) {
            (Some(a), Some(b)) => a.total_cmp(b),
            (a, b) => b.is_some().cmp(&a.is_some()),
        });
        report["tradeoff"] = json!({
            "latency": name(tradeoff.latency),
            "accuracy": tradeoff.accuracy.iter().map(|&a| name(a)).collect::<Vec<_>>(),
            "points": points.into_iter().map(|(_, p)| p).collect::<Vec<_>>(),
        });
    }
}

/// One confusion table per `kappa`/`agreement` subject (and run): rows are the
/// first labels, columns the second, both in natural order.
pub fn agreements(plan: &Plan, outcome: &Outcome) -> Json {
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
            let number =
                |v: Option<f64>| format_typed(&v.map_or(Value::Null, Value::Number), &Type::Float);
            let (first, second) = split_pair(&aggregate.subject);
            json!({
                "subject": aggregate.subject,
                "first": first,
                "second": second,
                "run": a.run.as_deref(),
                "labels": labels.iter().map(|l| l.as_ref()).collect::<Vec<_>>(),
                "table": table,
                "items": a.confusion.total(),
                "observed": number(a.confusion.agreement()),
                "expected": number(a.confusion.expected()),
                "kappa": number(a.confusion.kappa()),
                "function": match aggregate.function {
                    AggregateFn::Kappa => "kappa",
                    _ => "agreement",
                },
            })
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
