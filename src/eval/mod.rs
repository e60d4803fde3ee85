//! Evaluating a plan: read the datasets, join them into items, score each
//! item, fold the scores into each run's partial state, then decide metrics
//! and gates; per run, then across runs.
//!
//! `physical` decides how a plan runs here (which join, partitions, threads,
//! memory); `evaluation` drives the runs; `join` holds the joins, each a
//! producer of a run's state; `score` scores one item; `state` is a run's
//! mergeable partial state (with its errors, `state::errors`); `decide`
//! finishes the states into metrics and gates; `outcome` is what it all
//! gives; `error` holds the words of every error and warning they report.

mod decide;
pub mod error;
mod evaluation;
mod join;
mod outcome;
mod physical;
mod score;
mod state;

pub use decide::across_runs::per_run_name;
pub use decide::gates::{baseline_missing, GateOutcome, GateStatus, SliceGateOutcome};
pub use decide::run_stats::{detectable_by_formula, RunStats};
pub use evaluation::{evaluate, evaluate_partial, finish, Partial};
pub use outcome::{
    AgreementOutcome, DatasetOutcome, Flip, ItemRow, OffenderRow, Outcome, RunOutcome,
    StabilityOutcome, MAX_FLIPS,
};
pub use physical::{Bucket, JoinChoice, JoinStrategy, PhysicalPlan, Resources};
pub use score::Roles;
pub use state::item_lines::{ItemLine, ItemLines};
pub use state::item_values::ValueTable;
pub use state::slices::SliceValueOutcome;
