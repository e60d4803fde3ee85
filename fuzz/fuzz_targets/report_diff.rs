//! A report.json → `evalspec diff` against itself and against a real report.
#![no_main]

#[path = "common.rs"]
mod common;

use std::path::Path;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let dir = common::scratch();
    let new = dir.join("new.json");
    std::fs::write(&new, data).expect("write the report");
    let old = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/report_diff/real-report.json");
    let new = new.to_str().unwrap();
    for format in ["text", "md", "json"] {
        common::evalspec(&["diff", old.to_str().unwrap(), new, "--format", format]);
        common::evalspec(&["diff", new, new, "--format", format, "--fail-on-regression"]);
    }
});
