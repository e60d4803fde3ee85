//! `report.json`: spec identity (and text), params, dataset fingerprints,
//! metrics, gates, labels, offenders and the comparison with a baseline. Keys
//! come in a fixed order (declaration order for user names); numbers are
//! unrounded; integer-typed values print without a fraction, float-typed ones
//! with one, and values of unknown type without one when they are whole.

use serde_json::{json, Map, Value as Json};
use sha2::{Digest, Sha256};

use crate::base::typed_json::format_typed;
use crate::base::types::Type;
use crate::base::value::Value;
use crate::eval::{per_run_name, Outcome};
use crate::lock::LockStamp;
use crate::plan::Plan;
use crate::report::items::offender_json;
use crate::spec::ParamType;

pub fn report_json(plan: &Plan, outcome: &Outcome, lock: Option<&LockStamp>) -> Json {
    let spec_sha = format!("{:x}", Sha256::digest(plan.spec_text.as_bytes()));
    let params: Map<String, Json> = plan
        .params
        .iter()
        .map(|p| {
            let ty = if p.ty == ParamType::Integer {
                Type::Int
            } else {
                Type::Any
            };
            (p.name.clone(), format_typed(&p.value, &ty))
        })
        .collect();
    let datasets: Map<String, Json> = plan
        .datasets
        .iter()
        .zip(&outcome.datasets)
        .map(|(d, o)| {
            let mut entry = json!({
                "path": d.display_path,
                "format": d.format.keyword(),
                "sha256": o.read.sha256,
                "records": o.read.records,
                "keyless": o.keyless,
                "duplicates": o.duplicates,
            });
            if d.name != plan.datasets[plan.items_dataset.index()].name {
                entry["unmatched"] = json!(o.unmatched);
                entry["missing"] = json!(o.missing);
                entry["join"] = json!(d.join.keyword());
            }
            (d.name.clone(), entry)
        })
        .collect();
    let declared = plan.metrics_in_declared_order();
    let metrics: Map<String, Json> = metric_values(plan, outcome)
        .into_iter()
        .map(|(name, value, ty, _)| (name, format_typed(&value, ty)))
        .collect();
    let metric_info: Map<String, Json> = declared
        .iter()
        .map(|(_, m)| {
            let mut info = json!({ "expr": m.text });
            if let Some(better) = m.better {
                info["better"] = json!(better.keyword());
            }
            if let Some(tolerance) = m.tolerance {
                info["tolerance"] = json!(tolerance);
            }
            if let Some(description) = &m.description {
                info["description"] = json!(description.trim());
            }
            if plan.has_runs() {
                info["per_run"] = json!(!m.across);
            }
            (m.name.clone(), info)
        })
        .collect();
    let gates: Vec<Json> = plan
        .gates
        .iter()
        .zip(&outcome.gates)
        .map(|(g, o)| {
            let mut gate = json!({
                "name": g.name,
                "expr": g.text,
                "severity": g.severity.keyword(),
                "value": format_typed(&o.value, &g.value_ty),
            });
            if let Some(threshold) = &o.threshold {
                gate["threshold"] = format_typed(threshold, &Type::Any);
            }
            if let Some(threshold) = &o.warn_threshold {
                gate["warn_threshold"] = format_typed(threshold, &Type::Any);
            }
            if matches!(g.rule, crate::plan::GateRule::Shape(_)) && plan.baseline.is_some() {
                gate["baseline"] = format_typed(&o.baseline, &g.value_ty);
            }
            gate["pass"] = json!(o.pass);
            gate["status"] = json!(o.status.keyword());
            gate["message"] = json!(g.message);
            gate["reasons"] = json!(o.reasons);
            if g.per_run && !outcome.runs.is_empty() {
                gate["runs"] = json!(g.runs.keyword());
                gate["run"] = json!(o.run.as_deref());
            }
            gate
        })
        .collect();
    let mut report = json!({
        "evalspec": env!("CARGO_PKG_VERSION"),
        "spec": {
            "name": plan.spec_name,
            "version": plan.spec_version,
            "path": plan.spec_display,
            "sha256": spec_sha,
            "text": plan.spec_text,
            "lock": lock.map(|lock| json!({
                "path": lock.path,
                "sha256": lock.sha256,
                "version": lock.version,
                "status": lock.status(),
                "drift": lock.drift,
            })),
        },
        "params": params,
        "datasets": datasets,
        "scored": outcome.items,
        "metrics": metrics,
        "metric_info": metric_info,
        "gates": gates,
    });
    if !plan.labels.is_empty() {
        let labels: Map<String, Json> = plan
            .labels
            .iter()
            .zip(&outcome.label_counts)
            .map(|(label, count)| (label.clone(), json!(count)))
            .collect();
        report["labels"] = Json::Object(labels);
        let labelled: usize = outcome.label_counts.iter().sum();
        report["unlabelled"] = json!(outcome.items - labelled);
    }
    if let Some(offenders) = &plan.offenders {
        report["offenders"] = json!({
            "when": offenders.text,
            "limit": offenders.limit,
            "items": outcome
                .offenders
                .iter()
                .map(|row| offender_json(plan, row))
                .collect::<Vec<_>>(),
        });
    }
    if plan.has_runs() {
        crate::report::runs::add_runs(&mut report, plan, outcome);
    }
    if !outcome.agreements.is_empty() {
        report["agreement"] = crate::report::runs::agreements(plan, outcome);
    }
    if let Some(prior) = &plan.baseline {
        report["baseline"] = since_baseline(plan, outcome, prior);
    }
    report["pass"] = json!(outcome.pass());
    report
}

