//! What a lock pins, as it is on disk now: the spec and every file it extends, every
//! template it may render, and each `frozen: true` dataset.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::base::diagnostic::Diagnostic;
use crate::base::sha256::{sha256_hex, Sha256};
use crate::inputs::templates::builtin_source;
use crate::inputs::ReportPlanKind;
use crate::lock::error::LockError;
use crate::plan::Plan;

/// Locate a change in a frozen dataset to the line while it has at most this many
/// lines; above, to a block of lines, so that the lock stays small.
const MAX_LINE_HASHES: usize = 4096;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PinnedFile {
    /// `spec`, `extends`, `template`, or `builtin-template`.
    pub role: String,
    /// Relative to the lock's folder, with `/` separators; a built-in's name.
    pub path: String,
    pub sha256: String,
    /// Kept so that drift can be shown as a diff.
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PinnedDataset {
    pub name: String,
    pub path: String,
    pub sha256: String,
    pub bytes: u64,
    pub lines: usize,
    /// Lines per entry of `line_hashes`.
    pub block_lines: usize,
    /// The first 4 bytes of each block's SHA-256, in hex, concatenated: where a
    /// changed file first differs.
    pub line_hashes: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pins {
    pub files: Vec<PinnedFile>,
    pub datasets: Vec<PinnedDataset>,
}

impl Pins {
    /// One digest for everything pinned: the lock's identity, stamped on reports.
    pub fn digest(&self, name: &str, version: &str) -> String {
        let mut hasher = Sha256::new();
        let mut field = |text: &str| {
            hasher.update((text.len() as u64).to_le_bytes());
            hasher.update(text.as_bytes());
        };
        field(name);
        field(version);
        for f in &self.files {
            field(&f.role);
            field(&f.path);
            field(&f.sha256);
        }
        for d in &self.datasets {
            field(&d.name);
            field(&d.sha256);
        }
        hasher.hex()
    }
}

/// The pins of `plan` as its files are now; `base` is the lock's folder.
pub fn current(plan: &Plan, base: &Path) -> Result<Pins, Diagnostic> {
    let mut files = Vec::new();
    for (i, source) in plan.spec_files.iter().enumerate() {
        files.push(PinnedFile {
            role: if i == 0 { "spec" } else { "extends" }.into(),
            path: relative(&source.path, base),
            sha256: sha256_hex(source.text.as_bytes()),
            text: source.text.clone(),
        });
    }
    let mut builtins: Vec<&str> = plan
        .reports
        .iter()
        .filter_map(|r| match &r.kind {
            ReportPlanKind::Template(name) => builtin_source(name).map(|_| name.as_str()),
            _ => None,
        })
        .collect();
    builtins.sort_unstable();
    builtins.dedup();
    for name in builtins {
        let text = builtin_source(name).unwrap_or_default();
        files.push(PinnedFile {
            role: "builtin-template".into(),
            path: name.into(),
            sha256: sha256_hex(text.as_bytes()),
            text: text.into(),
        });
    }
    let mut templates = Vec::new();
    for dir in &plan.template_dirs {
        template_files(dir, &mut templates).map_err(|e| read_error(dir, &e))?;
        // The templates the spec names, whatever their extension (a `t.md`
        // edited after freezing is drift too).
        for report in &plan.reports {
            if let ReportPlanKind::Template(name) = &report.kind {
                let path = dir.join(name);
                if path.is_file() {
                    templates.push(path);
                }
            }
        }
    }
    templates.sort();
    templates.dedup();
    for path in templates {
        let text = std::fs::read_to_string(&path).map_err(|e| read_error(&path, &e))?;
        files.push(PinnedFile {
            role: "template".into(),
            path: relative(&path, base),
            sha256: sha256_hex(text.as_bytes()),
            text,
        });
    }
    let mut datasets = Vec::new();
    for dataset in plan.datasets.iter().filter(|d| d.frozen) {
        // A dataset read as runs pins each run's file, as `NAME[PATH]`.
        let files: Vec<(String, &Path, &str)> = match dataset.runs.as_slice() {
            [] => vec![(dataset.name.clone(), &dataset.path, &dataset.display_path)],
            runs => runs
                .iter()
                .map(|r| {
                    let name = format!("{}[{}]", dataset.name, relative(&r.path, base));
                    (name, r.path.as_path(), r.display_path.as_str())
                })
                .collect(),
        };
        for (name, path, display) in files {
            let bytes = std::fs::read(path).map_err(|e| {
                let kind = LockError::CannotReadFrozenDataset {
                    dataset: dataset.name.clone(),
                    display: display.to_string(),
                    error: e.to_string(),
                };
                kind.diagnostic().at(dataset.declared_at.clone())
            })?;
            datasets.push(pin_dataset(&name, relative(path, base), &bytes));
        }
    }
    datasets.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Pins { files, datasets })
}

fn read_error(path: &Path, error: &std::io::Error) -> Diagnostic {
    let kind = LockError::CannotReadPinned {
        path: path.display().to_string(),
        error: error.to_string(),
    };
    kind.diagnostic()
}

/// Every template a spec's template folder offers to `include`: `*.j2`, `*.jinja`,
/// `*.jinja2`, at any depth. Links to folders are not followed (a link to a
/// folder above would loop forever; an include through it is refused).
fn template_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            template_files(&path, out)?;
        } else if matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("j2" | "jinja" | "jinja2")
        ) {
            out.push(path);
        }
    }
    Ok(())
}

