//! CSV and TSV datasets (RFC 4180): a header row names the columns; quoted cells may
//! hold delimiters, quotes (doubled) and line breaks; a UTF-8 byte order mark is
//! skipped; `\n`, `\r\n` and `\r` end a row, blank lines are skipped.
//!
//! Only the columns the plan reads are decoded, each typed by the dataset's schema
//! (see [`columns::column_type`]): `number`, `integer` and `bool` cells are parsed
//! (`true`/`false` in any case), a list cell is a JSON array or, with
//! `list_separator`, text split at it, an object cell is a JSON object; any other
//! cell is text. An empty cell is null. A cell that does not parse is an error at
//! `file:line:column` naming its column, a row with the wrong number of cells at
//! the row's first extra cell (or its end), a quote left open at the quote.
//!
//! The parser is csv-core, the engine of the `csv` crate, driven directly: it
//! gives each row's exact first byte and line (the `csv` crate reports positions
//! before skipped line breaks) and tells when a quoted cell runs to the end of the
//! file (which the `csv` crate silently accepts). A file is read by one thread, in
//! one chunk; its SHA-256 is computed as it is read, or for a large file on a
//! thread of its own.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::ops::ControlFlow;
use std::sync::Arc;

use crate::base::diagnostic::{Diagnostic, Location};
use crate::base::sha256::Sha256;
use crate::base::value::Value;
use crate::data::chunks::hash_apart;
use crate::data::columns::{self, Target};
use crate::data::csv_scan::Scan;
use crate::data::file::{count_newlines, hash_file, open_error};
use crate::data::project::{self, Interner};
use crate::data::reader::Flow;
use crate::data::reader::ReadStats;
use crate::ir::Record;
use crate::plan::DatasetPlan;
use crate::spec::{DataType, Format};

/// Reads the file's rows into records for `sink`; returns the error that stopped it.
pub fn read<S>(
    dataset: &DatasetPlan,
    state: &mut S,
    sink: &(impl Fn(&mut S, Record) -> Flow + Sync),
) -> Result<(Option<Diagnostic>, ReadStats), Diagnostic> {
    let file = File::open(&dataset.path).map_err(|e| open_error(dataset, &e))?;
    let size = file.metadata().map_err(|e| open_error(dataset, &e))?.len();
    if !hash_apart(size) {
        return read_rows(dataset, file, Some(Sha256::new()), state, sink);
    }
    std::thread::scope(|scope| {
        let digest = scope.spawn(|| hash_file(dataset));
        let read = read_rows(dataset, file, None, state, sink);
        let digest = digest.join().expect("hashing does not panic");
        let (stop, mut stats) = read?;
        stats.sha256 = digest?;
        Ok((stop, stats))
    })
}

/// Reads the rows, hashing them as they are read when given a hasher.
fn read_rows<S>(
    dataset: &DatasetPlan,
    file: File,
    hasher: Option<Sha256>,
    state: &mut S,
    sink: &(impl Fn(&mut S, Record) -> Flow + Sync),
) -> Result<(Option<Diagnostic>, ReadStats), Diagnostic> {
    let delimiter = delimiter(dataset);
    let mut input = Input {
        reader: BufReader::with_capacity(1 << 20, file),
        hasher,
        offset: 0,
        line: 1,
    };
    let mut core = csv_core::ReaderBuilder::new().delimiter(delimiter).build();
    let mut row = Row::default();
    let io = |e: std::io::Error| open_error(dataset, &e);
    let mut stats = ReadStats::default();
    let mut stop = None;
    match input.next_row(&mut core, &mut row).map_err(io)? {
        None => {
            stop = Some(
                Diagnostic::error("csv_empty", format!("{}: the file is empty", dataset.name))
                    .at(Location::in_data(&dataset.display_path, 1, Some(1)))
                    .help("a CSV dataset starts with a header row naming its columns"),
            )
        }
        Some(at_end) => match Columns::from_header(dataset, &row, at_end, delimiter) {
            Err(d) => stop = Some(d),
            Ok(columns) => {
                let mut interner = Interner::default();
                while let Some(at_end) = input.next_row(&mut core, &mut row).map_err(io)? {
                    let record = columns.record(dataset, &row, at_end, delimiter, &mut interner);
                    let result = record.and_then(|record| {
                        stats.records += 1;
                        sink(state, record)
                    });
                    match result {
                        Ok(ControlFlow::Continue(())) => {}
                        Ok(ControlFlow::Break(())) => break,
                        Err(d) => {
                            stop = Some(d);
                            break;
                        }
                    }
                }
            }
        },
    }
    if stop.is_none() {
        // Every byte is hashed, also trailing line breaks.
        input.skip_breaks().map_err(io)?;
    }
    stats.bytes = input.offset;
    stats.sha256 = input.hasher.map(Sha256::hex).unwrap_or_default();
    Ok((stop, stats))
}

