//! `evalspec explain SPEC`: what each metric and gate of a spec means, in words.

use crate::commands::{cli, compile, exit, fail, overrides, print};
use crate::plan;

pub fn explain(args: &cli::CheckArgs) -> i32 {
    match compile(&args.spec, &overrides(&args.overrides)) {
        Ok((plan, _)) => {
            print(&plan::explain(&plan));
            exit::PASS
        }
        Err(diagnostics) => fail(&diagnostics),
    }
}
