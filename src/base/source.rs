//! A text file the user wrote (a spec or a template), with line lookup for diagnostics.

use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct SourceFile {
    /// The path as the user should see it in messages.
    pub display: String,
    pub path: PathBuf,
    pub text: String,
    line_starts: Vec<usize>,
}

impl SourceFile {
    pub fn new(path: &Path, text: String) -> Self {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Self {
            display: path.display().to_string(),
            path: path.to_path_buf(),
            text,
            line_starts,
        }
    }

    /// 1-based line and column (in characters) of a byte offset; an offset inside
    /// a character counts as that character.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = floor_char_boundary(&self.text, offset);
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let start = self.line_starts[line];
        let column = self.text[start..offset].chars().count() + 1;
        (line + 1, column)
    }

    /// The text of a 1-based line, without its line break.
    pub fn line_text(&self, line: usize) -> &str {
        let start = self
            .line_starts
            .get(line - 1)
            .copied()
            .unwrap_or(self.text.len());
        let end = self
            .line_starts
            .get(line)
            .copied()
            .unwrap_or(self.text.len());
        self.text[start..end].trim_end_matches(['\n', '\r'])
    }

    /// Byte offset of a 1-based line and column, the inverse of [`Self::line_col`].
    pub fn offset_of(&self, line: usize, column: usize) -> usize {
        let start = self
            .line_starts
            .get(line.saturating_sub(1))
            .copied()
            .unwrap_or(self.text.len());
        let rest = &self.text[start..];
        rest.char_indices()
            .nth(column.saturating_sub(1))
            .map_or(self.text.len(), |(i, _)| start + i)
    }
}

/// The largest character boundary of `text` at or before `offset`.
pub fn floor_char_boundary(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// The smallest character boundary of `text` at or after `offset`.
pub fn ceil_char_boundary(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset += 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_count_characters() {
        let src = SourceFile::new(Path::new("s.yaml"), "ab\nçd: x\n".to_string());
        assert_eq!(src.line_col(0), (1, 1));
        assert_eq!(src.line_col(3), (2, 1));
        // 'ç' is two bytes; the colon after `çd` is the third character.
        assert_eq!(src.line_col(6), (2, 3));
        assert_eq!(src.line_text(2), "çd: x");
        assert_eq!(src.offset_of(2, 3), 6);
        // An offset inside 'ç' (bytes 3..5) is that character, not a panic.
        assert_eq!(src.line_col(4), (2, 1));
        assert_eq!(floor_char_boundary("ç", 1), 0);
        assert_eq!(ceil_char_boundary("ç", 1), 2);
    }
}
