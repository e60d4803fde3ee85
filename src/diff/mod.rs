//! `evalspec diff OLD NEW`: what moved between two runs, and whether it regressed.
//! The comparison is computed once ([`compare`]) and rendered as terminal text,
//! Markdown or JSON ([`render`]).

mod item_lists;
mod items;
#[cfg(test)]
mod noise_simulation;
mod page;
mod paired;
mod render;

use std::path::Path;

use serde_json::Value as Json;

use crate::base::diagnostic::Diagnostic;
use crate::inputs::prior_items::PriorItems;
use crate::inputs::prior_report::PriorReport;
use crate::report_model::{Better, GateStatus, MetricValue, NameMap, Report, SliceStatus};
use crate::stats::inference::ChangeTest;

pub use items::{item_changes, Flips, ItemChanges, Move, Moves};
pub use render::{json, markdown, text};

/// Changes smaller than this fraction of the values' size are rounding, not moves.
const SLACK: f64 = 1e-9;

/// One side of a diff: a prior report and, when beside it, its items.
pub struct Side {
    pub prior: PriorReport,
    pub items: Option<PriorItems>,
}

impl Side {
    pub fn load(path: &Path) -> Result<Side, Diagnostic> {
        let prior = PriorReport::load(path)?;
        let items = prior.items()?;
        Ok(Side { prior, items })
    }
}

#[derive(Debug)]
pub struct Comparison {
    pub old: String,
    pub new: String,
    pub spec: SpecChange,
    /// Params whose value differs between the runs (or that one run lacks).
    pub params: Vec<ParamChange>,
    pub metrics: Vec<MetricChange>,
    pub gates: Vec<GateChange>,
    pub labels: Vec<LabelCount>,
    /// `None` when a run has no items.jsonl.
    pub items: Option<ItemChanges>,
    /// `--significance`: metric regressions count only when significant at it;
    /// changes are marked significant or within noise at it (0.05 unless set).
    pub significance: Option<f64>,
}

/// The level changes are marked at without `--significance`.
pub const DEFAULT_SIGNIFICANCE: f64 = 0.05;

#[derive(Debug)]
pub struct SpecChange {
    pub old: SpecId,
    pub new: SpecId,
    /// A unified diff of the two spec texts, when both reports carry them and they differ.
    pub unified: Option<String>,
}

#[derive(Debug, PartialEq, Eq)]
pub struct SpecId {
    pub name: String,
    pub version: String,
    pub sha256: String,
}

impl SpecChange {
    pub fn changed(&self) -> bool {
        self.old != self.new
    }

    pub fn version_changed(&self) -> bool {
        self.old.name != self.new.name || self.old.version != self.new.version
    }
}

/// A param set to different values in the two runs: `--param`, or a spec change.
#[derive(Debug)]
pub struct ParamChange {
    pub name: String,
    /// `None`: the run has no such param.
    pub old: Option<Json>,
    pub new: Option<Json>,
}

#[derive(Debug)]
pub struct MetricChange {
    pub name: String,
    pub old: Json,
    pub new: Json,
    pub delta: Option<f64>,
    /// Delta over |old|; `None` for a zero or missing old value.
    pub relative: Option<f64>,
    pub better: Option<Better>,
    pub tolerance: f64,
    pub direction: Direction,
    /// The paired test on the items both runs share, when both kept item values.
    pub paired: Option<ChangeTest>,
}

impl MetricChange {
    /// The one-sided p-value in the direction the metric moved on the shared items.
    pub fn p_one_sided(&self) -> Option<f64> {
        self.paired.as_ref().map(ChangeTest::p_moved)
    }

    /// A drop is the bad direction (`None`: the metric has no `better`).
    fn bad_is_down(&self) -> Option<bool> {
        self.better.map(|b| b == Better::Higher)
    }

    /// Significant at `alpha`, in the direction it moved: by Holm's adjusted
    /// p-value when the change went the bad way (the test is one of those that
    /// can fail the build), else by its own; `None` without a paired test.
    pub fn significant(&self, alpha: f64) -> Option<bool> {
        let test = self.paired.as_ref()?;
        Some(test.p_adjusted().unwrap_or_else(|| test.p_moved()) < alpha)
    }

    /// A regression that counts at `significance`: regressed, and (with a level
    /// and a paired test) significant in its bad direction after Holm's
    /// adjustment over every test that can fail the build. A regression without
    /// a paired test counts as without `--significance`.
    pub fn counts_as_regression(&self, significance: Option<f64>) -> bool {
        if self.direction != Direction::Regressed {
            return false;
        }
        let (Some(alpha), Some(test)) = (significance, &self.paired) else {
            return true;
        };
        let down = self.bad_is_down().unwrap_or(true);
        test.p_adjusted_toward(down)
            .unwrap_or_else(|| test.p_toward(down))
            < alpha
    }

