//! `evalspec verify SPEC`: check a frozen spec against its lock.

use crate::base::diagnostic::Diagnostic;
use crate::commands::error::CommandError;
use crate::commands::{cli, compile, exit, fail_then, overrides, print};

/// What a failed `verify` says.
const NOT_VERIFIED: &str = "the spec was not verified against its lock";
use crate::lock;
use crate::lock::drift_diagnostics;

pub fn verify(args: &cli::CheckArgs) -> i32 {
    let plan = match compile(&args.spec, &overrides(&args.overrides)) {
        Ok((plan, _)) => plan,
        Err(diagnostics) => return fail_then(NOT_VERIFIED, &diagnostics),
    };
    match lock::verify(&plan) {
        Ok(None) => fail_then(
            NOT_VERIFIED,
            &[Diagnostic::of(&CommandError::NotFrozen {
                spec: args.spec.display().to_string(),
                lock: lock::lock_path(&args.spec).display().to_string(),
            })],
        ),
        Ok(Some((stamp, drift))) if drift.is_empty() => {
            print(&format!(
                "{} {} matches its lock {} (sha256 {})\n",
                plan.spec_name,
                plan.spec_version,
                stamp.path,
                &stamp.sha256[..12.min(stamp.sha256.len())]
            ));
            exit::PASS
        }
        Ok(Some((stamp, drift))) => fail_then(
            NOT_VERIFIED,
            &drift_diagnostics(&plan, &stamp, &drift, false),
        ),
        Err(d) => fail_then(NOT_VERIFIED, &[d]),
    }
}
