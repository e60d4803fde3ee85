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
// A tag of a whole word: with a byte's tag, a bool or a big integer's sign sat
// in the tag's word, and every move of a value (an operand, a result) copied
// that word in pieces of 1, 4 and 2 bytes that the next load could not take
// from the store before it. The interpreter stalled on them; one thread of the
// 1M rag run took 0.88x the time with whole words.
#[repr(u64)]
pub enum Value {
    /// JSON null, or a field that is missing.
    #[default]
    Null,
    Bool(bool),
    Number(f64),
    /// An integer beyond ±2^53, read from data, kept exact: as a float it would
    /// collapse into its neighbours (ids …789 and …788 would be one key).
    /// Equality, keys and printing are exact; arithmetic reads it as a float.
    BigInt(BigInt),
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

/// The largest integer a float holds exactly: 2^53.
const EXACT_IN_FLOAT: u64 = 1 << 53;

/// An integer of 64 bits (signed or not) beyond ±2^53: a sign and a magnitude.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BigInt {
    negative: bool,
    magnitude: u64,
}

impl BigInt {
    /// Its sign and magnitude, as [`BigInt::from_parts`] takes them back.
    pub fn parts(self) -> (bool, u64) {
        (self.negative, self.magnitude)
    }

    pub fn from_parts(negative: bool, magnitude: u64) -> Self {
        BigInt {
            negative,
            magnitude,
        }
    }

    pub fn to_i128(self) -> i128 {
        match self.negative {
            true => -i128::from(self.magnitude),
            false => i128::from(self.magnitude),
        }
    }

    /// The nearest float: what arithmetic on it computes with.
    pub fn to_f64(self) -> f64 {
        self.to_i128() as f64
    }

    /// As a JSON number, exact.
    pub fn to_json(self) -> serde_json::Number {
        match self.negative {
            true => serde_json::Number::from(-(self.magnitude as i128) as i64),
            false => serde_json::Number::from(self.magnitude),
        }
    }
}

impl fmt::Display for BigInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.to_i128())
    }
}

impl Value {
    /// An integer read from data: a number when a float holds it exactly, else
    /// a [`BigInt`].
    pub fn from_i64(n: i64) -> Value {
        match n.unsigned_abs() <= EXACT_IN_FLOAT {
            true => Value::Number(n as f64),
            false => Value::BigInt(BigInt {
                negative: n < 0,
                magnitude: n.unsigned_abs(),
            }),
        }
    }

    pub fn from_u64(n: u64) -> Value {
        match n <= EXACT_IN_FLOAT {
            true => Value::Number(n as f64),
            false => Value::BigInt(BigInt {
                negative: false,
                magnitude: n,
            }),
        }
    }

    /// A JSON number as a value: integers exact (see [`Value::from_i64`]).
    pub fn from_json_number(n: &serde_json::Number) -> Value {
        if let Some(i) = n.as_i64() {
            Value::from_i64(i)
        } else if let Some(u) = n.as_u64() {
            Value::from_u64(u)
        } else {
            Value::Number(n.as_f64().unwrap_or(f64::NAN))
        }
    }

    /// The value as a float, for arithmetic: numbers, and big integers rounded.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => Some(*n),
            Value::BigInt(b) => Some(b.to_f64()),
            _ => None,
        }
    }

    /// A big integer as the float arithmetic uses; any other value as it is.
    pub fn into_float(self) -> Value {
        match self {
            Value::BigInt(b) => Value::Number(b.to_f64()),
            other => other,
        }
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
            Value::Number(_) | Value::BigInt(_) => "number",
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
            Value::BigInt(_) => true,
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
            (Value::String(a), Value::String(b)) => Arc::ptr_eq(a, b) || same_bytes(a, b),
            (Value::BigInt(a), Value::BigInt(b)) => a == b,
            // A float equals a big integer only when it is that very integer.
            (Value::BigInt(a), other) | (other, Value::BigInt(a)) => other
                .as_number_like()
                .is_some_and(|n| n.fract() == 0.0 && n.abs() < 1e38 && n as i128 == a.to_i128()),
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
    /// Whether this is the text `text`: what `==` with a string gives, as no
    /// other kind of value equals one.
    #[inline]
    pub fn is_text(&self, text: &str) -> bool {
        matches!(self, Value::String(s) if same_bytes(s, text))
    }
}

