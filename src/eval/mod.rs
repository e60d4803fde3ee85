//! Running a plan: read the datasets, join them into items, evaluate per-item values
//! and aggregates, then metrics and gates.

mod aggregate;
mod gates;
mod run;
mod runs;

pub use aggregate::{percentile, Confusion};
pub use gates::{GateOutcome, GateStatus};
pub use run::{DatasetOutcome, ItemRow, OffenderRow};
pub use runs::{
    per_run_name, run, AgreementOutcome, Flip, Outcome, RunOutcome, StabilityOutcome, MAX_FLIPS,
};
