//! The items of a prior report as `diff` compares them: key, line, run, label and
//! the per-item values (fields and matchers) that can flip or move. They are read
//! from the `items.jsonl` beside a report; any other per-item store can fill the
//! same structs.

use std::borrow::Cow;
use std::fmt;
use std::io::BufRead;

use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value as Json;

use crate::base::diagnostic::{Diagnostic, Location};
use crate::report_model::Item;

/// The items of one report, their per-item values named once in `names`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriorItems {
    /// The per-item values' names: fields, then matchers, in the order first seen.
    pub names: Vec<ValueName>,
    pub items: Vec<PriorItem>,
}

/// A per-item value's name. A field and a matcher may not share a name in a
/// spec, but a report could hold both, so the kind is part of the name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ValueName {
    pub name: String,
    pub matcher: bool,
}

impl ValueName {
    pub fn kind(&self) -> &'static str {
        if self.matcher {
            "matcher"
        } else {
            "field"
        }
    }
}

/// One item of a prior report.
#[derive(Debug, Clone, PartialEq)]
pub struct PriorItem {
    /// The key as shown (`(no key)` for an item without one).
    pub key: String,
    pub line: u64,
    /// With several runs: the run the item belongs to.
    pub run: Option<String>,
    pub label: Option<String>,
    /// `values[i]` is the value named `names[i]` of its [`PriorItems`];
    /// shorter when the item lacks the last names.
    pub values: Vec<ItemValue>,
}

impl PriorItem {
    /// The value named `names[index]`: [`ItemValue::Missing`] when the item has none.
    pub fn value(&self, index: usize) -> ItemValue {
        self.values
            .get(index)
            .copied()
            .unwrap_or(ItemValue::Missing)
    }
}

/// A per-item value, as far as an item-level diff compares it: booleans flip and
/// numbers move; strings and lists are kept only as `Other` (not compared).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ItemValue {
    /// The item has no such value (a spec that changed between the runs).
    Missing,
    Null,
    Bool(bool),
    /// An integer, printed as one.
    Int(i64),
    Float(f64),
    Other,
}

impl ItemValue {
    pub fn from_json(value: &Json) -> ItemValue {
        match value {
            Json::Null => ItemValue::Null,
            Json::Bool(b) => ItemValue::Bool(*b),
            Json::Number(n) => match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => ItemValue::Int(i),
                (None, Some(f)) => ItemValue::Float(f),
                (None, None) => ItemValue::Other,
            },
            _ => ItemValue::Other,
        }
    }

    pub fn as_f64(self) -> Option<f64> {
        match self {
            ItemValue::Int(i) => Some(i as f64),
            ItemValue::Float(f) => Some(f),
            _ => None,
        }
    }

    /// The value as JSON (`Missing` and `Other` as null).
    pub fn to_json(self) -> Json {
        match self {
            ItemValue::Bool(b) => Json::Bool(b),
            ItemValue::Int(i) => Json::from(i),
            ItemValue::Float(f) => serde_json::Number::from_f64(f).map_or(Json::Null, Json::Number),
            ItemValue::Missing | ItemValue::Null | ItemValue::Other => Json::Null,
        }
    }
}

impl PriorItems {
    /// Reads the lines of an items.jsonl; `file` names it in errors.
    pub fn from_jsonl(text: &str, file: &str) -> Result<PriorItems, Diagnostic> {
        PriorItems::read(text.as_bytes(), file)
    }

    /// Reads an items.jsonl line by line, so that its size is not bounded by
    /// what fits in one string (a 1M-item run writes about 300 MB).
    pub fn read(mut reader: impl BufRead, file: &str) -> Result<PriorItems, Diagnostic> {
        let mut items = PriorItems::default();
        let mut bytes = Vec::new();
        for number in 1.. {
            bytes.clear();
            let n = reader.read_until(b'\n', &mut bytes).map_err(|e| {
                Diagnostic::error("cannot_read_items", format!("cannot read `{file}`: {e}"))
                    .at(Location::in_data(file, number, None))
            })?;
            if n == 0 {
                break;
            }
            let line = std::str::from_utf8(&bytes).map_err(|e| {
                // Columns count characters; the valid prefix decodes.
                let valid = String::from_utf8_lossy(&bytes[..e.valid_up_to()]);
                let column = 1 + valid.chars().count();
                Diagnostic::error(
                    "items_not_utf8",
                    format!("`{file}`: line {number} is not UTF-8 text"),
                )
                .at(Location::in_data(file, number, Some(column)))
                .help("items.jsonl is written by `evalspec run`; re-run to regenerate it")
            })?;
            if line.trim().is_empty() {
                continue;
            }
            // Serde would read a list as a struct's fields in order: only an
            // object is read the lean way.
            let lean = line.trim_start().starts_with('{');
            match lean.then(|| serde_json::from_str::<Lean>(line)) {
                Some(Ok(lean)) => items.push_lean(lean),
                // The report model says what is wrong, and where.
                _ => items.push(Item::from_json_line(line, file, number)?),
            }
        }
        Ok(items)
    }

