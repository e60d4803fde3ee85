//! What a run produces: `report.json` (the machine-readable record), the
//! per-item `items.jsonl`, reports rendered through templates, all written
//! atomically; and the terminal summary. The two files' shapes are the types
//! of [`crate::report_model`], which `diff` and `--baseline` read back.

mod confusion;
pub(crate) mod error;
mod folder;
pub(crate) mod item_values;
pub(crate) mod items;
mod json;
pub(crate) mod runs;
mod slices;
pub(crate) mod stats;
mod summary;
mod write;

pub use folder::{Content, OutputFolder};
pub use item_values::{write_item_values_jsonl, writes_item_values};
pub use items::{items_json, write_items_jsonl};
pub use json::report_json;
pub use summary::summary;
pub use write::write_reports;