/// Every metric value a report lists, in declared order: name, value, type and
/// baseline value. With several runs a per-run metric is listed once per run as
/// `NAME@RUN`, which is also how a later run's baseline finds it.
pub fn metric_values<'p>(
    plan: &'p Plan,
    outcome: &Outcome,
) -> Vec<(String, Value, &'p Type, Value)> {
    let mut values = Vec::new();
    for (i, m) in plan.metrics_in_declared_order() {
        if outcome.runs.is_empty() || m.across {
            let (value, base) = (&outcome.metrics[i.index()], &outcome.baseline[i.index()]);
            values.push((m.name.clone(), value.clone(), &m.ty, base.clone()));
            continue;
        }
        for run in &outcome.runs {
            let name = per_run_name(&m.name, &run.name);
            values.push((
                name,
                run.metrics[i.index()].clone(),
                &m.ty,
                run.baseline[i.index()].clone(),
            ));
        }
    }
    values
}

/// The "since baseline" section: each metric's baseline value and change.
fn since_baseline(
    plan: &Plan,
    outcome: &Outcome,
    prior: &crate::inputs::prior_report::PriorRun,
) -> Json {
    let metrics: Map<String, Json> = metric_values(plan, outcome)
        .into_iter()
        .map(|(name, value, ty, base)| {
            let mut entry = json!({
                "baseline": format_typed(&base, ty),
                "value": format_typed(&value, ty),
            });
            if let (Value::Number(v), Value::Number(b)) = (value, base) {
                entry["delta"] = format_typed(&Value::Number(v - b), &Type::Float);
                entry["relative"] = if b == 0.0 {
                    Json::Null
                } else {
                    format_typed(&Value::Number((v - b) / b.abs()), &Type::Float)
                };
            } else {
                entry["delta"] = Json::Null;
                entry["relative"] = Json::Null;
            }
            (name, entry)
        })
        .collect();
    let spec = &prior.report["spec"];
    json!({
        "path": prior.display,
        "spec": {
            "name": spec["name"],
            "version": spec["version"],
            "sha256": spec["sha256"],
        },
        "metrics": metrics,
    })
}
