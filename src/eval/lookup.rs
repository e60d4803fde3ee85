//! Looked-up datasets: read into a keyed table, one record per key.

use std::collections::hash_map::Entry;
use std::ops::ControlFlow;

use crate::base::diagnostic::Diagnostic;
use crate::base::value::Key;
use crate::data::{read_chunked, validate, Chunk};
use crate::eval::keys::{duplicate_error, key_of, stop_line, FastMap};
use crate::eval::outcome::DatasetOutcome;
use crate::ir::{DatasetId, Record};
use crate::plan::{DatasetPlan, Plan};
use crate::spec::Duplicates;

/// A keyed table: one record per key, in first-occurrence order.
#[derive(Default)]
pub(super) struct Lookup {
    pub(super) records: Vec<Record>,
    pub(super) keys: Vec<Key>,
    pub(super) index: FastMap<Key, usize>,
    pub(super) keyless: usize,
    pub(super) duplicates: usize,
}

impl Lookup {
    /// Adds a record under the duplicates policy; `error` stops at a repeated key.
    pub(super) fn add(
        &mut self,
        dataset: &DatasetPlan,
        key: Key,
        record: Record,
    ) -> Result<(), Diagnostic> {
        match self.index.entry(key) {
            Entry::Vacant(slot) => {
                self.keys.push(slot.key().clone());
                slot.insert(self.records.len());
                self.records.push(record);
            }
            Entry::Occupied(slot) => {
                self.duplicates += 1;
                let existing = &mut self.records[*slot.get()];
                match dataset.duplicates {
                    Duplicates::Error => {
                        return Err(duplicate_error(
                            dataset,
                            slot.key(),
                            existing.line,
                            record.line,
                        ))
                    }
                    Duplicates::First | Duplicates::Keep => {}
                    Duplicates::Last => *existing = record,
                }
            }
        }
        Ok(())
    }
}

/// Reads a looked-up dataset (`dataset_id` in `plan`; read from its own file
/// in a run) into its keyed table.
pub(super) fn load_lookup(
    plan: &Plan,
    dataset: &DatasetPlan,
    dataset_id: DatasetId,
    threads: usize,
    outcome: &mut DatasetOutcome,
) -> Result<Lookup, Diagnostic> {
    let (chunks, read) = read_chunked(dataset, threads, Lookup::default, |table, record| {
        validate(dataset, dataset_id, &record, &plan.locations)?;
        match key_of(dataset, dataset_id, &record, &plan.locations)? {
            Some(key) => table.add(dataset, key, record)?,
            None => table.keyless += 1,
        }
        Ok(ControlFlow::Continue(()))
    })?;
    let mut chunks = chunks.into_iter();
    let Chunk {
        state: mut table,
        stop,
    } = chunks.next().expect("at least one chunk");
    if let Some(stop) = stop {
        return Err(stop);
    }
    for Chunk { state: part, stop } in chunks {
        // The first repeated key across chunks, if it comes before this chunk's own stop.
        if dataset.duplicates == Duplicates::Error {
            let repeated = part
                .keys
                .iter()
                .zip(&part.records)
                .filter_map(|(key, record)| {
                    table
                        .index
                        .get(key)
                        .map(|&i| (key, table.records[i].line, record.line))
                })
                .min_by_key(|&(_, _, line)| line);
            if let Some((key, first, again)) = repeated {
                if stop
                    .as_ref()
                    .is_none_or(|s| (again as usize) < stop_line(s))
                {
                    return Err(duplicate_error(dataset, key, first, again));
                }
            }
        }
        if let Some(stop) = stop {
            return Err(stop);
        }
        table.keyless += part.keyless;
        table.duplicates += part.duplicates;
        for (key, record) in part.keys.into_iter().zip(part.records) {
            table.add(dataset, key, record)?;
        }
    }
    outcome.read = read;
    outcome.keyless = table.keyless;
    outcome.duplicates = table.duplicates;
    // The key list only served the merge; the index keeps the keys.
    table.keys = Vec::new();
    Ok(table)
}
