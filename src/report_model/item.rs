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
