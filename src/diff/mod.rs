//! `evalspec diff OLD NEW`: what moved between two runs, and whether it regressed.
//! The comparison is computed once ([`compare`]) and rendered as terminal text,
//! Markdown or JSON ([`render`]).

mod render;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value as Json;

use crate::base::diagnostic::Diagnostic;
use crate::base::natural::natural_cmp;
use crate::inputs::prior_report::{PriorItem, PriorRun};

pub use render::{json, markdown, text};

/// Changes smaller than this fraction of the values' size are rounding, not moves.
const SLACK: f64 = 1e-9;

/// A run as `diff` sees it: its report and, when beside it, its items.
pub struct Run {
    pub prior: PriorRun,
    pub items: Option<Vec<PriorItem>>,
}

impl Run {
    pub fn load(path: &Path) -> Result<Run, Diagnostic> {
        let prior = PriorRun::load(path)?;
        let items = prior.items()?;
        Ok(Run { prior, items })
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
    pub better: Option<String>,
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
    pub old: Option<String>,
    pub new: Option<String>,
}

impl GateChange {
    pub fn changed(&self) -> bool {
        self.old != self.new
    }

    /// From pass to fail.
    pub fn regressed(&self) -> bool {
        self.old.as_deref() == Some("pass") && self.new.as_deref() == Some("fail")
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

fn spec_id(report: &Json) -> SpecId {
    let text = |key: &str| report["spec"][key].as_str().unwrap_or("").to_string();
    SpecId {
        name: text("name"),
        version: text("version"),
        sha256: text("sha256"),
    }
}

fn names(map: &Json) -> Vec<String> {
    map.as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// Names of both maps: the new run's order, then names only the old run has.
fn union(old: &Json, new: &Json) -> Vec<String> {
    let mut all = names(new);
    for name in names(old) {
        if !all.contains(&name) {
            all.push(name);
        }
    }
    all
}

pub fn compare(old: &Run, new: &Run) -> Comparison {
    let (a, b) = (&old.prior.report, &new.prior.report);
    let spec = SpecChange {
        old: spec_id(a),
        new: spec_id(b),
        unified: match (a["spec"]["text"].as_str(), b["spec"]["text"].as_str()) {
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
    let metrics = union(&a["metrics"], &b["metrics"])
        .into_iter()
        .map(|name| metric_change(a, b, name))
        .collect();
    let gates = gate_changes(a, b);
    let labels = union(&a["labels"], &b["labels"])
        .into_iter()
        .map(|label| LabelCount {
            old: a["labels"][&label].as_u64(),
            new: b["labels"][&label].as_u64(),
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

fn metric_change(a: &Json, b: &Json, name: String) -> MetricChange {
    let old = a["metrics"].get(&name).cloned();
    let new = b["metrics"].get(&name).cloned();
    // The new run's declaration decides direction and tolerance.
    let info = if b["metric_info"].get(&name).is_some() {
        &b["metric_info"][&name]
    } else {
        &a["metric_info"][&name]
    };
    let better = info["better"].as_str().map(str::to_string);
    let tolerance = info["tolerance"].as_f64().unwrap_or(0.0);
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
                let worse = match better.as_deref() {
                    Some("higher") => Some(x - y),
                    Some("lower") => Some(y - x),
                    _ => None,
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

fn gate_changes(a: &Json, b: &Json) -> Vec<GateChange> {
    let statuses = |report: &Json| -> Vec<(String, String)> {
        report["gates"]
            .as_array()
            .map(|gates| {
                gates
                    .iter()
                    .map(|g| {
                        (
                            g["name"].as_str().unwrap_or("").to_string(),
                            g["status"].as_str().unwrap_or("").to_string(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let (old, new) = (statuses(a), statuses(b));
    let find = |list: &[(String, String)], name: &str| {
        list.iter().find(|(n, _)| n == name).map(|(_, s)| s.clone())
    };
    let mut names: Vec<String> = new.iter().map(|(n, _)| n.clone()).collect();
    for (name, _) in &old {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    names
        .into_iter()
        .map(|name| GateChange {
            old: find(&old, &name),
            new: find(&new, &name),
            name,
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
