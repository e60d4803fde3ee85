//! `evalspec freeze SPEC`: pin the spec, its bases, templates and datasets in a lock.

use crate::commands::{cli, compile, exit, fail_then, print};

/// What a failed `freeze` leaves: the lock as it was.
const NOT_FROZEN: &str = "nothing was frozen";
use crate::inputs::Overrides;
use crate::lock;

pub fn freeze(args: &cli::FreezeArgs) -> i32 {
    let plan = match compile(&args.spec, &Overrides::default()) {
        Ok((plan, _)) => plan,
        Err(diagnostics) => return fail_then(NOT_FROZEN, &diagnostics),
    };
    match lock::freeze(&plan, args.reason.as_deref()) {
        Ok(lock::Frozen::UpToDate(path)) => {
            print(&format!(
                "{} {} is frozen and unchanged: {} is up to date\n",
                plan.spec_name,
                plan.spec_version,
                path.display()
            ));
            exit::PASS
        }
        Ok(lock::Frozen::Written { path, lock }) => {
            print(&format!(
                "froze {} {}: {} file(s), {} dataset(s) pinned in {} (sha256 {}, freeze {} of its history)\n",
                lock.name,
                lock.version,
                lock.pins.files.len(),
                lock.pins.datasets.len(),
                path.display(),
                &lock.sha256[..12],
                lock.history.len()
            ));
            exit::PASS
        }
        Err(d) => fail_then(NOT_FROZEN, &[d]),
    }
}
