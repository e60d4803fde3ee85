//! Datasets that are streams: standard input (`--dataset NAME=-`), a FIFO, a
//! process substitution (`<(cmd)`), a device. Each is read once, sequentially, into
//! a temporary file before anything else reads it, so that the readers can split,
//! hash and re-read it as they do any file (Parquet needs to seek; JSONL is read
//! in parallel chunks). The copy keeps the stream's file name, so a run read from
//! one is named as its file is (`stdin` for standard input), and it lives as long
//! as the returned [`Spooled`].

use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use crate::base::diagnostic::Diagnostic;
use crate::inputs::DatasetFiles;

/// The path that means standard input.
pub const DASH: &str = "-";

/// What a dataset read from standard input is called in messages and reports.
pub const STDIN_DISPLAY: &str = "<stdin>";

/// The temporary copies (none by default); they are removed when this is dropped.
#[derive(Default)]
pub struct Spooled {
    _dir: Option<tempfile::TempDir>,
}

/// `--dataset` may read standard input for one dataset only.
pub fn check_overrides<'a>(
    datasets: impl IntoIterator<Item = (&'a str, &'a Path)>,
) -> Option<Diagnostic> {
    let from_stdin: BTreeSet<&str> = datasets
        .into_iter()
        .filter(|(_, path)| path.as_os_str() == DASH)
        .map(|(name, _)| name)
        .collect();
    (from_stdin.len() > 1).then(|| {
        let names: Vec<String> = from_stdin.iter().map(|n| format!("`{n}`")).collect();
        Diagnostic::error("stdin_read_twice", format!(
            "`--dataset NAME=-` reads standard input, which only one dataset can read; {} each ask for it",
            names.join(" and ")
        ))
        .help("give the other datasets files (a FIFO or `<(command)` works too)")
    })
}

/// Standard input or a FIFO (devices are refused when the inputs are gathered).
fn is_stream(path: &Path) -> bool {
    path.as_os_str() == DASH
        || (!crate::base::files::is_device(path)
            && std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()))
}

/// Copies every dataset file that is a stream into a temporary file and points
/// the dataset at the copy. `names` are the datasets' names, in the same order.
pub fn spool(datasets: &mut [DatasetFiles], names: &[&str]) -> Result<Spooled, Diagnostic> {
    let is_stream_file = |path: &Option<PathBuf>| path.as_deref().is_some_and(is_stream);
    let streams = datasets
        .iter()
        .any(|d| is_stream_file(&d.path) || d.runs.iter().any(|r| is_stream(&r.path)));
    if !streams {
        return Ok(Spooled { _dir: None });
    }
    let dir = tempfile::tempdir().map_err(|e| {
        Diagnostic::error(
            "cannot_create_temporary",
            format!("cannot create a temporary folder: {e}"),
        )
    })?;
    // A stream is read once: a runs dataset names its first file twice.
    let mut copies: Vec<(PathBuf, PathBuf)> = Vec::new();
    for (dataset, name) in datasets.iter_mut().zip(names) {
        let mut paths: Vec<(&mut PathBuf, &mut String)> = dataset
            .runs
            .iter_mut()
            .map(|r| (&mut r.path, &mut r.display_path))
            .collect();
        if let Some(path) = dataset.path.as_mut() {
            paths.push((path, &mut dataset.display_path));
        }
        for (path, display) in paths {
            if !is_stream(path) {
                continue;
            }
            let copy = match copies.iter().find(|(original, _)| original == path) {
                Some((_, copy)) => copy.clone(),
                None => {
                    let copy = copy_stream(dir.path(), copies.len(), path, name)?;
                    copies.push((path.clone(), copy.clone()));
                    copy
                }
            };
            if path.as_os_str() == DASH {
                *display = STDIN_DISPLAY.to_string();
            }
            *path = copy;
        }
    }
    Ok(Spooled { _dir: Some(dir) })
}

fn copy_stream(
    dir: &Path,
    index: usize,
    path: &Path,
    dataset: &str,
) -> Result<PathBuf, Diagnostic> {
    let stdin = path.as_os_str() == DASH;
    let shown = if stdin {
        STDIN_DISPLAY.to_string()
    } else {
        path.display().to_string()
    };
    let error = |e: std::io::Error| {
        Diagnostic::error(
            "cannot_read_stream",
            format!("cannot read dataset `{dataset}` from `{shown}`: {e}"),
        )
    };
    let folder = dir.join(index.to_string());
    std::fs::create_dir(&folder).map_err(error)?;
    let file_name = match path.file_name() {
        Some(name) if !stdin => name.to_os_string(),
        _ => "stdin".into(),
    };
    let copy = folder.join(file_name);
    let mut out = std::fs::File::create(&copy).map_err(error)?;
    if stdin {
        let stdin = std::io::stdin();
        if stdin.is_terminal() {
            return Err(Diagnostic::error(
                "stdin_is_terminal",
                format!("dataset `{dataset}` is read from standard input, which is a terminal"),
            )
            .help(format!(
                "pipe the data in, e.g. `produce-traces | evalspec run SPEC --dataset {dataset}=-`"
            )));
        }
        std::io::copy(&mut stdin.lock(), &mut out).map_err(error)?;
    } else {
        let mut stream = std::fs::File::open(path).map_err(error)?;
        std::io::copy(&mut stream, &mut out).map_err(error)?;
    }
    Ok(copy)
}
