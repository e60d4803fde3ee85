//! A prior report read back: its `report.json` and, when it sits beside it, its
//! `items.jsonl`. Baselines and diffs read prior reports this way, through the
//! report model, so a malformed file is a located error rather than nulls.

use std::path::{Path, PathBuf};

use crate::base::diagnostic::Diagnostic;
use crate::base::value::Value;
use crate::inputs::prior_items::PriorItems;
use crate::report_model::item_values::{ItemValues, ITEM_VALUES_FILE};
use crate::report_model::Report;

#[derive(Debug, Clone)]
pub struct PriorReport {
    /// The report.json file.
    pub path: PathBuf,
    pub display: String,
    pub report: Report,
    /// The item-values.jsonl beside it; `None` for a report written without one
    /// (an older evalspec, or `keep_item_values: false`): no paired tests then.
    pub values: Option<ItemValues>,
}

impl PriorReport {
    /// Reads a report.json, or the report.json inside a run's --out folder.
    pub fn load(path: &Path) -> Result<PriorReport, Diagnostic> {
        let file = if path.is_dir() {
            path.join("report.json")
        } else {
            path.to_path_buf()
        };
        let display = file.display().to_string();
        let text = crate::base::files::read_text(&file).map_err(|e| {
            Diagnostic::error(
                "cannot_read_report",
                format!("cannot read report `{display}`: {e}"),
            )
            .help("pass a report.json written by `evalspec run`, or its --out folder")
        })?;
        let report = Report::from_json(&text, &display)?;
        let values_file = file.with_file_name(ITEM_VALUES_FILE);
        let values = read_item_values(&values_file)?;
        if let Some(values) = &values {
            check_same_run(&report, values, &display, &values_file)?;
        }
        Ok(PriorReport {
            path: file,
            display,
            report,
            values,
        })
    }

    /// A metric's value in this report (null when it has none or no such metric).
    pub fn metric(&self, name: &str) -> Value {
        match self.report.metrics.get(name) {
            Some(value) => match (value.as_f64(), value.as_bool()) {
                (Some(n), _) => Value::Number(n),
                (None, Some(b)) => Value::Bool(b),
                (None, None) => Value::Null,
            },
            None => Value::Null,
        }
    }

    /// A metric's value for one value of a slice (null when the report has none).
    pub fn slice_metric(&self, slice: &str, value: &str, name: &str) -> Value {
        let metric = self
            .report
            .slices
            .as_ref()
            .and_then(|slices| slices.get(slice))
            .and_then(|values| values.get(value))
            .and_then(|v| v.metrics.get(name));
        match metric.map(|m| (m.as_f64(), m.as_bool())) {
            Some((Some(n), _)) => Value::Number(n),
            Some((None, Some(b))) => Value::Bool(b),
            _ => Value::Null,
        }
    }

    /// The values of a slice in this report, with their item counts.
    pub fn slice_values(&self, slice: &str) -> Vec<(&str, u64)> {
        self.report
            .slices
            .as_ref()
            .and_then(|slices| slices.get(slice))
            .map_or_else(Vec::new, |values| {
                values.iter().map(|(v, entry)| (v, entry.items)).collect()
            })
    }

    /// The items.jsonl beside the report, when there is one. It is streamed:
    /// unlike report.json it may be larger than the bound on whole text files.
    pub fn items(&self) -> Result<Option<PriorItems>, Diagnostic> {
        let file = self.path.with_file_name("items.jsonl");
        match open_beside(&file)? {
            Some((reader, display)) => PriorItems::read(reader, &display).map(Some),
            None => Ok(None),
        }
    }
}

/// Item values are of their report's run: both carry one `run_id` (or, written
/// before there was one, neither does). With another run's item values, a
/// paired test would compare the new run with items it never scored.
fn check_same_run(
    report: &Report,
    values: &ItemValues,
    display: &str,
    values_file: &Path,
) -> Result<(), Diagnostic> {
    if report.run_id == values.run_id {
        return Ok(());
    }
    let id = |id: &Option<String>| match id {
        Some(id) => format!("run `{}`", id.chars().take(12).collect::<String>()),
        None => "no run id".to_string(),
    };
    Err(Diagnostic::error(
        "item_values_of_another_run",
        format!(
            "`{}` is not the item values of `{display}`: it has {}, the report {}",
            values_file.display(),
            id(&values.run_id),
            id(&report.run_id),
        ),
    )
    .help("keep item-values.jsonl with the report.json of its run (one run's --out folder), or remove it to compare without paired tests"))
}

/// The item-values.jsonl at `file`, streamed; `None` when there is none.
fn read_item_values(file: &Path) -> Result<Option<ItemValues>, Diagnostic> {
    match open_beside(file)? {
        Some((reader, display)) => ItemValues::read(reader, &display).map(Some),
        None => Ok(None),
    }
}

/// A file beside a report, opened for streaming; `None` when it does not exist.
fn open_beside(
    file: &Path,
) -> Result<Option<(std::io::BufReader<std::fs::File>, String)>, Diagnostic> {
    let display = file.display().to_string();
    let cannot = |e: std::io::Error| {
        Diagnostic::error("cannot_read_file", format!("cannot read `{display}`: {e}"))
    };
    let opened = match std::fs::File::open(file) {
        Ok(opened) => opened,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(cannot(e)),
    };
    if !opened.metadata().map_err(cannot)?.is_file() {
        return Err(Diagnostic::error(
            "cannot_read_file",
            format!("cannot read `{display}`: it is not a file"),
        ));
    }
    let reader = std::io::BufReader::with_capacity(1 << 20, opened);
    Ok(Some((reader, display)))
}
