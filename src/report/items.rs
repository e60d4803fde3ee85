//! `items.jsonl`: one line per scored item, in natural key order.

use serde_json::Value as Json;

use crate::base::typed_json::format_typed;
use crate::eval::{ItemRow, Outcome};
use crate::plan::{DerivedKind, Plan};
use crate::report_model::{Item, NameMap, Offender};

use crate::base::typed_json::key_json;

/// One item: its key, its line in the items dataset, its label (when the spec
/// has labels), its fields and its matcher results.
pub fn item_json(plan: &Plan, row: &ItemRow) -> Item {
    let mut fields = NameMap::new();
    let mut matchers = NameMap::new();
    for (column, value) in plan.item_columns.iter().zip(row.values.iter()) {
        let target = match column.kind {
            DerivedKind::Matcher => &mut matchers,
            DerivedKind::Field | DerivedKind::Label => &mut fields,
        };
        target.insert(column.name.clone(), format_typed(value, &column.ty));
    }
    Item {
        key: key_json(row.key.as_ref()),
        line: u64::from(row.line),
        run: row.run.as_deref().map(str::to_string),
        label: (!plan.labels.is_empty()).then(|| row.label.as_deref().map(str::to_string)),
        fields,
        matchers,
    }
}

/// The rows as JSON lines, in natural key order (then line).
pub fn items_jsonl(plan: &Plan, outcome: &Outcome) -> Vec<u8> {
    let mut order: Vec<&ItemRow> = outcome.rows.iter().collect();
    order.sort_by(|a, b| ItemRow::report_order(a, b));
    let mut out = Vec::new();
    for row in order {
        serde_json::to_writer(&mut out, &item_json(plan, row)).expect("an item always serialises");
        out.push(b'\n');
    }
    out
}

/// An offender: key, line, label and the values `offenders.show` names.
pub fn offender(plan: &Plan, row: &ItemRow) -> Offender {
    let shown: NameMap<Json> = plan
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
    Offender {
        key: key_json(row.key.as_ref()),
        line: u64::from(row.line),
        label: row.label.as_deref().map(str::to_string),
        fields: shown,
        run: row.run.as_deref().map(str::to_string),
    }
}
