//! YAML loading: the only module that knows serde-saphyr. A spec becomes a tree of
//! [`Node`]s that remember their file and where each value starts, so that later
//! stages can point at a key, a value, or a character inside an expression string,
//! even in a tree merged from several files (`extends`).

use std::sync::Arc;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

use crate::base::diagnostic::{Diagnostic, Location};
use crate::base::source::SourceFile;
use crate::spec::error::SpecError;

#[derive(Debug, Clone)]
pub struct Node {
    pub kind: NodeKind,
    /// The file the value was read from.
    pub source: Arc<SourceFile>,
    /// Byte offset of the value's first character in the source (the opening quote of
    /// a quoted scalar, the first content character of a block scalar).
    pub offset: usize,
    /// Length in bytes of the value's text in the source.
    pub len: usize,
}

#[derive(Debug, Clone)]
pub enum NodeKind {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

impl Node {
    pub fn type_name(&self) -> &'static str {
        match self.kind {
            NodeKind::Null => "null",
            NodeKind::Bool(_) => "a boolean",
            NodeKind::Int(_) => "an integer",
            NodeKind::Float(_) => "a number",
            NodeKind::Str(_) => "a string",
            NodeKind::Seq(_) => "a list",
            NodeKind::Map(_) => "a mapping",
        }
    }

    /// The key text of a mapping key node (keys are scalars; others print as their type).
    pub fn key_text(&self) -> String {
        match &self.kind {
            NodeKind::Str(s) => s.clone(),
            NodeKind::Int(i) => i.to_string(),
            NodeKind::Float(f) => f.to_string(),
            NodeKind::Bool(b) => b.to_string(),
            NodeKind::Null => "null".into(),
            _ => self.type_name().into(),
        }
    }

    /// A scalar as the text the user wrote, for values that may be an expression or a
    /// plain string (`empty: 1.0`, `expr: true`).
    pub fn scalar_text(&self) -> Option<std::borrow::Cow<'_, str>> {
        match &self.kind {
            NodeKind::Str(s) => Some(s.as_str().into()),
            NodeKind::Null | NodeKind::Bool(_) | NodeKind::Int(_) | NodeKind::Float(_) => self
                .source
                .text
                .get(self.offset..self.offset + self.len)
                .map(Into::into),
            _ => None,
        }
    }

    /// Maps a byte offset inside this scalar's decoded text to a byte offset in the
    /// source. Quotes, escapes and block indentation make the two differ; aligning the
    /// decoded characters greedily against the raw text handles all YAML scalar styles
    /// well enough to put a caret under the right character.
    pub fn source_offset(&self, decoded: &str, at: usize) -> usize {
        let text = &self.source.text;
        let raw = &text[self.offset.min(text.len())..];
        let mut raw_chars = raw.char_indices().peekable();
        let mut last = 0;
        for (index, ch) in decoded.char_indices() {
            if index >= at {
                break;
            }
            // Skip raw characters (quotes, backslashes, indentation) until this one.
            let mut found = None;
            for (raw_index, raw_ch) in raw_chars.by_ref() {
                if raw_ch == ch || (ch == ' ' && raw_ch == '\n') {
                    found = Some(raw_index);
                    break;
                }
            }
            match found {
                Some(raw_index) => last = raw_index + ch.len_utf8(),
                None => return self.offset + last,
            }
        }
        // Step over the quote or escape that may precede the target character.
        let target = decoded[at.min(decoded.len())..].chars().next();
        if let Some(target) = target {
            for (raw_index, raw_ch) in raw_chars {
                if raw_ch == target {
                    return self.offset + raw_index;
                }
            }
        }
        self.offset + last
    }

    /// Where the value is.
    pub fn location(&self) -> Location {
        Location::in_source(&self.source, self.offset, self.len.max(1))
    }
}

/// A value as deserialized, before it is told its file.
struct RawNode {
    kind: RawKind,
    offset: usize,
    len: usize,
}

enum RawKind {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<RawNode>),
    Map(Vec<(RawNode, RawNode)>),
}

impl RawNode {
    fn into_node(self, source: &Arc<SourceFile>) -> Node {
        let kind = match self.kind {
            RawKind::Null => NodeKind::Null,
            RawKind::Bool(b) => NodeKind::Bool(b),
            RawKind::Int(i) => NodeKind::Int(i),
            RawKind::Float(f) => NodeKind::Float(f),
            RawKind::Str(s) => NodeKind::Str(s),
            RawKind::Seq(items) => {
                NodeKind::Seq(items.into_iter().map(|n| n.into_node(source)).collect())
            }
            RawKind::Map(entries) => NodeKind::Map(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.into_node(source), v.into_node(source)))
                    .collect(),
            ),
        };
        Node {
            kind,
            source: source.clone(),
            offset: self.offset,
            len: self.len,
        }
    }
}

impl<'de> Deserialize<'de> for RawNode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let spanned = Spanned::<RawKind>::deserialize(deserializer)?;
        let span = spanned.referenced.span();
        Ok(RawNode {
            kind: spanned.value,
            offset: span.byte_offset().unwrap_or(0) as usize,
            len: span.byte_len().unwrap_or(0) as usize,
        })
    }
}

