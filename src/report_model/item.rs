//! [`Item`]: one line of `items.jsonl`, and of `items` in the template context.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::report_model::{present, NameMap};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(expecting = "an item (a JSON object)")]
pub struct Item {
    /// A string, a number, or null for an item without a key.
    #[serde(default)]
    pub key: Json,
    /// The item's line in the items dataset.
    pub line: u64,
    /// With several runs: the run the item belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// When the spec has labels: the item's (null when none applies).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub label: Option<Option<String>>,
    #[serde(default)]
    pub fields: NameMap<Json>,
    #[serde(default)]
    pub matchers: NameMap<Json>,
}

/// What follows an item's key, line and run in its line of items.jsonl: its
/// label, fields and matchers, serialised as [`Item`] serialises them. An item
/// is rendered this far when it is scored, so that what is kept of it until the
/// items are sorted is text, not values.
#[derive(Serialize)]
pub struct ItemBody {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<Option<String>>,
    pub fields: NameMap<Json>,
    pub matchers: NameMap<Json>,
}

impl ItemBody {
    /// The body's members, without the braces around them.
    pub fn render(&self) -> Box<str> {
        let object = serde_json::to_string(self).expect("an item always serialises");
        object[1..object.len() - 1].into()
    }
}

/// Appends the line of items.jsonl (without its newline) of the item with
/// `key` (its JSON), `line`, `run` and rendered `body`: the bytes
/// serialising the whole [`Item`] gives.
pub fn push_item_line(out: &mut String, key: &str, line: u32, run: Option<&str>, body: &str) {
    use std::fmt::Write as _;
    let _ = write!(out, "{{\"key\":{key},\"line\":{line},");
    if let Some(run) = run {
        out.push_str("\"run\":");
        out.push_str(&Json::from(run).to_string());
        out.push(',');
    }
    out.push_str(body);
    out.push('}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_line_assembled_from_its_body_is_the_items_serialisation() {
        for (run, label) in [
            (None, None),
            (Some("seed \"1\""), Some(Some("OK".to_string()))),
            (None, Some(None)),
        ] {
            let mut fields = NameMap::new();
            fields.insert("claim".into(), json!("a \"quoted\" claim"));
            fields.insert("n".into(), json!(3));
            let mut matchers = NameMap::new();
            matchers.insert("refused".into(), json!(false));
            let item = Item {
                key: json!("q1"),
                line: 7,
                run: run.map(str::to_string),
                label: label.clone(),
                fields: fields.clone(),
                matchers: matchers.clone(),
            };
            let body = ItemBody {
                label,
                fields,
                matchers,
            };
            let mut line = String::new();
            push_item_line(&mut line, "\"q1\"", 7, run, &body.render());
            assert_eq!(line, serde_json::to_string(&item).unwrap());
        }
    }
}