    /// The parts of the name: metric, slice and value, run
    /// (`METRIC@RUN[SLICE=VALUE]`).
    pub fn parts(&self) -> (&str, Option<(&str, &str)>, Option<&str>) {
        let (head, slice) = match self.name.split_once('[') {
            Some((head, inner)) => {
                let inner = inner.strip_suffix(']').unwrap_or(inner);
                (head, inner.split_once('='))
            }
            None => (self.name.as_str(), None),
        };
        let (metric, run) = match head.split_once('@') {
            Some((metric, run)) => (metric, Some(run)),
            None => (head, None),
        };
        (metric, slice, run)
    }
}

/// Holm's step-down over the tests that can fail the build: every metric with a
/// `better` and a paired test, in its bad direction (see `stats::family`). Each
/// such test keeps its adjusted p-value.
fn adjust(metrics: &mut [MetricChange]) {
    let family = (metrics.iter_mut())
        .filter_map(|m| {
            let down = m.bad_is_down()?;
            Some((m.paired.as_mut()?, down))
        })
        .collect();
    crate::stats::family::adjust(family);
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Unchanged,
    /// Moved, but no `better` says which way is good.
    Moved,
    Improved,
    /// Worse, within the metric's tolerance.
    WorseWithinTolerance,
    Regressed,
    /// The metric exists in one run only.
    Added,
    Removed,
}

impl Direction {
    pub fn keyword(self) -> &'static str {
        match self {
            Direction::Unchanged => "unchanged",
            Direction::Moved => "moved",
            Direction::Improved => "improved",
            Direction::WorseWithinTolerance => "worse_within_tolerance",
            Direction::Regressed => "regressed",
            Direction::Added => "added",
            Direction::Removed => "removed",
        }
    }
}

#[derive(Debug)]
pub struct GateChange {
    pub name: String,
    pub old: Option<GateStatus>,
    pub new: Option<GateStatus>,
}

impl GateChange {
    pub fn changed(&self) -> bool {
        self.old != self.new
    }

    /// From pass to fail.
    pub fn regressed(&self) -> bool {
        self.old == Some(GateStatus::Pass) && self.new == Some(GateStatus::Fail)
    }
}

#[derive(Debug)]
pub struct LabelCount {
    pub label: String,
    pub old: Option<u64>,
    pub new: Option<u64>,
}

impl Comparison {
    /// A gate went from pass to fail, or a metric moved in its bad direction by
    /// more than its tolerance.
    pub fn regressed(&self) -> bool {
        self.gates.iter().any(GateChange::regressed)
            || self
                .metrics
                .iter()
                .any(|m| m.counts_as_regression(self.significance))
    }

    /// The metrics whose regression counts (in order), then the gates that went
    /// from pass to fail: what made `regressed` true.
    pub fn failed_by(&self) -> (Vec<&MetricChange>, Vec<&GateChange>) {
        let metrics = (self.metrics.iter())
            .filter(|m| m.counts_as_regression(self.significance))
            .collect();
        let gates = self.gates.iter().filter(|g| g.regressed()).collect();
        (metrics, gates)
    }

    pub fn unchanged(&self) -> bool {
        !self.spec.changed()
            && self.params.is_empty()
            && self
                .metrics
                .iter()
                .all(|m| m.direction == Direction::Unchanged)
            && !self.gates.iter().any(GateChange::changed)
            && self.labels.iter().all(|l| l.old == l.new)
            && self.items.as_ref().is_none_or(ItemChanges::is_empty)
    }
}

fn spec_id(report: &Report) -> SpecId {
    SpecId {
        name: report.spec.name.clone(),
        version: report.spec.version.clone(),
        sha256: report.spec.sha256.clone(),
    }
}

/// Names of both maps: the new run's order, then names only the old run has.
fn union<T>(old: &NameMap<T>, new: &NameMap<T>) -> Vec<String> {
    let mut all: Vec<String> = new.names().map(str::to_string).collect();
    all.extend(
        old.names()
            .filter(|name| !new.contains(name))
            .map(str::to_string),
    );
    all
}

pub fn compare(old: &Side, new: &Side, significance: Option<f64>) -> Comparison {
    let (a, b) = (&old.prior.report, &new.prior.report);
    let spec = SpecChange {
        old: spec_id(a),
        new: spec_id(b),
        unified: match (&a.spec.text, &b.spec.text) {
            (Some(x), Some(y)) if x != y => Some(
                similar::TextDiff::from_lines(x, y)
                    .unified_diff()
                    .context_radius(3)
                    .header(&old.prior.display, &new.prior.display)
                    .to_string(),
            ),
            _ => None,
        },
    };
    let params = union(&a.params, &b.params)
        .into_iter()
        .map(|name| ParamChange {
            old: a.params.get(&name).cloned(),
            new: b.params.get(&name).cloned(),
            name,
        })
        .filter(|p| p.old != p.new)
        .collect();
    // Per-slice values compare as metrics named `METRIC[SLICE=VALUE]`.
    let (a_metrics, b_metrics) = (with_slices(a), with_slices(b));
    let mut tests = paired::Paired::new(old.prior.values.as_ref(), new.prior.values.as_ref());
    let mut metrics: Vec<MetricChange> = union(&a_metrics, &b_metrics)
        .into_iter()
        .map(|name| metric_change(a, b, (&a_metrics, &b_metrics), name))
        .map(|mut m| {
            m.paired = tests.test(&m.name);
            m
        })
        .collect();
    adjust(&mut metrics);
    let gates = gate_changes(a, b);
    let no_labels = NameMap::new();
    let (a_labels, b_labels) = (
        a.labels.as_ref().unwrap_or(&no_labels),
        b.labels.as_ref().unwrap_or(&no_labels),
    );
    let labels = union(a_labels, b_labels)
        .into_iter()
        .map(|label| LabelCount {
            old: a_labels.get(&label).copied(),
            new: b_labels.get(&label).copied(),
            label,
        })
        .collect();
    let items = match (&old.items, &new.items) {
        (Some(x), Some(y)) => Some(item_changes(x, y)),
        _ => None,
    };
    Comparison {
        old: old.prior.display.clone(),
        new: new.prior.display.clone(),
        spec,
        params,
        metrics,
        gates,
        labels,
        items,
        significance,
    }
}

