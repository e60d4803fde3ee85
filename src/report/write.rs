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
                let mut text = templates.render(name, context.clone())?;
                if name == "evalspec/summary.md.j2" {
                    text = cap_summary(text);
                }
                Content::Bytes(text.into_bytes())
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

/// GitHub shows a step summary of at most 1 MiB, and fails the step past it:
/// summary.md is cut below that, at a line, its open `<details>` closed.
pub const SUMMARY_LIMIT: usize = 1_000_000;

fn cap_summary(text: String) -> String {
    if text.len() <= SUMMARY_LIMIT {
        return text;
    }
    let note =
        "\n_Cut to fit a step summary (1 MiB): report.md and report.json have everything._\n";
    let room = SUMMARY_LIMIT - note.len() - 64;
    let mut end = crate::base::source::floor_char_boundary(&text, room);
    end = text[..end].rfind('\n').map_or(end, |i| i + 1);
    let kept = &text[..end];
    let open = kept.matches("<details>").count();
    let closed = kept.matches("</details>").count();
    let mut out = kept.to_string();
    for _ in closed..open {
        out.push_str("\n</details>\n");
    }
    out.push_str(note);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_summary_is_cut_at_a_line_with_its_details_closed() {
        let long = format!("<details>\n{}", "| a | b |\n".repeat(200_000));
        let cut = cap_summary(long);
        assert!(cut.len() <= SUMMARY_LIMIT, "{}", cut.len());
        assert!(cut.ends_with("have everything._\n"));
        assert!(cut.contains("| a | b |\n\n</details>\n"));
        assert_eq!(cap_summary("short\n".into()), "short\n");
    }
}
