//! A report template → rendered under the limits (fuel, output size) by `run`
//! over a small fixed spec and data set.
#![no_main]

#[path = "common.rs"]
mod common;

use std::sync::Once;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let dir = common::scratch();
    static SETUP: Once = Once::new();
    SETUP.call_once(|| {
        let spec = format!(
            "{}labels:\n  - LOW: gold.x < 2\n  - OTHER: true\noffenders:\n  when: label == \"LOW\"\nreports:\n  - {{template: t.j2}}\n  - junit\n",
            common::spec("  x: gold.x\n", "  n: count()\n  m: mean(x)\ngates:\n  g: {metric: m, threshold: 1}\n")
        );
        std::fs::write(dir.join("template.yaml"), spec).expect("write the spec");
        std::fs::write(
            dir.join("gold.jsonl"),
            "{\"id\":\"a|b\",\"x\":1}\n{\"id\":\"c\\u0001\",\"x\":2.5}\n{\"id\":\"d\",\"x\":null}\n",
        )
        .expect("write the data");
    });
    std::fs::write(dir.join("t.j2"), data).expect("write the template");
    let out = dir.join("template-out");
    common::evalspec(&[
        "run",
        dir.join("template.yaml").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
});
