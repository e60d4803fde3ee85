//! `evalspec check SPEC`: compile the spec and print its plan, reading no data.

use crate::commands::{cli, compile, exit, fail, overrides, print};

pub fn check(args: &cli::CheckArgs) -> i32 {
    match compile(&args.spec, &overrides(&args.overrides)) {
        Ok((plan, _)) => {
            print(&plan.to_string());
            exit::PASS
        }
        Err(diagnostics) => fail(&diagnostics),
    }
}
