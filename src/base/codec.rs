//! A compact, exact binary encoding for partial states that travel between
//! processes and machines (`engine::PartialState`): integers as LEB128
//! varints, floats as their bits (so -0, NaN and every last bit come back),
//! text as its length and UTF-8 bytes. Each layer encodes its own types with
//! a [`Writer`] and decodes them with a [`Reader`], which never panics on
//! damaged bytes: it says what it expected and where.

use std::sync::{Arc, Mutex};

use crate::base::diagnostic::{Cause, Diagnostic, Level, Location, Snippet};
use crate::base::value::{BigInt, Key, Value};

/// Encoded bytes, written in order.
#[derive(Debug, Default)]
pub struct Writer {
    bytes: Vec<u8>,
}

/// Why bytes could not be decoded: what was expected, at which byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    pub expected: &'static str,
    pub at: usize,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "expected {} at byte {}", self.expected, self.at)
    }
}

pub type Decoded<T> = Result<T, DecodeError>;

impl Writer {
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    pub fn u8(&mut self, x: u8) {
        self.bytes.push(x);
    }

    pub fn bool(&mut self, x: bool) {
        self.bytes.push(u8::from(x));
    }

    pub fn u64(&mut self, mut x: u64) {
        loop {
            let byte = (x & 0x7f) as u8;
            x >>= 7;
            if x == 0 {
                self.bytes.push(byte);
                return;
            }
            self.bytes.push(byte | 0x80);
        }
    }

    pub fn usize(&mut self, x: usize) {
        self.u64(x as u64);
    }

    pub fn f64(&mut self, x: f64) {
        self.bytes.extend(x.to_bits().to_le_bytes());
    }

    pub fn raw(&mut self, bytes: &[u8]) {
        self.usize(bytes.len());
        self.bytes.extend_from_slice(bytes);
    }

    pub fn str(&mut self, text: &str) {
        self.raw(text.as_bytes());
    }

    pub fn option<T>(&mut self, value: Option<T>, mut each: impl FnMut(&mut Writer, T)) {
        match value {
            None => self.u8(0),
            Some(value) => {
                self.u8(1);
                each(self, value);
            }
        }
    }

    pub fn seq<T>(
        &mut self,
        items: impl ExactSizeIterator<Item = T>,
        mut each: impl FnMut(&mut Writer, T),
    ) {
        self.usize(items.len());
        for item in items {
            each(self, item);
        }
    }

    pub fn value(&mut self, value: &Value) {
        match value {
            Value::Null => self.u8(0),
            Value::Bool(b) => {
                self.u8(1);
                self.bool(*b);
            }
            Value::Number(x) => {
                self.u8(2);
                self.f64(*x);
            }
            Value::BigInt(big) => {
                self.u8(3);
                let (negative, magnitude) = big.parts();
                self.bool(negative);
                self.u64(magnitude);
            }
            Value::String(text) => {
                self.u8(4);
                self.str(text);
            }
            Value::List(items) => {
                self.u8(5);
                self.seq(items.iter(), Writer::value);
            }
            Value::Object(fields) => {
                self.u8(6);
                self.seq(fields.iter(), |w, (name, value)| {
                    w.str(name);
                    w.value(value);
                });
            }
        }
    }

    pub fn key(&mut self, key: &Key) {
        match key {
            Key::Str(text) => {
                self.u8(0);
                self.str(text);
            }
            Key::Num(bits) => {
                self.u8(1);
                self.u64(*bits);
            }
            Key::Big(big) => {
                self.u8(2);
                let (negative, magnitude) = big.parts();
                self.bool(negative);
                self.u64(magnitude);
            }
        }
    }

    pub fn location(&mut self, location: &Location) {
        self.str(&location.file);
        self.usize(location.line);
        self.option(location.column, Writer::usize);
        self.option(location.snippet.as_ref(), |w, s| {
            w.str(&s.line_text);
            w.usize(s.width);
        });
        self.option(location.key_path.as_deref(), Writer::str);
    }

