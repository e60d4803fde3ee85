//! `evalspec check SPEC`: compile the spec and print its plan, reading no data.

use crate::commands::{cli, compile, exit, fail, overrides, physical_plan, print};

pub fn check(args: &cli::CheckArgs) -> i32 {
    match compile(&args.spec, &overrides(&args.overrides)) {
        Ok((plan, _)) => match physical_plan(&plan, &args.physical) {
            Ok(physical) => {
                print(&format!("{plan}{}", physical.describe(&plan)));
                exit::PASS
            }
            Err(diagnostic) => fail(&[diagnostic]),
        },
        Err(diagnostics) => fail(&diagnostics),
    }
}
