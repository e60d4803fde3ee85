//! `evalspec diff OLD NEW`: what moved between two runs, and whether it regressed.
//! The comparison is computed once ([`compare`]) and rendered as terminal text,
//! Markdown or JSON ([`render`]).

mod render;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value as Json;

use crate::base::diagnostic::Diagnostic;
use crate::base::natural::natural_cmp;
use crate::inputs::prior_report::{PriorItem, PriorReport};
use crate::report_model::{Better, GateStatus, NameMap, Report};

pub use render::{json, markdown, text};

/// Changes smaller than this fraction of the values' size are rounding, not moves.
const SLACK: f64 = 1e-9;

/// One side of a diff: a prior report and, when beside it, its items.
pub struct Side {
    pub prior: PriorReport,
    pub items: Option<Vec<PriorItem>>,
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
    pub metrics: Vec<MetricChange>,
    pub gates: Vec<GateChange>,
    pub labels: Vec<LabelCount>,
    /// `None` when a run has no items.jsonl.
    pub items: Option<ItemChanges>,
}

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

#[derive(Debug, Default)]
pub struct ItemChanges {
    /// `(old label, new label)` → keys, in natural key order; transitions in
    /// order of label pairs.
    pub transitions: Vec<((String, String), Vec<String>)>,
    pub added: Vec<String>,
    pub removed: Vec<String>,
}

impl Comparison {
    /// A gate went from pass to fail, or a metric moved in its bad direction by
    /// more than its tolerance.
    pub fn regressed(&self) -> bool {
        self.gates.iter().any(GateChange::regressed)
            || self
                .metrics
                .iter()
                .any(|m| m.direction == Direction::Regressed)
    }

    pub fn unchanged(&self) -> bool {
        !self.spec.changed()
            && self
                .metrics
                .iter()
                .all(|m| m.direction == Direction::Unchanged)
            && !self.gates.iter().any(GateChange::changed)
            && self.labels.iter().all(|l| l.old == l.new)
            && self.items.as_ref().is_none_or(|i| {
                i.transitions.is_empty() && i.added.is_empty() && i.removed.is_empty()
            })
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
    for name in old.names() {
        if !all.iter().any(|n| n == name) {
            all.push(name.to_string());
        }
    }
    all
}

pub fn compare(old: &Side, new: &Side) -> Comparison {
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
    let metrics = union(&a.metrics, &b.metrics)
        .into_iter()
        .map(|name| metric_change(a, b, name))
        .collect();
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
        metrics,
        gates,
        labels,
        items,
    }
}

fn metric_change(a: &Report, b: &Report, name: String) -> MetricChange {
    let old = a.metrics.get(&name).map(|v| v.as_json().clone());
    let new = b.metrics.get(&name).map(|v| v.as_json().clone());
    // The new run's declaration decides direction and tolerance.
    let info = b
        .metric_info
        .get(&name)
        .or_else(|| a.metric_info.get(&name));
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
    }
}

fn gate_changes(a: &Report, b: &Report) -> Vec<GateChange> {
    let find = |report: &Report, name: &str| {
        report
            .gates
            .iter()
            .find(|g| g.name == name)
            .map(|g| g.status)
    };
    let mut names: Vec<&str> = b.gates.iter().map(|g| g.name.as_str()).collect();
    for gate in &a.gates {
        if !names.contains(&gate.name.as_str()) {
            names.push(&gate.name);
        }
    }
    names
        .into_iter()
        .map(|name| GateChange {
            old: find(a, name),
            new: find(b, name),
            name: name.to_string(),
        })
        .collect()
}

/// Items are matched by key; items sharing a key are matched in line order.
fn item_changes(old: &[PriorItem], new: &[PriorItem]) -> ItemChanges {
    fn index(items: &[PriorItem]) -> BTreeMap<(String, usize), &PriorItem> {
        let mut map: BTreeMap<(String, usize), &PriorItem> = BTreeMap::new();
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        let mut sorted: Vec<&PriorItem> = items.iter().collect();
        sorted.sort_by_key(|item| item.line);
        for item in sorted {
            let n = seen.entry(item.key.as_str()).or_default();
            map.insert((item.key.clone(), *n), item);
            *n += 1;
        }
        map
    }
    let (a, b) = (index(old), index(new));
    let shown = |(key, n): &(String, usize)| {
        if *n == 0 {
            key.clone()
        } else {
            format!("{key}#{}", n + 1)
        }
    };
    let mut changes = ItemChanges::default();
    let mut transitions: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for (id, item) in &a {
        match b.get(id) {
            None => changes.removed.push(shown(id)),
            Some(other) if other.label != item.label => {
                let label = |l: &Option<String>| l.clone().unwrap_or_else(|| "(none)".into());
                transitions
                    .entry((label(&item.label), label(&other.label)))
                    .or_default()
                    .push(shown(id));
            }
            Some(_) => {}
        }
    }
    changes.added = b
        .keys()
        .filter(|id| !a.contains_key(*id))
        .map(shown)
        .collect();
    let by_key = |list: &mut Vec<String>| list.sort_by(|x, y| natural_cmp(x, y));
    by_key(&mut changes.added);
    by_key(&mut changes.removed);
    changes.transitions = transitions
        .into_iter()
        .map(|(pair, mut keys)| {
            by_key(&mut keys);
            (pair, keys)
        })
        .collect();
    changes
}