impl<'de> Deserialize<'de> for RawKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KindVisitor;
        impl<'de> Visitor<'de> for KindVisitor {
            type Value = RawKind;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any YAML value")
            }
            fn visit_unit<E>(self) -> Result<RawKind, E> {
                Ok(RawKind::Null)
            }
            fn visit_none<E>(self) -> Result<RawKind, E> {
                Ok(RawKind::Null)
            }
            fn visit_bool<E>(self, v: bool) -> Result<RawKind, E> {
                Ok(RawKind::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<RawKind, E> {
                Ok(RawKind::Int(v))
            }
            fn visit_u64<E>(self, v: u64) -> Result<RawKind, E> {
                Ok(i64::try_from(v).map_or(RawKind::Float(v as f64), RawKind::Int))
            }
            fn visit_f64<E>(self, v: f64) -> Result<RawKind, E> {
                Ok(RawKind::Float(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<RawKind, E> {
                Ok(RawKind::Str(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<RawKind, E> {
                Ok(RawKind::Str(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawKind, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(RawKind::Seq(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawKind, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(RawKind::Map(entries))
            }
        }
        deserializer.deserialize_any(KindVisitor)
    }
}

/// Parses a YAML document into a node tree. Duplicate keys are errors.
pub fn parse(source: &Arc<SourceFile>) -> Result<Node, Diagnostic> {
    if source.text.trim().is_empty() {
        return Err(Diagnostic::of(&SpecError::EmptySpec).at(Location::in_data(
            &source.display,
            1,
            Some(1),
        )));
    }
    // YAML 1.2 booleans only: a key or value `n`, `no`, `off` stays a string.
    let options = serde_saphyr::options! { strict_booleans: true };
    let raw =
        serde_saphyr::from_str_with_options::<RawNode>(&source.text, options).map_err(|error| {
            let kind = SpecError::InvalidYaml {
                message: yaml_message(&error.to_string()),
            };
            let diagnostic = Diagnostic::of(&kind);
            match error.location() {
                Some(location) => {
                    let offset =
                        source.offset_of(location.line() as usize, location.column() as usize);
                    diagnostic.at(Location::in_source(source, offset, 1))
                }
                None => diagnostic,
            }
        })?;
    Ok(raw.into_node(source))
}

/// serde-saphyr's message without its own position prefix, snippet, or advice about
/// its options (the user cannot set those).
fn yaml_message(rendered: &str) -> String {
    let first = rendered.lines().next().unwrap_or(rendered);
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let first = match first.find(": ") {
        Some(i) if first.starts_with("line ") => &first[i + 2..],
        _ => first,
    };
    let first = first
        .split(", set DuplicateKeyPolicy")
        .next()
        .unwrap_or(first);
    // serde-saphyr's own words for limits and for a second document name its
    // internals (`budget breached: Depth { depth: 65 }`, `from_str_multiple`).
    if first.starts_with("multiple YAML documents") {
        return "a spec is one YAML document, but this file has another after `---`".into();
    }
    if let Some(breach) = first.strip_prefix("budget breached: ") {
        return budget_message(breach);
    }
    first.to_string()
}

/// A YAML limit breached (serde-saphyr's `Depth { depth: 65 }`), in words.
fn budget_message(breach: &str) -> String {
    let (what, count) = breach.split_once(" {").unwrap_or((breach, ""));
    let digits: String = count.chars().filter(char::is_ascii_digit).collect();
    // The count is where reading stopped, one past the limit.
    let limit = digits.parse::<u64>().map_or(0, |n| n.saturating_sub(1));
    match what {
        "Depth" => format!("the spec nests collections more than {limit} levels deep"),
        "Nodes" => format!("the spec holds more than {limit} YAML values"),
        "Aliases" | "Anchors" => {
            format!(
                "the spec uses more than {limit} YAML {}",
                what.to_lowercase()
            )
        }
        _ => format!("the spec is larger than evalspec reads (the YAML limit on {what})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn src(text: &str) -> Arc<SourceFile> {
        Arc::new(SourceFile::new(Path::new("t.yaml"), text.to_string()))
    }

    #[test]
    fn maps_expression_offsets_through_quotes() {
        let s = src("m: \"ratio(a where b)\"\nn: 'it''s x'\n");
        let root = parse(&s).unwrap();
        let NodeKind::Map(entries) = &root.kind else {
            panic!()
        };
        let (_, value) = &entries[0];
        let NodeKind::Str(text) = &value.kind else {
            panic!()
        };
        let at = text.find("where").unwrap();
        assert_eq!(&s.text[value.source_offset(text, at)..][..5], "where");
        let (_, value) = &entries[1];
        let NodeKind::Str(text) = &value.kind else {
            panic!()
        };
        let at = text.find('x').unwrap();
        assert_eq!(&s.text[value.source_offset(text, at)..][..1], "x");
    }

    #[test]
    fn only_true_and_false_are_booleans() {
        let root = parse(&src("n: no\ny: true\n")).unwrap();
        let NodeKind::Map(entries) = &root.kind else {
            panic!()
        };
        assert_eq!(entries[0].0.key_text(), "n");
        assert!(matches!(&entries[0].1.kind, NodeKind::Str(s) if s == "no"));
        assert!(matches!(entries[1].1.kind, NodeKind::Bool(true)));
    }

    #[test]
    fn duplicate_keys_are_errors_with_a_position() {
        let err = parse(&src("a: 1\na: 2\n")).unwrap_err();
        assert_eq!(err.message, "invalid YAML: duplicate mapping key: a");
        assert_eq!(err.location.unwrap().line, 2);
    }
}
