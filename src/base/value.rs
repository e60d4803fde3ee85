//! Runtime values: what a record field, a param or an expression evaluates to.
//!
//! Equality, truthiness and whitespace follow Python's rules, because the scorers
//! that evalspec replaces are Python scripts and must be reproduced exactly:
//! `1 == 1.0 == true`, `"" / [] / {} / 0 / null` are falsy, and `str.strip()`
//! also strips the ASCII separators U+001C..U+001F.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

#[derive(Debug, Clone, Default)]
pub enum Value {
    /// JSON null, or a field that is missing.
    #[default]
    Null,
    Bool(bool),
    Number(f64),
    String(Arc<str>),
    List(Arc<[Value]>),
    /// An object, its fields in input order (a repeated key keeps its last value).
    Object(Arc<[(Arc<str>, Value)]>),
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(Arc::from(s))
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<f64> for Value {
    fn from(n: f64) -> Self {
        Value::Number(n)
    }
}

impl Value {
    pub fn list(items: Vec<Value>) -> Self {
        if items.is_empty() {
            return Value::empty_list();
        }
        Value::List(Arc::from(items))
    }

    /// One shared empty list: traces are full of `[]`, and each would be an allocation.
    pub fn empty_list() -> Self {
        static EMPTY: std::sync::OnceLock<Arc<[Value]>> = std::sync::OnceLock::new();
        Value::List(EMPTY.get_or_init(|| Arc::from(Vec::new())).clone())
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::List(_) => "list",
            Value::Object(_) => "object",
        }
    }

    /// Python truthiness.
    pub fn truthy(&self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Number(n) => *n != 0.0,
            Value::String(s) => !s.is_empty(),
            Value::List(items) => !items.is_empty(),
            Value::Object(fields) => !fields.is_empty(),
        }
    }

    /// The field `name` of an object; null for null (absent stays absent).
    pub fn field(&self, name: &str) -> Result<Value, ValueError> {
        match self {
            Value::Null => Ok(Value::Null),
            Value::Object(fields) => Ok(fields
                .iter()
                .rev()
                .find(|(k, _)| &**k == name)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()),
            other => Err(ValueError::FieldOfNonObject {
                field: name.into(),
                found: other.clone(),
            }),
        }
    }

    /// A short, single-line rendering for messages.
    pub fn preview(&self) -> String {
        let mut text = self.to_string();
        if text.chars().count() > 60 {
            text = text.chars().take(57).collect::<String>() + "...";
        }
        text
    }
}

/// Python's `==` for JSON values: numbers and booleans compare by numeric value.
impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::String(a), Value::String(b)) => a == b,
            (Value::List(a), Value::List(b)) => a == b,
            (Value::Object(a), Value::Object(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .all(|(k, v)| b.iter().any(|(k2, v2)| k == k2 && v == v2))
            }
            (a, b) => match (a.as_number_like(), b.as_number_like()) {
                (Some(x), Some(y)) => x == y,
                _ => false,
            },
        }
    }
}

impl Value {
    fn as_number_like(&self) -> Option<f64> {
        match self {
            Value::Number(n) => Some(*n),
            Value::Bool(b) => Some(f64::from(u8::from(*b))),
            _ => None,
        }
    }
}

impl fmt::Display for Value {
    /// JSON text, numbers in their shortest round-trip form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Number(n) => f.write_str(&format_number(*n)),
            Value::String(s) => write!(f, "{}", serde_json::Value::from(&**s)),
            Value::List(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            Value::Object(fields) => {
                f.write_str("{")?;
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}: {v}", serde_json::Value::from(&**k))?;
                }
                f.write_str("}")
            }
        }
    }
}

/// Numbers print as integers when they are whole and exactly representable,
/// otherwise in the shortest form that reads back to the same float.
pub fn format_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 9.007_199_254_740_992e15 {
        format!("{}", n as i64)
    } else if n.is_finite() {
        serde_json::Number::from_f64(n).map_or_else(|| n.to_string(), |x| x.to_string())
    } else {
        "null".into()
    }
}

/// What reading a value can fail on; its words are written here and nowhere else.
#[derive(Debug, Clone, PartialEq)]
pub enum ValueError {
    /// `x.name` where `x` is neither an object nor null.
    FieldOfNonObject { field: Arc<str>, found: Value },
    /// A list or an object used as a key.
    NotAKey { found: Value },
}

