//! Positions in a data file's text: the line and character column of a byte, for
//! errors that point into a line (JSON syntax, invalid UTF-8).

use crate::base::diagnostic::{Diagnostic, Location};
use crate::base::source::floor_char_boundary;
use crate::data::error::DataError;
use crate::data::file::count_newlines;
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

/// The lines and columns of increasing byte offsets in one text, each counted
/// on from the one before. [`line_col`] for each element of a JSON array
/// rescanned the text before it: a 2 MB array of 10,000 elements took 2.4 s
/// on one line and 17 s indented, and ten times the elements a hundred times
/// that.
pub(super) struct LineCursor<'t> {
    text: &'t str,
    offset: usize,
    line: usize,
    column: usize,
}

impl<'t> LineCursor<'t> {
    pub(super) fn new(text: &'t str) -> Self {
        LineCursor {
            text,
            offset: 0,
            line: 1,
            column: 1,
        }
    }

    /// What [`line_col`] gives for `offset` (a character boundary); an offset
    /// before the last one asked for is counted from the start again.
    pub(super) fn at(&mut self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        if offset < self.offset {
            *self = LineCursor::new(self.text);
        }
        let between = &self.text[self.offset..offset];
        match memchr::memrchr(b'\n', between.as_bytes()) {
            Some(last) => {
                self.line += count_newlines(between.as_bytes());
                self.column = between[last + 1..].chars().count() + 1;
            }
            None => self.column += between.chars().count(),
        }
        self.offset = offset;
        (self.line, self.column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The cursor, asked for offsets in order (now and then one before the
        /// last), gives what counting from the start gives.
        #[test]
        fn the_cursor_counts_as_line_col_does(
            text in "[a\n\u{e9}\u{1F600} \\[]{0,80}",
            picks in proptest::collection::vec(0usize..100, 0..12),
        ) {
            let boundaries: Vec<usize> =
                text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
            let mut offsets: Vec<usize> =
                picks.iter().map(|p| boundaries[p % boundaries.len()]).collect();
            offsets.sort_unstable();
            if let Some(&first) = offsets.first() {
                offsets.push(first);
            }
            let mut cursor = LineCursor::new(&text);
            for offset in offsets {
                prop_assert_eq!(cursor.at(offset), line_col(&text, offset), "at {}", offset);
            }
        }
    }

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
