//! [`Item`]: one line of `items.jsonl`, and of `items` in the template context.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::base::typed_json::{push_key_json, push_string};
use crate::base::value::{integer_text, Key};
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

/// An item's line of items.jsonl, as serialising its [`Item`] writes it: its
/// head (`{"key":…,"line":…,`, [`push_item_head`]), with several runs its run
/// (`"run":…,`, [`push_item_run`]), its body (label, fields and matchers, as
/// serialising the [`Item`] writes them, without the braces), and `}`.
/// Items are rendered this far as they are scored, so that what is kept of
/// them until they are sorted is text; the run goes in as they are written.
pub fn push_item_line(
    out: &mut String,
    key: Option<&Key>,
    line: u32,
    run: Option<&str>,
    body: &str,
) {
    push_item_head(out, key, line);
    if let Some(run) = run {
        push_item_run(out, run);
    }
    out.push_str(body);
    out.push('}');
}

/// Appends an item line's head: `{"key":…,"line":…,`.
pub fn push_item_head(out: &mut String, key: Option<&Key>, line: u32) {
    out.push_str("{\"key\":");
    push_key_json(out, key);
    out.push_str(",\"line\":");
    out.push_str(integer_text(i64::from(line), &mut [0; 20]));
    out.push(',');
}

/// Appends an item line's run, after its head: `"run":…,`.
pub fn push_item_run(out: &mut String, run: &str) {
    out.push_str("\"run\":");
    push_string(out, run);
    out.push(',');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What follows an item's key, line and run, serialised as [`Item`]
    /// serialises it: the reference a rendered body must equal.
    #[derive(Serialize)]
    struct ItemBody {
        #[serde(skip_serializing_if = "Option::is_none")]
        label: Option<Option<String>>,
        fields: NameMap<Json>,
        matchers: NameMap<Json>,
    }

    impl ItemBody {
        fn render(&self) -> String {
            let object = serde_json::to_string(self).unwrap();
            object[1..object.len() - 1].to_string()
        }
    }

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
            let key = Key::Str("q1".into());
            push_item_line(&mut line, Some(&key), 7, run, &body.render());
            assert_eq!(line, serde_json::to_string(&item).unwrap());
        }
    }
}
