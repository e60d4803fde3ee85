//! Python's text of values: `str`, `repr`, `str.strip` and `str.isspace`, as the
//! scorers evalspec replaces print and compare them.

use crate::base::value::Value;

/// Python's `str.isspace()` for one character.
pub fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str` of a JSON value. JSON numbers are read as floats, so a whole
/// number prints as Python prints the int (`1`, not `1.0`).
pub fn python_str(value: &Value) -> String {
    match value {
        Value::String(s) => s.to_string(),
        other => python_repr(other),
    }
}

/// Whether `value` written as text (JSON or Python's `str`) would pass `cap`
/// bytes; counted without writing it, stopping at the cap, so that a list of a
/// million shared copies of a long string is refused before it is built.
pub fn text_exceeds(value: &Value, cap: usize) -> bool {
    fn size(value: &Value, budget: &mut usize) -> bool {
        let take = |n: usize, budget: &mut usize| match budget.checked_sub(n) {
            Some(left) => {
                *budget = left;
                false
            }
            None => true,
        };
        match value {
            // Quotes and escapes make a string at most six times its bytes long.
            Value::String(s) => take(s.len() + 2, budget),
            Value::List(items) => {
                take(2, budget) || items.iter().any(|v| take(2, budget) || size(v, budget))
            }
            Value::Object(fields) => {
                take(2, budget)
                    || fields
                        .iter()
                        .any(|(k, v)| take(k.len() + 6, budget) || size(v, budget))
            }
            _ => take(24, budget),
        }
    }
    let mut budget = cap;
    size(value, &mut budget)
}

/// Python's `repr`: strings quoted, containers written recursively.
fn python_repr(value: &Value) -> String {
    match value {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => python_number(*n),
        // Python reads a JSON integer as an int, exactly.
        Value::BigInt(b) => b.to_string(),
        Value::String(s) => python_quote(s),
        Value::List(items) => {
            let parts: Vec<String> = items.iter().map(python_repr).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Object(fields) => {
            let parts: Vec<String> = fields
                .iter()
                .map(|(k, v)| format!("{}: {}", python_quote(k), python_repr(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
    }
}

/// A number as Python prints it: ints whole; floats in their shortest round
/// trip, positional for 1e-4 <= |x| < 1e16 and scientific (`1e+16`) otherwise.
fn python_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e16 {
        return format!("{}", n as i64);
    }
    if !n.is_finite() {
        return if n.is_nan() {
            "nan".into()
        } else if n > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    if n.abs() >= 1e-4 && n.abs() < 1e16 {
        return format!("{n}");
    }
    // `{:e}` gives the shortest digits, e.g. `1.5e-7`; Python writes `1.5e-07`.
    let text = format!("{n:e}");
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let (sign, digits) = match exponent.strip_prefix('-') {
        Some(d) => ('-', d),
        None => ('+', exponent),
    };
    format!("{mantissa}e{sign}{digits:0>2}")
}

/// Python's quoting of a string: single quotes unless the text holds a single
/// quote and no double quote.
fn python_quote(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Python's `str.strip()`.
pub fn python_strip(s: &str) -> &str {
    s.trim_matches(is_python_space)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_str_matches_python() {
        let cases: [(Value, &str); 9] = [
            (Value::Null, "None"),
            (Value::Bool(true), "True"),
            (Value::Number(3.0), "3"),
            (Value::Number(2.5), "2.5"),
            (Value::Number(1.5e-7), "1.5e-07"),
            (Value::Number(1e16), "1e+16"),
            (Value::Number(0.0001), "0.0001"),
            (Value::from("it's"), "it's"),
            (
                Value::list(vec![
                    Value::from("a"),
                    Value::Number(1.0),
                    Value::from("it's"),
                ]),
                "['a', 1, \"it's\"]",
            ),
        ];
        for (value, expected) in cases {
            assert_eq!(python_str(&value), expected);
        }
    }

    #[test]
    fn strip_matches_python_whitespace() {
        assert_eq!(python_strip("\u{1f}\u{a0} x \u{3000}\n"), "x");
        assert_eq!(python_strip("\u{feff}x"), "\u{feff}x");
    }
}
