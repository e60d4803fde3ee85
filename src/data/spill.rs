//! Projected records written to a temporary file and read back, for a join that
//! partitions its inputs to disk (`eval/spilled.rs`). Only the projected slots
//! are written, with the record's line and a number the caller gives it, in a
//! compact binary form read back exactly: every value, float bits and big
//! integers included, comes back equal. The same pieces (a key, a fixed-size
//! number) write the heads of the items report's lines past its memory bound
//! (`eval/item_lines/run.rs`).

use std::io::{self, BufRead, Read, Write};
use std::sync::Arc;

use crate::base::value::{BigInt, Key, Value};
use crate::ir::Record;

const NULL: u8 = 0;
const FALSE: u8 = 1;
const TRUE: u8 = 2;
const NUMBER: u8 = 3;
const BIG_POSITIVE: u8 = 4;
const BIG_NEGATIVE: u8 = 5;
const STRING: u8 = 6;
const LIST: u8 = 7;
const OBJECT: u8 = 8;

/// Writes records to a file of a partition: each record's texts and shape are
/// built in scratch buffers kept from one record to the next, then written
/// after the record's head.
///
/// A record is framed so that its reader takes it in one piece: its length,
/// its number and line, then every text it holds (strings and field names)
/// one after another, then its shape (each value's tag; a text's length, a
/// number's bits). The texts are then checked as UTF-8 once per record, not
/// once per string: a trace's dozen short ids each paid a call to the check,
/// a fifth of a partitioned run's extra time.
#[derive(Default)]
pub struct RecordWriter {
    texts: String,
    shape: Vec<u8>,
}

impl RecordWriter {
    /// Writes `record` (its line, its slots) and `number` to `out`.
    pub fn write(&mut self, out: &mut impl Write, number: u32, record: &Record) -> io::Result<()> {
        self.texts.clear();
        self.shape.clear();
        for value in record.slots.iter() {
            self.value(value)?;
        }
        let mut head = [0u8; 16];
        let body = 12 + self.texts.len() + self.shape.len();
        head[..4].copy_from_slice(&len_bytes(body)?);
        head[4..8].copy_from_slice(&number.to_le_bytes());
        head[8..12].copy_from_slice(&record.line.to_le_bytes());
        head[12..].copy_from_slice(&len_bytes(self.texts.len())?);
        out.write_all(&head)?;
        out.write_all(self.texts.as_bytes())?;
        out.write_all(&self.shape)
    }

    fn value(&mut self, value: &Value) -> io::Result<()> {
        match value {
            Value::Null => self.shape.push(NULL),
            Value::Bool(false) => self.shape.push(FALSE),
            Value::Bool(true) => self.shape.push(TRUE),
            Value::Number(x) => {
                self.shape.push(NUMBER);
                self.shape.extend_from_slice(&x.to_bits().to_le_bytes());
            }
            Value::BigInt(n) => {
                let (negative, magnitude) = n.parts();
                self.shape
                    .push(if negative { BIG_NEGATIVE } else { BIG_POSITIVE });
                self.shape.extend_from_slice(&magnitude.to_le_bytes());
            }
            Value::String(s) => {
                self.shape.push(STRING);
                self.text(s)?;
            }
            Value::List(items) => {
                self.shape.push(LIST);
                self.shape.extend_from_slice(&len_bytes(items.len())?);
                items.iter().try_for_each(|item| self.value(item))?;
            }
            Value::Object(fields) => {
                self.shape.push(OBJECT);
                self.shape.extend_from_slice(&len_bytes(fields.len())?);
                for (name, value) in fields.iter() {
                    self.text(name)?;
                    self.value(value)?;
                }
            }
        }
        Ok(())
    }

    fn text(&mut self, text: &str) -> io::Result<()> {
        self.shape.extend_from_slice(&len_bytes(text.len())?);
        self.texts.push_str(text);
        Ok(())
    }
}

/// A length as written: four bytes, so at most 4 GiB.
fn len_bytes(len: usize) -> io::Result<[u8; 4]> {
    let len = u32::try_from(len).map_err(|_| io::Error::other("a value over 4 GiB"))?;
    Ok(len.to_le_bytes())
}

/// Reads back records written by [`RecordWriter`]: from the reader's buffer
/// when it holds the whole record, else through a scratch buffer kept from
/// one record to the next.
pub struct RecordReader<R> {
    input: R,
    scratch: Vec<u8>,
}

