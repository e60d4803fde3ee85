//! `evalspec check SPEC`: compile the spec and print its plan, reading no data.

use crate::commands::{cli, compile, exit, fail, overrides, physical_plan, print};

pub fn check(args: &cli::CheckArgs) -> i32 {
    match compile(&args.spec, &overrides(&args.overrides)) {
        Ok((plan, _)) => match physical_plan(&plan, &args.physical) {
            Ok(physical) => {
                // Names and expressions come from the spec: control characters
                // are shown, not sent to the terminal (as `run` does).
                let text = format!("{plan}{}", physical.describe(&plan));
                print(&crate::base::diagnostic::escape_controls(&text));
                exit::PASS
            }
            Err(diagnostic) => fail(&[diagnostic]),
        },
        Err(diagnostics) => fail(&diagnostics),
    }
}
