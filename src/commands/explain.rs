//! `evalspec explain SPEC`: what each metric and gate of a spec means, in words.

use crate::commands::{cli, compile, exit, fail, overrides, physical_plan, print};
use crate::plan;

pub fn explain(args: &cli::CheckArgs) -> i32 {
    match compile(&args.spec, &overrides(&args.overrides)) {
        Ok((plan, _)) => {
            let physical = match physical_plan(&plan, &args.physical) {
                Ok(physical) => physical,
                Err(diagnostic) => return fail(&[diagnostic]),
            };
            let text = format!("{}{}", explain_text(&plan), physical.describe(&plan));
            // Control characters from the spec are shown, not sent (as `run` does).
            print(&crate::base::diagnostic::escape_controls(&text));
            exit::PASS
        }
        Err(diagnostics) => fail(&diagnostics),
    }
}

/// Every metric and gate of `plan` in words (without how it runs).
pub fn explain_text(plan: &plan::Plan) -> String {
    // Gates on metrics kept as formulas get their power from the evaluator.
    let power = |plan: &plan::Plan, shape: &plan::ShapePlan, alpha: f64| {
        plan::detectable(plan, shape, alpha)
            .or_else(|| crate::eval::detectable_by_formula(plan, shape, alpha))
    };
    plan::explain_with(plan, &power)
}
