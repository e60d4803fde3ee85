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
//!
//! Version 2 adds what any other metric computed from items needs (an F1, a
//! percentile, `2 * a * b / (a + b)`): the header lists the aggregates those
//! metrics read (`"aggregates":[{"text":"p95(latency)","function":"percentile:95"}]`)
//! and each such metric's formula over them (`"formulas"`, see `ir::formula`),
//! and each line ends with one observation per aggregate: null (the item is not
//! in it), a number, a pair of labels `["yes","no"]`, or a confidence and
//! whether it was correct `[0.8,true]`. A file without such metrics is written
//! as version 1, which older readers read.
//!
//! Version 3 writes an observation once: an aggregate that is also a metric's
//! (`precision_c0`, read by an F1 formula) names that metric's column in the
//! header (`{"text":…,"function":"ratio","metric":0}`) and has no entry of its
//! own on the lines; its observations are the column's contributions (null:
//! not in it). A file where no aggregate is a metric's stays version 2.
//!
//! Version 4 adds each item's slice values, so that `diff` can test a metric
//! per slice value on the items that have it: the header names the slices
//! (`"slices":["category"]`) and each line ends with the item's value of each,
//! as its text (`"refunds"`, `"null"` for none). A file of a spec without
//! slices is written as before.

use std::io::BufRead;
use std::sync::Arc;

use serde::de::{Deserializer as _, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::base::diagnostic::{Diagnostic, Location};
use crate::base::value::push_number;

/// The version the header line carries; a reader refuses a newer one.
pub const ITEM_VALUES_VERSION: u64 = 4;

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

/// An aggregate whose per-item observations a file keeps: its text as the spec
/// writes it and its function's keyword
/// (`library::aggregates::AggregateFn::keyword`), which together match two
/// runs' aggregates ([`ObservedColumn::same_aggregate`]); and the metric column
/// that holds its observations, when a metric folds the same aggregate
/// (version 3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObservedColumn {
    pub text: String,
    pub function: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<usize>,
}

impl ObservedColumn {
    /// Whether two files observe the same aggregate, wherever each keeps it.
    pub fn same_aggregate(&self, other: &ObservedColumn) -> bool {
        self.text == other.text && self.function == other.function
    }
}

/// A metric computed from the observed aggregates (and earlier formulas):
/// `formula` is its op as JSON (`ir::formula`), `empty` the value it takes
/// when its op gives null, `tested` whether it gets an interval and a change
/// of its own (a formula kept only because another one reads it does not).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FormulaColumn {
    pub name: String,
    pub formula: Json,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub empty: Option<f64>,
    pub tested: bool,
}

/// What one item gave one observed aggregate.
#[derive(Debug, Clone, PartialEq)]
pub enum Observation {
    /// Not in the aggregate: filtered out by `where`, or a null.
    Out,
    /// A number, or 1/0 for a condition (`count`, `ratio`).
    Number(f64),
    /// Two labels (`kappa`, `agreement`, the F1 scores, `confusion`), boxed:
    /// a row holds an observation per observed aggregate per item, and a
    /// number (the usual one) then takes 16 bytes instead of 40.
    Labels(Box<(Arc<str>, Arc<str>)>),
    /// A confidence and whether the item was correct (`ece`, `brier`).
    Calibrated(f64, bool),
}

impl Observation {
    pub fn labels(a: Arc<str>, b: Arc<str>) -> Observation {
        Observation::Labels(Box::new((a, b)))
    }

    /// The number, for a number (or a condition's 1 or 0).
    pub fn number(&self) -> Option<f64> {
        match self {
            Observation::Number(x) => Some(*x),
            _ => None,
        }
    }

    /// The JSON text of a row's entry.
    fn push_json(&self, out: &mut Vec<u8>) {
        match self {
            Observation::Out => out.extend_from_slice(b"null"),
            Observation::Number(x) => push_number(out, *x),
            Observation::Labels(labels) => {
                let (a, b) = &**labels;
                let pair = Json::Array(vec![Json::from(a.as_ref()), Json::from(b.as_ref())]);
                out.extend_from_slice(pair.to_string().as_bytes());
            }
            Observation::Calibrated(c, ok) => {
                out.push(b'[');
                push_number(out, *c);
                out.extend_from_slice(if *ok { b",true]" } else { b",false]" });
            }
        }
    }

