//! Streaming a dataset file record by record. JSONL is read line by line with a
//! bounded buffer; a JSON array is split into its elements first so that each
//! element's errors still name a line. The file's SHA-256 is computed on the way.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};

use sha2::{Digest, Sha256};

use crate::data::{json_array, project, Record};
use crate::diagnostic::{Diagnostic, Location};
use crate::plan::DatasetPlan;
use crate::spec::Format;
use crate::value::{python_strip, Value};

#[derive(Debug, Clone, Default)]
pub struct ReadStats {
    pub records: usize,
    pub sha256: String,
    pub bytes: u64,
}

/// Reads every record of `dataset`, handing each to `sink`. Stops at the first
/// malformed record: nothing may be scored from data that could not be read.
pub fn read_dataset(
    dataset: &DatasetPlan,
    mut sink: impl FnMut(Record) -> Result<(), Diagnostic>,
) -> Result<ReadStats, Diagnostic> {
    let file = File::open(&dataset.path).map_err(|error| {
        Diagnostic::error(format!(
            "cannot read dataset `{}` from `{}`: {error}",
            dataset.name, dataset.display_path
        ))
        .at(dataset.declared_at.clone())
        .help(format!(
            "fix `path:` in the spec or pass `--dataset {}=PATH`",
            dataset.name
        ))
    })?;
    let mut hasher = Sha256::new();
    let mut stats = ReadStats::default();
    let mut parse = |text: &str, line: usize, column_offset: usize| -> Result<(), Diagnostic> {
        let mut slots = vec![Value::Null; dataset.projection.slot_count].into_boxed_slice();
        project::parse_into(text, &dataset.projection, &mut slots).map_err(|error| {
            let offset = if error.line() == 1 { column_offset } else { 0 };
            let column = offset + char_column(text, error.line(), error.column());
            let message = error.to_string();
            let message = message
                .split(" at line ")
                .next()
                .unwrap_or(&message)
                .to_string();
            let what = match error.classify() {
                serde_json::error::Category::Syntax | serde_json::error::Category::Eof => "invalid JSON",
                _ => "invalid record",
            };
            Diagnostic::error(format!("{}: {what}: {message}", dataset.name))
                .at(Location::in_data(
                    &dataset.display_path,
                    line + error.line() - 1,
                    Some(column),
                ))
                .help("each record must be one JSON object")
        })?;
        stats.records += 1;
        sink(Record {
            slots,
            line: u32::try_from(line).unwrap_or(u32::MAX),
        })
    };
    match dataset.format {
        Format::Jsonl => {
            let mut reader = BufReader::with_capacity(1 << 20, file);
            let mut buffer = Vec::new();
            let mut line = 0usize;
            loop {
                buffer.clear();
                let n = reader
                    .read_until(b'\n', &mut buffer)
                    .map_err(|e| io_error(dataset, &e))?;
                if n == 0 {
                    break;
                }
                hasher.update(&buffer);
                stats.bytes += n as u64;
                line += 1;
                let text = std::str::from_utf8(&buffer).map_err(|e| {
                    let column = String::from_utf8_lossy(&buffer[..e.valid_up_to()])
                        .chars()
                        .count()
                        + 1;
                    Diagnostic::error(format!("{}: the file is not valid UTF-8", dataset.name))
                        .at(Location::in_data(&dataset.display_path, line, Some(column)))
                })?;
                // Python's universal newlines also end a line at a lone `\r`.
                let text = text.strip_suffix('\n').unwrap_or(text);
                let text = text.strip_suffix('\r').unwrap_or(text);
                for (i, piece) in text.split('\r').enumerate() {
                    line += usize::from(i > 0);
                    let trimmed = python_strip(piece);
                    if trimmed.is_empty() {
                        continue;
                    }
                    let leading = piece[..piece.len()
                        - piece
                            .trim_start_matches(crate::value::is_python_space)
                            .len()]
                        .chars()
                        .count();
                    parse(trimmed, line, leading)?;
                }
            }
        }
        Format::Json => {
            let mut bytes = Vec::new();
            BufReader::new(file)
                .read_to_end(&mut bytes)
                .map_err(|e| io_error(dataset, &e))?;
            hasher.update(&bytes);
            stats.bytes = bytes.len() as u64;
            let text = std::str::from_utf8(&bytes).map_err(|e| {
                let (line, column) = line_col(
                    &String::from_utf8_lossy(&bytes[..e.valid_up_to()]),
                    e.valid_up_to(),
                );
                Diagnostic::error(format!("{}: the file is not valid UTF-8", dataset.name))
                    .at(Location::in_data(&dataset.display_path, line, Some(column)))
            })?;
            let elements = json_array::split(text).map_err(|(offset, message)| {
                let (line, column) = line_col(text, offset);
                Diagnostic::error(format!("{}: invalid JSON: {message}", dataset.name))
                    .at(Location::in_data(&dataset.display_path, line, Some(column)))
                    .help("a `json` dataset is one JSON array of objects")
            })?;
            for range in elements {
                let (line, column) = line_col(text, range.start);
                parse(&text[range], line, column - 1)?;
            }
        }
    }
    stats.sha256 = format!("{:x}", hasher.finalize());
    Ok(stats)
}

fn io_error(dataset: &DatasetPlan, error: &std::io::Error) -> Diagnostic {
    Diagnostic::error(format!(
        "cannot read dataset `{}` from `{}`: {error}",
        dataset.name, dataset.display_path
    ))
}

/// serde_json reports a column in bytes within its line; we report characters.
fn char_column(text: &str, line: usize, byte_column: usize) -> usize {
    let line_text = text.split('\n').nth(line.saturating_sub(1)).unwrap_or("");
    let end = byte_column.min(line_text.len());
    let end = (0..=end)
        .rev()
        .find(|&i| line_text.is_char_boundary(i))
        .unwrap_or(0);
    line_text[..end].chars().count().max(1)
}

/// 1-based line and character column of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}
