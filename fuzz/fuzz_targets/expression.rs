//! Expression text → parse and type check, as a field, inside an aggregate of a
//! metric, and as a gate.
#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // On the command's stack, as `evalspec check` parses it.
    let parsed = evalspec::on_command_stack(|| drop(evalspec::syntax::parse(text)));
    parsed.expect("a thread").expect("no panic");
    // As a YAML double-quoted scalar, so that any text is the expression.
    let quoted = serde_json_escape(text);
    let path = common::scratch().join("expression.yaml");
    let spec = common::spec(
        &format!("  x: gold.x\n  f: {quoted}\n"),
        &format!("  m: mean({quoted})\n  n: count()\ngates:\n  g: {{expr: {quoted}}}\n"),
    );
    std::fs::write(&path, spec).expect("write the spec");
    common::evalspec(&["check", path.to_str().unwrap()]);
});

/// `text` as a double-quoted string (JSON's escapes are valid YAML).
fn serde_json_escape(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
