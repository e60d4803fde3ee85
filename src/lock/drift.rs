//! What differs between a lock and the files as they are now, said exactly: a
//! unified diff for a text file, record counts and the first differing line for a
//! dataset.

use crate::base::diagnostic::{Diagnostic, Location};
use crate::lock::error::{DriftShown, LockError};
use crate::lock::pins::{line_spans, PinnedDataset, PinnedFile, Pins};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Drift {
    FileChanged {
        old: PinnedFile,
        new: PinnedFile,
    },
    FileGone(PinnedFile),
    FileAdded(PinnedFile),
    DatasetChanged {
        old: PinnedDataset,
        new: PinnedDataset,
        /// The first line that differs (1-based), or the range of the first block.
        first: (usize, usize),
    },
    DatasetGone(PinnedDataset),
    DatasetAdded(PinnedDataset),
}

/// What changed from the pins of a lock (`lock`) to the pins now.
pub fn compare(lock: &Pins, now: &Pins) -> Vec<Drift> {
    let key = |f: &PinnedFile| (f.role.clone(), f.path.clone());
    let mut out = Vec::new();
    for old in &lock.files {
        match now.files.iter().find(|f| key(f) == key(old)) {
            Some(new) if new.sha256 != old.sha256 => out.push(Drift::FileChanged {
                old: old.clone(),
                new: new.clone(),
            }),
            Some(_) => {}
            None => out.push(Drift::FileGone(old.clone())),
        }
    }
    for new in &now.files {
        // A built-in report asked for with --format is extra output, not a change
        // to what was frozen.
        if new.role != "builtin-template" && !lock.files.iter().any(|f| key(f) == key(new)) {
            out.push(Drift::FileAdded(new.clone()));
        }
    }
    for old in &lock.datasets {
        match now.datasets.iter().find(|d| d.name == old.name) {
            Some(new) if new.sha256 != old.sha256 => out.push(Drift::DatasetChanged {
                first: first_difference(old, new),
                old: old.clone(),
                new: new.clone(),
            }),
            Some(_) => {}
            None => out.push(Drift::DatasetGone(old.clone())),
        }
    }
    for new in &now.datasets {
        if !lock.datasets.iter().any(|d| d.name == new.name) {
            out.push(Drift::DatasetAdded(new.clone()));
        }
    }
    out
}

/// The lines of the first block whose hash differs (a block is one line in all but
/// very large files); past the old file's end when one file extends the other.
fn first_difference(old: &PinnedDataset, new: &PinnedDataset) -> (usize, usize) {
    let size = old.block_lines;
    let blocks = |d: &PinnedDataset| -> Vec<String> {
        d.line_hashes
            .as_bytes()
            .chunks(8)
            .map(|c| String::from_utf8_lossy(c).into_owned())
            .collect()
    };
    let (a, b) = (blocks(old), blocks(new));
    let index = if new.block_lines == size {
        a.iter().zip(&b).take_while(|(x, y)| x == y).count()
    } else {
        0 // re-blocked: the files differ in size class, so compare from the top
    };
    let first = index * size + 1;
    let last = (first + size - 1).min(old.lines.max(new.lines));
    (first, last.max(first))
}

impl Drift {
    /// A change in one of evalspec's own templates.
    pub fn is_builtin(&self) -> bool {
        match self {
            Drift::FileChanged { new: f, .. } | Drift::FileGone(f) | Drift::FileAdded(f) => {
                f.role == "builtin-template"
            }
            _ => false,
        }
    }

    /// One line: what drifted.
    pub fn summary(&self) -> String {
        match self {
            Drift::FileChanged { new, .. } => format!("{} `{}` changed", role(&new.role), new.path),
            Drift::FileGone(old) => format!("{} `{}` is no longer used", role(&old.role), old.path),
            Drift::FileAdded(new) => {
                format!("{} `{}` is not in the lock", role(&new.role), new.path)
            }
            Drift::DatasetChanged { old, new, first } => format!(
                "frozen dataset `{}` changed: {} → {} lines, first difference at {}",
                new.name,
                old.lines,
                new.lines,
                lines_text(*first)
            ),
            Drift::DatasetGone(old) => format!("dataset `{}` is no longer frozen", old.name),
            Drift::DatasetAdded(new) => {
                format!("dataset `{}` is frozen but not in the lock", new.name)
            }
        }
    }

    /// The full account: the summary, with a unified diff or the differing line.
    /// `dataset` gives a frozen dataset's file as now: its path as shown, its bytes.
    /// `stops_run`: this is the last drift of a run it stops.
    pub fn diagnostic(
        &self,
        lock_display: &str,
        dataset: impl Fn(&str) -> Option<(String, Vec<u8>)>,
        stops_run: bool,
    ) -> Diagnostic {
        let mut at = None;
        let shown = match self {
            Drift::FileChanged { old, new } => DriftShown::Diff {
                old_path: old.path.clone(),
                old_text: old.text.clone(),
                new_path: new.path.clone(),
                new_text: new.text.clone(),
            },
            Drift::DatasetChanged { new, first, .. } => match dataset(&new.name) {
                Some((display, bytes)) => {
                    at = Some(Location::in_data(&display, first.0, None));
                    let line = line_spans(&bytes).get(first.0 - 1).map(|&(s, e)| {
                        String::from_utf8_lossy(&bytes[s..e]).trim_end().to_string()
                    });
                    DriftShown::LineNow(line)
                }
                None => DriftShown::Nothing,
            },
            _ => DriftShown::Nothing,
        };
        let kind = LockError::Drift {
            lock: lock_display.to_string(),
            summary: self.summary(),
            shown,
            stops_run,
        };
        let d = kind.diagnostic();
        match at {
            Some(at) => d.at(at),
            None => d,
        }
    }
}

fn lines_text((first, last): (usize, usize)) -> String {
    if first == last {
        format!("line {first}")
    } else {
        format!("lines {first}–{last}")
    }
}

fn role(role: &str) -> &str {
    match role {
        "spec" => "spec",
        "extends" => "base spec",
        "builtin-template" => "built-in template",
        _ => "template",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::pins::pin_dataset;

    #[test]
    fn the_first_changed_line_is_found() {
        let old = pin_dataset("g", "g".into(), b"a\nb\nc\n");
        let new = pin_dataset("g", "g".into(), b"a\nB\nc\nd\n");
        assert_eq!(first_difference(&old, &new), (2, 2));
        let longer = pin_dataset("g", "g".into(), b"a\nb\nc\nd\n");
        assert_eq!(first_difference(&old, &longer), (4, 4));
    }
}
