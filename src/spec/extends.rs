//! `extends: base.yaml`: a spec read on top of another. The base is resolved first
//! (it may extend a spec of its own), then the spec's mappings are merged into it key
//! by key, at any depth; a list or a scalar replaces the base's value whole, and
//! `remove:` drops the base's gates, metrics or reports by name first
//! ([`crate::spec::remove`]). Nodes keep their files, so errors and relative
//! paths stay with the file that wrote them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::base::diagnostic::Diagnostic;
use crate::base::source::SourceFile;
use crate::spec::error::SpecError;
use crate::spec::mapping::locate;
use crate::spec::remove;
use crate::spec::yaml::{self, Node, NodeKind};

/// A spec's merged tree and the files it came from, the spec itself first.
pub struct Resolved {
    pub root: Node,
    pub files: Vec<Arc<SourceFile>>,
}

/// Reads the spec at `path` and, through `extends`, every spec below it.
pub fn resolve(path: &Path) -> Result<Resolved, Vec<Diagnostic>> {
    let mut files = Vec::new();
    let root = read_chain(path, None, &mut files, &mut Vec::new())?;
    Ok(Resolved { root, files })
}

/// The most specs an `extends` chain reads (the spec and its bases): the
/// chain is read recursively, and a longer one is a mistake, not a release.
pub const MAX_EXTENDS: usize = 64;

/// Reads `path` and its bases; `identities` are the resolved paths of `files`,
/// to find a cycle without resolving every file again at each step.
fn read_chain(
    path: &Path,
    from: Option<&Node>,
    files: &mut Vec<Arc<SourceFile>>,
    identities: &mut Vec<PathBuf>,
) -> Result<Node, Vec<Diagnostic>> {
    if let (Some(node), true) = (from, files.len() >= MAX_EXTENDS) {
        let kind = SpecError::ExtendsTooDeep { limit: MAX_EXTENDS };
        return Err(vec![Diagnostic::of(&kind).at(locate(node, "extends"))]);
    }
    let text = crate::base::files::read_text(path).map_err(|error| {
        let kind = SpecError::CannotReadSpec {
            path: path.display().to_string(),
            error: error.to_string(),
            via_extends: from.is_some(),
        };
        let d = Diagnostic::of(&kind);
        vec![match (crate::base::files::NotUtf8::of(&error), from) {
            (Some(at), _) => d.at(crate::base::diagnostic::Location::in_data(
                &path.display().to_string(),
                at.line,
                Some(at.column),
            )),
            (None, Some(node)) => d.at(locate(node, "extends")),
            (None, None) => d,
        }]
    })?;
    let identity = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if let Some(first) = identities.iter().position(|seen| *seen == identity) {
        let mut chain: Vec<String> = files[first..].iter().map(|f| f.display.clone()).collect();
        chain.push(files[first].display.clone());
        let node = from.expect("a repeated file is reached through `extends`");
        let kind = SpecError::ExtendsCycle { chain };
        return Err(vec![Diagnostic::of(&kind).at(locate(node, "extends"))]);
    }
    let source = Arc::new(SourceFile::new(path, text));
    files.push(source.clone());
    identities.push(identity);
    let mut root = yaml::parse(&source).map_err(|d| vec![d])?;
    let removals = remove::take(&mut root);
    let Some(base) = take_extends(&mut root).map_err(|d| vec![d])? else {
        return match removals {
            Some((key, _)) => Err(vec![remove::without_base(&key)]),
            None => Ok(root),
        };
    };
    let base_path = lexically_normal(&path.parent().unwrap_or(Path::new("")).join(&base.0));
    let mut base_root = read_chain(&base_path, Some(&base.1), files, identities)?;
    if let Some((_, removals)) = removals {
        let errors = remove::apply(&mut base_root, &removals);
        if !errors.is_empty() {
            return Err(errors);
        }
    }
    Ok(merge(base_root, root))
}

