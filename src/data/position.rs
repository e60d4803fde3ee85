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

/// serde_json reports a 1-based column in bytes within its line, at the byte it
/// stopped on; we report the character that byte belongs to.
pub(super) fn char_column(text: &str, line: usize, byte_column: usize) -> usize {
    let line_text = text.split('\n').nth(line.saturating_sub(1)).unwrap_or("");
    let end = floor_char_boundary(line_text, byte_column.saturating_sub(1));
    line_text[..end].chars().count() + 1
}

/// 1-based line and character column of a byte offset.
pub(super) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_byte_column_becomes_the_column_of_its_character() {
        let line = r#"{"id":"ü", "x": é}"#;
        let error = serde_json::from_str::<serde_json::Value>(line).unwrap_err();
        assert_eq!(char_column(line, 1, error.column()), 17, "at the é");
        let ascii = r#"{"id": x}"#;
        let error = serde_json::from_str::<serde_json::Value>(ascii).unwrap_err();
        assert_eq!(char_column(ascii, 1, error.column()), 8, "at the x");
    }
}