    fn from_json(value: Json) -> Result<Observation, String> {
        Ok(match value {
            Json::Null => Observation::Out,
            Json::Number(n) => Observation::Number(n.as_f64().unwrap_or(f64::NAN)),
            Json::Array(pair) => match pair.as_slice() {
                [Json::String(a), Json::String(b)] => {
                    Observation::labels(Arc::from(a.as_str()), Arc::from(b.as_str()))
                }
                [Json::Number(c), Json::Bool(ok)] => {
                    Observation::Calibrated(c.as_f64().unwrap_or(f64::NAN), *ok)
                }
                _ => return Err(format!("has an observation that is not a pair of labels or a confidence and a bool: {}", Json::Array(pair))),
            },
            other => return Err(format!("has an observation that is not a number or a pair: {other}")),
        })
    }
}

/// Reads one item line into an [`ItemValues`]: `Ok(Err(..))` for a list
/// whose entries are not what the header names.
struct RowVisitor<'v>(&'v mut ItemValues);

impl<'de> Visitor<'de> for RowVisitor<'_> {
    type Value = Result<(), String>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        self.0.push_entries(seq)
    }
}

#[derive(Debug, Deserialize)]
struct Header {
    item_values: u64,
    metrics: Vec<ValueColumn>,
    #[serde(default)]
    runs: bool,
    #[serde(default)]
    aggregates: Vec<ObservedColumn>,
    #[serde(default)]
    formulas: Vec<FormulaColumn>,
    #[serde(default)]
    slices: Vec<String>,
    #[serde(default)]
    run_id: Option<String>,
}

/// One item's line, borrowed from the file read back.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValueRow<'v> {
    /// The key as JSON text (`"q1"`, `17`, or `null` for an item without a key).
    pub key: &'v str,
    pub run: Option<&'v str>,
    /// Per metric of the header; `None`: the item does not count for it.
    pub values: &'v [Option<f64>],
    /// Per observed aggregate of the header (version 2).
    pub observed: &'v [Observation],
    /// Per slice of the header, the item's value's text (version 4).
    pub slices: &'v [Arc<str>],
}

/// An item-values file read back. Rows are stored flat (one buffer of key
/// texts, one of values, one of observations), so that a million lines are a
/// few allocations, not millions; [`ItemValues::row`] gives one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ItemValues {
    pub metrics: Vec<ValueColumn>,
    pub runs: bool,
    pub aggregates: Vec<ObservedColumn>,
    pub formulas: Vec<FormulaColumn>,
    /// The slices whose values each line ends with (version 4).
    pub slices: Vec<String>,
    /// The `run_id` of the report.json written with it (none before there was one).
    pub run_id: Option<String>,
    keys: String,
    /// Per row: where its key ends in `keys`.
    key_ends: Vec<usize>,
    /// Per row with runs: its run, an index into `run_names`.
    run_of: Vec<u32>,
    run_names: Vec<String>,
    values: Vec<Option<f64>>,
    observed: Vec<Observation>,
    slice_values: Vec<Arc<str>>,
}

/// The header line (with its newline): version 1 unless there are observed
/// aggregates, 3 when one of them is kept in a metric's column (4 with slices,
/// [`header_line_with_slices`]).
pub fn header_line(
    metrics: &[(&str, ValueKind)],
    runs: bool,
    aggregates: &[ObservedColumn],
    formulas: &[FormulaColumn],
    run_id: Option<&str>,
) -> String {
    header_line_with_slices(metrics, runs, aggregates, formulas, &[], run_id)
}

/// The header line of a file whose lines end with the items' values of
/// `slices` (version 4 when there are any).
pub fn header_line_with_slices(
    metrics: &[(&str, ValueKind)],
    runs: bool,
    aggregates: &[ObservedColumn],
    formulas: &[FormulaColumn],
    slices: &[&str],
    run_id: Option<&str>,
) -> String {
    let metrics: Vec<Json> = metrics
        .iter()
        .map(|(name, kind)| serde_json::json!({"name": name, "kind": kind.keyword()}))
        .collect();
    let mut header = if aggregates.is_empty() {
        serde_json::json!({
            "item_values": 1,
            "metrics": metrics,
            "runs": runs,
        })
    } else {
        let version = if aggregates.iter().any(|a| a.metric.is_some()) {
            3
        } else {
            2
        };
        serde_json::json!({
            "item_values": version,
            "metrics": metrics,
            "runs": runs,
            "aggregates": aggregates,
            "formulas": formulas,
        })
    };
    if !slices.is_empty() {
        header["item_values"] = ITEM_VALUES_VERSION.into();
        header["slices"] = slices.into();
    }
    if let Some(id) = run_id {
        header["run_id"] = Json::from(id);
    }
    format!("{header}\n")
}

