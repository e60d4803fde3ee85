//! The `datasets:` section: each dataset's files, key, join, schema rules and
//! record checks, and the `params:` section.

use std::path::PathBuf;

use crate::base::diagnostic::Diagnostic;
use crate::spec::load::{
    check_param_range, dir_of, param_value_from_node, parse_data_type, Loader, DATASET_KEYS,
    PARAM_KEYS, RULE_KEYS,
};
use crate::spec::mapping::{join_path, locate, Mapping};
use crate::spec::model::*;
use crate::spec::yaml::{Node, NodeKind};

impl Loader {
    pub(super) fn param(&mut self, name: Name, node: &Node, path: String) -> Option<ParamDecl> {
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

    pub(super) fn dataset(&mut self, name: Name, node: &Node, path: String) -> Option<DatasetDecl> {
        let mut map = Mapping::new(node, &path, "a dataset", &mut self.errors)?;
        let format = match map.take("format") {
            Some(n) => self.keyword(
                n,
                &map.path_of("format"),
                &[
                    ("jsonl", Format::Jsonl),
                    ("json", Format::Json),
                    ("trec_qrels", Format::TrecQrels),
                    ("trec_run", Format::TrecRun),
                ],
            ),
            None => Some(Format::Jsonl),
        };
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
        Some(DatasetDecl {
            name,
            format: format?,
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
    pub(super) fn checks(&mut self, node: &Node, path: &str) -> Vec<RecordCheck> {
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

    pub(super) fn schema(&mut self, node: &Node, path: &str) -> Vec<FieldRule> {
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

    /// `runs: PATTERN` or `runs: [PATTERN, ...]`: files, folders or globs.
    pub(super) fn runs(&mut self, node: &Node, path: &str) -> Option<RunsDecl> {
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
}