impl<R: BufRead> RecordReader<R> {
    pub fn new(input: R) -> Self {
        RecordReader {
            input,
            scratch: Vec::new(),
        }
    }

    /// The next record, with `slots` slots, and its number; `None` at the
    /// end of the file.
    pub fn next(&mut self, slots: usize) -> io::Result<Option<(u32, Record)>> {
        if self.input.fill_buf()?.is_empty() {
            return Ok(None);
        }
        let len = read_len(&mut self.input)?;
        let buffered = self.input.fill_buf()?;
        if buffered.len() >= len {
            let record = decode_record(&buffered[..len], slots)?;
            self.input.consume(len);
            return Ok(Some(record));
        }
        // Grown as the bytes come: a damaged length is a short read, not a
        // huge allocation.
        self.scratch.clear();
        let read = (&mut self.input)
            .take(len as u64)
            .read_to_end(&mut self.scratch)?;
        if read < len {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "a spilled record ends early",
            ));
        }
        decode_record(&self.scratch, slots).map(Some)
    }
}

fn decode_record(frame: &[u8], slots: usize) -> io::Result<(u32, Record)> {
    let mut shape = Shape(frame);
    let number = u32::from_le_bytes(shape.take()?);
    let line = u32::from_le_bytes(shape.take()?);
    let texts_len = u32::from_le_bytes(shape.take()?) as usize;
    let texts = shape.bytes(texts_len)?;
    let texts = std::str::from_utf8(texts).map_err(invalid_data)?;
    let mut decoder = Decoder {
        shape,
        texts,
        text_at: 0,
    };
    let slots = (0..slots)
        .map(|_| decoder.value())
        .collect::<io::Result<Box<[Value]>>>()?;
    if !decoder.shape.0.is_empty() || decoder.text_at != texts.len() {
        return Err(invalid_data("a spilled record is longer than its values"));
    }
    Ok((number, Record { slots, line }))
}

/// The bytes of a record not read yet.
struct Shape<'f>(&'f [u8]);

impl<'f> Shape<'f> {
    fn bytes(&mut self, n: usize) -> io::Result<&'f [u8]> {
        if self.0.len() < n {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "a spilled record ends early",
            ));
        }
        let (taken, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(taken)
    }

    fn take<const N: usize>(&mut self) -> io::Result<[u8; N]> {
        let mut array = [0u8; N];
        array.copy_from_slice(self.bytes(N)?);
        Ok(array)
    }

    fn len(&mut self) -> io::Result<usize> {
        Ok(u32::from_le_bytes(self.take()?) as usize)
    }
}

/// A record's values, read from its shape and its texts.
struct Decoder<'f> {
    shape: Shape<'f>,
    texts: &'f str,
    text_at: usize,
}

impl Decoder<'_> {
    fn value(&mut self) -> io::Result<Value> {
        let [tag] = self.shape.take()?;
        Ok(match tag {
            NULL => Value::Null,
            FALSE => Value::Bool(false),
            TRUE => Value::Bool(true),
            NUMBER => Value::Number(f64::from_bits(u64::from_le_bytes(self.shape.take()?))),
            BIG_POSITIVE | BIG_NEGATIVE => {
                let magnitude = u64::from_le_bytes(self.shape.take()?);
                Value::BigInt(BigInt::from_parts(tag == BIG_NEGATIVE, magnitude))
            }
            STRING => Value::String(self.text()?),
            LIST => {
                let len = self.shape.len()?;
                // Each value takes a byte at least: a length past the bytes
                // left is a damaged file, not a huge allocation.
                let mut items = Vec::with_capacity(len.min(self.shape.0.len()));
                for _ in 0..len {
                    items.push(self.value()?);
                }
                Value::List(Arc::from(items))
            }
            OBJECT => {
                let len = self.shape.len()?;
                let mut fields = Vec::with_capacity(len.min(self.shape.0.len()));
                for _ in 0..len {
                    fields.push((self.text()?, self.value()?));
                }
                Value::Object(Arc::from(fields))
            }
            other => {
                return Err(invalid_data(format!(
                    "a spilled record has an unknown tag {other}"
                )))
            }
        })
    }

    fn text(&mut self) -> io::Result<Arc<str>> {
        let len = self.shape.len()?;
        let end = self.text_at.checked_add(len);
        // Every text starts and ends on a character's boundary of the whole.
        let text = end.and_then(|end| self.texts.get(self.text_at..end));
        let text = text.ok_or_else(|| invalid_data("a spilled record's text is cut"))?;
        self.text_at += len;
        Ok(Arc::from(text))
    }
}

