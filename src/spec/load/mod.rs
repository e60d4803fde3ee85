//! From YAML nodes to a [`Spec`]: every structural error of the file is collected
//! (unknown keys, wrong types, bad names) before any expression is looked at.
//! One file per group of sections; this one holds the top level.

mod datasets;
mod gates;
mod per_item;
mod scalars;
mod slices;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::base::diagnostic::{Diagnostic, Location};
use crate::base::source::SourceFile;
use crate::base::value::Value;
use crate::spec::error::SpecError;
use crate::spec::extends;
use crate::spec::mapping::{join_path, locate, Mapping};
use crate::spec::model::*;
use crate::spec::yaml::{Node, NodeKind};

pub(super) const TOP_KEYS: &[&str] = &[
    "extends",
    "name",
    "version",
    "description",
    "items",
    "params",
    "datasets",
    "fields",
    "matchers",
    "slices",
    "metrics",
    "gates",
    "labels",
    "offenders",
    "tradeoff",
    "reports",
    "confidence",
    "keep_item_values",
    "remove",
];
pub(super) const PARAM_KEYS: &[&str] = &["type", "default", "min", "max", "description", "locked"];
pub(super) const DATASET_KEYS: &[&str] = &[
    "format",
    "path",
    "key",
    "duplicates",
    "join",
    "schema",
    "checks",
    "frozen",
    "allow_empty",
    "runs",
    "run_name",
    "delimiter",
    "list_separator",
];
pub(super) const RULE_KEYS: &[&str] = &["type", "optional", "nonempty", "min", "max"];
pub(super) const METRIC_KEYS: &[&str] = &[
    "expr",
    "empty",
    "better",
    "description",
    "ks",
    "tolerance",
    "by",
];
pub(super) const SLICE_KEYS: &[&str] = &["expr", "values", "unexpected"];
pub(super) const GATE_KEYS: &[&str] = &[
    "expr",
    "metric",
    "better",
    "threshold",
    "warn_threshold",
    "max_drop",
    "max_drop_relative",
    "min_gain",
    "min_gain_relative",
    "significance",
    "when_no_baseline",
    "severity",
    "message",
    "runs",
    "by",
    "slices",
    "min_items",
];
pub(super) const OFFENDER_KEYS: &[&str] = &["when", "show", "limit"];
pub(super) const REPORT_KEYS: &[&str] = &["format", "template", "path"];
pub(super) const TRADEOFF_KEYS: &[&str] = &["latency", "accuracy"];

/// Every mapping of fixed keys, by place: what the JSON Schema must agree with.
pub const KEY_TABLES: [(&str, &[&str]); 11] = [
    ("top", TOP_KEYS),
    ("param", PARAM_KEYS),
    ("dataset", DATASET_KEYS),
    ("rule", RULE_KEYS),
    ("metric", METRIC_KEYS),
    ("slice", SLICE_KEYS),
    ("gate", GATE_KEYS),
    ("offenders", OFFENDER_KEYS),
    ("report", REPORT_KEYS),
    ("tradeoff", TRADEOFF_KEYS),
    ("remove", crate::spec::remove::REMOVE_KEYS),
];

/// The folder of the file a value was written in: relative paths in a spec are
/// relative to the file that declares them, also through `extends`.
pub(super) fn dir_of(node: &Node) -> PathBuf {
    node.source
        .path
        .parent()
        .map_or_else(PathBuf::new, Path::to_path_buf)
}

/// Reads and structurally validates the spec at `path`.
pub fn load(path: &Path) -> Result<Spec, Vec<Diagnostic>> {
    let resolved = extends::resolve(path)?;
    let text = if resolved.files.len() == 1 {
        resolved.files[0].text.clone()
    } else {
        let chain: Vec<&str> = resolved.files.iter().map(|f| f.display.as_str()).collect();
        format!(
            "# resolved from {}\n{}",
            chain.join(" ← "),
            extends::render(&resolved.root)
        )
    };
    let root = resolved.root;
    Loader {
        source: resolved.files[0].clone(),
        files: resolved.files,
        resolved_text: text,
        errors: Vec::new(),
    }
    .spec(&root)
}

