//! The output folder (`--out`): where a run's reports may go, checked before any
//! data is scored, and writing them there as one set.
//!
//! A report never replaces a file the run reads (the spec, its bases, its lock,
//! a template, a dataset, the baseline), nor lands outside the folder through a
//! symbolic link. Every report is staged before any is committed, under an
//! exclusive lock on the folder, so a failed write leaves the previous set
//! whole and two runs into one folder leave one run's set, not a mix.

use std::path::{Component, Path, PathBuf};

use crate::base::atomic::{stage_in, Staged};
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
        let values_at = resolve(&out.join(ITEM_VALUES_FILE)).ok();
        for report in &plan.reports {
            let target = out.join(&report.file);
            if resolve(&target).ok().is_some_and(|r| Some(r) == values_at) {
                return Err(Diagnostic::of(&ReportError::ReportIsItemValues {
                    file: target.display().to_string(),
                }));
            }
        }
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
        remove_stale_staging(&self.dir);
        // Every target is checked before anything is written: a folder where a
        // report goes, or a file where its folder goes, stops the set whole.
        for (path, _) in files {
            check_target(&self.dir, path)?;
        }
        // Staged in one folder inside --out (so that a run killed now leaves
        // only that folder, which the next run removes), then renamed.
        let staging = tempfile::Builder::new()
            .prefix(STAGING_PREFIX)
            .tempdir_in(&self.dir)
            .map_err(|e| cannot_write(&self.dir, &e))?;
        let staged: Vec<Staged> = files
            .iter()
            .map(|(path, content)| {
                let staged = match content {
                    Content::Bytes(bytes) => {
                        stage_in(staging.path(), path, |out| out.write_all(bytes))
                    }
                    Content::Written(write) => stage_in(staging.path(), path, |out| write(out)),
                };
                staged.map_err(|e| cannot_write(path, &e))
            })
            .collect::<Result<_, _>>()?;
        // An earlier run's files that this set does not write go too: a
        // folder holds one run's set (report.html of last night beside
        // tonight's report.json would say PASS beside FAIL).
        let earlier = earlier_files(&self.dir, files);
        let mut commit = Commit {
            staging: staging.path(),
            done: Vec::new(),
        };
        for (i, path) in earlier.iter().enumerate() {
            let aside = staging.path().join(format!("earlier-{i}"));
            if let Err(e) = std::fs::rename(path, &aside) {
                commit.undo();
                return Err(cannot_write(path, &e));
            }
            commit.done.push((path.clone(), Some(aside), false));
        }
        for (i, file) in staged.into_iter().enumerate() {
            let path = file.target().to_path_buf();
            if let Err(e) = commit.replace(i, file) {
                commit.undo();
                return Err(cannot_write(&path, &e));
            }
        }
        Ok(())
    }
}

/// What the staging folder of a set is named by (then random letters).
const STAGING_PREFIX: &str = ".evalspec-staging-";

/// The renames of a set so far, to undo them if one fails: per path, where
/// its earlier file was put aside, and whether a new file took its place.
struct Commit<'s> {
    staging: &'s Path,
    done: Vec<(PathBuf, Option<PathBuf>, bool)>,
}

impl Commit<'_> {
    /// Puts `file` in its place, the file there first put aside.
    fn replace(&mut self, i: usize, file: Staged) -> std::io::Result<()> {
        let path = file.target().to_path_buf();
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let aside = match std::fs::symlink_metadata(&path) {
            Ok(_) => {
                let aside = self.staging.join(format!("replaced-{i}"));
                std::fs::rename(&path, &aside)?;
                Some(aside)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        self.done.push((path, aside, false));
        file.commit()?;
        self.done.last_mut().expect("just pushed").2 = true;
        Ok(())
    }

    /// Puts every earlier file back, newest change first; best effort.
    fn undo(&mut self) {
        for (path, aside, placed) in self.done.drain(..).rev() {
            if placed && aside.is_none() {
                let _ = std::fs::remove_file(&path);
            }
            if let Some(aside) = aside {
                let _ = std::fs::rename(&aside, &path);
            }
        }
    }
}

/// Removes what killed runs left: staging folders of ours in `dir`.
fn remove_stale_staging(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let is_ours = name.to_string_lossy().starts_with(STAGING_PREFIX);
        if is_ours && entry.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// A target that cannot take a file: a folder (or anything but a file) is
/// where it goes, or a file is where one of its folders goes.
fn check_target(out: &Path, path: &Path) -> Result<(), Diagnostic> {
    let refuse = |what: &str| cannot_write(path, &std::io::Error::other(what.to_string()));
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => return Err(refuse("a folder is in its place")),
        Ok(m) if !m.is_file() && !m.file_type().is_symlink() => {
            return Err(refuse("something that is not a file is in its place"))
        }
        _ => {}
    }
    let mut folder = path.parent();
    while let Some(dir) = folder.filter(|d| d.starts_with(out) && *d != out) {
        if std::fs::metadata(dir).is_ok_and(|m| !m.is_dir()) {
            return Err(refuse(&format!(
                "`{}` is a file, not a folder",
                dir.display()
            )));
        }
        folder = dir.parent();
    }
    Ok(())
}

/// The files of an earlier run's set in `out` that `files` does not write:
/// those of the names evalspec gives them (each report format's, and
/// item-values.jsonl), when `out` holds an evalspec report.json.
fn earlier_files(out: &Path, files: &[(PathBuf, Content<'_>)]) -> Vec<PathBuf> {
    let report = out.join("report.json");
    let is_report = crate::base::files::read_text(&report)
        .ok()
        .is_some_and(|text| crate::report_model::Report::from_json(&text, "").is_ok());
    if !is_report {
        return Vec::new();
    }
    let names = (crate::spec::ReportFormat::ALL.iter())
        .map(|(_, format)| format.default_file())
        .chain([ITEM_VALUES_FILE]);
    names
        .map(|name| out.join(name))
        .filter(|path| !files.iter().any(|(p, _)| p == path))
        .filter(|path| std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()))
        .collect()
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
