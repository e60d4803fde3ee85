//! [`Report`]: `report.json`, key by key in the order it is written. Keys a
//! report from an older evalspec lacks read as their defaults; optional keys
//! are absent when they do not apply, and keys that are always written but may
//! have no value are `null`.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::report_model::keyword::keyword_enum;
use crate::report_model::runs::{Agreement, RunReport, Spread, Stability, Tradeoff};
use crate::report_model::slices::{GateBy, Slices};
use crate::report_model::{present, ConfusionMatrix, MetricValue, NameMap};

/// The whole of `report.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an evalspec report (a JSON object)")]
pub struct Report {
    /// The evalspec version that wrote the report.
    pub evalspec: String,
    pub spec: SpecInfo,
    /// Name → value, as declared (integer params without a fraction).
    pub params: NameMap<Json>,
    /// The params whose value differs from the spec's default (set with
    /// `--param`), in declaration order; absent when there are none.
    #[serde(default, skip_serializing_if = "NameMap::is_empty")]
    pub overridden_params: NameMap<ParamOverride>,
    pub datasets: NameMap<DatasetInfo>,
    /// Items scored (absent in the first reports, which named it `items`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scored: Option<u64>,
    /// Name → value in declaration order; per-run metrics as `NAME@RUN`.
    pub metrics: NameMap<MetricValue>,
    #[serde(default)]
    pub metric_info: NameMap<MetricInfo>,
    /// Per metric computed from items (`NAME@RUN` per run): its interval.
    #[serde(default, skip_serializing_if = "NameMap::is_empty")]
    pub intervals: NameMap<IntervalInfo>,
    /// Per slice value: items and the metrics with `by`, when the spec has slices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slices: Option<Slices>,
    pub gates: Vec<Gate>,
    /// Label → item count, when the spec has labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<NameMap<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unlabelled: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offenders: Option<Offenders>,
    /// With several runs: each run, then the spreads, stability and tradeoff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<Vec<RunReport>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<NameMap<Spread>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stability: Option<Vec<Stability>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tradeoff: Option<Tradeoff>,
    /// One confusion table per `kappa`/`agreement` subject (and run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement: Option<Vec<Agreement>>,
    /// One sparse confusion matrix per `confusion` subject (and run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confusion: Option<Vec<ConfusionMatrix>>,
    /// With `--baseline`: each metric against the baseline report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<SinceBaseline>,
    /// Gates bound changes against a baseline but the run had none: which,
    /// and what `when_no_baseline` made of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_missing: Option<String>,
    /// No `fail` gate failed.
    pub pass: bool,
    /// What identifies this run's set: the item-values.jsonl written beside
    /// this report carries the same id, and a baseline or diff refuses one
    /// that does not (absent when the run keeps no item values, and in
    /// reports from before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct SpecInfo {
    pub name: String,
    pub version: String,
    pub path: String,
    pub sha256: String,
    /// The spec's text (merged, for a spec built through `extends`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// `null` for a spec without a lock.
    #[serde(default)]
    pub lock: Option<LockInfo>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct LockInfo {
    pub path: String,
    pub sha256: String,
    pub version: String,
    /// `frozen`, or `drifted` when `drift` is not empty.
    pub status: String,
    /// One line per drifted file.
    pub drift: Vec<String>,
}

/// A param the run overrode: its value in this run and the spec's default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct ParamOverride {
    pub value: Json,
    pub default: Json,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct DatasetInfo {
    pub path: String,
    pub format: String,
    pub sha256: String,
    pub records: u64,
    pub keyless: u64,
    pub duplicates: u64,
    /// `unmatched`, `missing` and `join`: for looked-up datasets only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmatched: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub join: Option<String>,
    /// Run name → the file it was read from, for a dataset with `runs:`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<NameMap<RunFileInfo>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct RunFileInfo {
    pub path: Option<String>,
    pub sha256: String,
    pub records: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct MetricInfo {
    pub expr: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub better: Option<Better>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// With several runs: whether the metric is computed per run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_run: Option<bool>,
    /// `by:` the slices it is also computed per value of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<Vec<String>>,
}

keyword_enum! {
    /// Which way a metric improves.
    Better { Higher => "higher", Lower => "lower" } expecting "`higher` or `lower`"
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct Gate {
    pub name: String,
    pub expr: String,
    pub severity: Severity,
    /// The gated value: the metric, or the left side of a top-level comparison.
    pub value: Json,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub threshold: Option<Json>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub warn_threshold: Option<Json>,
    /// The gated metric's baseline value (shaped gates, with `--baseline`).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub baseline: Option<Json>,
    pub pass: bool,
    pub status: GateStatus,
    pub message: Option<String>,
    /// Why the gate did not pass.
    #[serde(default)]
    pub reasons: Vec<String>,
    /// The paired tests that failed it (`significance`), with their
    /// Holm-adjusted p-values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_by: Vec<FailedTestInfo>,
    /// For a gate decided per run: `every` or `any`, and the deciding run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<GateRuns>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub run: Option<Option<String>>,
    /// A gate with `by:`: how each slice value decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<GateBy>,
}

keyword_enum! {
    /// A failing `warn` gate warns; a failing `fail` gate fails the run.
    Severity { Fail => "fail", Warn => "warn" } expecting "`fail` or `warn`"
}

keyword_enum! {
    /// A gate's outcome.
    GateStatus { Pass => "pass", Warn => "warn", Fail => "fail" } expecting "`pass`, `warn` or `fail`"
}

keyword_enum! {
    /// How a gate decided per run combines the runs.
    GateRuns { Every => "every", Any => "any" } expecting "`every` or `any`"
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct Offenders {
    pub when: String,
    pub limit: u64,
    pub items: Vec<Offender>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct Offender {
    /// A string, a number or null.
    pub key: Json,
    pub line: u64,
    pub label: Option<String>,
    /// The values `offenders.show` names.
    pub fields: NameMap<Json>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
}

/// The "since baseline" section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct SinceBaseline {
    /// The baseline report, as it was named.
    pub path: String,
    pub spec: BaselineSpec,
    /// Why there are no paired tests, when the baseline kept no item values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub metrics: NameMap<MetricSinceBaseline>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct BaselineSpec {
    pub name: String,
    pub version: String,
    pub sha256: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct MetricSinceBaseline {
    pub baseline: MetricValue,
    pub value: MetricValue,
    /// `value - baseline`, when both are numbers.
    pub delta: Option<f64>,
    /// `delta / |baseline|`; null for a zero or missing baseline.
    pub relative: Option<f64>,
    /// The paired test on the items both runs share, for a metric computed
    /// from items when the baseline kept its item values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<ChangeInfo>,
}

/// A metric's confidence interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct IntervalInfo {
    pub low: f64,
    pub high: f64,
    /// `wilson`, `bootstrap` or `normal`.
    pub method: String,
    pub level: f64,
}

/// A paired test that failed a gate: its metric, slice value and run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct FailedTestInfo {
    pub metric: String,
    pub slice: Option<String>,
    pub value: Option<String>,
    pub run: Option<String>,
    pub p_adjusted: f64,
}

/// A metric's change (new − baseline) on the items both runs share.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an object")]
pub struct ChangeInfo {
    pub delta: f64,
    /// The one-sided interval of the test shown (`alternative`), at `level`:
    /// after a decrease the change is at most `high` (`low` null), after an
    /// increase at least `low` (`high` null). Older reports have both ends of a
    /// two-sided interval.
    pub low: Option<f64>,
    pub high: Option<f64>,
    #[serde(default)]
    pub level: Option<f64>,
    /// `decrease` or `increase`: the direction the change moved, which the
    /// one-sided `p_value` tests (older reports: none, and a two-sided p).
    #[serde(default)]
    pub alternative: Option<String>,
    pub p_value: f64,
    /// Holm's adjusted p-value, when the test is one of those that can fail
    /// the build and the change went the bad way: the one compared with the level.
    #[serde(default)]
    pub p_adjusted: Option<f64>,
    /// `mcnemar`, `paired_bootstrap` or `paired_normal`.
    pub test: String,
    /// Items (keys) both runs share.
    pub items: u64,
    /// Items left out: in one run only, or without a key.
    #[serde(default)]
    pub excluded: u64,
}
