//! The library of callables an expression can name, in one table
//! (`callables.rs`): scalar built-ins, aggregates, run statistics; and the
//! matchers, ranking and page-span measures they are built from.

pub mod aggregates;
pub mod builtins;
pub mod callables;
pub mod error;
pub mod matchers;
pub mod page_spans;
pub mod ranking;
pub mod run_stats;
