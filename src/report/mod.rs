//! What a run produces: `report.json` (the machine-readable record, written
//! atomically) and the terminal summary.

mod atomic;
mod json;
mod summary;

pub use atomic::write_atomic;
pub use json::{format_typed, report_json};
pub use summary::summary;