/// A report's metrics, then each slice value's as `METRIC[SLICE=VALUE]`.
fn with_slices(report: &Report) -> NameMap<MetricValue> {
    let mut all = report.metrics.clone();
    for (slice, values) in report.slices.iter().flat_map(NameMap::iter) {
        for (value, entry) in values.iter() {
            for (metric, v) in entry.metrics.iter() {
                all.insert(slice_name(metric, slice, value), v.clone());
            }
        }
    }
    all
}

/// `mean_score[category=refunds]`: a metric, or a gate, in one slice value.
fn slice_name(name: &str, slice: &str, value: &str) -> String {
    format!("{name}[{slice}={value}]")
}

fn metric_change(
    a: &Report,
    b: &Report,
    (old_map, new_map): (&NameMap<MetricValue>, &NameMap<MetricValue>),
    name: String,
) -> MetricChange {
    let old = old_map.get(&name).map(|v| v.as_json().clone());
    let new = new_map.get(&name).map(|v| v.as_json().clone());
    // The new run's declaration decides direction and tolerance (a slice value's
    // metric is declared as the metric).
    let declared = name.split(['[', '@']).next().unwrap_or(&name);
    let info = b
        .metric_info
        .get(declared)
        .or_else(|| a.metric_info.get(declared));
    let better = info.and_then(|i| i.better);
    let tolerance = info.and_then(|i| i.tolerance).unwrap_or(0.0);
    let (x, y) = (
        old.as_ref().and_then(Json::as_f64),
        new.as_ref().and_then(Json::as_f64),
    );
    let delta = x.zip(y).map(|(x, y)| y - x);
    let relative = x
        .zip(delta)
        .filter(|(x, _)| *x != 0.0)
        .map(|(x, d)| d / x.abs());
    let direction = match (&old, &new) {
        (None, Some(_)) => Direction::Added,
        (Some(_), None) => Direction::Removed,
        _ => match (x, y) {
            (Some(x), Some(y)) => {
                let slack = SLACK * x.abs().max(y.abs()).max(1.0);
                let worse = match better {
                    Some(Better::Higher) => Some(x - y),
                    Some(Better::Lower) => Some(y - x),
                    None => None,
                };
                match worse {
                    _ if x == y => Direction::Unchanged,
                    None => Direction::Moved,
                    Some(w) if w < 0.0 => Direction::Improved,
                    Some(w) if w <= tolerance + slack => Direction::WorseWithinTolerance,
                    Some(_) => Direction::Regressed,
                }
            }
            _ if old == new => Direction::Unchanged,
            _ => Direction::Moved,
        },
    };
    MetricChange {
        name,
        old: old.unwrap_or(Json::Null),
        new: new.unwrap_or(Json::Null),
        delta,
        relative,
        better,
        tolerance,
        direction,
        paired: None,
    }
}

/// Each gate's status, then each slice value of a gate with `by:` as
/// `GATE[SLICE=VALUE]` (a skipped value has no status).
fn gate_statuses(report: &Report) -> NameMap<Option<GateStatus>> {
    let mut all = NameMap::new();
    for gate in &report.gates {
        all.insert(gate.name.clone(), Some(gate.status));
        for v in gate.by.iter().flat_map(|by| &by.values) {
            let status = match v.status {
                SliceStatus::Pass => Some(GateStatus::Pass),
                SliceStatus::Warn => Some(GateStatus::Warn),
                SliceStatus::Fail => Some(GateStatus::Fail),
                SliceStatus::Skipped => None,
            };
            all.insert(slice_name(&gate.name, &v.slice, &v.value), status);
        }
    }
    all
}

fn gate_changes(a: &Report, b: &Report) -> Vec<GateChange> {
    let (old, new) = (gate_statuses(a), gate_statuses(b));
    union(&old, &new)
        .into_iter()
        .map(|name| GateChange {
            old: old.get(&name).copied().flatten(),
            new: new.get(&name).copied().flatten(),
            name,
        })
        .collect()
}
