//! The reports a run writes: report.json always, then the spec's `reports:` (or
//! the default Markdown report) and those `--format` adds. Each becomes a file in
//! the output folder, rendered by a built-in writer or a template; the spec's own
//! templates are found and parsed here, so a template error stops the run before
//! any data is read.

use std::path::{Component, Path, PathBuf};

use crate::base::diagnostic::{Diagnostic, Location};
use crate::inputs::error::InputError;
use crate::inputs::templates::{self, Templates};
use crate::spec::{ReportFormat, ReportKind, Spec};

/// One report file: a built-in format, or a template (built in or the spec's own).
#[derive(Debug, Clone)]
pub struct ReportPlan {
    /// File name inside the output folder.
    pub file: String,
    pub kind: ReportPlanKind,
}

#[derive(Debug, Clone)]
pub enum ReportPlanKind {
    Json,
    Items,
    /// A template by name in the report environment (built-in or the spec's).
    Template(String),
}

/// The reports to write, and what resolving them found wrong.
#[derive(Debug, Clone, Default)]
pub struct ReportFiles {
    /// report.json first, then the others in the order asked for.
    pub reports: Vec<ReportPlan>,
    /// Some report lists every item (items.jsonl, or a template reading `items`),
    /// so items must be kept rather than folded and dropped as they stream.
    pub keep_items: bool,
    /// Some template reads `items` (so the template context must hold them).
    pub templates_read_items: bool,
    /// The folders the spec's own templates (and what they include) load from.
    pub template_dirs: Vec<PathBuf>,
    pub errors: Vec<Diagnostic>,
}

/// A report asked for: its kind, output file, where it was asked for, and the
/// folder a template path is relative to.
type Wanted = (ReportKind, Option<String>, Option<Location>, PathBuf);

pub fn resolve(spec: &Spec, formats: &[ReportFormat]) -> (ReportFiles, Templates) {
    let mut files = ReportFiles::default();
    let mut names: Vec<(String, PathBuf)> = Vec::new();
    let mut out: Vec<(ReportPlan, bool)> = vec![(
        ReportPlan {
            file: ReportFormat::Json.default_file().to_string(),
            kind: ReportPlanKind::Json,
        },
        false,
    )];
    for (kind, file, at, dir) in wanted(spec, formats) {
        let located = |kind: InputError| match &at {
            Some(at) => Diagnostic::of(&kind).at(at.clone()),
            None => Diagnostic::of(&kind),
        };
        let (file, plan_kind, uses_items) = match kind {
            ReportKind::Builtin(ReportFormat::Json) if file.is_none() => continue,
            ReportKind::Builtin(format) => {
                let file = file.unwrap_or_else(|| format.default_file().to_string());
                match templates::builtin_template(format) {
                    Some(name) => (file, ReportPlanKind::Template(name.to_string()), false),
                    None if format == ReportFormat::Items => (file, ReportPlanKind::Items, true),
                    None => (file, ReportPlanKind::Json, false),
                }
            }
            ReportKind::Template(path) => {
                let spec_dir = dir.clone();
                let full = dir.join(&path);
                let (Some(dir), Some(name)) =
                    (full.parent(), full.file_name().and_then(|n| n.to_str()))
                else {
                    // `.`, `..` or `/`: a folder, not a template.
                    let looked_for = full.display().to_string();
                    files
                        .errors
                        .push(located(InputError::TemplateNotFound { path, looked_for }));
                    continue;
                };
                if !full.is_file() {
                    files.errors.push(located(InputError::TemplateNotFound {
                        looked_for: full.display().to_string(),
                        path,
                    }));
                    continue;
                }
                // Inside the spec's folder, links resolved: never
                // `/proc/self/environ` or `../../secret` in a report.
                if !templates::is_inside(&full, &spec_dir) {
                    files.errors.push(located(InputError::TemplateOutside {
                        path,
                        folder: spec_dir.display().to_string(),
                    }));
                    continue;
                }
                // Templates are found by file name across their folders, so
                // two of one name in different folders would be ambiguous.
                if let Some(other) = names.iter().find(|(n, d)| n == name && d != dir) {
                    files.errors.push(located(InputError::TemplateNameTwice {
                        name: name.to_string(),
                        first_dir: other.1.display().to_string(),
                        second_dir: dir.display().to_string(),
                    }));
                    continue;
                }
                names.push((name.to_string(), dir.to_path_buf()));
                if !files.template_dirs.iter().any(|d| d == dir) {
                    files.template_dirs.push(dir.to_path_buf());
                }
                let file = file.unwrap_or_else(|| {
                    name.trim_end_matches(".j2")
                        .trim_end_matches(".jinja")
                        .to_string()
                });
                (file, ReportPlanKind::Template(name.to_string()), false)
            }
        };
        // An empty path names no file: it would be the output folder itself.
        let contained = !file.is_empty()
            && Path::new(&file)
                .components()
                .all(|c| matches!(c, Component::Normal(_)));
        let clash = out.iter().any(|(r, _)| r.file == file);
        if !contained || clash {
            let kind = if contained {
                InputError::ReportFileTwice { file }
            } else {
                InputError::ReportOutsideOut { file }
            };
            files.errors.push(located(kind));
            continue;
        }
        out.push((
            ReportPlan {
                file,
                kind: plan_kind,
            },
            uses_items,
        ));
    }
    let templates = Templates::new(files.template_dirs.clone());
    for (report, uses_items) in &mut out {
        if let ReportPlanKind::Template(name) = &report.kind {
            match templates.check(name) {
                Ok(reads_items) => {
                    *uses_items |= reads_items;
                    files.templates_read_items |= reads_items;
                }
                Err(d) => files.errors.push(d),
            }
        }
    }
    files.keep_items = out.iter().any(|(_, uses_items)| *uses_items);
    files.reports = out.into_iter().map(|(r, _)| r).collect();
    (files, templates)
}

/// The reports the spec asks for (or the default), then those `--format` adds.
fn wanted(spec: &Spec, formats: &[ReportFormat]) -> Vec<Wanted> {
    let spec_dir = spec
        .source
        .path
        .parent()
        .map_or_else(PathBuf::new, Path::to_path_buf);
    // items.jsonl keeps every item in memory: asked for, not by default.
    let default = [ReportFormat::Markdown];
    let mut wanted: Vec<Wanted> = match &spec.reports {
        Some(reports) => reports
            .iter()
            .map(|r| {
                let at = r.node.location().with_key_path("reports");
                (r.kind.clone(), r.path.clone(), Some(at), r.dir.clone())
            })
            .collect(),
        None => default
            .iter()
            .map(|f| (ReportKind::Builtin(*f), None, None, spec_dir.clone()))
            .collect(),
    };
    for format in formats {
        if !wanted
            .iter()
            .any(|(k, _, _, _)| *k == ReportKind::Builtin(*format))
        {
            wanted.push((ReportKind::Builtin(*format), None, None, spec_dir.clone()));
        }
    }
    wanted
}
