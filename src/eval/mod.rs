//! Evaluating a plan: read the datasets, join them into items, evaluate per-item
//! values and aggregates, then metrics and gates; per run, then across runs.
//!
//! `evaluation` drives it; `pass` is one pass over the datasets (with `lookup`
//! tables and `item` chunks); `aggregate` folds items; `gates` decides gates;
//! `across_runs` combines the runs; `outcome` is what it all gives; `error`
//! holds the words of every error and warning they report.

mod across_runs;
mod aggregate;
pub mod error;
mod evaluation;
mod gates;
mod item;
mod keys;
mod lookup;
mod outcome;
mod pass;

pub use across_runs::per_run_name;
pub use aggregate::{percentile, Confusion};
pub use evaluation::evaluate;
pub use gates::{GateOutcome, GateStatus};
pub use outcome::{
    AgreementOutcome, DatasetOutcome, Flip, ItemRow, OffenderRow, Outcome, RunOutcome,
    StabilityOutcome, MAX_FLIPS,
};
