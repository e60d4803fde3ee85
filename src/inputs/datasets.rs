//! The files each dataset is read from: its `path`, the files of its `runs`, or
//! what `--dataset NAME=PATH` puts in their place.

use std::path::PathBuf;

use crate::base::diagnostic::Diagnostic;
use crate::base::files::is_device;
use crate::inputs::error::InputError;
use crate::inputs::run_files::find_run_files;
use crate::spec::{DatasetDecl, Format, RunsDecl, Spec};

/// Where one dataset's records come from.
#[derive(Debug, Clone)]
pub struct DatasetFiles {
    /// The file read (for a dataset with runs: its first run's file); `None` when
    /// none could be found, and `errors` says why.
    pub path: Option<PathBuf>,
    /// The path as shown to the user and written in reports.
    pub display_path: String,
    /// A dataset with several runs: each run's file, in natural order of the
    /// paths; empty for a dataset read from one `path`.
    pub runs: Vec<RunFile>,
    /// The format named by the extension of a file given with `--dataset` (for
    /// runs, of the first): it overrides the declared one.
    pub format: Option<Format>,
    pub errors: Vec<Diagnostic>,
}

/// One file of a dataset with several runs.
#[derive(Debug, Clone)]
pub struct RunFile {
    pub path: PathBuf,
    pub display_path: String,
}

/// `--dataset NAME=…` for each NAME the spec does not declare.
pub fn unknown_overrides(spec: &Spec, overrides: &[(String, PathBuf)]) -> Vec<Diagnostic> {
    let names: Vec<String> = spec.datasets.iter().map(|d| d.name.text.clone()).collect();
    overrides
        .iter()
        .filter(|(name, _)| !names.contains(name))
        .map(|(name, _)| {
            Diagnostic::of(&InputError::UnknownDatasetOverride {
                name: name.clone(),
                datasets: names.clone(),
            })
        })
        .collect()
}

/// A table given for each NAME the spec does not declare.
pub fn unknown_tables(spec: &Spec, tables: &[String]) -> Vec<Diagnostic> {
    let names: Vec<String> = spec.datasets.iter().map(|d| d.name.text.clone()).collect();
    (tables.iter())
        .filter(|name| !names.contains(name))
        .map(|name| {
            Diagnostic::of(&InputError::UnknownTable {
                name: name.clone(),
                datasets: names.clone(),
            })
        })
        .collect()
}

/// A dataset given as a table in memory: no file, shown as `<NAME>` (its rows
/// as `<NAME>:ROW`). A dataset read as runs has a file per run, and no table
/// can stand for them.
pub fn table(decl: &DatasetDecl) -> DatasetFiles {
    let name = &decl.name.text;
    let mut errors = Vec::new();
    if decl.runs.is_some() {
        let kind = InputError::TableForRuns {
            dataset: name.clone(),
        };
        errors.push(Diagnostic::of(&kind).at(decl.name.location()));
    }
    DatasetFiles {
        path: Some(PathBuf::from(format!("<{name}>"))),
        display_path: format!("<{name}>"),
        runs: Vec::new(),
        format: None,
        errors,
    }
}

/// The files of `decl`, with `--dataset` applied (the last override of a name wins).
pub fn files(decl: &DatasetDecl, overrides: &[(String, PathBuf)]) -> DatasetFiles {
    let overridden = overrides
        .iter()
        .rev()
        .find(|(n, _)| *n == decl.name.text)
        .map(|(_, path)| path);
    let mut errors = Vec::new();
    let runs = decl.runs.as_ref().map(|runs| {
        run_files(decl, runs, overridden).unwrap_or_else(|error| {
            errors.push(error);
            Vec::new()
        })
    });
    let path = match (overridden, &decl.path, &runs) {
        (_, _, Some(runs)) => runs.first().map(|r| r.path.clone()),
        (Some(path), _, _) | (None, Some(path), _) => Some(path.clone()),
        (None, None, None) => {
            let kind = InputError::DatasetNoPath {
                dataset: decl.name.text.clone(),
            };
            errors.push(Diagnostic::of(&kind).at(decl.name.location()));
            None
        }
    };
    // A device is no data file: read, it never ends (`/dev/zero`) or looks empty.
    let files = path.iter().chain(runs.iter().flatten().map(|r| &r.path));
    if let Some(device) = files.into_iter().find(|p| is_device(p)) {
        let kind = InputError::DatasetIsDevice {
            dataset: decl.name.text.clone(),
            path: device.display().to_string(),
        };
        errors.push(Diagnostic::of(&kind).at(decl.name.location()));
    }
    let display_path = match (&decl.runs, overridden) {
        (Some(_), Some(pattern)) => pattern.display().to_string(),
        (Some(runs), None) => runs
            .patterns
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        (None, _) => path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
    };
    let runs = runs.unwrap_or_default();
    let format = overridden
        .map(|p| runs.first().map_or(p.as_path(), |r| r.path.as_path()))
        .and_then(Format::from_extension);
    DatasetFiles {
        path,
        display_path,
        runs,
        format,
        errors,
    }
}

/// The files of a dataset's runs (`runs:`, or `--dataset NAME=PATTERN`).
fn run_files(
    decl: &DatasetDecl,
    runs: &RunsDecl,
    overridden: Option<&PathBuf>,
) -> Result<Vec<RunFile>, Diagnostic> {
    let patterns = overridden.map_or_else(|| runs.patterns.clone(), |p| vec![p.clone()]);
    match find_run_files(&patterns) {
        Ok(files) => Ok(files
            .into_iter()
            .map(|path| RunFile {
                display_path: path.display().to_string(),
                path,
            })
            .collect()),
        Err(problem) => {
            let kind = InputError::RunFiles {
                dataset: decl.name.text.clone(),
                problem,
            };
            let mut d = Diagnostic::of(&kind);
            if overridden.is_none() {
                d = d.at(runs
                    .node
                    .location()
                    .with_key_path(format!("datasets.{}.runs", decl.name.text)));
            }
            Err(d)
        }
    }
}
