//! Values as JSON, typed: an integer-typed number prints without a fraction.

use serde_json::{json, Value as Json};

use crate::base::types::Type;
use crate::base::value::{Key, NumberText, Value};

/// An item's key as JSON: a string, a number, or null for an item without one.
pub fn key_json(key: Option<&Key>) -> Json {
    match key {
        None => Json::Null,
        Some(Key::Str(s)) => Json::String(s.to_string()),
        Some(Key::Num(bits)) => format_typed(&Value::Number(f64::from_bits(*bits)), &Type::Any),
        Some(Key::Big(b)) => Json::Number(b.to_json()),
    }
}

/// Appends [`key_json`]'s text to `out`: the same bytes, without building a
/// JSON value for the common key (a string that needs no escaping).
pub fn push_key_json(out: &mut String, key: Option<&Key>) {
    match key {
        Some(Key::Str(s)) => push_string(out, s),
        Some(Key::Num(bits)) => out.push_str(NumberText::default().format(f64::from_bits(*bits))),
        key => out.push_str(&key_json(key).to_string()),
    }
}

/// A value as JSON, with integers kept apart from other numbers by its static type.
pub fn format_typed(value: &Value, ty: &Type) -> Json {
    match value {
        Value::Number(n)
            if matches!(ty, Type::Int | Type::Any)
                && n.fract() == 0.0
                && n.abs() < 9.007_199_254_740_992e15 =>
        {
            json!(*n as i64)
        }
        Value::Number(n) => serde_json::Number::from_f64(*n).map_or(Json::Null, Json::Number),
        Value::BigInt(b) => Json::Number(b.to_json()),
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::String(s) => Json::String(s.to_string()),
        Value::List(items) => {
            Json::Array(items.iter().map(|v| format_typed(v, &Type::Any)).collect())
        }
        Value::Object(fields) => Json::Object(
            fields
                .iter()
                .map(|(k, v)| (k.to_string(), format_typed(v, &Type::Any)))
                .collect(),
        ),
    }
}

/// Appends the JSON text of [`format_typed`]'s value, without building it:
/// items.jsonl renders every field of every item this way.
pub fn push_typed(out: &mut String, value: &Value, ty: &Type) {
    match value {
        Value::Number(n)
            if matches!(ty, Type::Int | Type::Any)
                && n.fract() == 0.0
                && n.abs() < 9.007_199_254_740_992e15 =>
        {
            out.push_str(crate::base::value::integer_text(*n as i64, &mut [0; 20]));
        }
        Value::Number(n) => match serde_json::Number::from_f64(*n) {
            Some(number) => out.push_str(&number.to_string()),
            None => out.push_str("null"),
        },
        Value::BigInt(b) => out.push_str(&b.to_json().to_string()),
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::String(s) => push_string(out, s),
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_typed(out, item, &Type::Any);
            }
            out.push(']');
        }
        Value::Object(fields) => {
            out.push('{');
            for (i, (name, item)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_string(out, name);
                out.push(':');
                push_typed(out, item, &Type::Any);
            }
            out.push('}');
        }
    }
}

/// Appends `s` as a JSON string, as serde_json writes it.
pub fn push_string(out: &mut String, s: &str) {
    if !needs_escape(s.as_bytes()) {
        out.reserve(s.len() + 2);
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        out.push_str(&Json::from(s).to_string());
    }
}

/// Whether JSON escapes any of `bytes` (a quote, a backslash, a control
/// character). Sixteen bytes at a time without a branch between them, so that
/// the scan is vectorised: most strings (ids, claims) have nothing to escape.
/// The bytes after the last sixteen are read as one or two eight-byte words
/// that overlap what came before: most ids are shorter than sixteen bytes,
/// and a loop over their bytes (its exit mispredicted at every length) cost
/// half of rendering a report's strings.
fn needs_escape(bytes: &[u8]) -> bool {
    let escaped = |b: u8| (b == b'"') | (b == b'\\') | (b < 0x20);
    let len = bytes.len();
    if len < 8 {
        return bytes.iter().fold(false, |any, &b| any | escaped(b));
    }
    let mut chunks = bytes.chunks_exact(16);
    if chunks.any(|chunk| chunk.iter().fold(false, |any, &b| any | escaped(b))) {
        return true;
    }
    match chunks.remainder().len() {
        0 => false,
        1..=8 => word_needs_escape(word_at(bytes, len - 8)),
        tail => {
            word_needs_escape(word_at(bytes, len - tail))
                | word_needs_escape(word_at(bytes, len - 8))
        }
    }
}