/// Appends one item's line: `key` is the key's JSON text; `entries` appends
/// the item's contributions and observations, each after a comma (with
/// [`push_value`] and [`push_observation`], or bytes equal to theirs).
pub fn push_row(
    out: &mut Vec<u8>,
    key: &str,
    run: Option<&str>,
    entries: impl FnOnce(&mut Vec<u8>),
) {
    out.push(b'[');
    out.extend_from_slice(key.as_bytes());
    if let Some(run) = run {
        out.push(b',');
        out.extend_from_slice(Json::from(run).to_string().as_bytes());
    }
    entries(out);
    out.extend_from_slice(b"]\n");
}

/// Appends a contribution's entry: `,` and the number, or `,null`.
pub fn push_value(out: &mut Vec<u8>, value: Option<f64>) {
    match value {
        Some(x) => {
            out.push(b',');
            push_number(out, x);
        }
        None => out.extend_from_slice(b",null"),
    }
}

/// The entries [`push_value`] writes for a condition's 0 and 1 and for
/// nothing, indexed by `0`, `1` and `2`: a `count`'s or `ratio`'s column
/// writes them without going through a number.
pub const FLAG_ENTRIES: [&[u8]; 3] = [b",0", b",1", b",null"];

/// Appends an observation's entry: `,` and its JSON text.
pub fn push_observation(out: &mut Vec<u8>, observation: &Observation) {
    out.push(b',');
    observation.push_json(out);
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
                Diagnostic::error(
                    "cannot_read_item_values",
                    format!("cannot read `{file}`: {e}"),
                )
                .at(at(None))
            })?;
            if n == 0 {
                break;
            }
            let bad = |what: String| {
                Diagnostic::error(
                    "invalid_item_values",
                    format!("`{file}`: line {number} {what}"),
                )
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
                if let Some((k, c)) = (header.aggregates.iter().enumerate()).find_map(|(k, a)| {
                    a.metric
                        .filter(|&c| c >= header.metrics.len())
                        .map(|c| (k, c))
                }) {
                    return Err(bad(format!(
                        "is not an item-values header: aggregate {k} is kept in metric column {c}, but there are {} metrics",
                        header.metrics.len()
                    )));
                }
                values.metrics = header.metrics;
                values.runs = header.runs;
                values.aggregates = header.aggregates;
                values.formulas = header.formulas;
                values.slices = header.slices;
                values.run_id = header.run_id;
                header_seen = true;
                continue;
            }
            let mut parser = serde_json::Deserializer::from_str(line);
            let row = parser
                .deserialize_seq(RowVisitor(&mut values))
                .and_then(|row| parser.end().map(|()| row))
                .map_err(|e| bad(format!("is not a JSON list: {e}")))?;
            row.map_err(bad)?;
        }
        Ok(values)
    }

    /// How many item lines the file has.
    pub fn len(&self) -> usize {
        self.key_ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.key_ends.is_empty()
    }

    /// Line `i` after the header.
    pub fn row(&self, i: usize) -> ValueRow<'_> {
        let start = if i == 0 { 0 } else { self.key_ends[i - 1] };
        let (m, k) = (self.metrics.len(), self.aggregates.len());
        let w = self.slices.len();
        ValueRow {
            key: &self.keys[start..self.key_ends[i]],
            run: self
                .run_of
                .get(i)
                .map(|r| self.run_names[*r as usize].as_str()),
            values: &self.values[i * m..(i + 1) * m],
            observed: &self.observed[i * k..(i + 1) * k],
            slices: &self.slice_values[i * w..(i + 1) * w],
        }
    }

    pub fn rows(&self) -> impl Iterator<Item = ValueRow<'_>> {
        (0..self.len()).map(|i| self.row(i))
    }

    /// Checks and appends one line's entries as they are parsed (a line's
    /// JSON list is not built: a million lines of a dozen numbers each were
    /// most of the time it took to read a baseline). The first bad entry is
    /// the error, unless the line has the wrong number of entries.
    fn push_entries<'de, A: SeqAccess<'de>>(
        &mut self,
        mut seq: A,
    ) -> Result<Result<(), String>, A::Error> {
        let lead = 1 + usize::from(self.runs);
        let own = self
            .aggregates
            .iter()
            .filter(|a| a.metric.is_none())
            .count();
        let before_slices = lead + self.metrics.len() + own;
        let expected = before_slices + self.slices.len();
        // The next observed aggregate of the header: those kept in a metric's
        // column are filled in from it, in the header's order, around the
        // line's own observations.
        let mut next_aggregate = 0;
        let mut first_error: Option<String> = None;
        let (mut key, mut run) = (None, None);
        let mut entries = 0;
        let (values_start, observed_start) = (self.values.len(), self.observed.len());
        let slices_start = self.slice_values.len();
        // Every entry is parsed whole, so that a number out of range or a bad
        // escape anywhere in the line is the JSON error it always was; past
        // the expected count, or after a bad entry, it is only counted.
        while let Some(entry) = seq.next_element::<Json>()? {
            let at = entries;
            entries += 1;
            if at >= expected || first_error.is_some() {
                continue;
            }
            let checked = if at == 0 {
                match entry {
                    key_entry @ (Json::String(_) | Json::Number(_) | Json::Null) => {
                        key = Some(key_entry.to_string());
                        Ok(())
                    }
                    other => Err(format!("has a key that is not a string or number: {other}")),
                }
            } else if at < lead {
                match entry {
                    Json::String(name) => {
                        run = Some(name);
                        Ok(())
                    }
                    other => Err(format!("has a run that is not a string: {other}")),
                }
            } else if at < lead + self.metrics.len() {
                let value = match entry {
                    Json::Null => Ok(None),
                    Json::Number(n) => Ok(n.as_f64()),
                    other => Err(format!("has a value that is not a number: {other}")),
                };
                value.map(|value| self.values.push(value))
            } else if at >= before_slices {
                match entry {
                    Json::String(text) => {
                        self.slice_values.push(Arc::from(text));
                        Ok(())
                    }
                    other => Err(format!("has a slice value that is not a string: {other}")),
                }
            } else {
                Observation::from_json(entry).map(|o| {
                    self.push_kept_in_columns(&mut next_aggregate, values_start);
                    self.observed.push(o);
                    next_aggregate += 1;
                })
            };
            first_error = checked.err();
        }
        if entries == expected && first_error.is_none() {
            self.push_kept_in_columns(&mut next_aggregate, values_start);
        }
        // A bad line leaves nothing behind (`read` stops at it anyway).
        if entries != expected || first_error.is_some() {
            self.values.truncate(values_start);
            self.observed.truncate(observed_start);
            self.slice_values.truncate(slices_start);
        }
        if entries != expected {
            let observed = match (own, self.aggregates.len()) {
                (_, 0) => String::new(),
                (own, all) if own == all => format!(" and {own} aggregates"),
                (own, all) => {
                    format!(" and {own} aggregates (of {all}; the others are in metric columns)")
                }
            };
            return Ok(Err(format!(
                "has {entries} values; the header names {} metrics{observed}{}",
                self.metrics.len(),
                if self.runs {
                    " after a key and a run"
                } else {
                    " after a key"
                }
            )));
        }
        if let Some(error) = first_error {
            return Ok(Err(error));
        }
        if let Some(run) = run {
            let index = match self.run_names.iter().position(|r| *r == run) {
                Some(index) => index,
                None => {
                    self.run_names.push(run);
                    self.run_names.len() - 1
                }
            };
            self.run_of.push(index as u32);
        }
        self.keys
            .push_str(&key.expect("a line of the right length has a key"));
        self.key_ends.push(self.keys.len());
        Ok(Ok(()))
    }

    /// Pushes the observations of the aggregates from `next` on that are
    /// kept in a metric's column, up to the next one kept apart: a value of
    /// the row starting at `values_start` (null: not in it).
    fn push_kept_in_columns(&mut self, next: &mut usize, values_start: usize) {
        while let Some(c) = self.aggregates.get(*next).and_then(|a| a.metric) {
            let observation =
                self.values[values_start + c].map_or(Observation::Out, Observation::Number);
            self.observed.push(observation);
            *next += 1;
        }
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
    fn an_observation_is_two_words() {
        // A row holds one per observed aggregate per item: a million items
        // observing 20 aggregates keep 320 MB of them.
        assert!(std::mem::size_of::<Observation>() <= 16);
    }

    #[test]
    fn flag_entries_are_the_values_entries() {
        for (flag, value) in [Some(0.0), Some(1.0), None].into_iter().enumerate() {
            let mut entry = Vec::new();
            push_value(&mut entry, value);
            assert_eq!(FLAG_ENTRIES[flag], entry, "{value:?}");
        }
    }

    #[test]
    fn written_lines_read_back() {
        let mut text = header_line(
            &[("p", ValueKind::Ratio), ("m", ValueKind::Mean)],
            false,
            &[],
            &[],
            None,
        )
        .into_bytes();
        let values = |values: [Option<f64>; 2]| {
            move |out: &mut Vec<u8>| values.iter().for_each(|v| push_value(out, *v))
        };
        push_row(&mut text, "\"q1\"", None, values([Some(1.0), Some(0.25)]));
        push_row(&mut text, "7", None, values([None, Some(3.0)]));
        assert_eq!(
            String::from_utf8(text.clone()).unwrap(),
            "{\"item_values\":1,\"metrics\":[{\"name\":\"p\",\"kind\":\"ratio\"},{\"name\":\"m\",\"kind\":\"mean\"}],\"runs\":false}\n[\"q1\",1,0.25]\n[7,null,3]\n"
        );
        let read = ItemValues::read(text.as_slice(), "v.jsonl").unwrap();
        assert_eq!(read.metrics.len(), 2);
        assert_eq!(read.len(), 2);
        assert_eq!(read.row(0).key, "\"q1\"");
        assert_eq!(read.row(1).key, "7");
        assert_eq!(read.row(1).values, [None, Some(3.0)]);
    }

    #[test]
    fn version_two_keeps_observations_after_the_values() {
        let aggregates = [
            ObservedColumn {
                text: "macro_f1(t, p)".into(),
                function: "macro_f1".into(),
                metric: None,
            },
            ObservedColumn {
                text: "ece(c, ok, 10)".into(),
                function: "ece:10".into(),
                metric: None,
            },
            ObservedColumn {
                text: "p95(x)".into(),
                function: "percentile:95".into(),
                metric: None,
            },
        ];
        let formulas = [FormulaColumn {
            name: "f1".into(),
            formula: serde_json::json!({"aggregate": 0}),
            empty: Some(0.0),
            tested: true,
        }];
        let mut text = header_line(
            &[("p", ValueKind::Ratio)],
            false,
            &aggregates,
            &formulas,
            None,
        )
        .into_bytes();
        let observed = [
            Observation::labels(Arc::from("a \"b\""), Arc::from("c")),
            Observation::Calibrated(0.25, true),
            Observation::Out,
        ];
        push_row(&mut text, "\"q1\"", None, |out| {
            push_value(out, Some(1.0));
            observed.iter().for_each(|o| push_observation(out, o));
        });
        let written = String::from_utf8(text.clone()).unwrap();
        assert!(written.starts_with("{\"item_values\":2,"), "{written}");
        assert!(
            written.ends_with("[\"q1\",1,[\"a \\\"b\\\"\",\"c\"],[0.25,true],null]\n"),
            "{written}"
        );
        let read = ItemValues::read(text.as_slice(), "v.jsonl").unwrap();
        assert_eq!(read.aggregates, aggregates);
        assert_eq!(read.formulas, formulas);
        assert_eq!(read.row(0).values, [Some(1.0)]);
        assert_eq!(read.row(0).observed, observed);
        // An observation of another shape is a located error.
        let bad = format!(
            "{}[\"q1\",1,[1,2],null,null]\n",
            header_line(
                &[("p", ValueKind::Ratio)],
                false,
                &aggregates,
                &formulas,
                None
            )
        );
        let error = ItemValues::read(bad.as_bytes(), "v.jsonl")
            .unwrap_err()
            .render();
        assert!(error.contains("v.jsonl:2"), "{error}");
    }

    #[test]
    fn version_three_takes_an_aggregate_kept_in_a_metric_column_from_it() {
        let observed = |text: &str, metric| ObservedColumn {
            text: text.into(),
            function: "ratio".into(),
            metric,
        };
        // Kept in columns 1 and 0, around one kept apart.
        let aggregates = [
            observed("ratio(b)", Some(1)),
            observed("p95(x)", None),
            observed("ratio(a)", Some(0)),
        ];
        let metrics = [("a", ValueKind::Ratio), ("b", ValueKind::Ratio)];
        let mut text = header_line(&metrics, false, &aggregates, &[], None).into_bytes();
        push_row(&mut text, "\"q1\"", None, |out| {
            [Some(1.0), None].iter().for_each(|v| push_value(out, *v));
            push_observation(out, &Observation::Number(0.5));
        });
        let written = String::from_utf8(text.clone()).unwrap();
        assert!(written.starts_with("{\"item_values\":3,"), "{written}");
        assert!(
            written.contains(r#"{"text":"ratio(b)","function":"ratio","metric":1}"#),
            "{written}"
        );
        assert!(written.ends_with("[\"q1\",1,null,0.5]\n"), "{written}");
        let read = ItemValues::read(text.as_slice(), "v.jsonl").unwrap();
        assert_eq!(read.aggregates, aggregates);
        assert_eq!(
            read.row(0).observed,
            [
                Observation::Out,
                Observation::Number(0.5),
                Observation::Number(1.0)
            ]
        );
        // Matched across files by text and function, wherever each keeps it.
        assert!(aggregates[0].same_aggregate(&observed("ratio(b)", None)));
        assert!(!aggregates[0].same_aggregate(&observed("ratio(a)", Some(1))));
        // A line with an entry for a shared aggregate is the wrong length.
        let long = format!(
            "{}[\"q1\",1,null,0.5,null]\n",
            header_line(&metrics, false, &aggregates, &[], None)
        );
        let error = ItemValues::read(long.as_bytes(), "v.jsonl")
            .unwrap_err()
            .render();
        assert!(error.contains("the header names 2 metrics and 1 aggregates (of 3; the others are in metric columns)"), "{error}");
        // A column past the metrics is a header error, not a panic.
        let bad = [observed("ratio(a)", Some(2))];
        let text = format!(
            "{}[\"q1\",1,null]\n",
            header_line(&metrics, false, &bad, &[], None)
        );
        let error = ItemValues::read(text.as_bytes(), "v.jsonl")
            .unwrap_err()
            .render();
        assert!(
            error.contains("aggregate 0 is kept in metric column 2, but there are 2 metrics"),
            "{error}"
        );
        assert!(error.contains("v.jsonl:1"), "{error}");
    }

    #[test]
    fn a_bad_entry_is_named_unless_the_line_has_the_wrong_length() {
        let header = header_line(&[("p", ValueKind::Ratio)], true, &[], &[], None);
        let error = |line: &str| {
            let text = format!("{header}{line}\n");
            ItemValues::read(text.as_bytes(), "v.jsonl")
                .unwrap_err()
                .render()
        };
        for (line, says) in [
            (
                r#"["q1","a","x"]"#,
                "has a value that is not a number: \"x\"",
            ),
            (r#"["q1",7,1]"#, "has a run that is not a string: 7"),
            (
                r#"[[1],"a",1]"#,
                "has a key that is not a string or number: [1]",
            ),
            (
                r#"["q1","a","x",2]"#,
                "has 4 values; the header names 1 metrics after a key and a run",
            ),
            (r#"["q1","a",1] x"#, "is not a JSON list"),
            (r#"["q1","a",1,{"#, "is not a JSON list"),
            (
                r#"{"q1":1}"#,
                "is not a JSON list: invalid type: map, expected a sequence",
            ),
            // Past the expected count, or after a bad entry, entries are still
            // parsed whole: a JSON error wins, as it did.
            (
                r#"["q1","a",1,1e400]"#,
                "is not a JSON list: number out of range",
            ),
            (
                r#"["q1","a","x",1e400]"#,
                "is not a JSON list: number out of range",
            ),
        ] {
            let rendered = error(line);
            assert!(rendered.contains(says), "{line}: {rendered}");
            assert!(rendered.contains("v.jsonl:2"), "{rendered}");
        }
        let text = format!("{header}[\"q1\",\"a\",1]\n[2,\"b\",null]\n[\"q3\",\"a\",0]\n");
        let read = ItemValues::read(text.as_bytes(), "v.jsonl").unwrap();
        let expected = [
            ("\"q1\"", Some("a"), Some(1.0)),
            ("2", Some("b"), None),
            ("\"q3\"", Some("a"), Some(0.0)),
        ];
        assert_eq!(read.len(), expected.len());
        for (row, (key, run, value)) in read.rows().zip(expected) {
            assert_eq!((row.key, row.run, row.values), (key, run, &[value][..]));
        }
    }

    #[test]
    fn a_short_line_is_a_located_error() {
        let text = format!(
            "{}[\"q1\"]\n",
            header_line(&[("p", ValueKind::Ratio)], false, &[], &[], None)
        );
        let error = ItemValues::read(text.as_bytes(), "v.jsonl").unwrap_err();
        let rendered = error.render();
        assert!(rendered.contains("v.jsonl:2"), "{rendered}");
        assert!(rendered.contains("has 1 values"), "{rendered}");
    }
}
