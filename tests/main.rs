//! The integration tests, one binary: each file beside this one is a module of it
//! (`tests/diff.rs` is `diff`, `tests/adversarial/` is `adversarial`), and
//! `support` holds the helpers they share. As ~30 binaries, each linked Arrow,
//! Parquet and minijinja again; `autotests = false` in Cargo.toml, so a new file
//! here runs only once it has its `mod` line below.

mod support;

mod adversarial;
mod browser;
mod classification;
mod cli;
mod confusion;
mod diagnostics;
mod diff;
mod formats;
mod frozen;
mod jsonl_lines;
mod layers;
mod overlays;
mod parallel;
mod params;
mod plans;
mod properties;
mod readme;
mod report_model;
mod reports;
mod retrieval_spans;
mod runs;
mod runtime_errors;
mod seed000_differential;
mod seed001_differential;
mod shell;
mod significance;
mod slices;
mod specs;
mod streamed_join;
mod trec;
