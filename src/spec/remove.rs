//! `remove:` in a spec that `extends` another: names of the base's gates,
//! metrics and reports to drop before this spec is merged into it. Merging
//! alone can only add or change keys; removing is said once, by name, so that a
//! misspelled name is an error (with a suggestion) rather than a silent no-op.
//! A name removed and declared again in the same spec is replaced whole.

use crate::base::diagnostic::Diagnostic;
use crate::spec::error::SpecError;
use crate::spec::mapping::{locate, Mapping};
use crate::spec::yaml::{Node, NodeKind};

/// The sections `remove:` may name entries of.
pub const REMOVE_KEYS: &[&str] = &["gates", "metrics", "reports"];

/// The reports a spec without `reports:` writes: what removing from it starts from.
const DEFAULT_REPORTS: &[&str] = &["markdown"];

/// Takes `remove` out of a spec's top mapping, with its key (for locating errors).
pub fn take(root: &mut Node) -> Option<(Node, Node)> {
    let NodeKind::Map(entries) = &mut root.kind else {
        return None;
    };
    let index = entries.iter().position(|(k, _)| k.key_text() == "remove")?;
    Some(entries.remove(index))
}

/// A spec without `extends` has no base to remove from.
pub fn without_base(key: &Node) -> Diagnostic {
    Diagnostic::of(&SpecError::RemoveWithoutExtends).at(locate(key, "remove"))
}

/// Drops from `base` every entry that `remove` names; every error is collected.
pub fn apply(base: &mut Node, remove: &Node) -> Vec<Diagnostic> {
    let mut errors = Vec::new();
    let Some(mut map) = Mapping::new(remove, "remove", "`remove`", &mut errors) else {
        return errors;
    };
    for section in REMOVE_KEYS {
        let Some(list) = map.take(section) else {
            continue;
        };
        let path = map.path_of(section);
        for name in names(list, &path, &mut errors) {
            let removed = match *section {
                "reports" => remove_report(base, name),
                _ => remove_entry(base, section, name),
            };
            if let Err(known) = removed {
                let kind = SpecError::RemoveUnknown {
                    section,
                    name: name.key_text(),
                    known,
                };
                errors.push(Diagnostic::of(&kind).at(locate(name, &path)));
            }
        }
    }
    map.finish(REMOVE_KEYS, &mut errors);
    errors
}

/// The string nodes of a list of names.
fn names<'a>(list: &'a Node, path: &str, errors: &mut Vec<Diagnostic>) -> Vec<&'a Node> {
    let items: &[Node] = match &list.kind {
        NodeKind::Seq(items) => items,
        _ => std::slice::from_ref(list),
    };
    items
        .iter()
        .filter(|item| {
            let ok = matches!(item.kind, NodeKind::Str(_));
            if !ok {
                let kind = SpecError::RemoveNotAName {
                    found: item.type_name(),
                };
                errors.push(Diagnostic::of(&kind).at(locate(item, path)));
            }
            ok
        })
        .collect()
}

/// The entry of `section` in the base's top mapping.
fn section<'a>(base: &'a mut Node, section: &str) -> Option<&'a mut Node> {
    let NodeKind::Map(entries) = &mut base.kind else {
        return None;
    };
    entries
        .iter_mut()
        .find(|(k, _)| k.key_text() == section)
        .map(|(_, v)| v)
}

/// Removes `name` from the mapping `section`, or gives the names it has.
fn remove_entry(base: &mut Node, section_name: &str, name: &Node) -> Result<(), Vec<String>> {
    let Some(Node {
        kind: NodeKind::Map(entries),
        ..
    }) = section(base, section_name)
    else {
        return Err(Vec::new());
    };
    let wanted = name.key_text();
    match entries.iter().position(|(k, _)| k.key_text() == wanted) {
        Some(index) => {
            entries.remove(index);
            Ok(())
        }
        None => Err(entries.iter().map(|(k, _)| k.key_text()).collect()),
    }
}

/// Removes every report that `name` names (its format, template or output path),
/// or gives the names the base's reports go by.
fn remove_report(base: &mut Node, name: &Node) -> Result<(), Vec<String>> {
    let wanted = name.key_text();
    if section(base, "reports").is_none() {
        // No `reports:`: the default ones, which removing turns into a list.
        if !DEFAULT_REPORTS.contains(&wanted.as_str()) {
            return Err(DEFAULT_REPORTS.iter().map(|r| r.to_string()).collect());
        }
        let reports: Vec<Node> = DEFAULT_REPORTS
            .iter()
            .filter(|r| **r != wanted)
            .map(|r| like(name, NodeKind::Str(r.to_string())))
            .collect();
        if let NodeKind::Map(entries) = &mut base.kind {
            let key = like(name, NodeKind::Str("reports".into()));
            entries.push((key, like(name, NodeKind::Seq(reports))));
        }
        return Ok(());
    }
    let Some(Node {
        kind: NodeKind::Seq(items),
        ..
    }) = section(base, "reports")
    else {
        return Err(Vec::new());
    };
    let before = items.len();
    items.retain(|item| !report_names(item).contains(&wanted));
    if items.len() < before {
        return Ok(());
    }
    Err(items
        .iter()
        .filter_map(|i| report_names(i).first().cloned())
        .collect())
}

/// What a report entry may be named by: `markdown`, or its `format`, `template`
/// and `path`.
fn report_names(item: &Node) -> Vec<String> {
    match &item.kind {
        NodeKind::Str(s) => vec![s.clone()],
        NodeKind::Map(entries) => ["format", "template", "path"]
            .iter()
            .filter_map(|key| entries.iter().find(|(k, _)| k.key_text() == *key))
            .filter_map(|(_, v)| match &v.kind {
                NodeKind::Str(s) => Some(s.clone()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// A node written where `at` is, so that it renders and locates like the spec's own.
fn like(at: &Node, kind: NodeKind) -> Node {
    Node {
        kind,
        source: at.source.clone(),
        offset: at.offset,
        len: at.len,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use super::*;
    use crate::base::source::SourceFile;
    use crate::spec::extends::render;
    use crate::spec::yaml;

    fn parse(text: &str) -> Node {
        let source = Arc::new(SourceFile::new(Path::new("t.yaml"), text.to_string()));
        yaml::parse(&source).unwrap()
    }

    #[test]
    fn named_entries_go_and_the_rest_keep_their_order() {
        let mut base = parse(
            "gates:\n  a: x\n  b: y\n  c: z\nreports:\n  - markdown\n  - {format: junit, path: g.xml}\n  - {template: t.j2, path: t.md}\n",
        );
        let errors = apply(&mut base, &parse("gates: [b]\nreports: [g.xml, t.j2]\n"));
        assert!(errors.is_empty());
        assert_eq!(
            render(&base),
            "gates:\n  a: x\n  c: z\nreports:\n  - markdown\n"
        );
    }

    #[test]
    fn the_default_reports_are_removed_from_as_a_list() {
        let mut base = parse("gates:\n  a: x\n");
        assert!(apply(&mut base, &parse("reports: markdown\n")).is_empty());
        assert_eq!(render(&base), "gates:\n  a: x\nreports: []\n");
        let errors = apply(&mut base, &parse("reports: [markdown]\nmetrics: [m]\n"));
        assert_eq!(
            errors.len(),
            2,
            "no report and no metrics section to remove from"
        );
    }
}
