//! What a run produces: `report.json` (the machine-readable record), the
//! per-item `items.jsonl`, reports rendered through templates, all written
//! atomically; the terminal summary; and prior runs read back for baselines and
//! diffs.

mod atomic;
pub(crate) mod items;
mod json;
mod natural;
mod prior;
pub(crate) mod runs;
mod summary;
mod templates;
mod write;

pub use atomic::write_atomic;
pub use items::{item_json, items_jsonl};
pub use json::{format_typed, report_json};
pub use natural::{key_order, natural_cmp};
pub use prior::{PriorItem, PriorRun};
pub use summary::summary;
pub use templates::{
    builtin_source, builtin_template, check as check_template, environment,
    render as render_template,
};
pub use write::write_reports;