    /// Adds one item read from items.jsonl.
    pub fn push(&mut self, item: Item) {
        let key = match item.key {
            Json::Null => "(no key)".to_string(),
            Json::String(s) => s,
            other => other.to_string(),
        };
        let mut values = Vec::new();
        let named = item
            .fields
            .iter()
            .map(|(name, value)| (name, false, value))
            .chain(
                item.matchers
                    .iter()
                    .map(|(name, value)| (name, true, value)),
            );
        for (nth, (name, matcher, value)) in named.enumerate() {
            let index = self.index(nth, name, matcher);
            if values.len() <= index {
                values.resize(index + 1, ItemValue::Missing);
            }
            values[index] = ItemValue::from_json(value);
        }
        self.items.push(PriorItem {
            key,
            line: item.line,
            run: item.run,
            label: item.label.flatten(),
            values,
        });
    }

    /// Adds one item read the lean way.
    fn push_lean(&mut self, item: Lean) {
        let key = match item.key {
            Json::Null => "(no key)".to_string(),
            Json::String(s) => s,
            other => other.to_string(),
        };
        let mut values = Vec::new();
        let named = (item.fields.0.iter().map(|(n, v)| (n, false, v)))
            .chain(item.matchers.0.iter().map(|(n, v)| (n, true, v)));
        for (nth, (name, matcher, value)) in named.enumerate() {
            let index = self.index(nth, name, matcher);
            if values.len() <= index {
                values.resize(index + 1, ItemValue::Missing);
            }
            values[index] = *value;
        }
        self.items.push(PriorItem {
            key,
            line: item.line,
            run: item.run,
            label: item.label,
            values,
        });
    }

    /// The index of a name, added when new. Items of one report name the same
    /// values in the same order, so the `nth` name is tried first.
    fn index(&mut self, nth: usize, name: &str, matcher: bool) -> usize {
        let is = |n: &ValueName| n.matcher == matcher && n.name == name;
        if self.names.get(nth).is_some_and(is) {
            return nth;
        }
        let found = self.names.iter().position(is);
        found.unwrap_or_else(|| {
            self.names.push(ValueName {
                name: name.to_string(),
                matcher,
            });
            self.names.len() - 1
        })
    }
}

/// A line of items.jsonl read for a diff: the shape of [`Item`] (anything
/// [`Item`] rejects, this rejects), but strings and lists inside fields and
/// matchers are skipped rather than built, and names are borrowed when they
/// can be. Reading a 1M-item run this way takes about half the time.
#[derive(Deserialize)]
struct Lean<'a> {
    #[serde(default)]
    key: Json,
    line: u64,
    #[serde(default)]
    run: Option<String>,
    #[serde(default)]
    label: Option<String>,
    #[serde(default, borrow)]
    fields: Values<'a>,
    #[serde(default, borrow)]
    matchers: Values<'a>,
}

#[derive(Default)]
struct Values<'a>(Vec<(Cow<'a, str>, ItemValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Values<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries<'a>(std::marker::PhantomData<&'a ()>);

        impl<'de: 'a, 'a> Visitor<'de> for Entries<'a> {
            type Value = Values<'a>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut values = Vec::new();
                while let Some(Name(name)) = access.next_key()? {
                    values.push((name, access.next_value()?));
                }
                Ok(Values(values))
            }
        }

        deserializer.deserialize_map(Entries(std::marker::PhantomData))
    }
}

/// A name, borrowed from the line unless it has escapes.
struct Name<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Name<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Text;

        impl<'de> Visitor<'de> for Text {
            type Value = Name<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(Name(Cow::Borrowed(s)))
            }

            fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Name(Cow::Owned(s.to_string())))
            }
        }

        deserializer.deserialize_str(Text)
    }
}

