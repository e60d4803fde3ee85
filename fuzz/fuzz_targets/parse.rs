//! Expression text → the parser alone (no spec around it): the cheapest target,
//! run for many executions; `expression` checks types too.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        // On the command's stack, as `evalspec check` parses it.
        let parsed = evalspec::on_command_stack(|| drop(evalspec::syntax::parse(text)));
        parsed.expect("a thread").expect("no panic");
    }
});
