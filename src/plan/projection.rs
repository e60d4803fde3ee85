//! Projection: which fields of a dataset's records the plan reads, and in which slot
//! each is kept. Only these are materialised when a record is parsed; the rest of
//! the line is skipped.

use crate::ir::SlotId;

/// The fields to read from one record, as a tree. A field read whole gets a slot;
/// deeper paths under it are resolved at run time from that value.
#[derive(Debug, Default, Clone)]
pub struct Projection {
    /// The whole record is read (an expression uses the bare dataset name).
    pub whole: Option<SlotId>,
    pub fields: Vec<(String, ProjectedField)>,
    pub slot_count: usize,
}

#[derive(Debug, Clone)]
pub enum ProjectedField {
    Slot(SlotId),
    Nested(Vec<(String, ProjectedField)>),
}

/// A resolved path: a slot, then field names to read from the slot's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldPath {
    pub slot: SlotId,
    pub rest: Vec<String>,
}

#[derive(Default)]
struct Trie {
    whole: bool,
    children: Vec<(String, Trie)>,
}

impl Trie {
    fn insert(&mut self, path: &[String]) {
        match path.split_first() {
            None => self.whole = true,
            Some((head, tail)) => {
                let index = match self.children.iter().position(|(name, _)| name == head) {
                    Some(index) => index,
                    None => {
                        self.children.push((head.clone(), Trie::default()));
                        self.children.len() - 1
                    }
                };
                self.children[index].1.insert(tail);
            }
        }
    }
}

impl Projection {
    /// Builds the projection that serves every path in `paths`.
    pub fn build<'a>(paths: impl IntoIterator<Item = &'a [String]>) -> Projection {
        let mut trie = Trie::default();
        for path in paths {
            trie.insert(path);
        }
        let mut slot_count = 0;
        if trie.whole {
            return Projection {
                whole: Some(SlotId::new(0)),
                fields: Vec::new(),
                slot_count: 1,
            };
        }
        let fields = Self::assign(&mut trie.children, &mut slot_count);
        Projection {
            whole: None,
            fields,
            slot_count,
        }
    }

    fn assign(children: &mut [(String, Trie)], next: &mut usize) -> Vec<(String, ProjectedField)> {
        children.sort_by(|a, b| a.0.cmp(&b.0));
        children
            .iter_mut()
            .map(|(name, trie)| {
                let field = if trie.whole || trie.children.is_empty() {
                    *next += 1;
                    ProjectedField::Slot(SlotId::new(*next - 1))
                } else {
                    ProjectedField::Nested(Self::assign(&mut trie.children, next))
                };
                (name.clone(), field)
            })
            .collect()
    }

    /// Where the value at `path` lives.
    pub fn resolve(&self, path: &[String]) -> FieldPath {
        if let Some(slot) = self.whole {
            return FieldPath {
                slot,
                rest: path.to_vec(),
            };
        }
        let mut fields = &self.fields;
        for (depth, name) in path.iter().enumerate() {
            match fields.iter().find(|(n, _)| n == name).map(|(_, f)| f) {
                Some(ProjectedField::Slot(slot)) => {
                    return FieldPath {
                        slot: *slot,
                        rest: path[depth + 1..].to_vec(),
                    };
                }
                Some(ProjectedField::Nested(inner)) => fields = inner,
                None => break,
            }
        }
        unreachable!("path {path:?} was not registered in the projection")
    }

    /// The projected fields as dotted paths, for `check`.
    pub fn describe(&self) -> Vec<String> {
        if self.whole.is_some() {
            return vec!["(the whole record)".into()];
        }
        let mut out = Vec::new();
        fn walk(prefix: &str, fields: &[(String, ProjectedField)], out: &mut Vec<String>) {
            for (name, field) in fields {
                let path = if prefix.is_empty() {
                    name.clone()
                } else {
                    format!("{prefix}.{name}")
                };
                match field {
                    ProjectedField::Slot(_) => out.push(path),
                    ProjectedField::Nested(inner) => walk(&path, inner, out),
                }
            }
        }
        walk("", &self.fields, &mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &str) -> Vec<String> {
        p.split('.').map(str::to_string).collect()
    }

    #[test]
    fn a_field_read_whole_serves_deeper_paths() {
        let paths = [
            path("qid"),
            path("answer_json.claim"),
            path("answer_json"),
            path("meta.a.b"),
            path("meta.c"),
        ];
        let projection = Projection::build(paths.iter().map(Vec::as_slice));
        assert_eq!(
            projection.describe(),
            ["answer_json", "meta.a.b", "meta.c", "qid"]
        );
        assert_eq!(projection.slot_count, 4);
        let claim = projection.resolve(&path("answer_json.claim"));
        assert_eq!(claim.rest, ["claim"]);
        assert_eq!(claim.slot, projection.resolve(&path("answer_json")).slot);
        assert!(projection.resolve(&path("meta.c")).rest.is_empty());
    }

    #[test]
    fn the_bare_record_reads_everything() {
        let paths = [path("qid"), vec![]];
        let projection = Projection::build(paths.iter().map(Vec::as_slice));
        assert_eq!(projection.whole, Some(SlotId::new(0)));
        assert_eq!(
            projection.resolve(&path("qid")),
            FieldPath {
                slot: SlotId::new(0),
                rest: path("qid")
            }
        );
    }
}
