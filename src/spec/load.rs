//! From YAML nodes to a [`Spec`]: every structural error of the file is collected
//! (unknown keys, wrong types, bad names) before any expression is looked at.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::diagnostic::Diagnostic;
use crate::source::SourceFile;
use crate::spec::extends;
use crate::spec::mapping::{join_path, locate, Mapping};
use crate::spec::model::*;
use crate::spec::yaml::{Node, NodeKind};
use crate::syntax::is_identifier;
use crate::value::Value;

const TOP_KEYS: &[&str] = &[
    "extends",
    "name",
    "version",
    "description",
    "items",
    "params",
    "datasets",
    "fields",
    "matchers",
    "metrics",
    "gates",
    "labels",
    "offenders",
    "tradeoff",
    "reports",
];
const PARAM_KEYS: &[&str] = &["type", "default", "min", "max", "description"];
const DATASET_KEYS: &[&str] = &[
    "format",
    "path",
    "key",
    "duplicates",
    "join",
    "schema",
    "checks",
    "frozen",
    "runs",
    "run_name",
    "delimiter",
    "list_separator",
];
const RULE_KEYS: &[&str] = &["type", "optional", "nonempty", "min"];
const METRIC_KEYS: &[&str] = &["expr", "empty", "better", "description", "ks", "tolerance"];
const GATE_KEYS: &[&str] = &[
    "expr",
    "metric",
    "better",
    "threshold",
    "warn_threshold",
    "max_drop",
    "max_drop_relative",
    "min_gain",
    "min_gain_relative",
    "when_no_baseline",
    "severity",
    "message",
    "runs",
];
const OFFENDER_KEYS: &[&str] = &["when", "show", "limit"];
const REPORT_KEYS: &[&str] = &["format", "template", "path"];
const TRADEOFF_KEYS: &[&str] = &["latency", "accuracy"];

/// Every mapping of fixed keys, by place: what the JSON Schema must agree with.
pub const KEY_TABLES: [(&str, &[&str]); 9] = [
    ("top", TOP_KEYS),
    ("param", PARAM_KEYS),
    ("dataset", DATASET_KEYS),
    ("rule", RULE_KEYS),
    ("metric", METRIC_KEYS),
    ("gate", GATE_KEYS),
    ("offenders", OFFENDER_KEYS),
    ("report", REPORT_KEYS),
    ("tradeoff", TRADEOFF_KEYS),
];

/// The folder of the file a value was written in: relative paths in a spec are
/// relative to the file that declares them, also through `extends`.
fn dir_of(node: &Node) -> PathBuf {
    node.source
        .path
        .parent()
        .map_or_else(PathBuf::new, Path::to_path_buf)
}

