//! Reading datasets: JSONL, JSON-array, CSV/TSV, Parquet and TREC files into projected
//! records, validated against the spec's schema rules, with located errors.

mod chunks;
mod columns;
mod csv;
mod csv_scan;
pub mod error;
mod file;
mod json_array;
pub mod parquet;
mod position;
mod progress;
mod project;
mod reader;
pub mod spill;
mod trec;
mod validate;

pub use reader::{
    count_ahead, read_chunked, read_chunked_ahead, read_chunked_per_thread, Chunk, CountedAhead,
    Flow, ReadStats,
};
pub use validate::validate;
