//! `items.jsonl`: one line per scored item, in natural key order.

use serde_json::Value as Json;

use crate::base::typed_json::format_typed;
use crate::eval::{ItemRow, Outcome};
use crate::plan::Plan;
use crate::report_model::{NameMap, Offender};

use crate::base::typed_json::key_json;

/// Writes the items' lines, in natural key order (then run, then line),
/// merging what was spilled to disk (`eval::ItemLines`); `last`: the last
/// report written from them (what was spilled is then released as it is read).
pub fn write_items_jsonl(
    outcome: &Outcome,
    last: bool,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    outcome.lines.write_sorted(out, last)
}

/// The items in file order, as the template context's `items`.
pub fn items_json(outcome: &Outcome) -> Vec<Json> {
    let mut text = String::new();
    (outcome.lines.in_file_order().into_iter())
        .map(|(line, run)| {
            text.clear();
            line.push_json(run, &mut text);
            serde_json::from_str(&text).expect("an item line is JSON")
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
