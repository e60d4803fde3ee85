//! Reading a YAML mapping key by key, so that unknown keys can be reported (with a
//! suggestion) once every known key has been taken.

use crate::base::diagnostic::{Diagnostic, Location};
use crate::spec::error::SpecError;
use crate::spec::yaml::{Node, NodeKind};

pub struct Mapping<'a> {
    entries: Vec<(&'a Node, &'a Node, bool)>,
    pub key_path: String,
}

/// The location of a node, with its key path.
pub fn locate(node: &Node, key_path: &str) -> Location {
    node.location().with_key_path(key_path)
}

pub fn join_path(base: &str, key: &str) -> String {
    if base.is_empty() {
        key.to_string()
    } else {
        format!("{base}.{key}")
    }
}

impl<'a> Mapping<'a> {
    /// Views `node` as a mapping, or reports what it is instead.
    pub fn new(
        node: &'a Node,
        key_path: &str,
        what: &str,
        errors: &mut Vec<Diagnostic>,
    ) -> Option<Self> {
        match &node.kind {
            NodeKind::Map(entries) => Some(Self {
                entries: entries.iter().map(|(k, v)| (k, v, false)).collect(),
                key_path: key_path.to_string(),
            }),
            NodeKind::Null => Some(Self {
                entries: Vec::new(),
                key_path: key_path.to_string(),
            }),
            _ => {
                let kind = SpecError::NotAMapping {
                    what: what.to_string(),
                    found: node.type_name(),
                };
                errors.push(Diagnostic::of(&kind).at(locate(node, key_path)));
                None
            }
        }
    }

    /// Takes the value of `key`, marking it as known.
    pub fn take(&mut self, key: &str) -> Option<&'a Node> {
        self.entries
            .iter_mut()
            .find(|(k, _, _)| k.key_text() == key)
            .map(|entry| {
                entry.2 = true;
                entry.1
            })
    }

    /// The remaining entries, marking them as known (for mappings of user names).
    pub fn take_rest(&mut self) -> Vec<(&'a Node, &'a Node)> {
        self.entries
            .iter_mut()
            .filter(|entry| !entry.2)
            .map(|entry| {
                entry.2 = true;
                (entry.0, entry.1)
            })
            .collect()
    }

    pub fn path_of(&self, key: &str) -> String {
        join_path(&self.key_path, key)
    }

    /// Reports every key that was not taken, suggesting the closest known key.
    pub fn finish(self, known: &'static [&'static str], errors: &mut Vec<Diagnostic>) {
        for (key, _, used) in &self.entries {
            if *used {
                continue;
            }
            let kind = SpecError::UnknownKey {
                key: key.key_text(),
                known,
            };
            errors.push(Diagnostic::of(&kind).at(locate(key, &self.key_path)));
        }
    }
}
