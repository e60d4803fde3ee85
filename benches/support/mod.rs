//! Code shared by the benchmarks; each uses part of it.
#![allow(dead_code)]

pub mod aggregates;
pub mod generate;
pub mod generate_trec;
pub mod measure;
pub mod realistic;
pub mod trec_baseline;
