//! Spec text → load and compile (`evalspec check`).
#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let path = common::scratch().join("spec.yaml");
    std::fs::write(&path, data).expect("write the spec");
    common::evalspec(&["check", path.to_str().unwrap()]);
});
