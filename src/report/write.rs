//! Writing a run's reports into the output folder, each atomically.

use std::path::PathBuf;

use serde_json::Value as Json;

use crate::base::diagnostic::Diagnostic;
use crate::eval::Outcome;
use crate::inputs::{ReportPlan, ReportPlanKind, Templates};
use crate::lock::LockStamp;
use crate::plan::Plan;
use crate::report::{
    items_json, report_json, write_item_values_jsonl, write_items_jsonl, writes_item_values,
    Content, OutputFolder,
};
use crate::report_model::item_values::ITEM_VALUES_FILE;
use crate::report_model::Report;

/// Renders every report of the plan, then writes them as one set; returns the
/// files written. Nothing is replaced when any report fails to render or stage.
/// Large files are rendered on `threads` threads.
pub fn write_reports(
    plan: &Plan,
    outcome: &Outcome,
    lock: Option<&LockStamp>,
    templates: &Templates,
    out: &OutputFolder,
    threads: usize,
) -> Result<Vec<PathBuf>, Diagnostic> {
    let report = report_json(plan, outcome, lock);
    let mut context: Option<minijinja::Value> = None;
    let mut rendered: Vec<(PathBuf, Content<'_>)> = Vec::new();
    let is_items = |output: &ReportPlan| matches!(output.kind, ReportPlanKind::Items);
    let last_items = plan.reports.iter().rposition(is_items);
    for (i, output) in plan.reports.iter().enumerate() {
        let content = match &output.kind {
            ReportPlanKind::Json => {
                let mut bytes =
                    serde_json::to_vec_pretty(&report).expect("a report always serialises");
                bytes.push(b'\n');
                Content::Bytes(bytes)
            }
            ReportPlanKind::Items => {
                let last = Some(i) == last_items;
                Content::Written(Box::new(move |out| write_items_jsonl(outcome, last, out)))
            }
            ReportPlanKind::Template(name) => {
                let context =
                    context.get_or_insert_with(|| template_context(plan, outcome, &report));
                Content::Bytes(templates.render(name, context.clone())?.into_bytes())
            }
        };
        rendered.push((out.path().join(&output.file), content));
    }
    // Beside report.json, in the same set: what paired tests against this run need.
    if writes_item_values(plan) {
        let run_id = report.run_id.as_deref();
        let write = Box::new(move |out: &mut dyn std::io::Write| {
            write_item_values_jsonl(plan, outcome, run_id, threads, out)
        });
        rendered.push((out.path().join(ITEM_VALUES_FILE), Content::Written(write)));
    }
    out.write_set(&rendered)?;
    Ok(rendered.into_iter().map(|(path, _)| path).collect())
}

/// What templates see: report.json, plus `items` (file order) when a template
/// reads them. Otherwise `items` is left undefined, so that a template reading it where
/// the compiler could not see (inside an include) fails loudly instead of
/// rendering an empty list.
fn template_context(plan: &Plan, outcome: &Outcome, report: &Report) -> minijinja::Value {
    let mut context = serde_json::to_value(report).expect("a report always serialises");
    if plan.templates_read_items {
        context["items"] = Json::Array(items_json(outcome));
    }
    minijinja::Value::from(minijinja::value::Serde(&context))
}
