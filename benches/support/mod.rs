//! Code shared by the benchmarks; each uses part of it.
#![allow(dead_code)]

pub mod baseline;
pub mod generate;
pub mod generate_trec;
pub mod measure;
pub mod trec_baseline;
