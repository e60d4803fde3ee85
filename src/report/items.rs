//! `items.jsonl`: one line per scored item, in natural key order.

use serde_json::{json, Map, Value as Json};

use crate::base::typed_json::format_typed;
use crate::base::types::Type;
use crate::base::value::Key;
use crate::eval::{ItemRow, Outcome};
use crate::plan::{DerivedKind, Plan};

fn key_json(key: Option<&Key>) -> Json {
    match key {
        None => Json::Null,
        Some(Key::Str(s)) => Json::String(s.to_string()),
        Some(Key::Num(bits)) => format_typed(
            &crate::base::value::Value::Number(f64::from_bits(*bits)),
            &Type::Any,
        ),
    }
}

/// One item: its key, its line in the items dataset, its label (when the spec
/// has labels), its fields and its matcher results.
pub fn item_json(plan: &Plan, row: &ItemRow) -> Json {
    let mut fields = Map::new();
    let mut matchers = Map::new();
    for (column, value) in plan.item_columns.iter().zip(row.values.iter()) {
        let target = match column.kind {
            DerivedKind::Matcher => &mut matchers,
            DerivedKind::Field | DerivedKind::Label => &mut fields,
        };
        target.insert(column.name.clone(), format_typed(value, &column.ty));
    }
    let mut item = json!({
        "key": key_json(row.key.as_ref()),
        "line": row.line,
    });
    if let Some(run) = &row.run {
        item["run"] = json!(run.as_ref());
    }
    if !plan.labels.is_empty() {
        item["label"] = row.label.as_deref().map_or(Json::Null, Json::from);
    }
    item["fields"] = Json::Object(fields);
    item["matchers"] = Json::Object(matchers);
    item
}

/// The rows as JSON lines, in natural key order (then line).
pub fn items_jsonl(plan: &Plan, outcome: &Outcome) -> Vec<u8> {
    let mut order: Vec<&ItemRow> = outcome.rows.iter().collect();
    order.sort_by(|a, b| ItemRow::report_order(a, b));
    let mut out = Vec::new();
    for row in order {
        serde_json::to_writer(&mut out, &item_json(plan, row)).expect("JSON values serialise");
        out.push(b'\n');
    }
    out
}

/// An offender: key, line, label and the values `offenders.show` names.
pub fn offender_json(plan: &Plan, row: &ItemRow) -> Json {
    let shown: Map<String, Json> = plan
        .offenders
        .iter()
        .flat_map(|o| &o.show)
        .zip(row.values.iter())
        .map(|((name, slot), value)| {
            (
                name.clone(),
                format_typed(value, &plan.derived[slot.index()].ty),
            )
        })
        .collect();
    let mut offender = json!({
        "key": key_json(row.key.as_ref()),
        "line": row.line,
        "label": row.label.as_deref().map_or(Json::Null, Json::from),
        "fields": shown,
    });
    if let Some(run) = &row.run {
        offender["run"] = json!(run.as_ref());
    }
    offender
}
