//! What a run produces: `report.json` (the machine-readable record), the
//! per-item `items.jsonl`, reports rendered through templates, all written
//! atomically; the terminal summary; and prior runs read back for baselines and
//! diffs.

pub(crate) mod items;
mod json;
pub(crate) mod runs;
mod summary;
mod write;

pub use items::{item_json, items_jsonl};
pub use json::report_json;
pub use summary::summary;
pub use write::write_reports;
