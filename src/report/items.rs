//! `items.jsonl`: one line per scored item, in natural key order.

use serde_json::Value as Json;

use crate::base::typed_json::format_typed;
use crate::eval::{ItemLine, ItemRow, Outcome};
use crate::plan::Plan;
use crate::report_model::{NameMap, Offender};

use crate::base::typed_json::key_json;

/// Writes the rows as JSON lines, in natural key order (then line).
pub fn write_items_jsonl(outcome: &Outcome, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let mut order: Vec<&ItemLine> = outcome.rows.iter().collect();
    order.sort_by(|a, b| ItemLine::report_order(a, b));
    let mut line = String::new();
    for row in order {
        line.clear();
        row.push_json(&mut line);
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

/// The rows in file order, as the template context's `items`.
pub fn items_json(outcome: &Outcome) -> Vec<Json> {
    let mut line = String::new();
    (outcome.rows.iter())
        .map(|row| {
            line.clear();
            row.push_json(&mut line);
            serde_json::from_str(&line).expect("an item line is JSON")
        })
        .collect()
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
