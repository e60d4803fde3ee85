//! Paired tests between the two runs of a diff, from the item-values.jsonl
//! beside each report: a metric `NAME` (or `NAME@RUN`) present as a column in
//! both files, of one kind, is tested on the items both share, as `--baseline`
//! tests it (`eval::stats`). Slice values are not tested.

use crate::eval::stats::{change, ChangeTest, Side};
use crate::report_model::item_values::ItemValues;

/// The level of the change intervals a diff shows.
pub const DIFF_CONFIDENCE: f64 = crate::plan::DEFAULT_CONFIDENCE;

/// The test of metric `name` (as a report lists it), when both runs kept it.
pub fn paired(
    name: &str,
    old: Option<&ItemValues>,
    new: Option<&ItemValues>,
) -> Option<ChangeTest> {
    let (old, new) = (old?, new?);
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
    change(
        kind,
        &side(new, b, run),
        &side(old, a, run),
        DIFF_CONFIDENCE,
        name,
    )
}

/// One run's items of one column: key (`None`: no key) and contribution.
fn side<'v>(values: &'v ItemValues, column: usize, run: Option<&str>) -> Side<'v> {
    values
        .rows
        .iter()
        .filter(|row| row.run.as_deref() == run)
        .map(|row| {
            (
                (row.key != "null").then_some(row.key.as_str()),
                row.values[column],
            )
        })
        .collect()
}
