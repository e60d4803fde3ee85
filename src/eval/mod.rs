//! Evaluating a plan: read the datasets, join them into items, evaluate per-item
//! values and aggregates, then metrics and gates; per run, then across runs.
//!
//! `evaluation` drives it; `pass` is one pass over the datasets (with `lookup`
//! tables and `item` chunks); `aggregate` folds items (with `classification`
//! and `calibration` for their scores); `gates` decides gates;
//! `across_runs` combines the runs; `outcome` is what it all gives; `error`
//! holds the words of every error and warning they report.

mod decide;
pub mod error;
mod evaluation;
mod item;
mod item_index;
mod item_lines;
mod item_values;
mod keys;
mod lookup;
mod outcome;
mod pass;
mod score;
mod slices;
mod spilled;
mod state;
mod streamed;

pub use decide::across_runs::per_run_name;
pub use decide::gates::{GateOutcome, GateStatus, SliceGateOutcome};
pub use decide::run_stats::{detectable_by_formula, RunStats};
pub use evaluation::{evaluate, Resources};
pub use item_lines::{ItemLine, ItemLines};
pub use item_values::ValueTable;
pub use outcome::{
    AgreementOutcome, DatasetOutcome, Flip, ItemRow, OffenderRow, Outcome, RunOutcome,
    StabilityOutcome, MAX_FLIPS,
};
pub use slices::SliceValueOutcome;