fn delimiter(dataset: &DatasetPlan) -> u8 {
    dataset
        .csv
        .delimiter
        .unwrap_or(if dataset.format == Format::Tsv {
            b'\t'
        } else {
            b','
        })
}

/// The file, counted (and hashed, unless it is hashed apart) as it is consumed.
struct Input {
    reader: BufReader<File>,
    hasher: Option<Sha256>,
    offset: u64,
    /// The line of the next byte.
    line: usize,
}

/// One row as csv-core leaves it: cells unescaped into `cells`, each ending at
/// `ends[i]`; where the row starts in the file.
#[derive(Default)]
struct Row {
    cells: Vec<u8>,
    ends: Vec<usize>,
    len: usize,
    offset: u64,
    line: usize,
}

impl Row {
    fn cell(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.cells[start..self.ends[i]]
    }
}

impl Input {
    fn consume(&mut self, n: usize, buffer_line_breaks: usize) {
        self.offset += n as u64;
        self.line += buffer_line_breaks;
        self.reader.consume(n);
    }

    /// Skips line breaks (blank lines, the `\n` of a `\r\n`); false at the end.
    fn skip_breaks(&mut self) -> std::io::Result<bool> {
        loop {
            let buffer = self.reader.fill_buf()?;
            if buffer.is_empty() {
                return Ok(false);
            }
            let n = buffer
                .iter()
                .take_while(|&&b| b == b'\n' || b == b'\r')
                .count();
            let breaks = count_newlines(&buffer[..n]);
            if let Some(hasher) = &mut self.hasher {
                hasher.update(&buffer[..n]);
            }
            let more = n < buffer.len();
            self.consume(n, breaks);
            if more {
                return Ok(true);
            }
        }
    }

    /// Reads the next row into `row`: `None` at the end of the file, else whether
    /// the row ended at the end of the file (rather than at a line break).
    fn next_row(
        &mut self,
        core: &mut csv_core::Reader,
        row: &mut Row,
    ) -> std::io::Result<Option<bool>> {
        if !self.skip_breaks()? {
            return Ok(None);
        }
        row.offset = self.offset;
        row.line = self.line;
        if row.cells.is_empty() {
            row.cells.resize(4096, 0);
            row.ends.resize(64, 0);
        }
        let (mut out, mut ends) = (0, 0);
        loop {
            let buffer = self.reader.fill_buf()?;
            let at_end = buffer.is_empty();
            let (result, nin, nout, nend) =
                core.read_record(buffer, &mut row.cells[out..], &mut row.ends[ends..]);
            let breaks = count_newlines(&buffer[..nin]);
            if let Some(hasher) = &mut self.hasher {
                hasher.update(&buffer[..nin]);
            }
            self.consume(nin, breaks);
            out += nout;
            ends += nend;
            match result {
                csv_core::ReadRecordResult::InputEmpty => {}
                csv_core::ReadRecordResult::OutputFull => {
                    let len = row.cells.len();
                    row.cells.resize(len * 2, 0);
                }
                csv_core::ReadRecordResult::OutputEndsFull => {
                    let len = row.ends.len();
                    row.ends.resize(len * 2, 0);
                }
                csv_core::ReadRecordResult::Record => {
                    row.len = ends;
                    return Ok(Some(at_end));
                }
                // Only a byte order mark was left.
                csv_core::ReadRecordResult::End => return Ok(None),
            }
        }
    }
}

/// Which cells of a row the plan reads, and how.
struct Columns<'a> {
    count: usize,
    uses: Vec<Use<'a>>,
    /// The plan reads whole records: every column, into this slot.
    whole: Option<usize>,
    slot_count: usize,
    separator: Option<String>,
}

struct Use<'a> {
    index: usize,
    name: Arc<str>,
    ty: DataType,
    target: Option<Target<'a>>,
}

