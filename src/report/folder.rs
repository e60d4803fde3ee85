//! The output folder (`--out`): where a run's reports may go, checked before any
//! data is scored, and writing them there as one set.
//!
//! A report never replaces a file the run reads (the spec, its bases, its lock,
//! a template, a dataset, the baseline), nor lands outside the folder through a
//! symbolic link. Every report is staged before any is committed, under an
//! exclusive lock on the folder, so a failed write leaves the previous set
//! whole and two runs into one folder leave one run's set, not a mix.

use std::path::{Component, Path, PathBuf};

use crate::base::atomic::{stage, stage_with, Staged};
use crate::base::diagnostic::Diagnostic;
use crate::inputs::ReportPlanKind;
use crate::plan::Plan;
use crate::report::error::ReportError;
use crate::report_model::item_values::ITEM_VALUES_FILE;

/// An output folder whose report paths have been checked.
#[derive(Debug)]
pub struct OutputFolder {
    dir: PathBuf,
}

impl OutputFolder {
    /// Checks `out` and every report path of `plan` in it.
    pub fn check(out: &Path, plan: &Plan) -> Result<OutputFolder, Diagnostic> {
        let shown = out.display().to_string();
        let resolved_out = resolve(out).map_err(|_| not_a_folder(&shown))?;
        if resolved_out.exists() && !resolved_out.is_dir() {
            return Err(not_a_folder(&shown));
        }
        let inputs = read_files(plan);
        let item_values = crate::report::writes_item_values(plan).then_some(ITEM_VALUES_FILE);
        let files = plan.reports.iter().map(|r| r.file.as_str());
        for file in files.chain(item_values) {
            let target = out.join(file);
            let Ok(resolved) = resolve(&target) else {
                // A folder on the way is a file: writing will say so.
                continue;
            };
            if let Some((input, role)) = inputs.iter().find(|(path, _)| *path == resolved) {
                return Err(Diagnostic::of(&ReportError::ReportIsInput {
                    file: target.display().to_string(),
                    input: input.display().to_string(),
                    role,
                }));
            }
            if !resolved.starts_with(&resolved_out) {
                return Err(Diagnostic::of(&ReportError::ReportLeavesOut {
                    file: target.display().to_string(),
                    resolved: resolved.display().to_string(),
                }));
            }
        }
        Ok(OutputFolder {
            dir: out.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Writes `files` (paths inside the folder, with their bytes) as one set:
    /// all staged, then all committed, while holding the folder's lock.
    pub fn write_set(&self, files: &[(PathBuf, Content<'_>)]) -> Result<(), Diagnostic> {
        let out = self.dir.display().to_string();
        if self.dir.exists() && !self.dir.is_dir() {
            return Err(not_a_folder(&out));
        }
        std::fs::create_dir_all(&self.dir).map_err(|e| cannot_write(&self.dir, &e))?;
        let folder = std::fs::File::open(&self.dir).map_err(|e| {
            Diagnostic::of(&ReportError::CannotLockOut {
                out: out.clone(),
                error: e.to_string(),
            })
        })?;
        // Released when `folder` is closed, on return.
        folder.lock().map_err(|e| {
            Diagnostic::of(&ReportError::CannotLockOut {
                out: out.clone(),
                error: e.to_string(),
            })
        })?;
        let staged: Vec<Staged> = files
            .iter()
            .map(|(path, content)| {
                let staged = match content {
                    Content::Bytes(bytes) => stage(path, bytes),
                    Content::Written(write) => stage_with(path, |out| write(out)),
                };
                staged.map_err(|e| cannot_write(path, &e))
            })
            .collect::<Result<_, _>>()?;
        for file in staged {
            let path = file.target().to_path_buf();
            file.commit().map_err(|e| cannot_write(&path, &e))?;
        }
        Ok(())
    }
}

/// A report's content: its bytes, or what writes them (items.jsonl, written
/// straight to its staged file rather than built in memory first).
pub enum Content<'a> {
    Bytes(Vec<u8>),
    Written(Box<Writer<'a>>),
}

/// What writes a report's content into its staged file.
pub type Writer<'a> = dyn Fn(&mut dyn std::io::Write) -> std::io::Result<()> + 'a;

fn not_a_folder(out: &str) -> Diagnostic {
    Diagnostic::of(&ReportError::OutNotAFolder { out: out.into() })
}

fn cannot_write(path: &Path, error: &std::io::Error) -> Diagnostic {
    Diagnostic::of(&ReportError::CannotWrite {
        path: path.display().to_string(),
        error: error.to_string(),
    })
}

/// Every file the run reads, resolved, with what it is to the run.
fn read_files(plan: &Plan) -> Vec<(PathBuf, &'static str)> {
    let mut files: Vec<(PathBuf, &'static str)> = Vec::new();
    let mut add = |path: &Path, role: &'static str| {
        if let Ok(path) = std::fs::canonicalize(path) {
            files.push((path, role));
        }
    };
    for (i, source) in plan.spec_files.iter().enumerate() {
        add(&source.path, if i == 0 { "spec" } else { "base spec" });
    }
    add(&crate::lock::lock_path(&plan.spec_path), "lock");
    for report in &plan.reports {
        if let ReportPlanKind::Template(name) = &report.kind {
            for dir in &plan.template_dirs {
                add(&dir.join(name), "template");
            }
        }
    }
    for dataset in &plan.datasets {
        add(&dataset.path, "dataset");
        for run in &dataset.runs {
            add(&run.path, "run file");
        }
    }
    if let Some(baseline) = &plan.baseline {
        add(&baseline.path, "baseline report");
    }
    files
}

/// `path` with every symbolic link resolved, whether or not it exists: the
/// longest existing prefix is resolved and the rest appended. An error when a
/// part of the existing prefix is not a folder.
fn resolve(path: &Path) -> std::io::Result<PathBuf> {
    let absolute = std::path::absolute(path)?;
    let mut existing = absolute.as_path();
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    loop {
        match std::fs::canonicalize(existing) {
            Ok(mut resolved) => {
                for part in rest.iter().rev() {
                    resolved.push(part);
                }
                return Ok(resolved);
            }
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            Err(e) => {
                let Some(Component::Normal(last)) = existing.components().next_back() else {
                    return Err(e);
                };
                rest.push(last);
                existing = existing.parent().ok_or(e)?;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolving_follows_links_and_keeps_the_missing_rest() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
        let resolved = resolve(&dir.path().join("link/new/report.md")).unwrap();
        assert_eq!(
            resolved,
            std::fs::canonicalize(&real).unwrap().join("new/report.md")
        );
    }

    #[test]
    fn a_file_on_the_way_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("file"), "").unwrap();
        assert!(resolve(&dir.path().join("file/report.md")).is_err());
    }
}
