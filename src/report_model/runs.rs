//! The parts of [`crate::report_model::Report`] that only a spec with several
//! runs has, and the confusion tables of `kappa`/`agreement`.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::report_model::{present, GateStatus, MetricValue, NameMap};

/// One run: its files, items, per-run metrics and the gates decided per run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct RunReport {
    pub name: String,
    /// Dataset → the file this run read.
    pub files: NameMap<String>,
    pub scored: u64,
    pub metrics: NameMap<MetricValue>,
    pub gates: NameMap<RunGate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<NameMap<u64>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct RunGate {
    pub status: GateStatus,
    pub value: Json,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub threshold: Option<Json>,
}

/// A per-run metric over the runs (null where no run has a value).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct Spread {
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub mean: Option<f64>,
    pub std: Option<f64>,
}

/// `stability(x)`: how many items kept one value in every run, and which flipped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct Stability {
    pub expr: String,
    pub subject: String,
    pub items: u64,
    pub stable: u64,
    pub flipped: u64,
    pub flips: Vec<Flip>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct Flip {
    pub key: String,
    /// Run → the item's value in it (null where the run lacks the item).
    pub values: NameMap<Json>,
}

/// `tradeoff:`: each run's latency and accuracy, by latency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct Tradeoff {
    pub latency: String,
    pub accuracy: Vec<String>,
    pub points: Vec<TradeoffPoint>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct TradeoffPoint {
    pub run: String,
    pub latency: MetricValue,
    pub accuracy: NameMap<MetricValue>,
}

/// A confusion table: rows are the first labels, columns the second.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct Agreement {
    pub subject: String,
    pub first: String,
    pub second: String,
    pub run: Option<String>,
    pub labels: Vec<String>,
    pub table: Vec<Vec<u64>>,
    /// Labels counted under `(other)` rather than shown (beyond 20 labels).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub folded: u64,
    pub items: u64,
    pub observed: Option<f64>,
    pub expected: Option<f64>,
    pub kappa: Option<f64>,
    /// `kappa` or `agreement`.
    pub function: String,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