/// Writes a record's key (`None`: it has none): its tag, then its text or bits.
pub fn write_key(out: &mut impl Write, key: Option<&Key>) -> io::Result<()> {
    match key {
        None => out.write_all(&[NULL]),
        Some(Key::Str(text)) => {
            out.write_all(&[STRING])?;
            out.write_all(&len_bytes(text.len())?)?;
            out.write_all(text.as_bytes())
        }
        Some(Key::Num(bits)) => {
            out.write_all(&[NUMBER])?;
            out.write_all(&bits.to_le_bytes())
        }
        Some(Key::Big(n)) => {
            let (negative, magnitude) = n.parts();
            out.write_all(&[if negative { BIG_NEGATIVE } else { BIG_POSITIVE }])?;
            out.write_all(&magnitude.to_le_bytes())
        }
    }
}

/// Reads back a key written by [`write_key`].
pub fn read_key(input: &mut impl BufRead) -> io::Result<Option<Key>> {
    let [tag] = read_array(input)?;
    Ok(Some(match tag {
        NULL => return Ok(None),
        STRING => Key::Str(read_text(input)?),
        NUMBER => Key::Num(u64::from_le_bytes(read_array(input)?)),
        BIG_POSITIVE | BIG_NEGATIVE => {
            let magnitude = u64::from_le_bytes(read_array(input)?);
            Key::Big(BigInt::from_parts(tag == BIG_NEGATIVE, magnitude))
        }
        other => {
            return Err(invalid_data(format!(
                "a spilled key has an unknown tag {other}"
            )))
        }
    }))
}

/// Passes over a key written by [`write_key`] without building it.
pub fn skip_key(input: &mut impl BufRead) -> io::Result<()> {
    let [tag] = read_array(input)?;
    let len = match tag {
        NULL => 0,
        STRING => read_len(input)?,
        NUMBER | BIG_POSITIVE | BIG_NEGATIVE => 8,
        other => {
            return Err(invalid_data(format!(
                "a spilled key has an unknown tag {other}"
            )))
        }
    };
    copy_bytes(input, len, &mut io::sink())
}

/// Copies the next `len` bytes of `reader` to `out`.
pub fn copy_bytes(
    reader: &mut impl BufRead,
    mut len: usize,
    out: &mut impl Write,
) -> io::Result<()> {
    while len > 0 {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let taken = buffer.len().min(len);
        out.write_all(&buffer[..taken])?;
        reader.consume(taken);
        len -= taken;
    }
    Ok(())
}

/// Reads `N` bytes: a number written with `to_le_bytes`.
pub fn read_array<const N: usize>(input: &mut impl BufRead) -> io::Result<[u8; N]> {
    let mut bytes = [0u8; N];
    input.read_exact(&mut bytes)?;
    Ok(bytes)
}

fn read_len(input: &mut impl BufRead) -> io::Result<usize> {
    Ok(u32::from_le_bytes(read_array(input)?) as usize)
}

/// Reads back a key's text: from the reader's buffer when it holds the whole
/// text, so that it is allocated and copied once.
fn read_text(input: &mut impl BufRead) -> io::Result<Arc<str>> {
    let len = read_len(input)?;
    let buffered = input.fill_buf()?;
    if buffered.len() < len {
        let mut bytes = vec![0u8; len];
        input.read_exact(&mut bytes)?;
        let text = String::from_utf8(bytes).map_err(invalid_data)?;
        return Ok(Arc::from(text));
    }
    let text = Arc::from(std::str::from_utf8(&buffered[..len]).map_err(invalid_data)?);
    input.consume(len);
    Ok(text)
}

