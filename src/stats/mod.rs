//! Aggregation and statistics, below the evaluator and shared with `diff`:
//! the accumulators every aggregate folds items into (`aggregate`, with the
//! scores of `classification` and `calibration`), intervals on metrics and
//! paired tests of their change (`inference`), many tests held to one
//! level together (`family`, Holm's step-down), and the bootstrap over items
//! that recomputes any metric from reweighted accumulators (`resample`, each
//! aggregate's groups folded once per kind by `resample_fold`, a percentile's
//! ranks among drawn groups by `percentile_ranks`). The arithmetic below them
//! (Wilson, binomial tests, the normal distribution, the seeded generator) is
//! `base::stats`.

pub mod aggregate;
pub mod calibration;
pub mod classification;
pub mod family;
pub mod inference;
mod percentile_ranks;
pub mod resample;
