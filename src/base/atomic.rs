//! Writing files so that readers see the old or the new content, never a part.
//!
//! A file is first *staged*: written in full to a temporary file beside its
//! target. Committing renames it over the target. Staging every file of a set
//! before committing any is what lets a failed write leave the old set whole.

use std::fs::{File, Permissions};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

/// A file written beside its target, not yet in place. Dropped uncommitted, the
/// temporary file is removed.
pub struct Staged {
    temp: tempfile::NamedTempFile,
    target: PathBuf,
}

impl Staged {
    /// Renames the staged file over its target.
    pub fn commit(self) -> std::io::Result<()> {
        self.temp.persist(&self.target).map_err(|e| e.error)?;
        Ok(())
    }

    pub fn target(&self) -> &Path {
        &self.target
    }
}

/// Writes `bytes` to a temporary file beside `path`, creating its folder. The file
/// gets the mode of the file it will replace, or else the usual mode of a new
/// file (0666 less the umask, as `open` gives): never tempfile's private 0600.
pub fn stage(path: &Path, bytes: &[u8]) -> std::io::Result<Staged> {
    stage_with(path, |file| file.write_all(bytes))
}

/// As [`stage`], with the content written by `write` (through a buffer), so
/// that a large file need not be built in memory first.
pub fn stage_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<Staged> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    stage_in(dir, path, write)
}

/// As [`stage_with`], the temporary file in `dir` (on the file system of
/// `path`: committing renames it): a set of files staged in one folder.
pub fn stage_in(
    dir: &Path,
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<Staged> {
    let kept = std::fs::metadata(path)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.permissions());
    let file = tempfile::Builder::new()
        .permissions(Permissions::from_mode(0o666))
        .tempfile_in(dir)?;
    if let Some(kept) = kept {
        // Set outright: the umask applies only when a file is created.
        file.as_file().set_permissions(kept)?;
    }
    write_syncing(file.as_file(), write)?;
    file.as_file().sync_all()?;
    Ok(Staged {
        temp: file,
        target: path.to_path_buf(),
    })
}

/// Bytes written between two requests to write a staged file back to disk.
const SYNC_EVERY: usize = 64 << 20;

/// Writes `file`'s content with `write` (through a buffer), asking a thread
/// of its own to write the file back to disk after every [`SYNC_EVERY`]
/// bytes: the disk works while the content is produced, and the `fsync`
/// that ends staging waits for the last part only (for a 556 MB items.jsonl,
/// 12 ms instead of 240). A failed early sync is the final one's to report.
fn write_syncing(
    file: &File,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let (written, to_sync) = mpsc::channel::<()>();
    std::thread::scope(|scope| {
        scope.spawn(move || {
            while to_sync.recv().is_ok() {
                while to_sync.try_recv().is_ok() {}
                let _ = file.sync_data();
            }
        });
        let mut syncing = Syncing {
            file,
            unsynced: 0,
            written,
        };
        let mut buffered = std::io::BufWriter::with_capacity(1 << 20, &mut syncing);
        write(&mut buffered)?;
        buffered.flush()
        // `written` is dropped: the thread ends, and the scope waits for it.
    })
}

/// A file's writer that counts the bytes written since the last request to
/// write them back.
struct Syncing<'f> {
    file: &'f File,
    unsynced: usize,
    written: mpsc::Sender<()>,
}

impl Write for Syncing<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.file.write(buf)?;
        self.unsynced += n;
        if self.unsynced >= SYNC_EVERY {
            self.unsynced = 0;
            let _ = self.written.send(());
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Writes `bytes` to a temporary file beside `path`, then renames it over `path`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    stage(path, bytes)?.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out/report.json");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        assert_eq!(
            std::fs::read_dir(dir.path().join("out")).unwrap().count(),
            1
        );
    }

    #[test]
    fn a_new_file_follows_the_umask_and_a_replaced_one_keeps_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        // What `open` gives a new file under this process's umask.
        let usual = dir.path().join("usual");
        std::fs::write(&usual, b"").unwrap();
        let fresh = dir.path().join("fresh");
        write_atomic(&fresh, b"x").unwrap();
        assert_eq!(mode(&fresh), mode(&usual));

        let kept = dir.path().join("kept");
        std::fs::write(&kept, b"old").unwrap();
        std::fs::set_permissions(&kept, Permissions::from_mode(0o640)).unwrap();
        write_atomic(&kept, b"new").unwrap();
        assert_eq!(mode(&kept), 0o640);
    }

    #[test]
    fn a_file_synced_while_written_is_written_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("large");
        let piece: Vec<u8> = (0..=255u8).cycle().take(1 << 20).collect();
        let pieces = SYNC_EVERY / piece.len() * 2 + 3;
        let staged = stage_with(&path, |out| {
            (0..pieces).try_for_each(|_| out.write_all(&piece))
        })
        .unwrap();
        staged.commit().unwrap();
        let written = std::fs::read(&path).unwrap();
        assert_eq!(written.len(), pieces * piece.len());
        assert!(written.chunks(piece.len()).all(|c| c == piece));
    }

    #[test]
    fn a_staged_file_dropped_uncommitted_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let staged = stage(&dir.path().join("a"), b"x").unwrap();
        drop(staged);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
