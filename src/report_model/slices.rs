//! The slices of `report.json`: per slice, per value, its item count and the
//! metrics computed by it; and, on a gate with `by:`, how each value decided.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::report_model::keyword::keyword_enum;
use crate::report_model::{present, MetricValue, NameMap};
use crate::report_model::{ChangeInfo, IntervalInfo};

/// `slices`: slice name → value (its text; null is `null`) → [`SliceValue`],
/// values in natural order.
pub type Slices = NameMap<NameMap<SliceValue>>;

/// One value of a slice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct SliceValue {
    /// Items with this value (in all runs, with several).
    pub items: u64,
    /// With several runs: run → items with this value in that run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<NameMap<u64>>,
    /// The metrics with `by` this slice; per-run metrics as `NAME@RUN`, as in `metrics`.
    pub metrics: NameMap<MetricValue>,
    /// Their intervals on this value's items, as report.json's `intervals`.
    #[serde(default, skip_serializing_if = "NameMap::is_empty")]
    pub intervals: NameMap<IntervalInfo>,
    /// With a `--baseline` that kept item values: their paired changes on this
    /// value's items, as the baseline section's `change`.
    #[serde(default, skip_serializing_if = "NameMap::is_empty")]
    pub changes: NameMap<ChangeInfo>,
}

/// A gate's `by`: its slices, how it decides over them, and each value's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct GateBy {
    pub slices: Vec<String>,
    /// The gated metric, for a gate on one metric (`metric:`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    pub mode: SliceMode,
    pub min_items: u64,
    /// Slice by slice (as `slices` lists them), values in natural order.
    pub values: Vec<SliceGate>,
}

keyword_enum! {
    /// Every slice value must pass, or the worst value is gated.
    SliceMode { Every => "every", Worst => "worst" } expecting "`every` or `worst`"
}

keyword_enum! {
    /// How one slice value fared; `skipped` below `min_items`.
    SliceStatus { Pass => "pass", Warn => "warn", Fail => "fail", Skipped => "skipped" }
        expecting "`pass`, `warn`, `fail` or `skipped`"
}

/// One slice value of a gate with `by:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct SliceGate {
    pub slice: String,
    pub value: String,
    pub items: u64,
    pub status: SliceStatus,
    /// The gated value in this slice value (null when skipped).
    pub gated: Json,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub threshold: Option<Json>,
    #[serde(default)]
    pub reasons: Vec<String>,
    /// With several runs: the run this outcome is from (the gate's deciding run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
}
