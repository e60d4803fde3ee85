//! The per-item and metric sections: `matchers:` and `metrics:` (with `ks`
//! cutoffs), `labels:` and `offenders:`.

use crate::spec::error::SpecError;
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
                let kind = SpecError::MatcherNoKind {
                    matcher: name.text.clone(),
                    kinds: crate::library::matchers::KIND_NAMES,
                };
                self.report(kind, locate(&name.node, &path));
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
                let kind = SpecError::CutoffWithoutKs {
                    metric: name.text.clone(),
                    is_mapping: false,
                };
                self.report(kind, locate(&name.node, &path));
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
                by: Vec::new(),
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
                self.report(SpecError::NegativeTolerance { value }, locate(n, &path));
                return None;
            }
            Some(value)
        });
        let by = self.by(&mut map);
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
            by: by.clone(),
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
                let kind = SpecError::CutoffWithoutKs {
                    metric: name.text.clone(),
                    is_mapping: true,
                };
                self.report(kind, locate(&name.node, &path));
                Vec::new()
            }
            (Some((node, _)), false) => {
                let kind = SpecError::KsWithoutCutoff {
                    metric: name.text.clone(),
                };
                self.report(kind, locate(node, &join_path(&path, "ks")));
                Vec::new()
            }
        }
    }

    /// `ks: [1, 3, 5]`: distinct whole numbers ≥ 1.
    pub(super) fn cutoffs(&mut self, node: &Node, path: &str) -> Vec<u32> {
        let items = match &node.kind {
            NodeKind::Seq(items) => items,
            _ => {
                let kind = SpecError::KsNotAList {
                    found: node.type_name(),
                };
                self.report(kind, locate(node, path));
                return Vec::new();
            }
        };
        let mut ks: Vec<u32> = Vec::new();
        for item in items {
            match item.kind {
                NodeKind::Int(k) if k >= 1 && !ks.contains(&(k as u32)) => ks.push(k as u32),
                _ => {
                    let kind = SpecError::BadCutoff {
                        text: item.key_text(),
                    };
                    self.report(kind, locate(item, path));
                }
            }
        }
        ks
    }

    /// `labels:` a list of `LABEL: condition`, first match wins.
    pub(super) fn labels(&mut self, node: &Node) -> Vec<LabelRule> {
        let NodeKind::Seq(rules) = &node.kind else {
            let kind = SpecError::LabelsNotAList {
                found: node.type_name(),
            };
            self.report(kind, locate(node, "labels"));
            return Vec::new();
        };
        let mut out: Vec<LabelRule> = Vec::new();
        for (i, rule) in rules.iter().enumerate() {
            let path = format!("labels[{i}]");
            let entry = match &rule.kind {
                NodeKind::Map(entries) if entries.len() == 1 => &entries[0],
                _ => {
                    let kind = SpecError::BadLabelRule {
                        found: rule.type_name(),
                    };
                    self.report(kind, locate(rule, &path));
                    continue;
                }
            };
            let (Some(label), Some(expr)) =
                (self.name(&entry.0, &path), self.expr(&entry.1, &path))
            else {
                continue;
            };
            if out.iter().any(|r| r.label.text == label.text) {
                let kind = SpecError::DuplicateLabel { label: label.text };
                self.report(kind, locate(&entry.0, &path));
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
                self.report(SpecError::OffendersNoWhen, locate(node, "offenders"));
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
                    let kind = SpecError::ShowNotAList {
                        found: n.type_name(),
                    };
                    self.report(kind, locate(n, "offenders.show"));
                    Vec::new()
                }
            },
        };
        let limit = match map.take("limit") {
            None => Some(10),
            Some(n) => match n.kind {
                NodeKind::Int(k) if k >= 1 => Some(k as usize),
                _ => {
                    let kind = SpecError::BadLimit { text: n.key_text() };
                    self.report(kind, locate(n, "offenders.limit"));
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
