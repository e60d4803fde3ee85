//! Phase 1: params and names. Reads the spec and the `--param` values; gives
//! each param its value and checks that the names the spec declares do not
//! collide. Adds [`Names`]: what every later phase resolves names against.

use std::collections::{HashMap, HashSet};

use crate::base::diagnostic::Diagnostic;
use crate::plan::compile::error::CompileError as E;
use crate::plan::compile::expr::LABEL;
use crate::plan::ParamValue;
use crate::spec::{self, params, Spec};

/// The names of a spec, once params have their values, with an index of each
/// namespace so that resolving a name costs the same however large the spec.
pub struct Names<'s> {
    pub spec: &'s Spec,
    pub params: Vec<ParamValue>,
    /// Fields, then matchers, then the label (when there are `labels:`), as
    /// declared: the namespace of per-item values.
    pub derived: Vec<String>,
    param_index: HashMap<String, usize>,
    dataset_index: HashMap<String, usize>,
    derived_index: HashMap<String, usize>,
    metric_index: HashMap<String, usize>,
}

/// Each name's first position in `names`.
fn index<'a>(names: impl Iterator<Item = &'a str>) -> HashMap<String, usize> {
    let mut index = HashMap::new();
    for (i, name) in names.enumerate() {
        index.entry(name.to_string()).or_insert(i);
    }
    index
}

impl<'s> Names<'s> {
    pub fn new(spec: &'s Spec, params: Vec<ParamValue>) -> Self {
        let derived: Vec<String> = spec
            .fields
            .iter()
            .map(|f| f.name.text.clone())
            .chain(spec.matchers.iter().map(|m| m.name.text.clone()))
            .chain((!spec.labels.is_empty()).then(|| LABEL.to_string()))
            .collect();
        Names {
            param_index: index(params.iter().map(|p| p.name.as_str())),
            dataset_index: index(spec.datasets.iter().map(|d| d.name.text.as_str())),
            derived_index: index(derived.iter().map(String::as_str)),
            metric_index: index(spec.metrics.iter().map(|m| m.name.text.as_str())),
            spec,
            params,
            derived,
        }
    }

    pub fn param(&self, name: &str) -> Option<&ParamValue> {
        self.param_index.get(name).map(|&i| &self.params[i])
    }

    /// A dataset's declaration position.
    pub fn dataset(&self, name: &str) -> Option<usize> {
        self.dataset_index.get(name).copied()
    }

    /// A field's, matcher's or the label's declaration position.
    pub fn derived(&self, name: &str) -> Option<usize> {
        self.derived_index.get(name).copied()
    }

    /// A metric's declaration position.
    pub fn metric(&self, name: &str) -> Option<usize> {
        self.metric_index.get(name).copied()
    }
}

/// Names the expression language gives a meaning of its own (`params.k`,
/// `baseline.precision`), so nothing the spec declares may take them.
const RESERVED: [&str; 2] = ["params", "baseline"];

/// Each param's value: its default, or what `--param NAME=VALUE` sets.
pub fn params(
    spec: &Spec,
    overrides: &[(String, String)],
    errors: &mut Vec<Diagnostic>,
) -> Vec<ParamValue> {
    let mut values: Vec<ParamValue> = spec
        .params
        .iter()
        .map(|p| ParamValue {
            name: p.name.text.clone(),
            ty: p.ty,
            value: p.default.clone(),
            default: p.default.clone(),
            overridden: false,
            locked: p.locked,
        })
        .collect();
    for (name, text) in overrides {
        let Some(index) = spec.params.iter().position(|p| &p.name.text == name) else {
            errors.push(Diagnostic::of(&E::UnknownParamOverride {
                name: name.clone(),
                known: spec.params.iter().map(|p| p.name.text.clone()).collect(),
            }));
            continue;
        };
        let decl = &spec.params[index];
        if decl.locked {
            let kind = E::LockedParamOverride {
                name: name.clone(),
                text: text.clone(),
            };
            errors.push(Diagnostic::of(&kind).at(decl.name.location()));
            continue;
        }
        let parsed = params::parse_cli(decl.ty, text)
            .and_then(|v| spec::check_param_range(&v, decl.min, decl.max).map(|()| v));
        match parsed {
            Ok(value) => {
                values[index].value = value;
                values[index].overridden = true;
            }
            Err(message) => {
                let kind = E::BadParamOverride {
                    name: name.clone(),
                    text: text.clone(),
                    message,
                    declared_as: decl.ty.keyword(),
                };
                errors.push(Diagnostic::of(&kind).at(decl.name.location()));
            }
        }
    }
    values
}

/// Per-item names (datasets, fields, matchers) and params share one namespace;
/// metrics share another with params; `items` names a dataset.
pub fn check(spec: &Spec, errors: &mut Vec<Diagnostic>) {
    let mut seen: HashMap<&str, &'static str> = HashMap::new();
    let names = spec
        .datasets
        .iter()
        .map(|d| (&d.name, "dataset"))
        .chain(spec.fields.iter().map(|f| (&f.name, "field")))
        .chain(spec.matchers.iter().map(|m| (&m.name, "matcher")))
        .chain(spec.params.iter().map(|p| (&p.name, "param")));
    for (name, what) in names {
        match seen.get(name.text.as_str()) {
            Some(other) => {
                let kind = E::NameClash {
                    name: name.text.clone(),
                    first: other,
                    second: what,
                };
                errors.push(Diagnostic::of(&kind).at(name.location()));
            }
            None => {
                seen.insert(&name.text, what);
            }
        }
    }
    let declared = spec
        .datasets
        .iter()
        .map(|d| (&d.name, "dataset"))
        .chain(spec.fields.iter().map(|f| (&f.name, "field")))
        .chain(spec.matchers.iter().map(|m| (&m.name, "matcher")))
        .chain(spec.params.iter().map(|p| (&p.name, "param")))
        .chain(spec.metrics.iter().map(|m| (&m.name, "metric")));
    for (name, what) in declared {
        if let Some(reserved) = RESERVED.iter().find(|r| **r == name.text) {
            let kind = E::ReservedName {
                name: reserved,
                what,
            };
            errors.push(Diagnostic::of(&kind).at(name.location()));
        }
    }
    if let (Some(first), Some(what)) = (spec.labels.first(), seen.get(LABEL)) {
        let kind = E::LabelNameTaken { what };
        errors.push(Diagnostic::of(&kind).at(first.label.location()));
    }
    let params: HashSet<&str> = spec.params.iter().map(|p| p.name.text.as_str()).collect();
    let mut metrics: HashSet<&str> = HashSet::new();
    for metric in &spec.metrics {
        if !metrics.insert(&metric.name.text) {
            let kind = E::DuplicateMetric {
                name: metric.name.text.clone(),
            };
            errors.push(Diagnostic::of(&kind).at(metric.name.location()));
        }
        if params.contains(metric.name.text.as_str()) {
            let kind = E::ParamMetricClash {
                name: metric.name.text.clone(),
            };
            errors.push(Diagnostic::of(&kind).at(metric.name.location()));
        }
    }
    if !spec.datasets.iter().any(|d| d.name.text == spec.items.text) {
        let kind = E::ItemsNotADataset {
            name: spec.items.text.clone(),
            datasets: spec.datasets.iter().map(|d| d.name.text.clone()).collect(),
        };
        errors.push(Diagnostic::of(&kind).at(spec.items.location()));
    }
}