/// Whether two texts have the same bytes. Those of at most 16 bytes (labels,
/// ids: most of what specs compare) are compared in two loads each, which may
/// overlap; the call to memcmp cost more than the comparison (`gold ==
/// "c0"` for 20 classes: a twentieth of a 46-aggregate run).
#[inline]
fn same_bytes(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |bytes: &[u8], at: usize| {
        u64::from_le_bytes(bytes[at..at + 8].try_into().expect("eight bytes"))
    };
    let half = |bytes: &[u8], at: usize| {
        u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes"))
    };
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        _ => a == b,
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
            Value::BigInt(b) => write!(f, "{b}"),
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
/// otherwise in the shortest form that reads back to the same float (serde_json's
/// text of it); a number that is not finite prints as `null`.
pub fn format_number(n: f64) -> String {
    NumberText::default().format(n).to_owned()
}

/// Appends [`format_number`]'s text of `n` to `out`, without allocating.
pub fn push_number(out: &mut Vec<u8>, n: f64) {
    // A condition's 1 or 0, most of what item-values.jsonl holds.
    if n == 0.0 || n == 1.0 {
        out.push(if n == 0.0 { b'0' } else { b'1' });
    } else {
        out.extend_from_slice(NumberText::default().format(n).as_bytes());
    }
}

/// Where [`format_number`]'s text is written: on the stack, not in a `String`
/// per number (item-values.jsonl writes millions of them).
#[derive(Default)]
pub struct NumberText {
    digits: [u8; 20],
    float: zmij::Buffer,
}

impl NumberText {
    pub fn format(&mut self, n: f64) -> &str {
        if n.fract() == 0.0 && n.abs() < 9.007_199_254_740_992e15 {
            integer_text(n as i64, &mut self.digits)
        } else if n.is_finite() {
            // What serde_json writes for a float (`serde_json::Number`'s text).
            self.float.format_finite(n)
        } else {
            "null"
        }
    }
}

/// The decimal text of `n`, written into `buffer`. By hand: `write!` into a
/// vector goes through the formatting machinery, and was a third of writing a
/// million rows of item values.
pub fn integer_text(n: i64, buffer: &mut [u8; 20]) -> &str {
    let mut magnitude = n.unsigned_abs();
    let mut start = buffer.len();
    loop {
        start -= 1;
        buffer[start] = b'0' + (magnitude % 10) as u8;
        magnitude /= 10;
        if magnitude == 0 {
            break;
        }
    }
    if n < 0 {
        start -= 1;
        buffer[start] = b'-';
    }
    std::str::from_utf8(&buffer[start..]).expect("digits and a sign are ASCII")
}

/// A non-negative number with three significant digits (at most nine
/// decimals): how intervals' half-widths are shown (`0.0312`, `20.0`).
pub fn format_significant(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return "0".to_string();
    }
    let digits = (2 - x.log10().floor() as i32).clamp(0, 9) as usize;
    format!("{x:.digits$}")
}

/// A slice value as its text: a string as written, a number as [`format_number`]
/// prints it, `true`/`false`, and `null` for null; `None` for a list or an object.
/// Values with the same text are the same slice.
pub fn slice_text(value: &Value) -> Option<Arc<str>> {
    Some(match value {
        Value::String(s) => s.clone(),
        Value::Null => Arc::from("null"),
        Value::Bool(b) => Arc::from(if *b { "true" } else { "false" }),
        Value::Number(n) => Arc::from(format_number(*n).as_str()),
        Value::BigInt(b) => Arc::from(b.to_string().as_str()),
        Value::List(_) | Value::Object(_) => return None,
    })
}

/// What reading a value can fail on; its words are written here and nowhere else.
#[derive(Debug, Clone, PartialEq)]
pub enum ValueError {
    /// `x.name` where `x` is neither an object nor null.
    FieldOfNonObject { field: Arc<str>, found: Value },
    /// A list, an object or a bool used as a key.
    NotAKey { found: Value },
    /// A number past 2^64 used as a key: its digits beyond the float's are
    /// lost, so two ids could be one.
    KeyNotExact { found: Value },
}

impl ValueError {
    /// A stable name for the kind, e.g. `field_of_non_object`.
    pub fn code(&self) -> &'static str {
        match self {
            ValueError::FieldOfNonObject { .. } => "field_of_non_object",
            ValueError::NotAKey { .. } => "not_a_key",
            ValueError::KeyNotExact { .. } => "key_not_exact",
        }
    }
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueError::FieldOfNonObject { field, found } => {
                write!(f, "cannot read field `{field}` of a {}", found.type_name())
            }
            ValueError::NotAKey { found } => write!(
                f,
                "{} cannot be a key",
                crate::base::types::with_article(found.type_name())
            ),
            ValueError::KeyNotExact { found } => write!(
                f,
                "the number {} cannot be a key: past 2^64 a number keeps only its first 17 digits, so two ids could be one (write ids that large as strings)",
                found.preview()
            ),
        }
    }
}