pub(super) struct Loader {
    source: Arc<SourceFile>,
    files: Vec<Arc<SourceFile>>,
    resolved_text: String,
    pub(super) errors: Vec<Diagnostic>,
}

impl Loader {
    /// Records an error of `kind` at `at`.
    pub(super) fn report(&mut self, kind: SpecError, at: Location) {
        self.errors.push(Diagnostic::of(&kind).at(at));
    }

    fn spec(mut self, root: &Node) -> Result<Spec, Vec<Diagnostic>> {
        let Some(mut top) = Mapping::new(root, "", "a spec", &mut self.errors) else {
            return Err(self.errors);
        };
        let name = self.required_string(&mut top, "name", root);
        let version = self.required_string(&mut top, "version", root);
        if let (Some(version), Some(node)) = (&version, top.take("version")) {
            if !is_semver(version) {
                let kind = SpecError::BadVersion {
                    version: version.clone(),
                };
                self.report(kind, locate(node, "version"));
            }
        }
        let description = top
            .take("description")
            .and_then(|n| self.string(n, "description"));
        let items = top.take("items").and_then(|n| self.name(n, "items"));
        let params = self.section(&mut top, "params", Self::param);
        let errors_before_datasets = self.errors.len();
        let datasets = self.section(&mut top, "datasets", Self::dataset);
        let datasets_failed = self.errors.len() > errors_before_datasets;
        let fields = self.section(&mut top, "fields", |this, name, node, path| {
            this.expr(node, &path).map(|expr| FieldDecl { name, expr })
        });
        let matchers = self.section(&mut top, "matchers", Self::matcher);
        let slices = self.section(&mut top, "slices", Self::slice);
        let metrics = self.section(&mut top, "metrics", Self::metric);
        let gates = self.section(&mut top, "gates", Self::gate);
        let labels = top.take("labels").map_or_else(Vec::new, |n| self.labels(n));
        let offenders = top.take("offenders").and_then(|n| self.offenders(n));
        let tradeoff = top.take("tradeoff").and_then(|n| self.tradeoff(n));
        let reports = top.take("reports").map(|n| self.reports(n));
        let confidence = top
            .take("confidence")
            .and_then(|n| self.probability(n, "confidence"));
        let keep_item_values = top
            .take("keep_item_values")
            .and_then(|n| self.bool(n, "keep_item_values"))
            .unwrap_or(true);
        top.finish(TOP_KEYS, &mut self.errors);

        let items = match (items, datasets.first()) {
            (Some(items), _) => Some(items),
            (None, Some(first)) if datasets.len() == 1 => Some(first.name.clone()),
            (None, None) => None, // reported below as "no datasets"
            _ => {
                self.report(SpecError::ItemsUnspecified, locate(root, ""));
                None
            }
        };
        // Declared datasets that failed to load are reported already.
        if datasets.is_empty() && !datasets_failed {
            self.report(SpecError::NoDatasets, locate(root, ""));
        }
        match (name, version, items) {
            (Some(name), Some(version), Some(items)) if self.errors.is_empty() => Ok(Spec {
                source: self.source,
                files: self.files,
                resolved_text: self.resolved_text,
                name,
                version,
                description,
                items,
                params,
                datasets,
                fields,
                matchers,
                slices,
                metrics,
                gates,
                labels,
                offenders,
                tradeoff,
                reports,
                confidence,
                keep_item_values,
            }),
            _ => Err(self.errors),
        }
    }

    /// Loads a mapping of user-named entries, each through `entry`.
    pub(super) fn section<T, I: IntoIterator<Item = T>>(
        &mut self,
        top: &mut Mapping<'_>,
        key: &str,
        mut entry: impl FnMut(&mut Self, Name, &Node, String) -> I,
    ) -> Vec<T> {
        let Some(node) = top.take(key) else {
            return Vec::new();
        };
        let Some(mut section) = Mapping::new(node, key, &format!("`{key}`"), &mut self.errors)
        else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (key_node, value) in section.take_rest() {
            let path = join_path(key, &key_node.key_text());
            // Metric names may hold `{k}`, replaced by each cutoff of their `ks`.
            let template = key == "metrics" && key_node.key_text().contains("{k}");
            let name = if template {
                self.cutoff_template(key_node, key)
            } else {
                self.name(key_node, key)
            };
            if let Some(name) = name {
                out.extend(entry(self, name, value, path));
            }
        }
        out
    }
}

