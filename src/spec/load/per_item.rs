//! The per-item and metric sections: `matchers:` and `metrics:` (with `ks`
//! cutoffs), `labels:` and `offenders:`.

use crate::base::diagnostic::Diagnostic;
use crate::spec::load::{Loader, METRIC_KEYS, OFFENDER_KEYS};
use crate::spec::mapping::{join_path, locate, Mapping};
use crate::spec::model::*;
use crate::spec::yaml::{Node, NodeKind};
use crate::syntax::is_identifier;

impl Loader {
    pub(super) fn matcher(&mut self, name: Name, node: &Node, path: String) -> Option<MatcherDecl> {
        let mut map = Mapping::new(node, &path, "a matcher", &mut self.errors)?;
        let kind = match map.take("kind") {
            Some(kind) => self.name(kind, &map.path_of("kind")),
            None => {
                self.errors.push(
                    Diagnostic::error(format!("matcher `{}` has no `kind`", name.text))
                        .at(locate(&name.node, &path))
                        .help(format!(
                            "kinds: {}",
                            crate::library::matchers::KIND_NAMES.join(", ")
                        )),
                );
                None
            }
        };
        let args = map
            .take_rest()
            .into_iter()
            .map(|(key, value)| {
                let key_path = join_path(&path, &key.key_text());
                MatcherArg {
                    expr: value.scalar_text().map(|text| ExprText {
                        text: text.into_owned(),
                        node: value.clone(),
                        key_path: key_path.clone(),
                    }),
                    constant: match &value.kind {
                        NodeKind::Bool(b) => Constant::Bool(*b),
                        NodeKind::Int(n) => Constant::Int(*n),
                        NodeKind::Str(s) => Constant::Str(s.clone()),
                        _ => Constant::Other,
                    },
                    type_name: value.type_name(),
                    at: value.location().with_key_path(&key_path),
                    name: Name {
                        text: key.key_text(),
                        node: key.clone(),
                        key_path,
                    },
                }
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
    pub(super) fn cutoff_template(&mut self, node: &Node, path: &str) -> Option<Name> {
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
    pub(super) fn metric(&mut self, name: Name, node: &Node, path: String) -> Vec<MetricDecl> {
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
    pub(super) fn cutoffs(&mut self, node: &Node, path: &str) -> Vec<u32> {
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

    /// `labels:` a list of `LABEL: condition`, first match wins.
    pub(super) fn labels(&mut self, node: &Node) -> Vec<LabelRule> {
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

    pub(super) fn offenders(&mut self, node: &Node) -> Option<OffendersDecl> {
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
}