/// A join key: a string or a number (`1` and `1.0` are the same key; `"1"`
/// is not). A bool is no key (unlike Python, `true` does not join `1`), nor a
/// number past 2^64, which is not exact.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    Str(Arc<str>),
    /// The bits of a number, normalised so that `-0.0` equals `0.0`.
    Num(u64),
    /// An integer beyond ±2^53, exact.
    Big(BigInt),
}

impl Key {
    /// The key of a value; `None` for null (the record has no key) or for lists and
    /// objects, which cannot be keys.
    pub fn of(value: &Value) -> Result<Option<Key>, ValueError> {
        Ok(match value {
            Value::Null => None,
            Value::String(s) => Some(Key::Str(s.clone())),
            Value::Number(n) if n.abs() >= 18446744073709551616.0 => {
                return Err(ValueError::KeyNotExact {
                    found: value.clone(),
                })
            }
            Value::Number(n) => Some(Key::Num(if *n == 0.0 { 0 } else { n.to_bits() })),
            Value::BigInt(b) => Some(Key::Big(*b)),
            other => {
                return Err(ValueError::NotAKey {
                    found: other.clone(),
                })
            }
        })
    }

    /// As [`Key::of`], taking the value: a string moves into its key instead
    /// of being shared with a value dropped at once (every record's key).
    pub fn from_value(value: Value) -> Result<Option<Key>, ValueError> {
        match value {
            Value::String(s) => Ok(Some(Key::Str(s))),
            other => Key::of(&other),
        }
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Key::Str(s) => f.write_str(s),
            Key::Num(bits) => f.write_str(&format_number(f64::from_bits(*bits))),
            Key::Big(b) => write!(f, "{b}"),
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
            // As the number it equals (Python's `true == 1`), -0 as 0.
            Value::Number(_) | Value::Bool(_) => {
                let n = match self.0 {
                    Value::Bool(b) => f64::from(u8::from(*b)),
                    other => other.as_f64().unwrap_or(0.0),
                };
                (if n == 0.0 { 0 } else { n.to_bits() }).hash(state);
            }
            // By its nearest float, as a float equal to it hashes: neighbours
            // share a hash, and equality tells them apart.
            Value::BigInt(b) => b.to_f64().to_bits().hash(state),
            // Lists and objects hash by length only; equality decides.
            Value::List(items) => items.len().hash(state),
            Value::Object(fields) => fields.len().hash(state),
            Value::Null => 0u8.hash(state),
        }
    }
}