impl ValueError {
    /// A stable name for the kind, e.g. `field_of_non_object`.
    pub fn code(&self) -> &'static str {
        match self {
            ValueError::FieldOfNonObject { .. } => "field_of_non_object",
            ValueError::NotAKey { .. } => "not_a_key",
        }
    }
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueError::FieldOfNonObject { field, found } => {
                write!(f, "cannot read field `{field}` of a {}", found.type_name())
            }
            ValueError::NotAKey { found } => write!(f, "a {} cannot be a key", found.type_name()),
        }
    }
}

/// A join key: a hashable scalar with Python's dict-key equality
/// (`1`, `1.0` and `true` are the same key; `"1"` is not).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    Str(Arc<str>),
    /// The bits of a number, normalised so that `-0.0` equals `0.0`.
    Num(u64),
}

impl Key {
    /// The key of a value; `None` for null (the record has no key) or for lists and
    /// objects, which cannot be keys.
    pub fn of(value: &Value) -> Result<Option<Key>, ValueError> {
        Ok(match value {
            Value::Null => None,
            Value::String(s) => Some(Key::Str(s.clone())),
            Value::Number(n) => Some(Key::Num(if *n == 0.0 { 0 } else { n.to_bits() })),
            Value::Bool(b) => Some(Key::Num(if *b { 1f64.to_bits() } else { 0 })),
            other => {
                return Err(ValueError::NotAKey {
                    found: other.clone(),
                })
            }
        })
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Key::Str(s) => f.write_str(s),
            Key::Num(bits) => f.write_str(&format_number(f64::from_bits(*bits))),
        }
    }
}

/// A value usable in a hash set with Python's equality, for set operations on lists.
#[derive(Debug, Clone)]
pub struct SetItem<'a>(pub &'a Value);

impl PartialEq for SetItem<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl Eq for SetItem<'_> {}

impl Hash for SetItem<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self.0 {
            Value::String(s) => s.hash(state),
            Value::Number(_) | Value::Bool(_) => {
                if let Ok(Some(Key::Num(bits))) = Key::of(self.0) {
                    bits.hash(state);
                }
            }
            // Lists and objects hash by length only; equality decides.
            Value::List(items) => items.len().hash(state),
            Value::Object(fields) => fields.len().hash(state),
            Value::Null => 0u8.hash(state),
        }
    }
}

/// Python's `str.isspace()` for one character.
pub fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.strip()`.
/// Python's `str` of a JSON value. JSON numbers are read as floats, so a whole
/// number prints as Python prints the int (`1`, not `1.0`).
pub fn python_str(value: &Value) -> String {
    match value {
        Value::String(s) => s.to_string(),
        other => python_repr(other),
    }
}

/// Python's `repr`: strings quoted, containers written recursively.
fn python_repr(value: &Value) -> String {
    match value {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => python_number(*n),
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

pub fn python_strip(s: &str) -> &str {
    s.trim_matches(is_python_space)
}

/// Converts an already-parsed JSON value (used for `--param` lists).
pub fn json_to_value(json: &serde_json::Value) -> Value {
    match json {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => Value::Number(n.as_f64().unwrap_or(f64::NAN)),
        serde_json::Value::String(s) => Value::from(s.as_str()),
        serde_json::Value::Array(items) => Value::list(items.iter().map(json_to_value).collect()),
        serde_json::Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(k, v)| (Arc::from(k.as_str()), json_to_value(v)))
                .collect(),
        ),
    }
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
    fn equality_follows_python() {
        assert_eq!(Value::Number(1.0), Value::Bool(true));
        assert_ne!(Value::from("1"), Value::Number(1.0));
        assert_eq!(
            Key::of(&Value::Number(-0.0)).unwrap(),
            Key::of(&Value::Bool(false)).unwrap()
        );
        assert!(Key::of(&Value::list(vec![])).is_err());
    }

    #[test]
    fn truthiness_follows_python() {
        for falsy in [
            Value::Null,
            Value::from(""),
            Value::Number(0.0),
            Value::list(vec![]),
            Value::Bool(false),
        ] {
            assert!(!falsy.truthy(), "{falsy}");
        }
        assert!(Value::from(" ").truthy());
    }

    #[test]
    fn strip_matches_python_whitespace() {
        assert_eq!(python_strip("\u{1f}\u{a0} x \u{3000}\n"), "x");
        assert_eq!(python_strip("\u{feff}x"), "\u{feff}x");
    }

    #[test]
    fn numbers_print_shortest() {
        assert_eq!(format_number(2.0), "2");
        assert_eq!(format_number(2.0 / 3.0), "0.6666666666666666");
        assert_eq!(format_number(f64::NAN), "null");
    }
}