    pub fn diagnostic(&mut self, d: &Diagnostic) {
        self.bool(d.level == Level::Warning);
        self.str(d.code);
        self.str(&d.message);
        self.option(d.location.as_deref(), Writer::location);
        self.option(d.label.as_deref(), Writer::str);
        self.option(d.note.as_deref(), Writer::str);
        self.option(d.help.as_deref(), Writer::str);
        self.option(d.cause.as_deref(), |w, cause| {
            w.str(cause.code);
            w.option(cause.at.as_ref(), Writer::location);
        });
    }
}

/// Bytes being decoded, read in order.
pub struct Reader<'b> {
    bytes: &'b [u8],
    at: usize,
}

impl<'b> Reader<'b> {
    pub fn new(bytes: &'b [u8]) -> Self {
        Reader { bytes, at: 0 }
    }

    /// An error expecting `what` here.
    pub fn expected(&self, what: &'static str) -> DecodeError {
        DecodeError {
            expected: what,
            at: self.at,
        }
    }

    /// Whether every byte was read.
    pub fn is_done(&self) -> bool {
        self.at == self.bytes.len()
    }

    pub fn u8(&mut self) -> Decoded<u8> {
        let byte = *self.bytes.get(self.at).ok_or(self.expected("a byte"))?;
        self.at += 1;
        Ok(byte)
    }

    pub fn bool(&mut self) -> Decoded<bool> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(self.expected("a boolean")),
        }
    }

    pub fn u64(&mut self) -> Decoded<u64> {
        let mut x = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.u8()?;
            x |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(x);
            }
        }
        Err(self.expected("a varint of at most 64 bits"))
    }

    pub fn usize(&mut self) -> Decoded<usize> {
        usize::try_from(self.u64()?).map_err(|_| self.expected("a size"))
    }

    pub fn u32(&mut self) -> Decoded<u32> {
        u32::try_from(self.u64()?).map_err(|_| self.expected("a 32-bit number"))
    }

    pub fn f64(&mut self) -> Decoded<f64> {
        let end = self.at + 8;
        let bytes = self
            .bytes
            .get(self.at..end)
            .ok_or(self.expected("a float"))?;
        self.at = end;
        Ok(f64::from_bits(u64::from_le_bytes(
            bytes.try_into().expect("8 bytes"),
        )))
    }

    pub fn raw(&mut self) -> Decoded<&'b [u8]> {
        let len = self.usize()?;
        let end = self.at.checked_add(len).ok_or(self.expected("bytes"))?;
        let bytes = self.bytes.get(self.at..end).ok_or(self.expected("bytes"))?;
        self.at = end;
        Ok(bytes)
    }

    pub fn str(&mut self) -> Decoded<&'b str> {
        std::str::from_utf8(self.raw()?).map_err(|_| self.expected("UTF-8 text"))
    }

    pub fn string(&mut self) -> Decoded<String> {
        self.str().map(str::to_string)
    }

    pub fn arc_str(&mut self) -> Decoded<Arc<str>> {
        self.str().map(Arc::from)
    }

    pub fn option<T>(&mut self, each: impl FnOnce(&mut Self) -> Decoded<T>) -> Decoded<Option<T>> {
        match self.u8()? {
            0 => Ok(None),
            1 => each(self).map(Some),
            _ => Err(self.expected("an option's tag")),
        }
    }

    /// A sequence's items; its length is checked against the bytes left, so
    /// that damaged bytes cannot ask for a huge allocation.
    pub fn seq<T>(&mut self, mut each: impl FnMut(&mut Self) -> Decoded<T>) -> Decoded<Vec<T>> {
        let len = self.usize()?;
        if len > self.bytes.len() - self.at {
            return Err(self.expected("a sequence no longer than the bytes left"));
        }
        (0..len).map(|_| each(self)).collect()
    }

    pub fn value(&mut self) -> Decoded<Value> {
        Ok(match self.u8()? {
            0 => Value::Null,
            1 => Value::Bool(self.bool()?),
            2 => Value::Number(self.f64()?),
            3 => Value::BigInt(BigInt::from_parts(self.bool()?, self.u64()?)),
            4 => Value::String(self.arc_str()?),
            5 => Value::List(self.seq(Reader::value)?.into()),
            6 => Value::Object(self.seq(|r| Ok((r.arc_str()?, r.value()?)))?.into()),
            _ => return Err(self.expected("a value's tag")),
        })
    }

    pub fn key(&mut self) -> Decoded<Key> {
        Ok(match self.u8()? {
            0 => Key::Str(self.arc_str()?),
            1 => Key::Num(self.u64()?),
            2 => Key::Big(BigInt::from_parts(self.bool()?, self.u64()?)),
            _ => return Err(self.expected("a key's tag")),
        })
    }

    pub fn location(&mut self) -> Decoded<Location> {
        Ok(Location {
            file: self.string()?,
            line: self.usize()?,
            column: self.option(Reader::usize)?,
            snippet: self.option(|r| {
                Ok(Snippet {
                    line_text: r.string()?,
                    width: r.usize()?,
                })
            })?,
            key_path: self.option(Reader::string)?,
        })
    }

    pub fn diagnostic(&mut self) -> Decoded<Diagnostic> {
        let level = match self.bool()? {
            true => Level::Warning,
            false => Level::Error,
        };
        Ok(Diagnostic {
            level,
            code: intern(self.str()?),
            message: self.string()?,
            location: self.option(Reader::location)?.map(Box::new),
            label: self.option(|r| r.str().map(Box::from))?,
            note: self.option(|r| r.str().map(Box::from))?,
            help: self.option(Reader::string)?,
            cause: self
                .option(|r| {
                    Ok(Cause {
                        code: intern(r.str()?),
                        at: r.option(Reader::location)?,
                    })
                })?
                .map(Box::new),
        })
    }
}