/// `a/b/../c` as `a/c`, so that messages show the path a user would write.
fn lexically_normal(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    // `extends: "."` names the spec's folder: shown as `.`, not as nothing.
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// Removes `extends` from a spec's top mapping, returning its path and node.
fn take_extends(root: &mut Node) -> Result<Option<(PathBuf, Node)>, Diagnostic> {
    let NodeKind::Map(entries) = &mut root.kind else {
        return Ok(None);
    };
    let Some(index) = entries.iter().position(|(k, _)| k.key_text() == "extends") else {
        return Ok(None);
    };
    let (_, node) = entries.remove(index);
    match &node.kind {
        NodeKind::Str(path) if !path.trim().is_empty() => Ok(Some((PathBuf::from(path), node))),
        _ => {
            let found = match &node.kind {
                NodeKind::Str(_) => "an empty path",
                _ => node.type_name(),
            };
            let kind = SpecError::BadExtends { found };
            Err(Diagnostic::of(&kind).at(locate(&node, "extends")))
        }
    }
}

/// `over` on top of `base`: mappings merge key by key (a new key goes last, an
/// existing one keeps its place); anything else replaces.
pub fn merge(base: Node, over: Node) -> Node {
    match (base.kind, over.kind) {
        (NodeKind::Map(mut entries), NodeKind::Map(overrides)) => {
            for (key, value) in overrides {
                let text = key.key_text();
                match entries.iter().position(|(k, _)| k.key_text() == text) {
                    Some(i) => {
                        let (_, old) = entries.remove(i);
                        entries.insert(i, (key, merge(old, value)));
                    }
                    None => entries.push((key, value)),
                }
            }
            Node {
                kind: NodeKind::Map(entries),
                source: over.source,
                offset: over.offset,
                len: over.len,
            }
        }
        (_, kind) => Node {
            kind,
            source: over.source,
            offset: over.offset,
            len: over.len,
        },
    }
}

/// The merged spec as YAML: block style, strings quoted unless plainly safe, numbers
/// as they were written. This is what a spec built through `extends` is hashed as.
pub fn render(node: &Node) -> String {
    let mut out = String::new();
    write_node(node, 0, &mut out);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

fn write_node(node: &Node, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match &node.kind {
        NodeKind::Map(entries) if !entries.is_empty() => {
            for (key, value) in entries {
                out.push_str(&pad);
                out.push_str(&scalar(key));
                out.push(':');
                write_value(value, indent, out);
            }
        }
        NodeKind::Seq(items) if !items.is_empty() => {
            for item in items {
                out.push_str(&pad);
                out.push('-');
                match &item.kind {
                    NodeKind::Map(entries) if !entries.is_empty() => {
                        // `- key: value` with the rest of the mapping aligned under it.
                        let mut nested = String::new();
                        write_node(item, indent + 2, &mut nested);
                        out.push(' ');
                        out.push_str(nested.trim_start());
                    }
                    _ => write_value(item, indent, out),
                }
            }
        }
        _ => {
            out.push_str(&pad);
            out.push_str(&scalar(node));
            out.push('\n');
        }
    }
}

/// After `key:` or `-`: a scalar on the same line, a collection below.
fn write_value(value: &Node, indent: usize, out: &mut String) {
    match &value.kind {
        NodeKind::Map(e) if !e.is_empty() => {
            out.push('\n');
            write_node(value, indent + 2, out);
        }
        NodeKind::Seq(s) if !s.is_empty() => {
            out.push('\n');
            write_node(value, indent + 2, out);
        }
        _ => {
            out.push(' ');
            out.push_str(&scalar(value));
            out.push('\n');
        }
    }
}

fn scalar(node: &Node) -> String {
    match &node.kind {
        NodeKind::Null => "null".into(),
        NodeKind::Bool(b) => b.to_string(),
        NodeKind::Int(_) | NodeKind::Float(_) => node
            .scalar_text()
            .map(|t| t.trim().to_string())
            .unwrap_or_default(),
        NodeKind::Str(s) if plain_safe(s) => s.clone(),
        // A JSON string is a valid YAML double-quoted scalar.
        NodeKind::Str(s) => serde_json::to_string(s).unwrap_or_default(),
        NodeKind::Map(_) => "{}".into(),
        NodeKind::Seq(_) => "[]".into(),
    }
}

/// Strings that read back as the same string when written bare.
fn plain_safe(s: &str) -> bool {
    let first = s.chars().next();
    first.is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n"
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Node {
        let source = Arc::new(SourceFile::new(Path::new("t.yaml"), text.to_string()));
        yaml::parse(&source).unwrap()
    }

    #[test]
    fn mappings_merge_and_the_rest_replaces() {
        let base = parse("a: 1\nb:\n  x: 1\n  y: [1, 2]\nc: keep\n");
        let over = parse("b:\n  y: [3]\n  z: new\nd: added\n");
        assert_eq!(
            render(&merge(base, over)),
            "a: 1\nb:\n  x: 1\n  \"y\":\n    - 3\n  z: new\nc: keep\nd: added\n"
        );
    }

    #[test]
    fn rendering_reads_back_the_same() {
        let text = "name: \"x: y\"\nlist:\n  - {a: 1, b: \"two\\n\"}\n  - plain\n  - 'yes'\nf: 1.50\nempty: {}\nnone: []\nn: null\n";
        let once = render(&parse(text));
        assert_eq!(render(&parse(&once)), once);
        assert!(once.contains("f: 1.50\n"), "{once}");
        assert!(once.contains("- \"yes\"\n"), "{once}");
        assert!(once.contains("  - a: 1\n    b: \"two\\n\"\n"), "{once}");
    }
}