pub fn pin_dataset(name: &str, path: String, bytes: &[u8]) -> PinnedDataset {
    let lines = line_spans(bytes);
    let block_lines = lines.len().div_ceil(MAX_LINE_HASHES).max(1);
    let line_hashes = lines
        .chunks(block_lines)
        .map(|block| {
            let (start, end) = (block[0].0, block[block.len() - 1].1);
            sha256_hex(&bytes[start..end])[..8].to_string()
        })
        .collect();
    PinnedDataset {
        name: name.into(),
        path,
        sha256: sha256_hex(bytes),
        bytes: bytes.len() as u64,
        lines: lines.len(),
        block_lines,
        line_hashes,
    }
}

/// Byte ranges of the lines, each with its line break.
pub fn line_spans(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            spans.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < bytes.len() {
        spans.push((start, bytes.len()));
    }
    spans
}

/// `path` relative to `base` with `/` separators (`..` where it lies outside).
pub fn relative(path: &Path, base: &Path) -> String {
    let absolute = |p: &Path| {
        std::fs::canonicalize(p).unwrap_or_else(|_| {
            std::env::current_dir()
                .map(|cwd| cwd.join(p))
                .unwrap_or_else(|_| p.to_path_buf())
        })
    };
    let (path, base) = (absolute(path), absolute(base));
    let path_parts: Vec<Component> = path.components().collect();
    let base_parts: Vec<Component> = base.components().collect();
    let common = path_parts
        .iter()
        .zip(&base_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let mut parts: Vec<String> = vec!["..".into(); base_parts.len() - common];
    parts.extend(
        path_parts[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_files_are_hashed_line_by_line() {
        let pin = pin_dataset("gold", "g".into(), b"a\nb\nc");
        assert_eq!((pin.lines, pin.block_lines), (3, 1));
        assert_eq!(pin.line_hashes.len(), 3 * 8);
        assert_eq!(&pin.line_hashes[..8], &sha256_hex(b"a\n")[..8]);
    }

    #[test]
    fn large_files_are_hashed_in_blocks() {
        let text = "x\n".repeat(MAX_LINE_HASHES * 2 + 1);
        let pin = pin_dataset("gold", "g".into(), text.as_bytes());
        assert_eq!(pin.block_lines, 3);
        assert!(pin.line_hashes.len() / 8 <= MAX_LINE_HASHES);
    }

    #[test]
    fn paths_are_relative_to_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        std::fs::create_dir_all(dir.path().join("c")).unwrap();
        std::fs::write(dir.path().join("c/x.yaml"), "").unwrap();
        assert_eq!(
            relative(&dir.path().join("c/x.yaml"), &dir.path().join("a/b")),
            "../../c/x.yaml"
        );
        assert_eq!(
            relative(&dir.path().join("c/x.yaml"), dir.path()),
            "c/x.yaml"
        );
    }
}
