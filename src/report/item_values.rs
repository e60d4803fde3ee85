//! `item-values.jsonl` written from a run's value tables: one line per item
//! (run by run, in file order), each metric's contribution in the header's order.
//! The format is described once, in `report_model::item_values`.

use crate::base::typed_json::push_key_json;
use crate::eval::Outcome;
use crate::ir::formula::op_to_json;
use crate::plan::Plan;
use crate::report_model::item_values::{
    header_line, push_row, FormulaColumn, ObservedColumn, ValueKind,
};

/// Whether the run writes the file: the spec keeps item values (the default)
/// and has a metric computed from items.
pub fn writes_item_values(plan: &Plan) -> bool {
    plan.stats.keep_item_values && plan.stats.keeps_values()
}

/// Writes the file's lines to `out`, row by row (a million items with many
/// metrics make hundreds of megabytes, never held in memory whole).
pub fn write_item_values_jsonl(
    plan: &Plan,
    outcome: &Outcome,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let metrics: Vec<(&str, ValueKind)> = plan
        .stats
        .columns
        .iter()
        .map(|c| (plan.metrics[c.metric.index()].name.as_str(), c.kind))
        .collect();
    let aggregates: Vec<ObservedColumn> = plan
        .stats
        .observed
        .iter()
        .map(|a| {
            let aggregate = &plan.aggregates[a.index()];
            ObservedColumn {
                text: aggregate.text.clone(),
                function: aggregate.function.keyword(),
            }
        })
        .collect();
    let formulas: Vec<FormulaColumn> = plan
        .stats
        .formulas
        .iter()
        .map(|f| FormulaColumn {
            name: f.name.clone(),
            formula: op_to_json(&f.op).expect("plan formulas are written whole"),
            empty: f.empty,
            tested: f.tested,
        })
        .collect();
    let runs = plan.has_runs();
    out.write_all(header_line(&metrics, runs, &aggregates, &formulas).as_bytes())?;
    let mut line = Vec::new();
    for table in &outcome.item_values {
        let run = table.run.as_deref().filter(|_| runs);
        let mut text = String::new();
        let mut row = Vec::with_capacity(metrics.len());
        for (i, key) in table.keys.iter().enumerate() {
            text.clear();
            push_key_json(&mut text, key.as_ref());
            row.clear();
            row.extend(table.row(i));
            line.clear();
            push_row(&mut line, &text, run, &row, table.observed_row(i));
            out.write_all(&line)?;
        }
    }
    Ok(())
}
