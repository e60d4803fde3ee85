//! Single values of the spec: names, expressions, strings, numbers, bools and
//! keywords, each checked where it is written.

use crate::base::diagnostic::Diagnostic;
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
                self.errors.push(
                    Diagnostic::error(format!("`{}` has no `{key}`", owner.text))
                        .at(locate(&owner.node, path))
                        .help(format!("add `{key}: …` with the expression")),
                );
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
                self.errors.push(
                    Diagnostic::error(format!("the spec has no `{key}`"))
                        .at(locate(root, ""))
                        .help(format!("add a top-level `{key}:`")),
                );
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
                self.errors.push(
                    Diagnostic::error(format!("expected an expression, found {}", node.type_name()))
                        .at(locate(node, path))
                        .help("write the expression as a string; quote it if it starts with `[` or contains `: `"),
                );
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
        self.errors.push(
            Diagnostic::error(format!("`{text}` is not a valid name"))
                .at(locate(node, path))
                .help("names start with a letter or `_` and contain letters, digits and `_`; keywords are reserved"),
        );
        None
    }

    pub(super) fn string(&mut self, node: &Node, path: &str) -> Option<String> {
        if let NodeKind::Str(s) = &node.kind {
            return Some(s.clone());
        }
        self.errors.push(
            Diagnostic::error(format!("expected a string, found {}", node.type_name()))
                .at(locate(node, path)),
        );
        None
    }

    pub(super) fn number(&mut self, node: &Node, path: &str) -> Option<f64> {
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

    pub(super) fn bool(&mut self, node: &Node, path: &str) -> Option<bool> {
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
        let words: Vec<&str> = choices.iter().map(|(word, _)| *word).collect();
        let mut diagnostic =
            Diagnostic::error(format!("`{text}` is not one of: {}", words.join(", ")))
                .at(locate(node, path));
        if let Some(suggestion) = crate::base::suggest::did_you_mean(&text, words.iter().copied()) {
            diagnostic = diagnostic.help(format!("did you mean `{suggestion}`?"));
        }
        self.errors.push(diagnostic);
        None
    }
}
