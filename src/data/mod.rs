//! Reading datasets: JSONL or JSON-array files into projected records, validated
//! against the spec's schema rules, with file:line:column errors.

pub mod error;
mod json_array;
mod progress;
mod project;
mod reader;
mod trec;
mod validate;

pub use reader::{read_chunked, Chunk, Flow, ReadStats};
pub use validate::validate;