/// A diagnostic code read back as the `&'static str` codes are: each distinct
/// code is kept once for the life of the process (codes are a small, fixed
/// set of words).
fn intern(code: &str) -> &'static str {
    static CODES: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut codes = CODES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(known) = codes.iter().find(|known| **known == code) {
        return known;
    }
    let kept: &'static str = Box::leak(code.into());
    codes.push(kept);
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<u64>().prop_map(|bits| Value::Number(f64::from_bits(bits))),
            "[a-zé\"\\\\ ]{0,8}".prop_map(|s| Value::String(Arc::from(s.as_str()))),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(|v| Value::List(v.into())),
                prop::collection::vec(("[a-z]{1,3}", inner), 0..3).prop_map(|v| {
                    let fields: Vec<(Arc<str>, Value)> = v
                        .into_iter()
                        .map(|(k, v)| (Arc::from(k.as_str()), v))
                        .collect();
                    Value::Object(fields.into())
                }),
            ]
        })
    }

    /// Values compared by their encoding's bits (NaN is not equal to itself).
    fn bits(value: &Value) -> Vec<u8> {
        let mut w = Writer::default();
        w.value(value);
        w.into_bytes()
    }

    proptest! {
        #[test]
        fn values_come_back_bit_for_bit(value in value(), n in any::<u64>()) {
            let mut w = Writer::default();
            w.value(&value);
            w.u64(n);
            let bytes = w.into_bytes();
            let mut r = Reader::new(&bytes);
            let back = r.value().unwrap();
            prop_assert_eq!(bits(&back), bits(&value));
            prop_assert_eq!(r.u64().unwrap(), n);
            prop_assert!(r.is_done());
            // Every truncation is an error, never a panic.
            for end in 0..bytes.len() {
                let mut r = Reader::new(&bytes[..end]);
                let whole = r.value().and_then(|_| r.u64());
                prop_assert!(whole.is_err());
            }
        }
    }

    #[test]
    fn a_diagnostic_comes_back_whole() {
        let d = Diagnostic::error("test", "bad")
            .at(Location::in_data("t.jsonl", 3, Some(4)))
            .help("fix it")
            .note("a note");
        let mut w = Writer::default();
        w.diagnostic(&d);
        let bytes = w.into_bytes();
        let back = Reader::new(&bytes).diagnostic().unwrap();
        assert_eq!(back.render(), d.render());
        let mut huge = Writer::default();
        huge.u64(u64::MAX);
        let bytes = huge.into_bytes();
        assert!(Reader::new(&bytes).seq(Reader::u8).is_err());
    }
}
