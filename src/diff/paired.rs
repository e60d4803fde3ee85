//! Paired tests between the two runs of a diff, from the item-values.jsonl
//! beside each report: a metric `NAME` (or `NAME@RUN`) present as a column in
//! both files, of one kind, is tested on the items both share, as `--baseline`
//! tests it (`eval::stats`). Items are paired once per run and reused for every
//! metric. Slice values are not tested.

use std::collections::BTreeMap;

use crate::eval::stats::{change, ChangeTest, Pairing};
use crate::report_model::item_values::ItemValues;

/// The level of the change intervals a diff shows.
pub const DIFF_CONFIDENCE: f64 = crate::plan::DEFAULT_CONFIDENCE;

/// The two runs' item values, with their items paired per run as needed.
pub struct Paired<'v> {
    old: Option<&'v ItemValues>,
    new: Option<&'v ItemValues>,
    /// Per run (`None`: no runs): the rows of each side in it, and their pairing.
    runs: BTreeMap<Option<String>, (Vec<usize>, Vec<usize>, Pairing)>,
}

impl<'v> Paired<'v> {
    pub fn new(old: Option<&'v ItemValues>, new: Option<&'v ItemValues>) -> Self {
        Paired {
            old,
            new,
            runs: BTreeMap::new(),
        }
    }

    /// The test of metric `name` (as a report lists it), when both runs kept it.
    pub fn test(&mut self, name: &str) -> Option<ChangeTest> {
        let (old, new) = (self.old?, self.new?);
        if name.contains('[') {
            return None;
        }
        let (metric, run) = match name.split_once('@') {
            Some((metric, run)) => (metric, Some(run)),
            None => (name, None),
        };
        let (a, b) = (old.column(metric)?, new.column(metric)?);
        let kind = new.metrics[b].kind;
        if old.metrics[a].kind != kind {
            return None;
        }
        let (old_rows, new_rows, pairing) =
            self.runs.entry(run.map(str::to_string)).or_insert_with(|| {
                let rows = |values: &ItemValues| -> Vec<usize> {
                    (0..values.rows.len())
                        .filter(|&i| values.rows[i].run.as_deref() == run)
                        .collect()
                };
                let (old_rows, new_rows) = (rows(old), rows(new));
                let keys = |values: &'v ItemValues, rows: &[usize]| -> Vec<Option<&'v str>> {
                    rows.iter()
                        .map(|&i| &values.rows[i].key)
                        .map(|key| (key != "null").then_some(key.as_str()))
                        .collect()
                };
                let pairing = Pairing::new(
                    keys(new, &new_rows).into_iter(),
                    keys(old, &old_rows).into_iter(),
                );
                (old_rows, new_rows, pairing)
            });
        let column = |values: &ItemValues, rows: &[usize], c: usize| -> Vec<Option<f64>> {
            rows.iter().map(|&i| values.rows[i].values[c]).collect()
        };
        let (x, y) = (column(old, old_rows, a), column(new, new_rows, b));
        change(kind, pairing, &y, &x, DIFF_CONFIDENCE, name)
    }
}
