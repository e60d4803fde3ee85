//! Data → projection and evaluation under a fixed plan: the bytes are a gold set
//! and traces (split at the first NUL) for `specs/rag-precision.yaml`, read as
//! JSONL; also as a TREC qrels/run pair for `specs/trec.yaml`.
#![no_main]

#[path = "common.rs"]
mod common;

use std::path::Path;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let dir = common::scratch();
    let (first, second) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &b""[..]),
    };
    let specs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs");
    let out = dir.join("out");
    let out = out.to_str().unwrap();
    for (spec, a, b) in [
        ("rag-precision.yaml", "gold", "trace"),
        ("trec.yaml", "qrels", "run"),
    ] {
        let (pa, pb) = (dir.join(format!("{a}.data")), dir.join(format!("{b}.data")));
        std::fs::write(&pa, first).expect("write data");
        std::fs::write(&pb, second).expect("write data");
        let spec = specs.join(spec);
        let da = format!("{a}={}", pa.display());
        let db = format!("{b}={}", pb.display());
        common::evalspec(&[
            "run",
            spec.to_str().unwrap(),
            "--dataset",
            &da,
            "--dataset",
            &db,
            "--out",
            out,
            "--quiet",
            "--threads",
            "2",
            "--allow-drift",
        ]);
    }
});
