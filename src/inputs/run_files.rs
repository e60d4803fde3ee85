//! The files of a dataset read as several runs: `runs:` names files, folders
//! (every file inside) and glob patterns. They are listed in natural order of
//! their paths (`seed-2` before `seed-10`), so the run order never depends on
//! the file system.

use std::path::{Path, PathBuf};

use crate::base::natural::natural_cmp;
use crate::inputs::error::RunFilesProblem;

/// Every file `patterns` names, in natural order, each once.
pub fn find_run_files(patterns: &[PathBuf]) -> Result<Vec<PathBuf>, RunFilesProblem> {
    let mut files = Vec::new();
    for pattern in patterns {
        let found = files_of(pattern)?;
        if found.is_empty() {
            return Err(RunFilesProblem::NoFile {
                pattern: pattern.display().to_string(),
            });
        }
        files.extend(found);
    }
    files.sort_by(|a, b| natural_cmp(&a.display().to_string(), &b.display().to_string()));
    files.dedup();
    Ok(files)
}

fn files_of(pattern: &Path) -> Result<Vec<PathBuf>, RunFilesProblem> {
    let text = pattern.to_string_lossy();
    if text.contains(['*', '?', '[']) {
        let paths = glob::glob(&text).map_err(|e| RunFilesProblem::BadGlob {
            pattern: text.to_string(),
            error: e.to_string(),
        })?;
        let mut files = Vec::new();
        for path in paths {
            let path = path.map_err(|e| RunFilesProblem::Unreadable {
                path: e.path().display().to_string(),
                error: e.to_string(),
            })?;
            if path.is_file() {
                files.push(path);
            }
        }
        return Ok(files);
    }
    if pattern.is_dir() {
        let unreadable = |e: std::io::Error| RunFilesProblem::UnreadableFolder {
            folder: text.to_string(),
            error: e.to_string(),
        };
        let entries = std::fs::read_dir(pattern).map_err(unreadable)?;
        let mut files = Vec::new();
        for entry in entries {
            let path = entry.map_err(unreadable)?.path();
            let hidden = path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'));
            if path.is_file() && !hidden {
                files.push(path);
            }
        }
        return Ok(files);
    }
    // Standard input, a FIFO or a device is one run too (read once, by `stdin`).
    if pattern.is_file() || text == crate::inputs::streams::DASH || pattern.exists() {
        return Ok(vec![pattern.to_path_buf()]);
    }
    Err(RunFilesProblem::Missing {
        pattern: text.to_string(),
    })
}

/// A run named by its file: the file name without its last extension.
pub fn run_name_of_file(path: &Path) -> String {
    path.file_stem().or_else(|| path.file_name()).map_or_else(
        || path.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_folders_and_files_list_each_file_once_in_natural_order() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "seed-10.jsonl",
            "seed-2.jsonl",
            "seed-1.jsonl",
            ".hidden",
            "notes.txt",
        ] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let names = |files: Vec<PathBuf>| -> Vec<String> {
            files.iter().map(|f| run_name_of_file(f)).collect()
        };
        let glob = find_run_files(&[dir.path().join("seed-*.jsonl")]).unwrap();
        assert_eq!(names(glob), ["seed-1", "seed-2", "seed-10"]);
        let folder = find_run_files(&[dir.path().to_path_buf()]).unwrap();
        assert_eq!(names(folder), ["notes", "seed-1", "seed-2", "seed-10"]);
        let overlapping = find_run_files(&[
            dir.path().join("seed-1.jsonl"),
            dir.path().join("seed-?.jsonl"),
        ])
        .unwrap();
        assert_eq!(names(overlapping), ["seed-1", "seed-2"]);
        let error = find_run_files(&[dir.path().join("run-*.jsonl")]).unwrap_err();
        assert!(matches!(error, RunFilesProblem::NoFile { .. }), "{error:?}");
        let error = find_run_files(&[dir.path().join("missing.jsonl")]).unwrap_err();
        assert!(
            matches!(error, RunFilesProblem::Missing { .. }),
            "{error:?}"
        );
    }
}
