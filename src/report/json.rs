//! `report.json`: spec identity, params, dataset fingerprints, metrics and gates.
//! Keys come in a fixed order (declaration order for user names); numbers are
//! unrounded; integers print without a fraction, other numbers with one.

use serde_json::{json, Map, Value as Json};
use sha2::{Digest, Sha256};

use crate::eval::Outcome;
use crate::plan::Plan;
use crate::spec::ParamType;
use crate::types::Type;
use crate::value::Value;

/// A value as JSON, with integers kept apart from other numbers by its static type.
pub fn format_typed(value: &Value, ty: &Type) -> Json {
    match value {
        Value::Number(n)
            if *ty == Type::Int && n.fract() == 0.0 && n.abs() < 9.007_199_254_740_992e15 =>
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
    let metrics: Map<String, Json> = plan
        .metrics_in_declared_order()
        .into_iter()
        .map(|(i, m)| (m.name.clone(), format_typed(&outcome.metrics[i], &m.ty)))
        .collect();
    let gates: Vec<Json> = plan
        .gates
        .iter()
        .zip(&outcome.gates)
        .map(|(g, o)| {
            json!({
                "name": g.name,
                "expr": g.text,
                "severity": g.severity.keyword(),
                "value": format_typed(&o.value, &g.value_ty),
                "pass": o.pass,
                "status": o.status.keyword(),
                "message": g.message,
            })
        })
        .collect();
    json!({
        "evalspec": env!("CARGO_PKG_VERSION"),
        "spec": {
            "name": plan.spec_name,
            "version": plan.spec_version,
            "path": plan.spec_display,
            "sha256": spec_sha,
        },
        "params": params,
        "datasets": datasets,
        "items": outcome.items,
        "metrics": metrics,
        "gates": gates,
        "pass": outcome.pass(),
    })
}
