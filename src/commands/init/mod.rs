//! `evalspec init [DIR]`: a small working spec with sample gold and trace files,
//! which `evalspec run` passes on. Existing files are never overwritten.

use std::path::Path;

use crate::base::diagnostic::{render_all, Diagnostic};
use crate::commands::exit;

/// The files written, relative to DIR.
pub const FILES: [(&str, &str); 4] = [
    ("evalspec.yaml", include_str!("evalspec.yaml")),
    ("evalspec.schema.json", crate::spec::json_schema::SCHEMA),
    ("data/gold.jsonl", include_str!("gold.jsonl")),
    ("data/traces.jsonl", include_str!("traces.jsonl")),
];

pub fn init(dir: &Path) -> i32 {
    let existing: Vec<Diagnostic> = FILES
        .iter()
        .map(|(name, _)| dir.join(name))
        .filter(|path| path.exists())
        .map(|path| {
            Diagnostic::error(format!("`{}` exists already", path.display()))
                .help("init writes only into a folder without these files; pick another DIR")
        })
        .collect();
    if !existing.is_empty() {
        eprint!("{}", render_all(&existing));
        return exit::ERROR;
    }
    for (name, text) in FILES {
        let path = dir.join(name);
        if let Err(e) = crate::base::atomic::write_atomic(&path, text.as_bytes()) {
            let d = Diagnostic::error(format!("cannot write `{}`: {e}", path.display()));
            eprint!("{}", render_all(&[d]));
            return exit::ERROR;
        }
    }
    let spec = dir.join("evalspec.yaml");
    println!(
        "wrote {} and its sample data in {}\nnext: evalspec run {}",
        FILES[0].0,
        dir.join("data").display(),
        spec.display()
    );
    exit::PASS
}
