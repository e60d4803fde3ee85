//! `item-values.jsonl`: what each item contributed to each metric computed from
//! items, kept beside report.json so that a later run (`--baseline`) or `diff`
//! can test a change on the items both runs share.
//!
//! The first line names the metrics once:
//! `{"item_values":1,"metrics":[{"name":"precision","kind":"ratio"}],"runs":false}`;
//! every other line is one item: its key (a string, a number or null), its run
//! when `runs` is true, then one contribution per metric, in the header's order.
//! A contribution is a number, or null when the item does not count for the
//! metric (filtered out by `where`, or a null value for `mean`):
//!
//! | kind | contribution | the metric over items |
//! |---|---|---|
//! | `ratio` | 1 or 0 (null: not counted) | Σ contributions / items counted |
//! | `mean` | the value (null: not counted) | Σ contributions / items counted |
//! | `sum` | the value (null: none) | Σ contributions |
//! | `count` | 1 or 0 | Σ contributions |

use std::io::BufRead;

use serde::Deserialize;
use serde_json::Value as Json;

use crate::base::diagnostic::{Diagnostic, Location};
use crate::base::value::format_number;

/// The version the header line carries; a reader refuses a newer one.
pub const ITEM_VALUES_VERSION: u64 = 1;

/// The file's name beside report.json.
pub const ITEM_VALUES_FILE: &str = "item-values.jsonl";

/// How a metric is computed from its items' contributions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ValueKind {
    Ratio,
    Mean,
    Sum,
    Count,
}

impl ValueKind {
    pub fn keyword(self) -> &'static str {
        match self {
            ValueKind::Ratio => "ratio",
            ValueKind::Mean => "mean",
            ValueKind::Sum => "sum",
            ValueKind::Count => "count",
        }
    }

    /// A sum or a count grows with the items; a ratio or a mean does not.
    pub fn is_total(self) -> bool {
        matches!(self, ValueKind::Sum | ValueKind::Count)
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ValueColumn {
    pub name: String,
    pub kind: ValueKind,
}

#[derive(Debug, Deserialize)]
struct Header {
    item_values: u64,
    metrics: Vec<ValueColumn>,
    #[serde(default)]
    runs: bool,
}

/// One item's line.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueRow {
    /// The key as JSON text (`"q1"`, `17`, or `null` for an item without a key).
    pub key: String,
    pub run: Option<String>,
    /// Per metric of the header; `None`: the item does not count for it.
    pub values: Vec<Option<f64>>,
}

/// An item-values file read back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ItemValues {
    pub metrics: Vec<ValueColumn>,
    pub runs: bool,
    pub rows: Vec<ValueRow>,
}

/// The header line (with its newline).
pub fn header_line(metrics: &[(&str, ValueKind)], runs: bool) -> String {
    let metrics: Vec<Json> = metrics
        .iter()
        .map(|(name, kind)| serde_json::json!({"name": name, "kind": kind.keyword()}))
        .collect();
    let header = serde_json::json!({
        "item_values": ITEM_VALUES_VERSION,
        "metrics": metrics,
        "runs": runs,
    });
    format!("{header}\n")
}

/// Appends one item's line: `key` is the key's JSON text.
pub fn push_row(out: &mut Vec<u8>, key: &str, run: Option<&str>, values: &[Option<f64>]) {
    out.push(b'[');
    out.extend_from_slice(key.as_bytes());
    if let Some(run) = run {
        out.push(b',');
        out.extend_from_slice(Json::from(run).to_string().as_bytes());
    }
    for value in values {
        out.push(b',');
        match value {
            Some(x) => out.extend_from_slice(format_number(*x).as_bytes()),
            None => out.extend_from_slice(b"null"),
        }
    }
    out.extend_from_slice(b"]\n");
}

