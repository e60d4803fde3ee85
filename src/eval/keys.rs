//! Keys: how a record's key is computed, and the errors about keys that both
//! looked-up datasets and the items dataset report.

use std::collections::HashMap;

use crate::base::diagnostic::{Diagnostic, Location};
use crate::base::value::Key;
use crate::eval::error::EvalError;
use crate::ir::{evaluate_on_record, DatasetId, ExprLocations, Record, RuntimeError};
use crate::plan::DatasetPlan;

/// Join tables hash millions of keys; foldhash is several times faster than SipHash,
/// and a fixed seed keeps runs reproducible (no output depends on table order).
pub(super) type FastMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;

/// A record's key; `locations` (the plan's) places a key that fails.
pub(super) fn key_of(
    dataset: &DatasetPlan,
    dataset_id: DatasetId,
    record: &Record,
    locations: &ExprLocations,
) -> Result<Option<Key>, Diagnostic> {
    let value = evaluate_on_record(&dataset.key, dataset_id, record)
        .and_then(|v| Key::of(&v).map_err(|e| RuntimeError::from(e).or_at(Some(dataset.key_at))));
    value.map_err(|error| {
        let kind = EvalError::KeyNotEvaluated {
            dataset: dataset.name.clone(),
            key: dataset.key_text.clone(),
            error,
        };
        kind.report(locations).at(Location::in_data(
            &dataset.display_path,
            record.line as usize,
            None,
        ))
    })
}

pub(super) fn duplicate_error(
    dataset: &DatasetPlan,
    key: &Key,
    first: u32,
    again: u32,
) -> Diagnostic {
    let kind = EvalError::DuplicateKey {
        dataset: dataset.name.clone(),
        key: key.clone(),
        first_line: first,
    };
    Diagnostic::of(&kind).at(Location::in_data(
        &dataset.display_path,
        again as usize,
        None,
    ))
}

pub(super) fn stop_line(diagnostic: &Diagnostic) -> usize {
    diagnostic.location.as_ref().map_or(usize::MAX, |l| l.line)
}
