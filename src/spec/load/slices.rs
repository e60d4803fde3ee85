//! `slices:` named per-item values, and the `by:`, `slices:` and `min_items:`
//! keys that break metrics and gates down by them.

use crate::base::value::slice_text;
use crate::spec::error::SpecError;
use crate::spec::load::{node_to_value, Loader, SLICE_KEYS};
use crate::spec::mapping::{locate, Mapping};
use crate::spec::model::*;
use crate::spec::yaml::{Node, NodeKind};

impl Loader {
    /// `NAME: EXPR`, or `NAME: {expr, values, unexpected}`.
    pub(super) fn slice(&mut self, name: Name, node: &Node, path: String) -> Option<SliceDecl> {
        if !matches!(node.kind, NodeKind::Map(_)) {
            let expr = self.expr(node, &path)?;
            return Some(SliceDecl {
                name,
                expr,
                values: None,
                unexpected: Unexpected::Warn,
            });
        }
        let mut map = Mapping::new(node, &path, "a slice", &mut self.errors)?;
        let expr = self.required_expr(&mut map, "expr", &name, &path);
        let values = map
            .take("values")
            .and_then(|n| self.slice_values(n, &map.path_of("values")));
        let unexpected = match map.take("unexpected") {
            None => Some(Unexpected::Warn),
            Some(n) => self.keyword(
                n,
                &map.path_of("unexpected"),
                &[("warn", Unexpected::Warn), ("fail", Unexpected::Fail)],
            ),
        };
        map.finish(SLICE_KEYS, &mut self.errors);
        Some(SliceDecl {
            name,
            expr: expr?,
            values,
            unexpected: unexpected?,
        })
    }

    /// `values: [a, b, 3, null]`: distinct scalars, kept as their slice text.
    fn slice_values(&mut self, node: &Node, path: &str) -> Option<Vec<(String, Node)>> {
        let NodeKind::Seq(items) = &node.kind else {
            let kind = SpecError::SliceValuesNotAList {
                found: node.type_name(),
            };
            self.report(kind, locate(node, path));
            return None;
        };
        let mut values: Vec<(String, Node)> = Vec::new();
        for item in items {
            let Some(text) = node_to_value(item).as_ref().and_then(slice_text) else {
                let kind = SpecError::BadSliceValue {
                    found: item.type_name(),
                };
                self.report(kind, locate(item, path));
                continue;
            };
            if values.iter().any(|(v, _)| **v == *text) {
                let kind = SpecError::DuplicateSliceValue {
                    value: text.to_string(),
                };
                self.report(kind, locate(item, path));
                continue;
            }
            values.push((text.to_string(), item.clone()));
        }
        Some(values)
    }

    /// `by: SLICE` or `by: [SLICE, …]`; empty without `by`.
    pub(super) fn by(&mut self, map: &mut Mapping<'_>) -> Vec<Name> {
        let Some(node) = map.take("by") else {
            return Vec::new();
        };
        let path = map.path_of("by");
        match &node.kind {
            NodeKind::Str(_) => self.name(node, &path).into_iter().collect(),
            NodeKind::Seq(items) if !items.is_empty() => {
                let mut names: Vec<Name> = Vec::new();
                for item in items {
                    let Some(name) = self.name(item, &path) else {
                        continue;
                    };
                    if names.iter().any(|n| n.text == name.text) {
                        let at = name.location();
                        self.report(SpecError::SliceTwiceInBy { slice: name.text }, at);
                        continue;
                    }
                    names.push(name);
                }
                names
            }
            _ => {
                let kind = SpecError::ByNotSlices {
                    found: node.type_name(),
                };
                self.report(kind, locate(node, &path));
                Vec::new()
            }
        }
    }

    /// A gate's `slices: every|worst` and `min_items: N`, which need `by`.
    pub(super) fn gate_slices(
        &mut self,
        map: &mut Mapping<'_>,
        by: &[Name],
    ) -> Option<((GateSlices, Option<Node>), usize)> {
        let slices_node = map.take("slices");
        let slices = match slices_node {
            None => Some(GateSlices::Every),
            Some(n) => self.keyword(
                n,
                &map.path_of("slices"),
                &[("every", GateSlices::Every), ("worst", GateSlices::Worst)],
            ),
        };
        let min_node = map.take("min_items");
        let min_items = match min_node {
            None => Some(0),
            Some(n) => match n.kind {
                NodeKind::Int(k) if k >= 1 => Some(k as usize),
                _ => {
                    let kind = SpecError::BadMinItems { text: n.key_text() };
                    self.report(kind, locate(n, &map.path_of("min_items")));
                    None
                }
            },
        };
        if by.is_empty() {
            for (key, node) in [("slices", slices_node), ("min_items", min_node)] {
                if let Some(node) = node {
                    let kind = SpecError::SliceKeyWithoutBy { key };
                    self.report(kind, locate(node, &map.path_of(key)));
                }
            }
        }
        Some(((slices?, slices_node.cloned()), min_items?))
    }
}
