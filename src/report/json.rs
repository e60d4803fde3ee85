//! `report.json`: spec identity (and text), params, dataset fingerprints,
//! metrics, gates, labels, offenders and the comparison with a baseline. Keys
//! come in a fixed order (declaration order for user names); numbers are
//! unrounded; integer-typed values print without a fraction, float-typed ones
//! with one, and values of unknown type without one when they are whole.

use serde_json::{json, Map, Value as Json};
use sha2::{Digest, Sha256};

use crate::eval::Outcome;
use crate::plan::Plan;
use crate::report::items::offender_json;
use crate::spec::ParamType;
use crate::types::Type;
use crate::value::Value;

/// A value as JSON, with integers kept apart from other numbers by its static type.
pub fn format_typed(value: &Value, ty: &Type) -> Json {
    match value {
        Value::Number(n)
            if matches!(ty, Type::Int | Type::Any)
                && n.fract() == 0.0
                && n.abs() < 9.007_199_254_740_992e15 =>
        {
            json!(*n as i64)
        }
        Value::Number(n) => serde_json::Number::from_f64(*n).map_or(Json::Null, Json::Number),
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::String(s) => Json::String(s.to_string()),
        Value::List(items) => {
            Json::Array(items.iter().map(|v| format_typed(v, &Type::Any)).collect())
        }
        Value::Object(fields) => Json::Object(
            fields
                .iter()
                .map(|(k, v)| (k.to_string(), format_typed(v, &Type::Any)))
                .collect(),
        ),
    }
}

pub fn report_json(plan: &Plan, outcome: &Outcome) -> Json {
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
            if d.name != plan.datasets[plan.items].name {
                entry["unmatched"] = json!(o.unmatched);
                entry["missing"] = json!(o.missing);
                entry["join"] = json!(d.join.keyword());
            }
            (d.name.clone(), entry)
        })
        .collect();
    let declared = plan.metrics_in_declared_order();
    let metrics: Map<String, Json> = declared
        .iter()
        .map(|(i, m)| (m.name.clone(), format_typed(&outcome.metrics[*i], &m.ty)))
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
            "lock": plan.lock.as_ref().map(|lock| json!({
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
    if let Some(prior) = &plan.baseline {
        report["baseline"] = since_baseline(plan, outcome, prior);
    }
    report["pass"] = json!(outcome.pass());
    report
}

/// The "since baseline" section: each metric's baseline value and change.
fn since_baseline(plan: &Plan, outcome: &Outcome, prior: &crate::report::PriorRun) -> Json {
    let metrics: Map<String, Json> = plan
        .metrics_in_declared_order()
        .into_iter()
        .map(|(i, m)| {
            let (value, base) = (&outcome.metrics[i], &outcome.baseline[i]);
            let mut entry = json!({
                "baseline": format_typed(base, &m.ty),
                "value": format_typed(value, &m.ty),
            });
            if let (Value::Number(v), Value::Number(b)) = (value, base) {
                entry["delta"] = format_typed(&Value::Number(v - b), &Type::Float);
                entry["relative"] = if *b == 0.0 {
                    Json::Null
                } else {
                    format_typed(&Value::Number((v - b) / b.abs()), &Type::Float)
                };
            } else {
                entry["delta"] = Json::Null;
                entry["relative"] = Json::Null;
            }
            (m.name.clone(), entry)
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
