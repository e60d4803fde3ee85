//! Phase 1: params and names. Reads the spec and the `--param` values; gives
//! each param its value and checks that the names the spec declares do not
//! collide. Adds [`Names`]: what every later phase resolves names against.

use std::collections::{HashMap, HashSet};

use crate::base::diagnostic::Diagnostic;
use crate::base::suggest::did_you_mean;
use crate::plan::compile::expr::LABEL;
use crate::plan::ParamValue;
use crate::spec::{self, params, Spec};

/// The names of a spec, once params have their values.
pub struct Names<'s> {
    pub spec: &'s Spec,
    pub params: Vec<ParamValue>,
    /// Fields, then matchers, then the label (when there are `labels:`), as
    /// declared: the namespace of per-item values.
    pub derived: Vec<String>,
}

impl<'s> Names<'s> {
    pub fn new(spec: &'s Spec, params: Vec<ParamValue>) -> Self {
        let derived = spec
            .fields
            .iter()
            .map(|f| f.name.text.clone())
            .chain(spec.matchers.iter().map(|m| m.name.text.clone()))
            .chain((!spec.labels.is_empty()).then(|| LABEL.to_string()))
            .collect();
        Names {
            spec,
            params,
            derived,
        }
    }
}

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
            overridden: false,
        })
        .collect();
    for (name, text) in overrides {
        let Some(index) = spec.params.iter().position(|p| &p.name.text == name) else {
            let known: Vec<&str> = spec.params.iter().map(|p| p.name.text.as_str()).collect();
            let d = Diagnostic::error(format!(
                "`--param {name}=…`: the spec has no param `{name}`"
            ));
            errors.push(match did_you_mean(name, known.iter().copied()) {
                Some(s) => d.help(format!("did you mean `{s}`?")),
                None if known.is_empty() => d.help("this spec declares no params"),
                None => d.help(format!("params: {}", known.join(", "))),
            });
            continue;
        };
        let decl = &spec.params[index];
        let parsed = params::parse_cli(decl.ty, text)
            .and_then(|v| spec::check_param_range(&v, decl.min, decl.max).map(|()| v));
        match parsed {
            Ok(value) => {
                values[index].value = value;
                values[index].overridden = true;
            }
            Err(message) => errors.push(
                Diagnostic::error(format!("`--param {name}={text}`: {message}"))
                    .at(decl.name.location())
                    .label(format!(
                        "`{name}` is declared here as {}",
                        decl.ty.keyword()
                    )),
            ),
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
            Some(other) => errors.push(
                Diagnostic::error(format!(
                    "the name `{}` is used by a {other} and a {what}",
                    name.text
                ))
                .at(name.location())
                .help("datasets, fields, matchers and params share one namespace; rename one"),
            ),
            None => {
                seen.insert(&name.text, what);
            }
        }
    }
    if let (Some(first), Some(what)) = (spec.labels.first(), seen.get(LABEL)) {
        errors.push(
            Diagnostic::error(format!(
                "a {what} is named `{LABEL}`, which the `labels:` rules give every item"
            ))
            .at(first.label.location())
            .help(format!(
                "rename the {what}; `{LABEL}` holds each item's label"
            )),
        );
    }
    let params: HashSet<&str> = spec.params.iter().map(|p| p.name.text.as_str()).collect();
    let mut metrics: HashSet<&str> = HashSet::new();
    for metric in &spec.metrics {
        if !metrics.insert(&metric.name.text) {
            errors.push(
                Diagnostic::error(format!("two metrics are named `{}`", metric.name.text))
                    .at(metric.name.location())
                    .help("a cutoff template (`{k}` with `ks`) and another metric give the same name; rename one"),
            );
        }
        if params.contains(metric.name.text.as_str()) {
            errors.push(
                Diagnostic::error(format!(
                    "the name `{}` is used by a param and a metric",
                    metric.name.text
                ))
                .at(metric.name.location())
                .help("gates see metrics and params by name; rename one"),
            );
        }
    }
    if !spec.datasets.iter().any(|d| d.name.text == spec.items.text) {
        let names: Vec<&str> = spec.datasets.iter().map(|d| d.name.text.as_str()).collect();
        let mut d = Diagnostic::error(format!(
            "`items` names `{}`, which is not a dataset",
            spec.items.text
        ))
        .at(spec.items.location());
        if let Some(s) = did_you_mean(&spec.items.text, names.iter().copied()) {
            d = d.help(format!("did you mean `{s}`?"));
        }
        errors.push(d);
    }
}
