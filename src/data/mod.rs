//! Reading datasets: JSONL, JSON-array, CSV/TSV, Parquet and TREC files into projected
//! records, validated against the spec's schema rules, with located errors.

mod columns;
mod csv;
mod json_array;
mod parquet;
mod progress;
mod project;
mod reader;
mod runs;
mod stdin;
mod trec;
mod validate;

pub use project::json_to_value;
pub use reader::{read_chunked, Chunk, ReadStats};
pub use runs::{find_run_files, run_name_of_file};
pub use stdin::{check_overrides as check_stdin_overrides, spool, Spooled};
pub use validate::validate;

use crate::value::Value;

/// One record: the projected fields in their slots, and the line it came from.
#[derive(Debug, Clone)]
pub struct Record {
    pub slots: Box<[Value]>,
    pub line: u32,
}