/// Reads and structurally validates the spec at `path`.
pub fn load(path: &Path) -> Result<Spec, Vec<Diagnostic>> {
    let resolved = extends::resolve(path).map_err(|d| vec![d])?;
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

struct Loader {
    source: Arc<SourceFile>,
    files: Vec<Arc<SourceFile>>,
    resolved_text: String,
    errors: Vec<Diagnostic>,
}

impl Loader {
    fn spec(mut self, root: &Node) -> Result<Spec, Vec<Diagnostic>> {
        let Some(mut top) = Mapping::new(root, "", "a spec", &mut self.errors) else {
            return Err(self.errors);
        };
        let name = self.required_string(&mut top, "name", root);
        let version = self.required_string(&mut top, "version", root);
        if let (Some(version), Some(node)) = (&version, top.take("version")) {
            if !is_semver(version) {
                self.errors.push(
                    Diagnostic::error(format!("version `{version}` is not a semantic version"))
                        .at(locate(node, "version"))
                        .help("write MAJOR.MINOR.PATCH, e.g. `1.4.0`"),
                );
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
        let metrics = self.section(&mut top, "metrics", Self::metric);
        let gates = self.section(&mut top, "gates", Self::gate);
        let labels = top.take("labels").map_or_else(Vec::new, |n| self.labels(n));
        let offenders = top.take("offenders").and_then(|n| self.offenders(n));
        let tradeoff = top.take("tradeoff").and_then(|n| self.tradeoff(n));
        let reports = top.take("reports").map(|n| self.reports(n));
        top.finish(TOP_KEYS, &mut self.errors);

        let items = match (items, datasets.first()) {
            (Some(items), _) => Some(items),
            (None, Some(first)) if datasets.len() == 1 => Some(first.name.clone()),
            (None, None) => None, // reported below as "no datasets"
            _ => {
                self.errors.push(
                    Diagnostic::error("the spec does not say which dataset holds the items")
                        .at(locate(root, ""))
                        .help(
                            "add `items: NAME`, naming the dataset with one record per scored item",
                        ),
                );
                None
            }
        };
        // Declared datasets that failed to load are reported already.
        if datasets.is_empty() && !datasets_failed {
            self.errors.push(
                Diagnostic::error("the spec declares no datasets")
                    .at(locate(root, ""))
                    .help("add a `datasets:` section, e.g. `gold: {format: jsonl, path: gold.jsonl, key: qid}`"),
            );
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
                metrics,
                gates,
                labels,
                offenders,
                tradeoff,
                reports,
            }),
            _ => Err(self.errors),
        }
    }

    /// Loads a mapping of user-named entries, each through `entry`.
    fn section<T, I: IntoIterator<Item = T>>(
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

    fn param(&mut self, name: Name, node: &Node, path: String) -> Option<ParamDecl> {
        let mut map = Mapping::new(node, &path, "a param", &mut self.errors)?;
        let ty_node = map.take("type");
        let default_node = map.take("default");
        let min = map
            .take("min")
            .and_then(|n| self.number(n, &map.path_of("min")));
        let max = map
            .take("max")
            .and_then(|n| self.number(n, &map.path_of("max")));
        let description = map
            .take("description")
            .and_then(|n| self.string(n, &map.path_of("description")));
        map.finish(PARAM_KEYS, &mut self.errors);
        let Some(ty_node) = ty_node else {
            self.errors.push(
                Diagnostic::error(format!("param `{}` has no `type`", name.text))
                    .at(locate(&name.node, &path))
                    .help("add `type: number`, `integer`, `string`, `bool` or `list`"),
            );
            return None;
        };
        let ty = self.keyword(
            ty_node,
            &join_path(&path, "type"),
            &[
                ("number", ParamType::Number),
                ("integer", ParamType::Integer),
                ("string", ParamType::String),
                ("bool", ParamType::Bool),
                ("list", ParamType::List),
            ],
        )?;
        let Some(default_node) = default_node else {
            self.errors.push(
                Diagnostic::error(format!("param `{}` has no `default`", name.text))
                    .at(locate(&name.node, &path))
                    .help("every param needs a default; `--param NAME=VALUE` overrides it"),
            );
            return None;
        };
        let default = match param_value_from_node(ty, default_node) {
            Ok(value) => value,
            Err(message) => {
                self.errors.push(
                    Diagnostic::error(format!("default of param `{}`: {message}", name.text))
                        .at(locate(default_node, &join_path(&path, "default"))),
                );
                return None;
            }
        };
        if let Err(message) = check_param_range(&default, min, max) {
            self.errors.push(
                Diagnostic::error(format!("default of param `{}`: {message}", name.text))
                    .at(locate(default_node, &join_path(&path, "default"))),
            );
        }
        Some(ParamDecl {
            name,
            ty,
            default,
            min,
            max,
            description,
        })
    }

    fn dataset(&mut self, name: Name, node: &Node, path: String) -> Option<DatasetDecl> {
        let mut map = Mapping::new(node, &path, "a dataset", &mut self.errors)?;
        let format_node = map.take("format");
        let format = format_node.map(|n| self.keyword(n, &map.path_of("format"), &Format::ALL));
        let csv = self.csv_options(&mut map, format.flatten());
        let data_path = map.take("path").and_then(|n| {
            self.string(n, &map.path_of("path"))
                .map(|text| dir_of(n).join(text))
        });
        let runs = map
            .take("runs")
            .and_then(|n| self.runs(n, &map.path_of("runs")));
        let run_name_node = map.take("run_name");
        let run_name = run_name_node.and_then(|n| match &n.kind {
            NodeKind::Str(s) if s == "file" => Some(RunName::File),
            _ => self.expr(n, &map.path_of("run_name")).map(RunName::Expr),
        });
        let runs = match (runs, run_name, run_name_node) {
            (Some(mut runs), Some(name), _) => {
                runs.name = name;
                Some(runs)
            }
            (None, _, Some(node)) => {
                self.errors.push(
                    Diagnostic::error(format!(
                        "dataset `{}` has `run_name` but no `runs`",
                        name.text
                    ))
                    .at(locate(node, &map.path_of("run_name")))
                    .help(
                        "`run_name` names each file of `runs: [...]`; a single `path` is one run",
                    ),
                );
                None
            }
            (runs, _, _) => runs,
        };
        if let (Some(runs), Some(_)) = (&runs, &data_path) {
            self.errors.push(
                Diagnostic::error(format!(
                    "dataset `{}` has both `path` and `runs`",
                    name.text
                ))
                .at(locate(&runs.node, &map.path_of("runs")))
                .help("give one file as `path`, or several (each a run) as `runs`"),
            );
        }
        let frozen = map
            .take("frozen")
            .and_then(|n| self.bool(n, &map.path_of("frozen")))
            .unwrap_or(false);
        let key = match map.take("key") {
            Some(n) => self.expr(n, &map.path_of("key")),
            None => {
                self.errors.push(
                    Diagnostic::error(format!("dataset `{}` has no `key`", name.text))
                        .at(locate(&name.node, &path))
                        .help("add `key: qid` (an expression over the record's fields that identifies it)"),
                );
                None
            }
        };
        let duplicates = match map.take("duplicates") {
            Some(n) => self.keyword(
                n,
                &map.path_of("duplicates"),
                &[
                    ("error", Duplicates::Error),
                    ("first", Duplicates::First),
                    ("last", Duplicates::Last),
                    ("keep", Duplicates::Keep),
                ],
            ),
            None => Some(Duplicates::Error),
        };
        let join = match map.take("join") {
            Some(n) => self.keyword(
                n,
                &map.path_of("join"),
                &[("left", Join::Left), ("inner", Join::Inner)],
            ),
            None => Some(Join::Left),
        };
        let schema = match map.take("schema") {
            Some(n) => self.schema(n, &map.path_of("schema")),
            None => Vec::new(),
        };
        let checks = match map.take("checks") {
            Some(n) => self.checks(n, &map.path_of("checks")),
            None => Vec::new(),
        };
        map.finish(DATASET_KEYS, &mut self.errors);
        // Unwritten, the format is named by the file's extension.
        let format = format.unwrap_or_else(|| {
            let first = data_path
                .as_ref()
                .or(runs.as_ref().and_then(|r| r.patterns.first()));
            Some(
                first
                    .and_then(|p| Format::from_extension(p))
                    .unwrap_or(Format::Jsonl),
            )
        });
        Some(DatasetDecl {
            name,
            format: format?,
            csv,
            path: data_path,
            runs,
            frozen,
            key: key?,
            duplicates: duplicates?,
            join: join?,
            schema,
            checks,
        })
    }

    /// `checks: [{expr: …, message: …}]`, conditions every record must meet.
    fn checks(&mut self, node: &Node, path: &str) -> Vec<RecordCheck> {
        let NodeKind::Seq(items) = &node.kind else {
            self.errors.push(
                Diagnostic::error(format!(
                    "`checks` must be a list, found {}",
                    node.type_name()
                ))
                .at(locate(node, path))
                .help("write `checks: [{expr: \"len(gold) > 0\", message: \"gold is empty\"}]`"),
            );
            return Vec::new();
        };
        let mut checks = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let item_path = format!("{path}[{i}]");
            let Some(mut map) = Mapping::new(item, &item_path, "a check", &mut self.errors) else {
                continue;
            };
            let expr = map
                .take("expr")
                .and_then(|n| self.expr(n, &map.path_of("expr")));
            let message = map
                .take("message")
                .and_then(|n| self.string(n, &map.path_of("message")));
            map.finish(&["expr", "message"], &mut self.errors);
            match (expr, message) {
                (Some(expr), Some(message)) => checks.push(RecordCheck { expr, message }),
                (_, None) => self.errors.push(
                    Diagnostic::error("a check needs `expr` and `message`")
                        .at(locate(item, &item_path)),
                ),
                _ => {}
            }
        }
        checks
    }

    fn schema(&mut self, node: &Node, path: &str) -> Vec<FieldRule> {
        let Some(mut map) = Mapping::new(node, path, "`schema`", &mut self.errors) else {
            return Vec::new();
        };
        let mut rules = Vec::new();
        for (key, value) in map.take_rest() {
            let field = key.key_text();
            let rule_path = join_path(path, &field);
            // `gold[].start_page`: a rule for a field of each element of the list `gold`.
            let (list_part, element_part) = match field.split_once("[]") {
                Some((list, rest)) => (list, Some(rest.strip_prefix('.').unwrap_or(rest))),
                None => (field.as_str(), None),
            };
            let field_path: Vec<String> = list_part.split('.').map(str::to_string).collect();
            let each: Option<Vec<String>> = element_part.map(|e| {
                if e.is_empty() {
                    Vec::new()
                } else {
                    e.split('.').map(str::to_string).collect()
                }
            });
            if field_path
                .iter()
                .chain(each.iter().flatten())
                .any(|p| p.is_empty() || p.contains("[]"))
            {
                self.errors.push(
                    Diagnostic::error(format!("`{field}` is not a field path"))
                        .at(locate(key, path))
                        .help("write a field name, names joined by dots (`answer_json.claim`), or `list[].field` for each element"),
                );
                continue;
            }
            let (type_node, optional, nonempty, min) = match &value.kind {
                NodeKind::Str(_) => (value, None, false, None),
                NodeKind::Map(_) => {
                    let Some(mut rule) =
                        Mapping::new(value, &rule_path, "a rule", &mut self.errors)
                    else {
                        continue;
                    };
                    let ty = rule.take("type");
                    let optional = rule
                        .take("optional")
                        .and_then(|n| self.bool(n, &rule.path_of("optional")));
                    let nonempty = rule
                        .take("nonempty")
                        .and_then(|n| self.bool(n, &rule.path_of("nonempty")))
                        .unwrap_or(false);
                    let min = rule
                        .take("min")
                        .and_then(|n| self.number(n, &rule.path_of("min")));
                    rule.finish(RULE_KEYS, &mut self.errors);
                    match ty {
                        Some(ty) => (ty, optional, nonempty, min),
                        None => {
                            self.errors.push(
                                Diagnostic::error(format!("the rule for `{field}` has no `type`"))
                                    .at(locate(value, &rule_path)),
                            );
                            continue;
                        }
                    }
                }
                _ => {
                    self.errors.push(
                        Diagnostic::error(format!("a schema rule must be a type or a mapping, found {}", value.type_name()))
                            .at(locate(value, &rule_path))
                            .help("write `field: string`, `field: list<string>?` or `field: {type: string, nonempty: true}`"),
                    );
                    continue;
                }
            };
            let Some(text) = self.string(type_node, &rule_path) else {
                continue;
            };
            let (text, question) = match text.strip_suffix('?') {
                Some(stripped) => (stripped.trim().to_string(), true),
                None => (text.trim().to_string(), false),
            };
            match parse_data_type(&text) {
                Some(ty) => rules.push(FieldRule {
                    path: field_path,
                    each,
                    ty,
                    optional: optional.unwrap_or(question),
                    nonempty,
                    min,
                    node: key.clone(),
                }),
                None => self.errors.push(
                    Diagnostic::error(format!("unknown data type `{text}`"))
                        .at(locate(type_node, &rule_path))
                        .help("types: any, string, bool, number, integer, object, list, list<T>; add `?` for optional"),
                ),
            }
        }
        rules
    }

    fn matcher(&mut self, name: Name, node: &Node, path: String) -> Option<MatcherDecl> {
        let mut map = Mapping::new(node, &path, "a matcher", &mut self.errors)?;
        let kind = match map.take("kind") {
            Some(kind) => self.name(kind, &map.path_of("kind")),
            None => {
                self.errors.push(
                    Diagnostic::error(format!("matcher `{}` has no `kind`", name.text))
                        .at(locate(&name.node, &path))
                        .help(format!("kinds: {}", crate::matchers::KIND_NAMES.join(", "))),
                );
                None
            }
        };
        let args = map
            .take_rest()
            .into_iter()
            .map(|(key, value)| {
                let key_path = join_path(&path, &key.key_text());
                (
                    Name {
                        text: key.key_text(),
                        node: key.clone(),
                        key_path,
                    },
                    value.clone(),
                )
            })
            .collect();
        Some(MatcherDecl {
            name,
            kind: kind?,
            args,
            key_path: path,
        })
    }

    /// A metric name with `{k}`; valid when every cutoff turns it into a name.
    fn cutoff_template(&mut self, node: &Node, path: &str) -> Option<Name> {
        let text = node.key_text();
        if is_identifier(&text.replace("{k}", "1")) {
            return Some(Name {
                text,
                node: node.clone(),
                key_path: path.to_string(),
            });
        }
        self.name(node, path)
    }

    /// One metric, or one per cutoff when it has `ks`.
    fn metric(&mut self, name: Name, node: &Node, path: String) -> Vec<MetricDecl> {
        let template = name.text.contains("{k}");
        if !matches!(node.kind, NodeKind::Map(_)) {
            if template {
                self.errors.push(
                    Diagnostic::error(format!(
                        "metric `{}` names a cutoff `{{k}}` but gives no `ks`",
                        name.text
                    ))
                    .at(locate(&name.node, &path))
                    .help("write it as a mapping with `expr:` and `ks: [5, 10]`"),
                );
                return Vec::new();
            }
            let Some(expr) = self.expr(node, &path) else {
                return Vec::new();
            };
            return vec![MetricDecl {
                name,
                expr,
                empty: None,
                better: None,
                description: None,
                cutoff: None,
                tolerance: None,
            }];
        }
        let Some(mut map) = Mapping::new(node, &path, "a metric", &mut self.errors) else {
            return Vec::new();
        };
        let ks = map
            .take("ks")
            .map(|n| (n, self.cutoffs(n, &map.path_of("ks"))));
        let expr = self.required_expr(&mut map, "expr", &name, &path);
        let empty = map
            .take("empty")
            .and_then(|n| Some((self.number(n, &map.path_of("empty"))?, n.clone())));
        let better = map.take("better").and_then(|n| {
            self.keyword(
                n,
                &map.path_of("better"),
                &[("higher", Better::Higher), ("lower", Better::Lower)],
            )
        });
        let description = map
            .take("description")
            .and_then(|n| self.string(n, &map.path_of("description")));
        let tolerance = map.take("tolerance").and_then(|n| {
            let path = map.path_of("tolerance");
            let value = self.number(n, &path)?;
            if value < 0.0 {
                self.errors.push(
                    Diagnostic::error(format!("a tolerance cannot be negative, found {value}"))
                        .at(locate(n, &path))
                        .help("the tolerance is how far the metric may move in its bad direction, e.g. `0.01`"),
                );
                return None;
            }
            Some(value)
        });
        map.finish(METRIC_KEYS, &mut self.errors);
        let Some(expr) = expr else { return Vec::new() };
        let metric = |name: Name, cutoff: Option<u32>| MetricDecl {
            name,
            expr: expr.clone(),
            empty: empty.clone(),
            better,
            description: description.clone(),
            cutoff,
            tolerance,
        };
        match (ks, template) {
            (None, false) => vec![metric(name, None)],
            (Some((_, ks)), true) => ks
                .into_iter()
                .map(|k| {
                    metric(
                        Name {
                            text: name.text.replace("{k}", &k.to_string()),
                            ..name.clone()
                        },
                        Some(k),
                    )
                })
                .collect(),
            (None, true) => {
                self.errors.push(
                    Diagnostic::error(format!(
                        "metric `{}` names a cutoff `{{k}}` but gives no `ks`",
                        name.text
                    ))
                    .at(locate(&name.node, &path))
                    .help("add `ks: [5, 10]`: one metric per cutoff"),
                );
                Vec::new()
            }
            (Some((node, _)), false) => {
                self.errors.push(
                    Diagnostic::error(format!(
                        "metric `{}` has `ks` but its name has no `{{k}}`",
                        name.text
                    ))
                    .at(locate(node, &join_path(&path, "ks")))
                    .help(format!(
                        "name it e.g. `{}_{{k}}`, so that each cutoff gets its own metric",
                        name.text
                    )),
                );
                Vec::new()
            }
        }
    }

    /// `ks: [1, 3, 5]`: distinct whole numbers ≥ 1.
    fn cutoffs(&mut self, node: &Node, path: &str) -> Vec<u32> {
        let items = match &node.kind {
            NodeKind::Seq(items) => items,
            _ => {
                self.errors.push(
                    Diagnostic::error(format!(
                        "`ks` must be a list of cutoffs, found {}",
                        node.type_name()
                    ))
                    .at(locate(node, path)),
                );
                return Vec::new();
            }
        };
        let mut ks: Vec<u32> = Vec::new();
        for item in items {
            match item.kind {
                NodeKind::Int(k) if k >= 1 && !ks.contains(&(k as u32)) => ks.push(k as u32),
                _ => self.errors.push(
                    Diagnostic::error(format!(
                        "a cutoff must be a distinct whole number ≥ 1, found `{}`",
                        item.key_text()
                    ))
                    .at(locate(item, path)),
                ),
            }
        }
        ks
    }

    fn gate(&mut self, name: Name, node: &Node, path: String) -> Option<GateDecl> {
        if !matches!(node.kind, NodeKind::Map(_)) {
            let expr = self.expr(node, &path)?;
            return Some(GateDecl {
                name,
                rule: GateRuleDecl::Expr(expr),
                runs: GateRuns::Every,
                severity: SeveritySpec::Fail,
                message: None,
            });
        }
        let mut map = Mapping::new(node, &path, "a gate", &mut self.errors)?;
        let rule = match (map.take("expr"), map.take("metric")) {
            (Some(expr), None) => self
                .expr(expr, &map.path_of("expr"))
                .map(GateRuleDecl::Expr),
            (None, Some(metric)) => self
                .gate_shape(&mut map, metric)
                .map(|shape| GateRuleDecl::Shape(Box::new(shape))),
            (Some(_), Some(metric)) => {
                self.errors.push(
                    Diagnostic::error(format!("gate `{}` has both `expr` and `metric`", name.text))
                        .at(locate(metric, &map.path_of("metric")))
                        .help("write either an expression (`expr:`) or a metric with thresholds (`metric:`, `threshold:`, `max_drop:`, …)"),
                );
                None
            }
            (None, None) => {
                self.errors.push(
                    Diagnostic::error(format!("gate `{}` has neither `expr` nor `metric`", name.text))
                        .at(locate(&name.node, &path))
                        .help("add `expr: precision >= 0.8`, or `metric: precision` with `threshold: 0.8`"),
                );
                None
            }
        };
        let severity = match map.take("severity") {
            None => Some(SeveritySpec::Fail),
            Some(n) => match &n.kind {
                NodeKind::Str(s) if s == "fail" => Some(SeveritySpec::Fail),
                NodeKind::Str(s) if s == "warn" => Some(SeveritySpec::Warn),
                _ => self
                    .expr(n, &map.path_of("severity"))
                    .map(SeveritySpec::Expr),
            },
        };
        let message = map
            .take("message")
            .and_then(|n| self.string(n, &map.path_of("message")));
        let runs = match map.take("runs") {
            None => Some(GateRuns::Every),
            Some(n) => self.keyword(
                n,
                &map.path_of("runs"),
                &[("every", GateRuns::Every), ("any", GateRuns::Any)],
            ),
        };
        map.finish(GATE_KEYS, &mut self.errors);
        Some(GateDecl {
            name,
            rule: rule?,
            runs: runs?,
            severity: severity?,
            message,
        })
    }

    /// `metric:` with `threshold`, `warn_threshold` and change bounds.
    fn gate_shape(&mut self, map: &mut Mapping<'_>, metric: &Node) -> Option<GateShapeDecl> {
        let metric = self.name(metric, &map.path_of("metric"));
        let better = map.take("better").and_then(|n| {
            self.keyword(
                n,
                &map.path_of("better"),
                &[("higher", Better::Higher), ("lower", Better::Lower)],
            )
        });
        let mut bound = |this: &mut Self, key: &str| {
            map.take(key).and_then(|n| this.expr(n, &map.path_of(key)))
        };
        let threshold = bound(self, "threshold");
        let warn_threshold = bound(self, "warn_threshold");
        let changes: Vec<(Change, ExprText)> = Change::ALL
            .iter()
            .filter_map(|(key, change)| bound(self, key).map(|e| (*change, e)))
            .collect();
        let when_no_baseline = match map.take("when_no_baseline") {
            None => Some(NoBaseline::Pass),
            Some(n) => self.keyword(
                n,
                &map.path_of("when_no_baseline"),
                &[
                    ("pass", NoBaseline::Pass),
                    ("warn", NoBaseline::Warn),
                    ("fail", NoBaseline::Fail),
                ],
            ),
        };
        let metric = metric?;
        if threshold.is_none() && warn_threshold.is_none() && changes.is_empty() {
            self.errors.push(
                Diagnostic::error(format!("the gate on `{}` sets no bound", metric.text))
                    .at(locate(&metric.node, &map.path_of("metric")))
                    .help("add `threshold:`, `warn_threshold:`, `max_drop:`, `max_drop_relative:`, `min_gain:` or `min_gain_relative:`"),
            );
            return None;
        }
        Some(GateShapeDecl {
            metric,
            better,
            threshold,
            warn_threshold,
            changes,
            when_no_baseline: when_no_baseline?,
        })
    }

    /// `labels:` a list of `LABEL: condition`, first match wins.
    fn labels(&mut self, node: &Node) -> Vec<LabelRule> {
        let NodeKind::Seq(rules) = &node.kind else {
            self.errors.push(
                Diagnostic::error(format!("`labels` must be a list, found {}", node.type_name()))
                    .at(locate(node, "labels"))
                    .help("write one `- LABEL: condition` per line; the first label whose condition holds is the item's"),
            );
            return Vec::new();
        };
        let mut out: Vec<LabelRule> = Vec::new();
        for (i, rule) in rules.iter().enumerate() {
            let path = format!("labels[{i}]");
            let entry = match &rule.kind {
                NodeKind::Map(entries) if entries.len() == 1 => &entries[0],
                _ => {
                    self.errors.push(
                        Diagnostic::error(format!(
                            "a label rule must be one `LABEL: condition` pair, found {}",
                            rule.type_name()
                        ))
                        .at(locate(rule, &path))
                        .help("e.g. `- HALLUCINATION: not answerable and not refused`"),
                    );
                    continue;
                }
            };
            let (Some(label), Some(expr)) =
                (self.name(&entry.0, &path), self.expr(&entry.1, &path))
            else {
                continue;
            };
            if out.iter().any(|r| r.label.text == label.text) {
                self.errors.push(
                    Diagnostic::error(format!("the label `{}` has two rules", label.text))
                        .at(locate(&entry.0, &path))
                        .help("join the conditions with `or` in one rule"),
                );
                continue;
            }
            out.push(LabelRule { label, expr });
        }
        out
    }

    /// `runs: PATTERN` or `runs: [PATTERN, ...]`: files, folders or globs.
    fn runs(&mut self, node: &Node, path: &str) -> Option<RunsDecl> {
        let items: Vec<&Node> = match &node.kind {
            NodeKind::Seq(items) if !items.is_empty() => items.iter().collect(),
            NodeKind::Str(_) => vec![node],
            _ => {
                self.errors.push(
                    Diagnostic::error(format!(
                        "`runs` must be a file, folder or glob, or a list of them, found {}",
                        node.type_name()
                    ))
                    .at(locate(node, path))
                    .help("e.g. `runs: runs/seed-*.jsonl`"),
                );
                return None;
            }
        };
        let patterns: Vec<PathBuf> = items
            .into_iter()
            .filter_map(|item| self.string(item, path).map(|text| dir_of(item).join(text)))
            .collect();
        Some(RunsDecl {
            patterns,
            name: RunName::File,
            node: node.clone(),
        })
    }

    /// `tradeoff: {latency: p95_latency_ms, accuracy: [precision, chr]}`.
    fn tradeoff(&mut self, node: &Node) -> Option<TradeoffDecl> {
        let mut map = Mapping::new(node, "tradeoff", "`tradeoff`", &mut self.errors)?;
        let latency = match map.take("latency") {
            Some(n) => self.name(n, "tradeoff.latency"),
            None => {
                self.errors.push(
                    Diagnostic::error("`tradeoff` has no `latency`")
                        .at(locate(node, "tradeoff"))
                        .help("add `latency: p95_latency_ms`, the metric on the curve's x axis"),
                );
                None
            }
        };
        let accuracy = match map.take("accuracy") {
            Some(n) => match &n.kind {
                NodeKind::Seq(items) if !items.is_empty() => items
                    .iter()
                    .filter_map(|item| self.name(item, "tradeoff.accuracy"))
                    .collect(),
                NodeKind::Str(_) => self.name(n, "tradeoff.accuracy").into_iter().collect(),
                _ => {
                    self.errors.push(
                        Diagnostic::error(format!(
                            "`accuracy` must be a metric or a list of metrics, found {}",
                            n.type_name()
                        ))
                        .at(locate(n, "tradeoff.accuracy")),
                    );
                    Vec::new()
                }
            },
            None => {
                self.errors.push(
                    Diagnostic::error("`tradeoff` has no `accuracy`")
                        .at(locate(node, "tradeoff"))
                        .help("add `accuracy: [precision, chr]`, the metrics on the y axis"),
                );
                Vec::new()
            }
        };
        map.finish(TRADEOFF_KEYS, &mut self.errors);
        if accuracy.is_empty() {
            return None;
        }
        Some(TradeoffDecl {
            latency: latency?,
            accuracy,
        })
    }

    fn offenders(&mut self, node: &Node) -> Option<OffendersDecl> {
        let mut map = Mapping::new(node, "offenders", "`offenders`", &mut self.errors)?;
        let when = match map.take("when") {
            Some(n) => self.expr(n, "offenders.when"),
            None => {
                self.errors.push(
                    Diagnostic::error("`offenders` has no `when`")
                        .at(locate(node, "offenders"))
                        .help("add `when: label != \"OK\"` (or any per-item condition)"),
                );
                None
            }
        };
        let show = match map.take("show") {
            None => Vec::new(),
            Some(n) => match &n.kind {
                NodeKind::Seq(items) => items
                    .iter()
                    .filter_map(|item| self.name(item, "offenders.show"))
                    .collect(),
                _ => {
                    self.errors.push(
                        Diagnostic::error(format!(
                            "`show` must be a list of fields, found {}",
                            n.type_name()
                        ))
                        .at(locate(n, "offenders.show")),
                    );
                    Vec::new()
                }
            },
        };
        let limit = match map.take("limit") {
            None => Some(10),
            Some(n) => match n.kind {
                NodeKind::Int(k) if k >= 1 => Some(k as usize),
                _ => {
                    self.errors.push(
                        Diagnostic::error(format!(
                            "`limit` must be a whole number ≥ 1, found `{}`",
                            n.key_text()
                        ))
                        .at(locate(n, "offenders.limit")),
                    );
                    None
                }
            },
        };
        map.finish(OFFENDER_KEYS, &mut self.errors);
        Some(OffendersDecl {
            when: when?,
            show,
            limit: limit?,
        })
    }

    /// `reports:` built-in formats by name, or `{format|template, path}`.
    fn reports(&mut self, node: &Node) -> Vec<ReportDecl> {
        let NodeKind::Seq(entries) = &node.kind else {
            self.errors.push(
                Diagnostic::error(format!(
                    "`reports` must be a list, found {}",
                    node.type_name()
                ))
                .at(locate(node, "reports"))
                .help(
                    "e.g. `reports: [markdown, junit, {template: report.md.j2, path: report.md}]`",
                ),
            );
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            let path = format!("reports[{i}]");
            if let NodeKind::Str(_) = entry.kind {
                if let Some(format) = self.keyword(entry, &path, &ReportFormat::ALL) {
                    out.push(ReportDecl {
                        kind: ReportKind::Builtin(format),
                        path: None,
                        dir: dir_of(entry),
                        node: entry.clone(),
                    });
                }
                continue;
            }
            let Some(mut map) = Mapping::new(entry, &path, "a report", &mut self.errors) else {
                continue;
            };
            let format = map
                .take("format")
                .and_then(|n| self.keyword(n, &map.path_of("format"), &ReportFormat::ALL));
            let template_node = map.take("template");
            let template = template_node.and_then(|n| self.string(n, &map.path_of("template")));
            let file = map
                .take("path")
                .and_then(|n| self.string(n, &map.path_of("path")));
            map.finish(REPORT_KEYS, &mut self.errors);
            let kind = match (format, template) {
                (Some(format), None) => ReportKind::Builtin(format),
                (None, Some(template)) => ReportKind::Template(template),
                _ => {
                    self.errors.push(
                        Diagnostic::error("a report needs exactly one of `format` and `template`")
                            .at(locate(entry, &path))
                            .help("e.g. `{format: junit, path: gates.xml}` or `{template: report.md.j2}`"),
                    );
                    continue;
                }
            };
            out.push(ReportDecl {
                kind,
                path: file,
                dir: dir_of(template_node.unwrap_or(entry)),
                node: entry.clone(),
            });
        }
        out
    }

    fn required_expr(
        &mut self,
        map: &mut Mapping<'_>,
        key: &str,
        owner: &Name,
        path: &str,
    ) -> Option<ExprText> {
        match map.take(key) {
            Some(node) => self.expr(node, &map.path_of(key)),
            None => {
                self.errors.push(
                    Diagnostic::error(format!("`{}` has no `{key}`", owner.text))
                        .at(locate(&owner.node, path))
                        .help(format!("add `{key}: …` with the expression")),
                );
                None
            }
        }
    }

    fn required_string(&mut self, map: &mut Mapping<'_>, key: &str, root: &Node) -> Option<String> {
        match map.take(key) {
            Some(node) => self.string(node, key),
            None => {
                self.errors.push(
                    Diagnostic::error(format!("the spec has no `{key}`"))
                        .at(locate(root, ""))
                        .help(format!("add a top-level `{key}:`")),
                );
                None
            }
        }
    }

    fn expr(&mut self, node: &Node, path: &str) -> Option<ExprText> {
        match node.scalar_text() {
            Some(text) => Some(ExprText {
                text: text.into_owned(),
                node: node.clone(),
                key_path: path.to_string(),
            }),
            None => {
                self.errors.push(
                    Diagnostic::error(format!("expected an expression, found {}", node.type_name()))
                        .at(locate(node, path))
                        .help("write the expression as a string; quote it if it starts with `[` or contains `: `"),
                );
                None
            }
        }
    }

    fn name(&mut self, node: &Node, path: &str) -> Option<Name> {
        let text = node.key_text();
        if is_identifier(&text) {
            return Some(Name {
                text,
                node: node.clone(),
                key_path: path.to_string(),
            });
        }
        self.errors.push(
            Diagnostic::error(format!("`{text}` is not a valid name"))
                .at(locate(node, path))
                .help("names start with a letter or `_` and contain letters, digits and `_`; keywords are reserved"),
        );
        None
    }

    fn string(&mut self, node: &Node, path: &str) -> Option<String> {
        if let NodeKind::Str(s) = &node.kind {
            return Some(s.clone());
        }
        self.errors.push(
            Diagnostic::error(format!("expected a string, found {}", node.type_name()))
                .at(locate(node, path)),
        );
        None
    }

    fn number(&mut self, node: &Node, path: &str) -> Option<f64> {
        match node.kind {
            NodeKind::Int(i) => Some(i as f64),
            NodeKind::Float(f) => Some(f),
            _ => {
                self.errors.push(
                    Diagnostic::error(format!("expected a number, found {}", node.type_name()))
                        .at(locate(node, path)),
                );
                None
            }
        }
    }

    fn bool(&mut self, node: &Node, path: &str) -> Option<bool> {
        if let NodeKind::Bool(b) = node.kind {
            return Some(b);
        }
        self.errors.push(
            Diagnostic::error(format!(
                "expected true or false, found {}",
                node.type_name()
            ))
            .at(locate(node, path)),
        );
        None
    }

    /// `delimiter` (one ASCII character) and `list_separator` (non-empty text), which
    /// only CSV and TSV datasets take.
    fn csv_options(&mut self, map: &mut Mapping<'_>, format: Option<Format>) -> CsvOptions {
        let mut options = CsvOptions::default();
        for key in ["delimiter", "list_separator"] {
            let Some(node) = map.take(key) else { continue };
            let path = map.path_of(key);
            let Some(text) = self.string(node, &path) else {
                continue;
            };
            if let Some(format) = format.filter(|f| !f.is_delimited()) {
                self.errors.push(
                    Diagnostic::error(format!(
                        "`{key}` applies to csv and tsv datasets, not {}",
                        format.keyword()
                    ))
                    .at(locate(node, &path))
                    .help("remove it, or set `format: csv`"),
                );
                continue;
            }
            if key == "list_separator" {
                if text.is_empty() {
                    self.errors.push(
                        Diagnostic::error("`list_separator` cannot be empty")
                            .at(locate(node, &path))
                            .help("e.g. `list_separator: \"|\"`; without it a list cell is a JSON array"),
                    );
                } else {
                    options.list_separator = Some(text);
                }
                continue;
            }
            match text.as_bytes() {
                [b] if b.is_ascii() && !matches!(b, b'"' | b'\n' | b'\r') => {
                    options.delimiter = Some(*b);
                }
                _ => self.errors.push(
                    Diagnostic::error(format!(
                        "a delimiter is one ASCII character other than a quote or a line break, found {text:?}"
                    ))
                    .at(locate(node, &path))
                    .help("e.g. `delimiter: \";\"`, or `format: tsv` for tabs"),
                ),
            }
        }
        options
    }

    fn keyword<T: Copy>(&mut self, node: &Node, path: &str, choices: &[(&str, T)]) -> Option<T> {
        let text = node.key_text();
        if let Some((_, value)) = choices.iter().find(|(word, _)| *word == text) {
            return Some(*value);
        }
        let words: Vec<&str> = choices.iter().map(|(word, _)| *word).collect();
        let mut diagnostic =
            Diagnostic::error(format!("`{text}` is not one of: {}", words.join(", ")))
                .at(locate(node, path));
        if let Some(suggestion) = crate::suggest::did_you_mean(&text, words.iter().copied()) {
            diagnostic = diagnostic.help(format!("did you mean `{suggestion}`?"));
        }
        self.errors.push(diagnostic);
        None
    }
}

/// `1.2.3`, optionally with `-pre.release` and `+build` parts.
fn is_semver(version: &str) -> bool {
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

fn parse_data_type(text: &str) -> Option<DataType> {
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
fn param_value_from_node(ty: ParamType, node: &Node) -> Result<Value, String> {
    let value = node_to_value(node)
        .ok_or_else(|| format!("expected {}, found {}", ty.keyword(), node.type_name()))?;
    crate::params::check_type(ty, value)
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

fn node_to_value(node: &Node) -> Option<Value> {
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