fn invalid_data(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::value::strategies::value;
    use proptest::prelude::*;

    /// Equal as written: float bits compared, so that NaN and -0.0 count.
    fn same(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Number(x), Value::Number(y)) => x.to_bits() == y.to_bits(),
            (Value::List(x), Value::List(y)) => {
                x.len() == y.len() && x.iter().zip(y.iter()).all(|(a, b)| same(a, b))
            }
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len()
                    && (x.iter().zip(y.iter())).all(|((n, a), (m, b))| n == m && same(a, b))
            }
            (a, b) => a == b,
        }
    }

    fn written(records: &[(u32, u32, Vec<Value>)]) -> Vec<u8> {
        let (mut writer, mut bytes) = (RecordWriter::default(), Vec::new());
        for (number, line, slots) in records {
            let record = Record {
                slots: slots.clone().into(),
                line: *line,
            };
            writer.write(&mut bytes, *number, &record).unwrap();
        }
        bytes
    }

    proptest! {
        #[test]
        fn records_come_back_exactly(
            records in prop::collection::vec((any::<u32>(), any::<u32>(), prop::collection::vec(value(), 3)), 0..6)
        ) {
            let bytes = written(&records);
            // Read whole, and through small buffers: records, texts and
            // lists straddle their refills.
            for capacity in [1 << 16, 1, 3, 16] {
                let mut input = RecordReader::new(std::io::BufReader::with_capacity(capacity, bytes.as_slice()));
                for (number, line, slots) in &records {
                    let (n, record) = input.next(3).unwrap().expect("a record");
                    prop_assert_eq!((n, record.line), (*number, *line));
                    prop_assert!(slots.iter().zip(record.slots.iter()).all(|(a, b)| same(a, b)));
                }
                prop_assert!(input.next(3).unwrap().is_none());
            }
        }

        #[test]
        fn keys_come_back_exactly(key in value()) {
            let Ok(key) = Key::of(&key) else { return Ok(()) };
            let mut bytes = Vec::new();
            write_key(&mut bytes, key.as_ref()).unwrap();
            let back = read_key(&mut bytes.as_slice()).unwrap();
            prop_assert_eq!(format!("{back:?}"), format!("{key:?}"));
            // Passed over, a key leaves the reader at what follows it; cut
            // short, it is an error.
            bytes.push(b'!');
            let mut input = std::io::BufReader::with_capacity(3, bytes.as_slice());
            skip_key(&mut input).unwrap();
            prop_assert_eq!(input.fill_buf().unwrap(), b"!");
            let cut = &bytes[..bytes.len() - 2];
            prop_assert!(cut.is_empty() || skip_key(&mut &cut[..]).is_err());
        }

        /// Damaged bytes are an error or some record, never a panic.
        #[test]
        fn damaged_records_do_not_panic(
            records in prop::collection::vec((any::<u32>(), any::<u32>(), prop::collection::vec(value(), 3)), 1..4),
            at in any::<prop::sample::Index>(),
            byte in any::<u8>(),
        ) {
            let mut bytes = written(&records);
            let at = at.index(bytes.len());
            bytes[at] = byte;
            let mut input = RecordReader::new(bytes.as_slice());
            while let Ok(Some(_)) = input.next(3) {}
        }
    }

    #[test]
    fn a_truncated_file_is_an_error_not_a_record() {
        let record = Record {
            slots: vec![Value::from("qid-1"), Value::Number(0.5)].into(),
            line: 7,
        };
        let mut bytes = Vec::new();
        RecordWriter::default()
            .write(&mut bytes, 3, &record)
            .unwrap();
        // Cut in the shape, and inside the text, read whole or through a small buffer.
        for cut in [2, 12, bytes.len() - 6] {
            let cut = &bytes[..bytes.len() - cut];
            assert!(RecordReader::new(cut).next(2).is_err());
            let small = std::io::BufReader::with_capacity(4, cut);
            assert!(RecordReader::new(small).next(2).is_err());
        }
        // A record read with more slots than it has is an error too.
        assert!(RecordReader::new(bytes.as_slice()).next(3).is_err());
        assert!(RecordReader::new(bytes.as_slice()).next(1).is_err());
    }

    #[test]
    fn a_record_checks_its_texts_once_and_cuts_them_on_boundaries() {
        let record = Record {
            slots: vec![Value::from("é"), Value::from("x")].into(),
            line: 1,
        };
        let mut bytes = Vec::new();
        RecordWriter::default()
            .write(&mut bytes, 0, &record)
            .unwrap();
        // The texts "éx" follow the three heads: é's two bytes, then x.
        let texts = 4 + 12;
        assert_eq!(&bytes[texts..texts + 3], "éx".as_bytes());
        // A first text one byte long would cut é: an error, not a panic.
        let first_len = bytes.len() - 5 - 5 + 1;
        assert_eq!(bytes[first_len..first_len + 4], 2u32.to_le_bytes());
        bytes[first_len] = 1;
        let error = RecordReader::new(bytes.as_slice()).next(2).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData, "{error}");
    }
}
