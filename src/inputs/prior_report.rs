//! A prior report read back: its `report.json` and, when it sits beside it, its
//! `items.jsonl`. Baselines and diffs read prior reports this way, through the
//! report model, so a malformed file is a located error rather than nulls.

use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use crate::base::diagnostic::Diagnostic;
use crate::base::value::Value;
use crate::report_model::{Item, Report};

#[derive(Debug, Clone)]
pub struct PriorReport {
    /// The report.json file.
    pub path: PathBuf,
    pub display: String,
    pub report: Report,
}

/// One item of a prior report, as `diff` compares them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriorItem {
    /// The key as shown (`(no key)` for an item without one).
    pub key: String,
    pub line: u64,
    pub label: Option<String>,
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
            Diagnostic::error(format!("cannot read report `{display}`: {e}"))
                .help("pass a report.json written by `evalspec run`, or its --out folder")
        })?;
        let report = Report::from_json(&text, &display)?;
        Ok(PriorReport {
            path: file,
            display,
            report,
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

    /// The items.jsonl beside the report, when there is one.
    pub fn items(&self) -> Result<Option<Vec<PriorItem>>, Diagnostic> {
        let file = self.path.with_file_name("items.jsonl");
        let display = file.display().to_string();
        let text = match crate::base::files::read_text(&file) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Diagnostic::error(format!("cannot read `{display}`: {e}"))),
        };
        let mut items = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let item = Item::from_json_line(line, &display, i + 1)?;
            let key = match item.key {
                Json::Null => "(no key)".to_string(),
                Json::String(s) => s,
                other => other.to_string(),
            };
            items.push(PriorItem {
                key,
                line: item.line,
                label: item.label.flatten(),
            });
        }
        Ok(Some(items))
    }
}
