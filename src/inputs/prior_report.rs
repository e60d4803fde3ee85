//! A prior run read back: its `report.json` and, when it sits beside it, its
//! `items.jsonl`. Baselines and diffs read runs this way.

use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use crate::base::diagnostic::{Diagnostic, Location};
use crate::base::value::Value;

#[derive(Debug, Clone)]
pub struct PriorRun {
    /// The report.json file.
    pub path: PathBuf,
    pub display: String,
    pub report: Json,
}

/// One item of a prior run, as `diff` compares them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriorItem {
    /// The key as shown (`(no key)` for an item without one).
    pub key: String,
    pub line: u64,
    pub label: Option<String>,
}

impl PriorRun {
    /// Reads a report.json, or the report.json inside a run folder.
    pub fn load(path: &Path) -> Result<PriorRun, Diagnostic> {
        let file = if path.is_dir() {
            path.join("report.json")
        } else {
            path.to_path_buf()
        };
        let display = file.display().to_string();
        let text = std::fs::read_to_string(&file).map_err(|e| {
            Diagnostic::error(format!("cannot read report `{display}`: {e}"))
                .help("pass a report.json written by `evalspec run`, or its --out folder")
        })?;
        let report: Json = serde_json::from_str(&text).map_err(|e| {
            Diagnostic::error(format!("`{display}` is not JSON: {e}"))
                .at(Location::in_data(&display, e.line(), Some(e.column())))
                .help("pass a report.json written by `evalspec run`")
        })?;
        let is_report = report.get("evalspec").is_some_and(Json::is_string)
            && report.get("metrics").is_some_and(Json::is_object)
            && report.get("gates").is_some_and(Json::is_array);
        if !is_report {
            return Err(Diagnostic::error(format!(
                "`{display}` is not an evalspec report (no `evalspec`, `metrics` and `gates`)"
            ))
            .help("pass a report.json written by `evalspec run`, or its --out folder"));
        }
        Ok(PriorRun {
            path: file,
            display,
            report,
        })
    }

    /// A metric's value in this run (null when it has none or no such metric).
    pub fn metric(&self, name: &str) -> Value {
        match self.report["metrics"].get(name) {
            Some(Json::Number(n)) => n.as_f64().map_or(Value::Null, Value::Number),
            Some(Json::Bool(b)) => Value::Bool(*b),
            _ => Value::Null,
        }
    }

    /// The run's items.jsonl, when it is beside the report.
    pub fn items(&self) -> Result<Option<Vec<PriorItem>>, Diagnostic> {
        let file = self.path.with_file_name("items.jsonl");
        let display = file.display().to_string();
        let text = match std::fs::read_to_string(&file) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Diagnostic::error(format!("cannot read `{display}`: {e}"))),
        };
        let mut items = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let bad = |message: String| {
                Diagnostic::error(format!("`{display}`: {message}"))
                    .at(Location::in_data(&display, i + 1, None))
                    .help("items.jsonl is written by `evalspec run`; re-run to regenerate it")
            };
            let item: Json = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
            let key = match &item["key"] {
                Json::Null => "(no key)".to_string(),
                Json::String(s) => s.clone(),
                other => other.to_string(),
            };
            let line = item["line"]
                .as_u64()
                .ok_or_else(|| bad("an item has no `line`".into()))?;
            let label = item.get("label").and_then(Json::as_str).map(str::to_string);
            items.push(PriorItem { key, line, label });
        }
        Ok(Some(items))
    }
}
