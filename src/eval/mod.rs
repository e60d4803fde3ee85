//! Running a plan: read the datasets, join them into items, evaluate per-item values
//! and aggregates, then metrics and gates.

mod aggregate;
mod gates;
mod interp;
mod run;

pub use aggregate::percentile;
pub use gates::{GateOutcome, GateStatus};
pub use interp::{evaluate, evaluate_constant, evaluate_on_record, Frame};
pub use run::{run, DatasetOutcome, ItemRow, OffenderRow, Outcome};