/// `1.2.3`, optionally with `-pre.release` and `+build` parts.
pub(super) fn is_semver(version: &str) -> bool {
    let core = version.split(['-', '+']).next().unwrap_or("");
    let rest = &version[core.len()..];
    let parts: Vec<&str> = core.split('.').collect();
    let numeric = |p: &&str| {
        !p.is_empty()
            && p.bytes().all(|b| b.is_ascii_digit())
            && (p.len() == 1 || !p.starts_with('0'))
    };
    let ident_ok = |s: &str| {
        s.split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
    };
    let suffix_ok = match rest.split_once('+') {
        Some((pre, build)) => {
            (pre.is_empty() || ident_ok(pre.trim_start_matches('-'))) && ident_ok(build)
        }
        None => rest.is_empty() || (rest.starts_with('-') && ident_ok(&rest[1..])),
    };
    parts.len() == 3 && parts.iter().all(numeric) && suffix_ok
}

pub(super) fn parse_data_type(text: &str) -> Option<DataType> {
    Some(match text {
        "any" => DataType::Any,
        "string" => DataType::String,
        "bool" => DataType::Bool,
        "number" => DataType::Number,
        "integer" => DataType::Integer,
        "object" => DataType::Object,
        "list" => DataType::List(None),
        _ => {
            let inner = text.strip_prefix("list<")?.strip_suffix('>')?;
            DataType::List(Some(Box::new(parse_data_type(inner.trim())?)))
        }
    })
}

/// A param value written in YAML, checked against the declared type.
pub(super) fn param_value_from_node(ty: ParamType, node: &Node) -> Result<Value, String> {
    let value = node_to_value(node)
        .ok_or_else(|| format!("expected {}, found {}", ty.keyword(), node.type_name()))?;
    crate::spec::params::check_type(ty, value)
}

pub fn check_param_range(value: &Value, min: Option<f64>, max: Option<f64>) -> Result<(), String> {
    if let Value::Number(n) = value {
        if let Some(min) = min.filter(|min| n < min) {
            return Err(format!("{n} is below the minimum {min}"));
        }
        if let Some(max) = max.filter(|max| n > max) {
            return Err(format!("{n} is above the maximum {max}"));
        }
    }
    Ok(())
}

pub(super) fn node_to_value(node: &Node) -> Option<Value> {
    Some(match &node.kind {
        NodeKind::Null => Value::Null,
        NodeKind::Bool(b) => Value::Bool(*b),
        NodeKind::Int(i) => Value::Number(*i as f64),
        NodeKind::Float(f) => Value::Number(*f),
        NodeKind::Str(s) => Value::from(s.as_str()),
        NodeKind::Seq(items) => Value::list(
            items
                .iter()
                .map(node_to_value)
                .collect::<Option<Vec<_>>>()?,
        ),
        NodeKind::Map(_) => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semver_accepts_releases_and_prereleases_only() {
        for ok in [
            "1.0.0",
            "0.1.12",
            "2.0.0-rc.1",
            "1.4.0+build.7",
            "1.0.0-alpha+001",
        ] {
            assert!(is_semver(ok), "{ok}");
        }
        for bad in ["1.0", "v1.0.0", "01.0.0", "1.0.0-", "1.0.x", ""] {
            assert!(!is_semver(bad), "{bad}");
        }
    }

    #[test]
    fn data_types_parse_nested_lists() {
        assert_eq!(
            parse_data_type("list<list<string>>"),
            Some(DataType::List(Some(Box::new(DataType::List(Some(
                Box::new(DataType::String)
            ))))))
        );
        assert_eq!(parse_data_type("lst"), None);
    }
}
