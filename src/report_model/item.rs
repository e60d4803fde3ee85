//! [`Item`]: one line of `items.jsonl`, and of `items` in the template context.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::base::typed_json::{push_key_json, push_string, push_typed};
use crate::base::types::Type;
use crate::base::value::{integer_text, Key, Value};
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

/// Appends an item line's body, after its head and run: its label (when the
/// spec has labels: `label` is then `Some`, holding the item's or none),
/// then its fields and then its matchers, each a member (its key escaped
/// with its colon, `"claim":`), its value and the value's static type.
pub fn push_item_body<'v>(
    out: &mut String,
    label: Option<Option<&str>>,
    fields: impl Iterator<Item = (&'v str, &'v Value, &'v Type)>,
    matchers: impl Iterator<Item = (&'v str, &'v Value, &'v Type)>,
) {
    if let Some(label) = label {
        out.push_str("\"label\":");
        match label {
            Some(label) => push_string(out, label),
            None => out.push_str("null"),
        }
        out.push(',');
    }
    out.push_str("\"fields\":{");
    push_members(out, fields);
    out.push_str("},\"matchers\":{");
    push_members(out, matchers);
    out.push('}');
}

fn push_members<'v>(
    out: &mut String,
    members: impl Iterator<Item = (&'v str, &'v Value, &'v Type)>,
) {
    for (i, (member, value, ty)) in members.enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(member);
        push_typed(out, value, ty);
    }
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
            // The body as scoring writes it, from values and their types.
            let (claim, n, refused) = (
                Value::from("a \"quoted\" claim"),
                Value::Number(3.0),
                Value::Bool(false),
            );
            let mut written = String::new();
            push_item_body(
                &mut written,
                label.as_ref().map(|l| l.as_deref()),
                [
                    ("\"claim\":", &claim, &Type::Str),
                    ("\"n\":", &n, &Type::Int),
                ]
                .into_iter(),
                [("\"refused\":", &refused, &Type::Bool)].into_iter(),
            );
            let body = ItemBody {
                label,
                fields,
                matchers,
            };
            assert_eq!(written, body.render());
            let mut line = String::new();
            let key = Key::Str("q1".into());
            push_item_line(&mut line, Some(&key), 7, run, &body.render());
            assert_eq!(line, serde_json::to_string(&item).unwrap());
        }
    }
}
