//! Reading the text files a user names (a spec, a base, a lock, a report, a
//! template) with a bound: a device (`/dev/zero`) or a huge file is refused with a
//! message instead of being read until memory runs out.

use std::io::{Error, ErrorKind, Read};
use std::path::Path;

/// The largest text file evalspec reads whole.
pub const MAX_TEXT_BYTES: u64 = 64 << 20;

/// Reads `path` as UTF-8 text: a regular file (or a FIFO, read once) of at most
/// [`MAX_TEXT_BYTES`].
pub fn read_text(path: &Path) -> std::io::Result<String> {
    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    let file_type = meta.file_type();
    if !file_type.is_file() && !is_fifo(&file_type) {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            "it is not a file (a device or a folder)",
        ));
    }
    let mut bytes = Vec::new();
    file.take(MAX_TEXT_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_TEXT_BYTES {
        return Err(Error::new(
            ErrorKind::InvalidData,
            format!("it is larger than {} MiB", MAX_TEXT_BYTES >> 20),
        ));
    }
    // A "file" of size 0 that has content is the kernel's (`/proc/self/environ`,
    // `/sys/…`): never read as text, so that no error quotes it.
    if file_type.is_file() && meta.len() == 0 && !bytes.is_empty() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            "it is not a regular file (a file of /proc or /sys)",
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let valid = &bytes[..e.utf8_error().valid_up_to()];
        let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let position = NotUtf8 {
            line: 1 + valid.iter().filter(|&&b| b == b'\n').count(),
            // Columns count characters; the valid prefix of the line decodes.
            column: 1 + String::from_utf8_lossy(&valid[line_start..])
                .chars()
                .count(),
            byte: bytes[valid.len()],
        };
        Error::new(ErrorKind::InvalidData, position)
    })
}

/// Where a text file stops being UTF-8: carried inside the `io::Error` that
/// [`read_text`] returns, so that a caller can place its message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotUtf8 {
    pub line: usize,
    pub column: usize,
    pub byte: u8,
}

impl NotUtf8 {
    pub fn of(error: &Error) -> Option<NotUtf8> {
        error.get_ref()?.downcast_ref::<NotUtf8>().copied()
    }
}

impl std::fmt::Display for NotUtf8 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "it is not UTF-8 text (byte 0x{:02X} at line {}, column {})",
            self.byte, self.line, self.column
        )
    }
}

impl std::error::Error for NotUtf8 {}

#[cfg(unix)]
fn is_fifo(file_type: &std::fs::FileType) -> bool {
    use std::os::unix::fs::FileTypeExt;
    file_type.is_fifo()
}

#[cfg(not(unix))]
fn is_fifo(_: &std::fs::FileType) -> bool {
    false
}

/// A data file that is a device rather than a file or a stream: read, it would
/// never end (`/dev/zero`) or look empty (`/dev/null`).
pub fn is_device(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        std::fs::metadata(path).is_ok_and(|m| {
            let t = m.file_type();
            t.is_char_device() || t.is_block_device() || t.is_socket()
        })
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_are_refused_and_files_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.yaml");
        std::fs::write(&path, "name: x\n").unwrap();
        assert_eq!(read_text(&path).unwrap(), "name: x\n");
        if Path::new("/dev/zero").exists() {
            let error = read_text(Path::new("/dev/zero")).unwrap_err();
            assert!(error.to_string().contains("not a file"), "{error}");
            assert!(is_device(Path::new("/dev/zero")));
            assert!(!is_device(&path));
        }
        assert!(read_text(dir.path()).is_err(), "a folder is not read");
    }

    #[test]
    fn text_that_is_not_utf8_is_placed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.yaml");
        std::fs::write(&path, b"name: x\nversion: \xc3\xa9\xff\n").unwrap();
        let error = read_text(&path).unwrap_err();
        let at = NotUtf8::of(&error).unwrap();
        assert_eq!((at.line, at.column, at.byte), (2, 11, 0xFF));
        assert!(
            error.to_string().contains("byte 0xFF at line 2, column 11"),
            "{error}"
        );
    }
}