impl ItemValues {
    /// Reads an item-values file line by line; `file` names it in errors.
    pub fn read(mut reader: impl BufRead, file: &str) -> Result<ItemValues, Diagnostic> {
        let mut values = ItemValues::default();
        let mut bytes = Vec::new();
        let mut header_seen = false;
        for number in 1.. {
            bytes.clear();
            let at = |column: Option<usize>| Location::in_data(file, number, column);
            let n = reader.read_until(b'\n', &mut bytes).map_err(|e| {
                Diagnostic::error(format!("cannot read `{file}`: {e}")).at(at(None))
            })?;
            if n == 0 {
                break;
            }
            let bad = |what: String| {
                Diagnostic::error(format!("`{file}`: line {number} {what}"))
                    .at(at(None))
                    .help("item-values.jsonl is written by `evalspec run`; re-run to regenerate it")
            };
            let line = std::str::from_utf8(&bytes).map_err(|_| bad("is not UTF-8 text".into()))?;
            if line.trim().is_empty() {
                continue;
            }
            if !header_seen {
                let header: Header = serde_json::from_str(line)
                    .map_err(|e| bad(format!("is not an item-values header: {e}")))?;
                if header.item_values > ITEM_VALUES_VERSION {
                    return Err(bad(format!(
                        "is version {} of the format; this evalspec reads version {ITEM_VALUES_VERSION}",
                        header.item_values
                    )));
                }
                values.metrics = header.metrics;
                values.runs = header.runs;
                header_seen = true;
                continue;
            }
            let row: Vec<Json> =
                serde_json::from_str(line).map_err(|e| bad(format!("is not a JSON list: {e}")))?;
            values.rows.push(values.row(row).map_err(bad)?);
        }
        Ok(values)
    }

    fn row(&self, row: Vec<Json>) -> Result<ValueRow, String> {
        let lead = 1 + usize::from(self.runs);
        if row.len() != lead + self.metrics.len() {
            return Err(format!(
                "has {} values; the header names {} metrics{}",
                row.len(),
                self.metrics.len(),
                if self.runs {
                    " after a key and a run"
                } else {
                    " after a key"
                }
            ));
        }
        let mut row = row.into_iter();
        let key = match row.next().expect("checked length") {
            key @ (Json::String(_) | Json::Number(_) | Json::Null) => key.to_string(),
            other => return Err(format!("has a key that is not a string or number: {other}")),
        };
        let run = match self.runs {
            false => None,
            true => match row.next().expect("checked length") {
                Json::String(run) => Some(run),
                other => return Err(format!("has a run that is not a string: {other}")),
            },
        };
        let values = row
            .map(|value| match value {
                Json::Null => Ok(None),
                Json::Number(n) => Ok(n.as_f64()),
                other => Err(format!("has a value that is not a number: {other}")),
            })
            .collect::<Result<_, _>>()?;
        Ok(ValueRow { key, run, values })
    }

    /// The index of a metric's column.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.metrics.iter().position(|m| m.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_lines_read_back() {
        let mut text =
            header_line(&[("p", ValueKind::Ratio), ("m", ValueKind::Mean)], false).into_bytes();
        push_row(&mut text, "\"q1\"", None, &[Some(1.0), Some(0.25)]);
        push_row(&mut text, "7", None, &[None, Some(3.0)]);
        assert_eq!(
            String::from_utf8(text.clone()).unwrap(),
            "{\"item_values\":1,\"metrics\":[{\"name\":\"p\",\"kind\":\"ratio\"},{\"name\":\"m\",\"kind\":\"mean\"}],\"runs\":false}\n[\"q1\",1,0.25]\n[7,null,3]\n"
        );
        let read = ItemValues::read(text.as_slice(), "v.jsonl").unwrap();
        assert_eq!(read.metrics.len(), 2);
        assert_eq!(read.rows[0].key, "\"q1\"");
        assert_eq!(read.rows[1].values, vec![None, Some(3.0)]);
    }

    #[test]
    fn a_short_line_is_a_located_error() {
        let text = format!(
            "{}[\"q1\"]\n",
            header_line(&[("p", ValueKind::Ratio)], false)
        );
        let error = ItemValues::read(text.as_bytes(), "v.jsonl").unwrap_err();
        let rendered = error.render();
        assert!(rendered.contains("v.jsonl:2"), "{rendered}");
        assert!(rendered.contains("has 1 values"), "{rendered}");
    }
}
