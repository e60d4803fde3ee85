//! The `datasets:` section: each dataset's files, key, join, schema rules and
//! record checks, and the `params:` section.

use std::path::PathBuf;

use crate::spec::error::SpecError;
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
        let locked = map
            .take("locked")
            .and_then(|n| self.bool(n, &map.path_of("locked")))
            .unwrap_or(false);
        map.finish(PARAM_KEYS, &mut self.errors);
        let Some(ty_node) = ty_node else {
            let kind = SpecError::ParamNoType {
                param: name.text.clone(),
            };
            self.report(kind, locate(&name.node, &path));
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
            let kind = SpecError::ParamNoDefault {
                param: name.text.clone(),
            };
            self.report(kind, locate(&name.node, &path));
            return None;
        };
        let default_at = || locate(default_node, &join_path(&path, "default"));
        let default = match param_value_from_node(ty, default_node) {
            Ok(value) => value,
            Err(problem) => {
                let kind = SpecError::BadParamDefault {
                    param: name.text.clone(),
                    problem,
                };
                self.report(kind, default_at());
                return None;
            }
        };
        if let Err(problem) = check_param_range(&default, min, max) {
            let kind = SpecError::BadParamDefault {
                param: name.text.clone(),
                problem,
            };
            self.report(kind, default_at());
        }
        Some(ParamDecl {
            name,
            ty,
            default,
            min,
            max,
            description,
            locked,
        })
    }

    pub(super) fn dataset(&mut self, name: Name, node: &Node, path: String) -> Option<DatasetDecl> {
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
                let kind = SpecError::RunNameWithoutRuns {
                    dataset: name.text.clone(),
                };
                self.report(kind, locate(node, &map.path_of("run_name")));
                None
            }
            (runs, _, _) => runs,
        };
        if let (Some(runs), Some(_)) = (&runs, &data_path) {
            let kind = SpecError::PathAndRuns {
                dataset: name.text.clone(),
            };
            self.report(kind, locate(&runs.node, &map.path_of("runs")));
        }
        let frozen = map
            .take("frozen")
            .and_then(|n| self.bool(n, &map.path_of("frozen")))
            .unwrap_or(false);
        let allow_empty = map
            .take("allow_empty")
            .and_then(|n| self.bool(n, &map.path_of("allow_empty")))
            .unwrap_or(false);
        let key = match map.take("key") {
            Some(n) => self.expr(n, &map.path_of("key")),
            None => {
                let kind = SpecError::DatasetNoKey {
                    dataset: name.text.clone(),
                };
                self.report(kind, locate(&name.node, &path));
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
            allow_empty,
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
            let kind = SpecError::ChecksNotAList {
                found: node.type_name(),
            };
            self.report(kind, locate(node, path));
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
                (_, None) => self.report(SpecError::CheckIncomplete, locate(item, &item_path)),
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
                self.report(SpecError::NotAFieldPath { field }, locate(key, path));
                continue;
            }
            let (type_node, optional, nonempty, min, max) = match &value.kind {
                NodeKind::Str(_) => (value, None, false, None, None),
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
                    let max = rule
                        .take("max")
                        .and_then(|n| self.number(n, &rule.path_of("max")));
                    rule.finish(RULE_KEYS, &mut self.errors);
                    if let (Some(min), Some(max)) = (min, max) {
                        if min > max {
                            let kind = SpecError::RuleBoundsCrossed { field, min, max };
                            self.report(kind, locate(value, &rule_path));
                            continue;
                        }
                    }
                    match ty {
                        Some(ty) => (ty, optional, nonempty, min, max),
                        None => {
                            let at = locate(value, &rule_path);
                            self.report(SpecError::RuleNoType { field }, at);
                            continue;
                        }
                    }
                }
                _ => {
                    let kind = SpecError::BadRule {
                        found: value.type_name(),
                    };
                    self.report(kind, locate(value, &rule_path));
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
                // `min` and `max` bound numbers; on any other type they would be ignored.
                Some(ty)
                    if (min.is_some() || max.is_some())
                        && !matches!(ty, DataType::Number | DataType::Integer) =>
                {
                    let key = if min.is_some() { "min" } else { "max" };
                    let kind = SpecError::MinOnNonNumber { field, ty, key };
                    self.report(kind, locate(type_node, &rule_path));
                }
                Some(ty) => rules.push(FieldRule {
                    path: field_path,
                    each,
                    ty,
                    optional: optional.unwrap_or(question),
                    nonempty,
                    min,
                    max,
                    node: key.clone(),
                }),
                None => self.report(
                    SpecError::UnknownDataType { text },
                    locate(type_node, &rule_path),
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
                let kind = SpecError::BadRuns {
                    found: node.type_name(),
                };
                self.report(kind, locate(node, path));
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
            let at = locate(node, &path);
            if let Some(format) = format.filter(|f| !f.is_delimited()) {
                let kind = SpecError::CsvOptionOnFormat {
                    key,
                    format: format.keyword(),
                };
                self.report(kind, at);
                continue;
            }
            if key == "list_separator" {
                if text.is_empty() {
                    self.report(SpecError::EmptyListSeparator, at);
                } else {
                    options.list_separator = Some(text);
                }
                continue;
            }
            match text.as_bytes() {
                [b] if b.is_ascii() && !matches!(b, b'"' | b'\n' | b'\r') => {
                    options.delimiter = Some(*b);
                }
                _ => self.report(SpecError::BadDelimiter { text }, at),
            }
        }
        options
    }
}