/// Scalars are kept; strings, lists and objects are skipped as `Other`.
impl<'de> Deserialize<'de> for ItemValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Scalar;

        impl<'de> Visitor<'de> for Scalar {
            type Value = ItemValue;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }

            fn visit_unit<E>(self) -> Result<ItemValue, E> {
                Ok(ItemValue::Null)
            }

            fn visit_bool<E>(self, b: bool) -> Result<ItemValue, E> {
                Ok(ItemValue::Bool(b))
            }

            fn visit_i64<E>(self, i: i64) -> Result<ItemValue, E> {
                Ok(ItemValue::Int(i))
            }

            fn visit_u64<E>(self, u: u64) -> Result<ItemValue, E> {
                // As serde_json's `as_i64`: beyond i64, a float.
                Ok(i64::try_from(u).map_or(ItemValue::Float(u as f64), ItemValue::Int))
            }

            fn visit_f64<E>(self, f: f64) -> Result<ItemValue, E> {
                Ok(ItemValue::Float(f))
            }

            fn visit_str<E>(self, _: &str) -> Result<ItemValue, E> {
                Ok(ItemValue::Other)
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ItemValue, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(ItemValue::Other)
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ItemValue, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(ItemValue::Other)
            }
        }

        deserializer.deserialize_any(Scalar)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_jsonl_lines_become_named_values() {
        let text = concat!(
            r#"{"key":"q1","line":1,"label":"OK","fields":{"hit":true,"score":5,"answer":"a"},"matchers":{"refused":false}}"#,
            "\n\n",
            r#"{"key":7,"line":2,"run":"seed1","fields":{"score":2.5,"hit":null},"matchers":{}}"#,
            "\n",
        );
        let items = PriorItems::from_jsonl(text, "items.jsonl").unwrap();
        let names: Vec<(&str, &str)> = items
            .names
            .iter()
            .map(|n| (n.name.as_str(), n.kind()))
            .collect();
        assert_eq!(
            names,
            [
                ("hit", "field"),
                ("score", "field"),
                ("answer", "field"),
                ("refused", "matcher")
            ]
        );
        let (a, b) = (&items.items[0], &items.items[1]);
        assert_eq!(
            (a.key.as_str(), a.label.as_deref(), a.run.as_deref()),
            ("q1", Some("OK"), None)
        );
        assert_eq!(
            a.values,
            [
                ItemValue::Bool(true),
                ItemValue::Int(5),
                ItemValue::Other,
                ItemValue::Bool(false)
            ]
        );
        assert_eq!((b.key.as_str(), b.run.as_deref()), ("7", Some("seed1")));
        assert_eq!(b.value(0), ItemValue::Null);
        assert_eq!(b.value(1), ItemValue::Float(2.5));
        assert_eq!(b.value(2), ItemValue::Missing);
        assert_eq!(b.value(3), ItemValue::Missing);
    }

    #[test]
    fn a_malformed_line_is_a_located_error() {
        let text = "{\"key\":\"q1\",\"line\":1}\n\n{\"key\":\"q2\"}\n";
        let error = PriorItems::from_jsonl(text, "items.jsonl").unwrap_err();
        assert!(
            error.render().contains("items.jsonl:3"),
            "{}",
            error.render()
        );
        let bytes: &[u8] = b"{\"key\":\"q1\",\"line\":1}\n{\"key\":\"q\xff\"}\n";
        let error = PriorItems::read(bytes, "items.jsonl").unwrap_err();
        let shown = error.render();
        assert!(shown.contains("line 2 is not UTF-8"), "{shown}");
        assert!(shown.contains("items.jsonl:2:"), "{shown}");
    }

    #[test]
    fn the_lean_reading_equals_the_report_model_s() {
        let lines = [
            r#"{"key":"q1","line":1,"label":"OK","fields":{"hit":true,"score":5,"answer":"a","ids":["p1",{"x":[1]}]},"matchers":{"refused":false}}"#,
            r#"{"key":7,"line":2,"run":"seed1","label":null,"fields":{"score":2.5,"hit":null,"big":18446744073709551615,"neg":-3},"matchers":{}}"#,
            r#"{"key":null,"line":3,"fields":{"sc\u006fre":1e3,"hit":false}}"#,
            r#"{"key":{"a":1},"line":4}"#,
        ];
        let (mut lean, mut model) = (PriorItems::default(), PriorItems::default());
        for (i, line) in lines.iter().enumerate() {
            lean.push_lean(serde_json::from_str::<Lean>(line).unwrap());
            model.push(Item::from_json_line(line, "items.jsonl", i + 1).unwrap());
        }
        assert_eq!(lean, model);
        assert_eq!(
            lean.items[2].value(1),
            ItemValue::Float(1000.0),
            "an escaped name"
        );
        // What the report model rejects, the lean reading rejects too.
        for bad in [
            r#"{"key":"q1"}"#,
            r#"{"key":"q1","line":"1"}"#,
            r#"{"key":"q1","line":1,"fields":[]}"#,
            r#"{"key":"q1","line":1,"run":3}"#,
            r#"{"key":"q1","line":1,"label":true}"#,
        ] {
            assert!(serde_json::from_str::<Lean>(bad).is_err(), "{bad}");
            assert!(
                Item::from_json_line(bad, "items.jsonl", 1).is_err(),
                "{bad}"
            );
        }
        // A list is not an item, though serde would read it as one.
        let error = PriorItems::from_jsonl("[\"q1\", 1]\n", "items.jsonl").unwrap_err();
        assert!(
            error.render().contains("must be an object"),
            "{}",
            error.render()
        );
    }
}
