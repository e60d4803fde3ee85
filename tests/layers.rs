//! The one-way rule: the crate's top-level modules are layers, and a layer may
//! import only the layers below it. From the bottom up:
//!
//! base → report_model → syntax → library → ir → spec → inputs → plan → lock →
//! data → eval → report → diff → commands
//!
//! (`lib.rs` and `main.rs` sit on top and may use anything.) This test reads every
//! source file, finds each `crate::LAYER` it names, and fails on a reference to a
//! layer above the file's own, so no module cycle can form. A new top-level
//! module must be given its place in `LAYERS` (and in ARCHITECTURE.md).

use std::path::{Path, PathBuf};

const LAYERS: &[&str] = &[
    "base",
    "report_model",
    "syntax",
    "library",
    "ir",
    "spec",
    "inputs",
    "plan",
    "stats",
    "lock",
    "data",
    "eval",
    "report",
    "diff",
    "engine",
    "commands",
];

fn rank(layer: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == layer)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The layers a source text names as `crate::LAYER` (also inside `use crate::{…}`).
fn referenced_layers(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (at, _) in text.match_indices("crate::") {
        let rest = &text[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            for item in group.split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                found.push(name);
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            found.push(name);
        }
    }
    found
}

#[test]
fn layers_import_only_downward() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut violations = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).unwrap();
        let first = relative.components().next().unwrap().as_os_str();
        let layer = first.to_str().unwrap().trim_end_matches(".rs");
        if matches!(layer, "lib" | "main") {
            continue;
        }
        let Some(own) = rank(layer) else {
            violations.push(format!(
                "{}: `{layer}` is not a layer; add it to LAYERS in tests/layers.rs",
                relative.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        for name in referenced_layers(&text) {
            match rank(&name) {
                Some(theirs) if theirs > own => violations.push(format!(
                    "{}: layer `{layer}` imports `crate::{name}`, a layer above it",
                    relative.display()
                )),
                Some(_) => {}
                // `crate::exit` and the like: re-exports of lib.rs, which sits on top.
                None => violations.push(format!(
                    "{}: `crate::{name}` is not a layer; import it from its layer",
                    relative.display()
                )),
            }
        }
    }
    violations.dedup();
    assert!(
        violations.is_empty(),
        "upward imports:\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_reference_scanner_sees_plain_and_grouped_imports() {
    let names = referenced_layers("use crate::plan::Plan;\nuse crate::{eval, report::x};");
    assert_eq!(names, ["plan", "eval", "report"]);
}

#[test]
fn every_layer_is_a_module_of_the_crate() {
    let lib =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    for layer in LAYERS {
        assert!(
            lib.contains(&format!("pub mod {layer};")),
            "{layer} is listed as a layer but lib.rs declares no such module"
        );
    }
}

#[test]
fn the_architecture_document_lists_every_layer_and_points_at_real_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    for layer in LAYERS {
        assert!(
            doc.contains(&format!("| `{layer}` |")),
            "ARCHITECTURE.md has no row for the layer `{layer}`"
        );
    }
    // Every `dir/file.rs` it names exists under src/ (or, for tests/, at the root).
    for quoted in doc.split('`').skip(1).step_by(2) {
        if quoted.ends_with(".rs") && quoted.contains('/') {
            let exists = root.join("src").join(quoted).exists() || root.join(quoted).exists();
            assert!(
                exists,
                "ARCHITECTURE.md names `{quoted}`, which does not exist"
            );
        }
    }
}