impl<'a> Columns<'a> {
    fn from_header(
        dataset: &'a DatasetPlan,
        row: &Row,
        at_end: bool,
        delimiter: u8,
    ) -> Result<Columns<'a>, Diagnostic> {
        if at_end {
            check_quotes(dataset, row, delimiter)?;
        }
        let mut header: Vec<Arc<str>> = Vec::with_capacity(row.len);
        for i in 0..row.len {
            let Ok(name) = std::str::from_utf8(row.cell(i)) else {
                let (line, column) = cell_start(dataset, row, delimiter, i)?;
                return Err(Diagnostic::error(
                    "csv_header_not_utf8",
                    format!("{}: the header is not valid UTF-8", dataset.name),
                )
                .at(Location::in_data(&dataset.display_path, line, Some(column))));
            };
            header.push(Arc::from(name));
        }
        let find = |name: &str| header.iter().position(|h| &**h == name);
        let mut uses = Vec::new();
        let whole = dataset.projection.whole;
        if whole.is_some() {
            for (index, name) in header.iter().enumerate() {
                let (ty, _) = columns::column_type(dataset, name);
                uses.push(Use {
                    index,
                    name: name.clone(),
                    ty,
                    target: None,
                });
            }
        } else {
            let mut missing = Vec::new();
            for wanted in columns::wanted(dataset) {
                match find(wanted.name) {
                    Some(index) => uses.push(Use {
                        index,
                        name: header[index].clone(),
                        ty: wanted.ty,
                        target: Some(wanted.target),
                    }),
                    None if wanted.optional => {}
                    None => missing.push(wanted.name),
                }
            }
            if !missing.is_empty() {
                let present: Vec<String> = header.iter().map(|h| h.to_string()).collect();
                let at = Location::in_data(&dataset.display_path, row.line, None);
                return Err(columns::missing(dataset, Some(at), &missing, &present));
            }
        }
        for used in &uses {
            if let Some(again) = (used.index + 1..header.len()).find(|&i| header[i] == used.name) {
                let (line, column) = cell_start(dataset, row, delimiter, again)?;
                return Err(Diagnostic::error(
                    "csv_column_named_twice",
                    format!(
                        "{}: column `{}` is named twice in the header (columns {} and {})",
                        dataset.name,
                        used.name,
                        used.index + 1,
                        again + 1
                    ),
                )
                .at(Location::in_data(&dataset.display_path, line, Some(column)))
                .help("rename one of them"));
            }
        }
        Ok(Columns {
            count: header.len(),
            uses,
            whole: whole.map(crate::ir::SlotId::index),
            slot_count: dataset.projection.slot_count,
            separator: dataset.csv.list_separator.clone(),
        })
    }

    fn record(
        &self,
        dataset: &DatasetPlan,
        row: &Row,
        at_end: bool,
        delimiter: u8,
        interner: &mut Interner,
    ) -> Result<Record, Diagnostic> {
        if at_end {
            check_quotes(dataset, row, delimiter)?;
        }
        if row.len != self.count {
            return Err(wrong_count(dataset, row, delimiter, self.count));
        }
        let mut slots = vec![Value::Null; self.slot_count].into_boxed_slice();
        let mut fields = Vec::new();
        for used in &self.uses {
            interner.field(used.index);
            let error = |message: String| -> Diagnostic {
                match cell_start(dataset, row, delimiter, used.index) {
                    Ok((line, column)) => Diagnostic::error(
                        "invalid_record",
                        format!("{}: column `{}`: {message}", dataset.name, used.name),
                    )
                    .at(Location::in_data(&dataset.display_path, line, Some(column)))
                    .help(format!(
                        "fix the cell, or the column's type in `datasets.{}.schema`",
                        dataset.name
                    )),
                    Err(d) => d,
                }
            };
            let Ok(text) = std::str::from_utf8(row.cell(used.index)) else {
                return Err(error("the cell is not valid UTF-8".into()));
            };
            let value =
                parse_cell(text, &used.ty, self.separator.as_deref(), interner).map_err(&error)?;
            match used.target {
                Some(target) => {
                    columns::place(&used.name, target, value, &mut slots).map_err(error)?
                }
                None => fields.push((used.name.clone(), value)),
            }
        }
        if let Some(slot) = self.whole {
            slots[slot] = columns::object(fields);
        }
        Ok(Record {
            slots,
            line: u32::try_from(row.line).unwrap_or(u32::MAX),
        })
    }
}

