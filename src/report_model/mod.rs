//! The report model: `report.json` and the lines of `items.jsonl` as serde
//! types, the one description of both files. The report writer builds them,
//! `diff` and `--baseline` read them back, and templates see them as their
//! context.
//!
//! Serialised, a [`Report`] is today's `report.json` byte for byte: fields are
//! in the order the keys are written (serde_json keeps it), keys that do not
//! apply are left out, and keys without a value are `null`. Values whose JSON
//! form depends on a static type (an integer-typed metric prints `3`, a
//! float-typed one `3.0`) are kept as the JSON that
//! [`crate::base::typed_json::format_typed`] gives.
//!
//! Read back, a key that an older evalspec did not write takes its default, and
//! a file that is not a report, or a value of the wrong shape, is a located
//! error in plain words ([`Report::from_json`]).

mod confusion;
mod item;
pub mod item_values;
mod keyword;
mod metric_value;
mod name_map;
mod read;
pub use read::read_json;
mod report;
mod runs;
mod slices;

#[cfg(test)]
mod tests;

pub use confusion::{ClassScores, ConfusionCell, ConfusionMatrix};
pub use item::{push_item_body, push_item_head, push_item_line, push_item_run, Item};
pub use metric_value::MetricValue;
pub use name_map::NameMap;
pub use report::{
    BaselineSpec, Better, ChangeInfo, DatasetInfo, FailedTestInfo, Gate, GateRuns, GateStatus,
    IntervalInfo, LockInfo, MetricInfo, MetricSinceBaseline, Offender, Offenders, ParamOverride,
    Report, RunFileInfo, Severity, SinceBaseline, SpecInfo,
};
pub use runs::{Agreement, Flip, RunGate, RunReport, Spread, Stability, Tradeoff, TradeoffPoint};
pub use slices::{GateBy, SliceGate, SliceMode, SliceStatus, SliceValue, Slices};

use serde::{Deserialize, Deserializer};

/// For a key that is sometimes absent and, when present, may be `null`: present
/// (even as `null`) reads as `Some`, so that it is written back.
fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}
