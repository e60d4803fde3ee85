//! Deciding a run once its items are folded: metrics from the finished
//! aggregates, intervals and paired tests against the baseline (`run_stats`),
//! gates (`gates`, per slice value `slice_gates`, with `significance`), then
//! what only all runs together decide (`across_runs`).

pub(super) mod across_runs;
pub(super) mod gates;
pub(super) mod run_stats;
pub(super) mod significance;
pub(super) mod slice_gates;
