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
    let mut text = String::new();
    file.take(MAX_TEXT_BYTES + 1).read_to_string(&mut text)?;
    if text.len() as u64 > MAX_TEXT_BYTES {
        return Err(Error::new(
            ErrorKind::InvalidData,
            format!("it is larger than {} MiB", MAX_TEXT_BYTES >> 20),
        ));
    }
    Ok(text)
}

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
}
