//! Expression text → the parser alone (no spec around it): the cheapest target,
//! run for many executions; `expression` checks types too.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = evalspec::syntax::parse(text);
    }
});
