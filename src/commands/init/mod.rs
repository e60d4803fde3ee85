//! `evalspec init [DIR]`: a small working spec with sample gold and trace files,
//! which `evalspec run` passes on. Existing files are never overwritten.

use std::path::Path;

use crate::base::diagnostic::Diagnostic;
use crate::commands::error::CommandError;
use crate::commands::exit;

/// The files written, relative to DIR.
pub const FILES: [(&str, &str); 4] = [
    ("evalspec.yaml", include_str!("evalspec.yaml")),
    ("evalspec.schema.json", crate::spec::json_schema::SCHEMA),
    ("data/gold.jsonl", include_str!("gold.jsonl")),
    ("data/traces.jsonl", include_str!("traces.jsonl")),
];

/// What a refused `init` says.
const NOTHING_WRITTEN: &str = "nothing was written";
/// What a failed write says (files written before the failed one stay).
const NOT_WHOLE: &str = "the sample was not written whole";

pub fn init(dir: &Path) -> i32 {
    let clashes = existing(dir);
    if !clashes.is_empty() {
        return super::fail_then(NOTHING_WRITTEN, &clashes);
    }
    for (name, text) in FILES {
        let path = dir.join(name);
        if let Err(e) = crate::base::atomic::write_atomic(&path, text.as_bytes()) {
            let d = Diagnostic::of(&CommandError::InitCannotWrite {
                path: path.display().to_string(),
                error: e.to_string(),
            });
            return super::fail_then(NOT_WHOLE, &[d]);
        }
    }
    let spec = dir.join("evalspec.yaml");
    // Standard output that cannot be written is an error (exit 2), not a panic.
    crate::commands::print(&format!(
        "wrote {} and its sample data in {}\nnext: evalspec run {}\n",
        FILES[0].0,
        dir.join("data").display(),
        spec.display()
    ));
    exit::PASS
}

/// One error per file of [`FILES`] that exists in `dir` already.
fn existing(dir: &Path) -> Vec<Diagnostic> {
    FILES
        .iter()
        .map(|(name, _)| dir.join(name))
        .filter(|path| path.exists())
        .map(|path| {
            Diagnostic::of(&CommandError::InitFileExists {
                path: path.display().to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn existing_files_are_errors_of_a_kind() {
        let dir = tempfile::tempdir().unwrap();
        assert!(existing(dir.path()).is_empty());
        std::fs::write(dir.path().join("evalspec.yaml"), "").unwrap();
        let codes: Vec<_> = existing(dir.path()).iter().map(|d| d.code).collect();
        assert_eq!(codes, ["init_file_exists"]);
    }
}
