//! Positions in a data file's text: the line and character column of a byte, for
//! errors that point into a line (JSON syntax, invalid UTF-8).

use crate::base::diagnostic::{Diagnostic, Location};
use crate::base::source::floor_char_boundary;
use crate::data::error::DataError;
use crate::plan::DatasetPlan;

pub(super) fn utf8_error(
    dataset: &DatasetPlan,
    bytes: &[u8],
    e: &std::str::Utf8Error,
) -> Diagnostic {
    let (line, column) = line_col(
        &String::from_utf8_lossy(&bytes[..e.valid_up_to()]),
        e.valid_up_to(),
    );
    let kind = DataError::NotUtf8 {
        dataset: dataset.name.clone(),
    };
    Diagnostic::of(&kind).at(Location::in_data(&dataset.display_path, line, Some(column)))
}

/// serde_json reports a column in bytes within its line; we report characters.
pub(super) fn char_column(text: &str, line: usize, byte_column: usize) -> usize {
    let line_text = text.split('\n').nth(line.saturating_sub(1)).unwrap_or("");
    let end = floor_char_boundary(line_text, byte_column);
    line_text[..end].chars().count().max(1)
}

/// 1-based line and character column of a byte offset.
pub(super) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}