/// Parses one cell as the schema types its column; a list or object cell may also
/// be JSON's `null`.
fn parse_cell(
    text: &str,
    ty: &DataType,
    separator: Option<&str>,
    interner: &mut Interner,
) -> Result<Value, String> {
    let structured = matches!(ty, DataType::List(_) | DataType::Object);
    if text.is_empty() || (structured && text.trim() == "null") {
        return Ok(Value::Null);
    }
    match ty {
        DataType::List(element) => {
            if text.trim_start().starts_with('[') {
                return match json(text, interner)? {
                    list @ Value::List(_) => Ok(list),
                    other => Err(format!(
                        "expected a JSON array, found {}",
                        other.type_name()
                    )),
                };
            }
            let Some(separator) = separator else {
                return Err(format!(
                    "expected a list as a JSON array (such as [\"a\", \"b\"]), found `{}`; or set `list_separator`",
                    preview(text)
                ));
            };
            let element = element.as_deref().unwrap_or(&DataType::String);
            if matches!(element, DataType::List(_) | DataType::Object) {
                return Err(format!(
                    "a list of {element} values cannot be split at `{separator}`: write the cell as a JSON array"
                ));
            }
            let items = text
                .split(separator)
                .map(|item| match scalar(item.trim(), element)? {
                    Value::String(s) => Ok(Value::String(interner.string(&s))),
                    other => Ok(other),
                })
                .collect::<Result<Vec<_>, String>>()?;
            Ok(Value::list(items))
        }
        DataType::Object => match json(text, interner)? {
            object @ Value::Object(_) => Ok(object),
            other => Err(format!(
                "expected a JSON object, found {} {}",
                other.type_name(),
                other.preview()
            )),
        },
        scalar_type => scalar(text, scalar_type),
    }
}

fn scalar(text: &str, ty: &DataType) -> Result<Value, String> {
    match ty {
        DataType::Number | DataType::Integer => {
            let trimmed = text.trim();
            // Whole digits beyond 2^53 stay exact (ids), as they do in JSON.
            if !trimmed.starts_with('+') {
                if let Ok(n) = trimmed.parse::<i64>() {
                    return Ok(Value::from_i64(n));
                }
                if let Ok(n) = trimmed.parse::<u64>() {
                    return Ok(Value::from_u64(n));
                }
            }
            let number = trimmed
                .parse::<f64>()
                .ok()
                .filter(|n| n.is_finite() && !trimmed.starts_with('+'))
                .ok_or_else(|| format!("expected a number, found `{}`", preview(text)))?;
            if *ty == DataType::Integer && number.fract() != 0.0 {
                return Err(format!("expected an integer, found `{}`", preview(text)));
            }
            Ok(Value::Number(number))
        }
        DataType::Bool => match text.trim() {
            t if t.eq_ignore_ascii_case("true") => Ok(Value::Bool(true)),
            t if t.eq_ignore_ascii_case("false") => Ok(Value::Bool(false)),
            _ => Err(format!("expected true or false, found `{}`", preview(text))),
        },
        _ => Ok(Value::from(text)),
    }
}

fn json(text: &str, interner: &mut Interner) -> Result<Value, String> {
    project::parse_value(text, interner).map_err(|e| {
        let message = e.to_string();
        let message = message.split(" at line ").next().unwrap_or(&message);
        format!("invalid JSON in the cell: {message}")
    })
}

/// A cell as shown in a message: line breaks and tabs escaped, long text cut.
fn preview(text: &str) -> String {
    let escaped: String = text.escape_debug().collect();
    if escaped.chars().count() > 40 {
        escaped.chars().take(37).collect::<String>() + "..."
    } else {
        escaped
    }
}

