//! Looked-up datasets for the table join: read into a keyed table, one record
//! per key, repeated keys settled by the duplicates policy.

use std::collections::hash_map::Entry;
use std::ops::ControlFlow;

use crate::base::diagnostic::Diagnostic;
use crate::base::value::Key;
use crate::data::{read_chunked, validate, Chunk};
use crate::eval::join::duplicates::{on_repeat, Repeat, Role};
use crate::eval::join::keys::{duplicate_error, key_of, stop_line, FastMap};
use crate::eval::outcome::DatasetOutcome;
use crate::eval::physical::Bucket;
use crate::ir::{DatasetId, Record};
use crate::plan::{DatasetPlan, Plan};

/// A keyed table: one record per key, in first-occurrence order.
#[derive(Default)]
pub(in crate::eval) struct Lookup {
    records: Vec<Record>,
    keys: Vec<Key>,
    index: FastMap<Key, usize>,
    keyless: usize,
    duplicates: usize,
}

impl Lookup {
    /// Records in the table: one per key.
    pub(in crate::eval) fn len(&self) -> usize {
        self.records.len()
    }

    /// Where the record of `key` is, if there is one.
    pub(in crate::eval) fn position(&self, key: &Key) -> Option<usize> {
        self.index.get(key).copied()
    }

    pub(in crate::eval) fn record(&self, position: usize) -> &Record {
        &self.records[position]
    }

    /// Adds a record under the duplicates policy; `error` stops at a repeated key.
    fn add(&mut self, dataset: &DatasetPlan, key: Key, record: Record) -> Result<(), Diagnostic> {
        match self.index.entry(key) {
            Entry::Vacant(slot) => {
                self.keys.push(slot.key().clone());
                slot.insert(self.records.len());
                self.records.push(record);
            }
            Entry::Occupied(slot) => {
                let existing = &mut self.records[*slot.get()];
                let repeat = on_repeat(dataset.duplicates, Role::LookedUp);
                self.duplicates += usize::from(repeat.counts());
                match repeat {
                    Repeat::Error => {
                        return Err(duplicate_error(
                            dataset,
                            slot.key(),
                            existing.line,
                            record.line,
                        ))
                    }
                    Repeat::Later => *existing = record,
                    Repeat::Earlier | Repeat::Both => {}
                }
            }
        }
        Ok(())
    }
}

/// Reads a looked-up dataset (`dataset_id` in `plan`; read from its own file
/// in a run) into its keyed table.
pub(in crate::eval) fn load_lookup(
    plan: &Plan,
    dataset: &DatasetPlan,
    dataset_id: DatasetId,
    (threads, bucket): (usize, Option<Bucket>),
    outcome: &mut DatasetOutcome,
) -> Result<Lookup, Diagnostic> {
    let (chunks, read) = read_chunked(dataset, threads, Lookup::default, |table, record| {
        validate(dataset, dataset_id, &record, &plan.locations)?;
        let key = key_of(dataset, dataset_id, &record, &plan.locations)?;
        if bucket.is_some_and(|b| !b.covers(key.as_ref())) {
            return Ok(ControlFlow::Continue(()));
        }
        match key {
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
        if on_repeat(dataset.duplicates, Role::LookedUp) == Repeat::Error {
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
