//! Single values of the spec: names, expressions, strings, numbers, bools and
//! keywords, each checked where it is written.

use crate::spec::error::SpecError;
use crate::spec::load::Loader;
use crate::spec::mapping::{locate, Mapping};
use crate::spec::model::*;
use crate::spec::yaml::{Node, NodeKind};
use crate::syntax::is_identifier;

impl Loader {
    pub(super) fn required_expr(
        &mut self,
        map: &mut Mapping<'_>,
        key: &str,
        owner: &Name,
        path: &str,
    ) -> Option<ExprText> {
        match map.take(key) {
            Some(node) => self.expr(node, &map.path_of(key)),
            None => {
                let kind = SpecError::MissingExpr {
                    owner: owner.text.clone(),
                    key: key.to_string(),
                };
                self.report(kind, locate(&owner.node, path));
                None
            }
        }
    }

    pub(super) fn required_string(
        &mut self,
        map: &mut Mapping<'_>,
        key: &str,
        root: &Node,
    ) -> Option<String> {
        match map.take(key) {
            Some(node) => self.string(node, key),
            None => {
                let kind = SpecError::MissingTopKey {
                    key: key.to_string(),
                };
                self.report(kind, locate(root, ""));
                None
            }
        }
    }

    pub(super) fn expr(&mut self, node: &Node, path: &str) -> Option<ExprText> {
        match node.scalar_text() {
            Some(text) => Some(ExprText {
                text: text.into_owned(),
                node: node.clone(),
                key_path: path.to_string(),
            }),
            None => {
                let kind = SpecError::NotAnExpression {
                    found: node.type_name(),
                };
                self.report(kind, locate(node, path));
                None
            }
        }
    }

    pub(super) fn name(&mut self, node: &Node, path: &str) -> Option<Name> {
        let text = node.key_text();
        if is_identifier(&text) {
            return Some(Name {
                text,
                node: node.clone(),
                key_path: path.to_string(),
            });
        }
        self.report(SpecError::BadName { text }, locate(node, path));
        None
    }

    pub(super) fn string(&mut self, node: &Node, path: &str) -> Option<String> {
        if let NodeKind::Str(s) = &node.kind {
            return Some(s.clone());
        }
        let kind = SpecError::NotAString {
            found: node.type_name(),
        };
        self.report(kind, locate(node, path));
        None
    }

    pub(super) fn number(&mut self, node: &Node, path: &str) -> Option<f64> {
        match node.kind {
            NodeKind::Int(i) => Some(i as f64),
            NodeKind::Float(f) => Some(f),
            _ => {
                let kind = SpecError::NotANumber {
                    found: node.type_name(),
                };
                self.report(kind, locate(node, path));
                None
            }
        }
    }

    /// A number strictly between 0 and 1 (a confidence level or a significance).
    pub(super) fn probability(&mut self, node: &Node, path: &str) -> Option<f64> {
        let value = self.number(node, path)?;
        if value > 0.0 && value < 1.0 {
            return Some(value);
        }
        let kind = SpecError::NotAProbability {
            key: path.rsplit('.').next().unwrap_or(path).to_string(),
            value,
        };
        self.report(kind, locate(node, path));
        None
    }

    pub(super) fn bool(&mut self, node: &Node, path: &str) -> Option<bool> {
        if let NodeKind::Bool(b) = node.kind {
            return Some(b);
        }
        let kind = SpecError::NotABool {
            found: node.type_name(),
        };
        self.report(kind, locate(node, path));
        None
    }

    pub(super) fn keyword<T: Copy>(
        &mut self,
        node: &Node,
        path: &str,
        choices: &[(&str, T)],
    ) -> Option<T> {
        let text = node.key_text();
        if let Some((_, value)) = choices.iter().find(|(word, _)| *word == text) {
            return Some(*value);
        }
        let kind = SpecError::NotAKeyword {
            text,
            words: choices.iter().map(|(word, _)| word.to_string()).collect(),
        };
        self.report(kind, locate(node, path));
        None
    }
}