/// A row with more or fewer cells than the header, located at its first extra
/// cell or its end; a quote left open is the likelier cause when the row runs
/// over several lines.
fn wrong_count(dataset: &DatasetPlan, row: &Row, delimiter: u8, expected: usize) -> Diagnostic {
    let scan = match Scan::row(dataset, row.offset, row.line, delimiter) {
        Ok(scan) => scan,
        Err(d) => return d,
    };
    let (line, column) = if row.len > expected {
        scan.cells.get(expected).copied().unwrap_or(scan.end)
    } else {
        scan.end
    };
    let mut d = Diagnostic::error(
        "csv_cells",
        format!(
            "{}: expected {expected} cells, as the header has, found {}",
            dataset.name, row.len
        ),
    )
    .at(Location::in_data(&dataset.display_path, line, Some(column)));
    d = match scan.quoted_lines.first() {
        Some(&(from, to)) => d.help(format!(
            "a quoted cell runs from line {from} to line {to}: is a quote left unclosed?"
        )),
        None => d.help("quote a cell that holds the delimiter"),
    };
    d
}

/// A row that ended at the end of the file may have done so inside quotes.
fn check_quotes(dataset: &DatasetPlan, row: &Row, delimiter: u8) -> Result<(), Diagnostic> {
    let scan = Scan::row(dataset, row.offset, row.line, delimiter)?;
    match scan.open_quote {
        None => Ok(()),
        Some((line, column)) => Err(Diagnostic::error(
            "csv_unclosed_quote",
            format!(
                "{}: a quoted cell is not closed before the end of the file",
                dataset.name
            ),
        )
        .at(Location::in_data(&dataset.display_path, line, Some(column)))
        .help("close the quote; a quote inside a quoted cell is written twice (\"\")")),
    }
}

fn cell_start(
    dataset: &DatasetPlan,
    row: &Row,
    delimiter: u8,
    index: usize,
) -> Result<(usize, usize), Diagnostic> {
    let scan = Scan::row(dataset, row.offset, row.line, delimiter)?;
    Ok(scan.cells.get(index).copied().unwrap_or(scan.end))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str) -> Scan {
        let mut scan = Scan::new(1);
        if text.bytes().all(|b| scan.push(b, b',')) {
            scan.finish();
        }
        scan
    }

    #[test]
    fn a_scan_locates_cells_across_quoted_line_breaks() {
        let s = scan("a,\"x\ny\",é,d\nnext");
        assert_eq!(s.cells, [(1, 1), (1, 3), (2, 4), (2, 6)]);
        assert_eq!(s.end, (2, 7));
        assert_eq!(s.open_quote, None);
        assert_eq!(s.quoted_lines, [(1, 2)]);
    }

    #[test]
    fn a_scan_finds_a_quote_left_open() {
        let s = scan("a,\"b\"\"c,d\ne,f");
        assert_eq!(s.open_quote, Some((1, 3)));
        let s = scan("a,\"b\"");
        assert_eq!(s.open_quote, None);
    }

    #[test]
    fn cells_parse_as_their_column_types() {
        let interner = &mut Interner::default();
        let parse =
            |text: &str, ty: &DataType| parse_cell(text, ty, Some("|"), &mut Interner::default());
        assert_eq!(
            parse(" 2.5 ", &DataType::Number).unwrap(),
            Value::Number(2.5)
        );
        assert!(parse("1e400", &DataType::Number).is_err());
        assert!(parse("nan", &DataType::Number).is_err());
        assert!(parse("+1", &DataType::Number).is_err());
        assert!(parse("2.5", &DataType::Integer).is_err());
        assert_eq!(parse("TRUE", &DataType::Bool).unwrap(), Value::Bool(true));
        assert!(parse("yes", &DataType::Bool).is_err());
        assert_eq!(parse("", &DataType::String).unwrap(), Value::Null);
        let strings = DataType::List(Some(Box::new(DataType::String)));
        assert_eq!(
            parse("a| b |c", &strings).unwrap(),
            Value::list(vec!["a".into(), "b".into(), "c".into()])
        );
        assert_eq!(
            parse("[\"a|b\"]", &strings).unwrap(),
            Value::list(vec!["a|b".into()])
        );
        let numbers = DataType::List(Some(Box::new(DataType::Number)));
        assert_eq!(
            parse("1|2", &numbers).unwrap(),
            Value::list(vec![1.0.into(), 2.0.into()])
        );
        assert!(parse_cell("a,b", &strings, None, interner)
            .unwrap_err()
            .contains("JSON array"));
        assert!(parse("{\"a\": 1}", &DataType::Object).is_ok());
        assert_eq!(parse(" null ", &DataType::Object).unwrap(), Value::Null);
        assert_eq!(parse("null", &strings).unwrap(), Value::Null);
        assert!(parse("[1]", &DataType::Object).is_err());
    }
}