/// The eight bytes of `bytes` from `at`.
fn word_at(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

/// Whether any byte of `word` is escaped, tested on all eight at once: a byte
/// below 0x20 makes `byte - 0x20` borrow into its high bit while its own high
/// bit is clear, and a byte equal to `c` is a zero byte of `word ^ c…c`.
/// (Exact as a yes or no; which byte it is does not matter here.)
fn word_needs_escape(word: u64) -> bool {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH_BITS: u64 = u64::from_ne_bytes([0x80; 8]);
    let below = |word: u64, n: u8| word.wrapping_sub(ONES * u64::from(n)) & !word & HIGH_BITS;
    let has = |c: u8| below(word ^ (ONES * u64::from(c)), 1);
    (below(word, 0x20) | has(b'"') | has(b'\\')) != 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::value::strategies::value;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn pushed_values_are_the_typed_json_text(value in value(), int in any::<bool>()) {
            let ty = if int { Type::Int } else { Type::Float };
            for ty in [ty, Type::Any] {
                let mut text = String::new();
                push_typed(&mut text, &value, &ty);
                prop_assert_eq!(text, format_typed(&value, &ty).to_string());
            }
        }
    }

    proptest! {
        /// Whatever a string holds, and wherever in its sixteen-byte chunks:
        /// serde_json's text.
        #[test]
        fn pushed_strings_are_serde_jsons_text(
            plain in "[a-zé]{0,40}",
            escaped in proptest::option::of("[\"\\\\\u{0}-\u{1f}]"),
            at in any::<usize>(),
        ) {
            let mut s = plain.clone();
            if let Some(escaped) = escaped {
                let places: Vec<usize> = (0..=s.len()).filter(|&i| s.is_char_boundary(i)).collect();
                s.insert_str(places[at % places.len()], &escaped);
            }
            let mut text = String::new();
            push_string(&mut text, &s);
            prop_assert_eq!(text, Json::from(s.as_str()).to_string());
        }
    }

    /// Every length up to three words, every place in it, and the bytes on
    /// either side of each escaped range (and past 0x7f, where a borrow
    /// trick could go wrong): what a byte-by-byte scan says.
    #[test]
    fn needs_escape_is_a_scan_of_every_byte() {
        let bytes = [
            0x00, 0x1f, 0x20, 0x21, b'"', 0x23, 0x5b, b'\\', 0x5d, 0x7f, 0x80, 0xa2, 0xdc, 0xff,
        ];
        let scan = |s: &[u8]| s.iter().any(|&b| b == b'"' || b == b'\\' || b < 0x20);
        for len in 0..48 {
            for at in 0..len {
                for &b in &bytes {
                    for fill in [b'a', 0xe9] {
                        let mut s = vec![fill; len];
                        s[at] = b;
                        assert_eq!(needs_escape(&s), scan(&s), "{s:?}");
                    }
                }
            }
            assert!(!needs_escape(&vec![b'a'; len]));
        }
    }

    #[test]
    fn pushed_keys_are_the_keys_json_text() {
        let keys = [
            Key::Str("q1".into()),
            Key::Str("a \"quoted\" \\ key\n".into()),
            Key::Str("é".into()),
            Key::Num(7f64.to_bits()),
            Key::Num(2.5f64.to_bits()),
        ];
        for key in keys.iter().map(Some).chain([None]) {
            let mut text = String::new();
            push_key_json(&mut text, key);
            assert_eq!(text, key_json(key).to_string());
        }
    }

    proptest! {
        /// A number key, whole or not, huge or not finite: its JSON value's text.
        #[test]
        fn pushed_number_keys_are_the_keys_json_text(
            n in prop_oneof![any::<f64>(), (-1e6..1e6f64).prop_map(f64::round), Just(-0.0)],
        ) {
            // Built whole: `Key::of` refuses a number past 2^64 as a key.
            let key = Some(Key::Num(if n == 0.0 { 0 } else { n.to_bits() }));
            let mut text = String::new();
            push_key_json(&mut text, key.as_ref());
            prop_assert_eq!(text, key_json(key.as_ref()).to_string());
        }
    }
}