/// Converts an already-parsed JSON value (used for `--param` lists).
pub fn json_to_value(json: &serde_json::Value) -> Value {
    match json {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => Value::from_json_number(n),
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

    /// `is_text` is `==` against a string, for every kind of value and
    /// texts of every length `same_bytes` treats apart.
    #[test]
    fn is_text_is_equality_with_a_string() {
        let texts = [
            "",
            "c",
            "c0",
            "1",
            "true",
            "c0de",
            "abcdefgh",
            "a text of 17 bytes",
        ];
        let mut values = vec![
            Value::Null,
            Value::Bool(true),
            Value::Number(1.0),
            Value::from_i64(1),
            Value::from_u64(u64::MAX),
            Value::list(vec![Value::from("c0")]),
            Value::empty_list(),
        ];
        for text in texts {
            values.push(Value::from(text));
            values.push(Value::from(format!("{text}x").as_str()));
        }
        for value in &values {
            for text in texts {
                let equal = *value == Value::from(text);
                assert_eq!(value.is_text(text), equal, "{value:?} against {text:?}");
            }
        }
    }

    proptest::proptest! {
        /// Texts of every length to past 16 bytes, differing in any one
        /// byte or not at all, compare as their bytes do.
        #[test]
        fn texts_are_the_same_when_their_bytes_are(
            text in "[a-c]{0,20}", at in 0usize..20, other in 0u8..128,
        ) {
            let mut changed = text.clone().into_bytes();
            if let Some(byte) = changed.get_mut(at) {
                *byte = other;
            }
            let changed = String::from_utf8(changed).expect("ASCII");
            proptest::prop_assert_eq!(same_bytes(&text, &changed), text == changed);
            proptest::prop_assert!(same_bytes(&text, &text.clone()));
            let longer = format!("{text}a");
            proptest::prop_assert!(!same_bytes(&text, &longer));
        }
    }

    proptest::proptest! {
        /// Taking a value gives the key (or the refusal) that reading it does.
        #[test]
        fn a_value_taken_is_the_key_it_reads_as(value in super::strategies::value()) {
            let read = Key::of(&value).map_err(|e| e.to_string());
            let taken = Key::from_value(value).map_err(|e| e.to_string());
            proptest::prop_assert_eq!(taken, read);
        }
    }

    proptest::proptest! {
        #[test]
        fn integers_are_written_as_the_formatter_writes_them(n in proptest::prelude::any::<i64>()) {
            let mut buffer = [0; 20];
            proptest::prop_assert_eq!(integer_text(n, &mut buffer), n.to_string());
        }
    }

    proptest::proptest! {
        /// The fast paths write what the plain definition does: an integer's
        /// digits, another finite number as serde_json writes it, `null` for
        /// the rest; `format_number` the same.
        #[test]
        fn a_pushed_number_is_its_plain_text(
            n in proptest::prop_oneof![
                proptest::prelude::any::<f64>(),
                proptest::strategy::Strategy::prop_map(-3i32..4, f64::from),
                proptest::prelude::Just(-0.0),
            ]
        ) {
            let mut out = Vec::new();
            push_number(&mut out, n);
            let plain = if n.fract() == 0.0 && n.abs() < 9.007_199_254_740_992e15 {
                (n as i64).to_string()
            } else {
                serde_json::Number::from_f64(n).map_or("null".to_string(), |x| x.to_string())
            };
            proptest::prop_assert_eq!(&format_number(n), &plain);
            proptest::prop_assert_eq!(String::from_utf8(out).unwrap(), plain);
        }
    }

    #[test]
    fn integers_written_by_hand_keep_their_sign_and_extremes() {
        for (n, text) in [
            (0, "0"),
            (-1, "-1"),
            (10, "10"),
            (i64::MIN, "-9223372036854775808"),
        ] {
            assert_eq!(integer_text(n, &mut [0; 20]), text);
        }
    }

    #[test]
    fn integers_beyond_two_to_the_53_stay_exact() {
        let a = Value::from_i64(1_234_567_890_123_456_789);
        let b = Value::from_i64(1_234_567_890_123_456_788);
        assert!(matches!(a, Value::BigInt(_)));
        assert_ne!(a, b);
        assert_ne!(Key::of(&a).unwrap(), Key::of(&b).unwrap());
        assert_eq!(a.to_string(), "1234567890123456789");
        assert_eq!(
            Value::from_u64(u64::MAX).to_string(),
            "18446744073709551615"
        );
        assert_eq!(
            Value::from_i64(i64::MIN).to_string(),
            "-9223372036854775808"
        );
        // Small integers stay plain numbers; a float equals a big integer only exactly.
        assert_eq!(Value::from_i64(7), Value::Number(7.0));
        let two_60 = Value::from_u64(1 << 60);
        assert_eq!(two_60, Value::Number((1u64 << 60) as f64));
        assert_ne!(
            Value::from_u64((1 << 60) + 1),
            Value::Number((1u64 << 60) as f64)
        );
        assert_eq!(
            std::mem::size_of::<Value>(),
            24,
            "a value stays three words: its tag one"
        );
        assert_eq!(
            std::mem::size_of::<Option<Value>>(),
            24,
            "and so does one that may be none"
        );
    }

    #[test]
    fn equality_follows_python() {
        assert_eq!(Value::Number(1.0), Value::Bool(true));
        assert_ne!(Value::from("1"), Value::Number(1.0));
        assert_eq!(
            Key::of(&Value::Number(-0.0)).unwrap(),
            Key::of(&Value::Number(0.0)).unwrap()
        );
        // Keys are stricter than equality: a bool is no key, nor a number
        // that is not exact.
        assert!(Key::of(&Value::Bool(false)).is_err());
        assert!(Key::of(&Value::Number(1e20)).is_err());
        assert!(Key::of(&Value::Number(1.2e18)).is_ok());
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
    fn numbers_print_shortest() {
        assert_eq!(format_number(2.0), "2");
        assert_eq!(format_number(2.0 / 3.0), "0.6666666666666666");
        assert_eq!(format_number(f64::NAN), "null");
    }
}

/// Values for property tests: every kind, floats of every bit pattern,
/// integers beyond 2^53, strings needing JSON escapes, nested lists and
/// objects (with distinct field names, as records have them).
#[cfg(test)]
pub mod strategies {
    use super::Value;
    use proptest::prelude::*;
    use std::sync::Arc;

    pub fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<f64>().prop_map(Value::Number),
            (-20i64..20).prop_map(|n| Value::Number(n as f64)),
            any::<i64>().prop_map(Value::from_i64),
            any::<u64>().prop_map(Value::from_u64),
            "[a-z\"\\\\\n\u{1}é ]{0,8}".prop_map(|s| Value::String(s.into())),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(|v| Value::List(v.into())),
                prop::collection::btree_map("[a-z\"]{0,4}", inner, 0..4).prop_map(|fields| {
                    let fields: Vec<(Arc<str>, Value)> =
                        fields.into_iter().map(|(k, v)| (k.into(), v)).collect();
                    Value::Object(fields.into())
                }),
            ]
        })
    }
}
