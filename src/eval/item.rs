//! Items: what one chunk of the items dataset contributes, item by item.

use std::collections::hash_map::Entry;
use std::ops::ControlFlow;

use crate::base::value::Key;
use crate::data::{validate, Flow};
use crate::eval::error::EvalError;
use crate::eval::item_lines::LineLimit;
use crate::eval::keys::{duplicate_error, key_of, FastMap, SeenKeys};
use crate::eval::lookup::Lookup;
use crate::eval::score::{ItemFailure, Roles, Scorer};
use crate::eval::state::errors::ErrorPlace;
use crate::eval::state::RunState;
use crate::ir::Record;
use crate::plan::{DatasetPlan, Plan};
use crate::spec::{Duplicates, Join};

/// What one chunk of items contributes: its items scored and folded into a
/// run's partial state, and what the join saw of keys and lookups.
pub(super) struct ItemChunk<'p, 'd> {
    pub(super) plan: &'p Plan,
    /// The items dataset as read in this run.
    pub(super) dataset: &'d DatasetPlan,
    pub(super) scorer: Scorer<'p>,
    /// What the chunk's items give the run.
    pub(super) run: RunState<'p>,
    /// Per lookup: which records an item matched, and how many items missed it.
    pub(super) matched: Vec<Vec<bool>>,
    pub(super) missing: Vec<usize>,
    pub(super) skipped: Vec<usize>,
    pub(super) keyless: usize,
    /// `duplicates: error`: each key's first line in this chunk, to find repeats
    /// within it (a stop) and across chunks (when merging).
    pub(super) seen: SeenKeys,
    /// `duplicates: first`/`last` need every earlier key: one chunk only.
    pub(super) first_lines: FastMap<Key, (u32, usize)>,
    pub(super) buffered: Vec<(Option<Key>, Record)>,
    pub(super) duplicates: usize,
    /// The current item's place in file order ([`place`]), or its number
    /// among all the items when a streamed join folds it.
    pub(super) ordinal: u64,
    /// The last item read, its line and place.
    last_place: (u32, u64),
    /// Every record is kept in `buffered` and scored later (a streamed join
    /// scores items as the other dataset's records arrive); a repeated key is
    /// left for the caller to find under `duplicates: error`.
    pub(super) defer: bool,
}

impl<'p, 'd> ItemChunk<'p, 'd> {
    pub(super) fn new(
        plan: &'p Plan,
        roles: &'p Roles,
        dataset: &'d DatasetPlan,
        lookups: &[&Lookup],
        limit: LineLimit,
    ) -> Self {
        Self {
            plan,
            dataset,
            scorer: Scorer::new(plan, roles),
            run: RunState::new(plan, roles, limit),
            matched: lookups
                .iter()
                .map(|l| vec![false; l.records.len()])
                .collect(),
            missing: vec![0; lookups.len()],
            skipped: vec![0; lookups.len()],
            keyless: 0,
            seen: SeenKeys::default(),
            first_lines: FastMap::default(),
            buffered: Vec::new(),
            duplicates: 0,
            ordinal: 0,
            last_place: (0, 0),
            defer: false,
        }
    }

    /// Reads one record of the items dataset; breaks once this chunk has as many
    /// evaluation errors as are shown.
    pub(super) fn record(&mut self, lookups: &[&Lookup], record: Record) -> Flow {
        let dataset = self.dataset;
        validate(
            dataset,
            self.plan.items_dataset,
            &record,
            &self.plan.locations,
        )?;
        let key = key_of(
            dataset,
            self.plan.items_dataset,
            &record,
            &self.plan.locations,
        )?;
        match &key {
            None => self.keyless += 1,
            Some(key) => match dataset.duplicates {
                Duplicates::Keep => {}
                // A deferred read's caller finds repeats in its index of every key.
                Duplicates::Error if self.defer => {}
                Duplicates::Error => {
                    if let Some(first) = self.seen.insert(key, record.line) {
                        return Err(duplicate_error(dataset, key, first, record.line));
                    }
                }
                Duplicates::First | Duplicates::Last => match self.first_lines.entry(key.clone()) {
                    Entry::Vacant(slot) => {
                        slot.insert((record.line, self.buffered.len()));
                    }
                    Entry::Occupied(slot) => {
                        self.duplicates += 1;
                        if dataset.duplicates == Duplicates::Last {
                            self.buffered[slot.get().1].1 = record;
                        }
                        return Ok(ControlFlow::Continue(()));
                    }
                },
            },
        }
        if self.defer || dataset.duplicates == Duplicates::Last {
            // Numbered by the fold that scores them.
            self.buffered.push((key, record));
            return Ok(ControlFlow::Continue(()));
        }
        self.ordinal = place(record.line, &mut self.last_place);
        self.item(lookups, key.as_ref(), &record);
        Ok(if self.run.errors.is_full() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        })
    }

    pub(super) fn item(&mut self, lookups: &[&Lookup], key: Option<&Key>, record: &Record) {
        let plan = self.plan;
        let found: Vec<Option<usize>> = lookups
            .iter()
            .map(|l| key.and_then(|k| l.index.get(k)).copied())
            .collect();
        let mut skip = false;
        for (index, position) in found.iter().enumerate() {
            match position {
                Some(position) => self.matched[index][*position] = true,
                None => {
                    self.missing[index] += 1;
                    if plan.datasets[index].join == Join::Inner {
                        self.skipped[index] += 1;
                        skip = true;
                    }
                }
            }
        }
        if skip {
            return;
        }
        let mut records: Vec<Option<&Record>> = found
            .iter()
            .zip(lookups)
            .map(|(p, l)| p.map(|p| &l.records[p]))
            .collect();
        records.push(Some(record));
        if let Err(failure) = self.evaluate(&records, key, record.line) {
            let (at, within, error) = *failure;
            let sources: Vec<String> = plan
                .datasets
                .iter()
                .zip(&records)
                .filter_map(|(d, r)| r.map(|r| format!("{}:{}", d.display_path, r.line)))
                .collect();
            let kind = EvalError::ItemNotEvaluated {
                item: key.cloned(),
                sources,
                within,
                error,
            };
            let diagnostic = kind.report(&plan.locations).at(at);
            let place = ErrorPlace::record(
                plan.items_dataset.index(),
                record.line as usize,
                self.ordinal,
            );
            self.run.errors.failure(place, diagnostic);
        }
    }

    /// Scores the item and folds it in at once (items read in order).
    pub(super) fn evaluate(
        &mut self,
        records: &[Option<&Record>],
        key: Option<&Key>,
        line: u32,
    ) -> Result<(), Box<ItemFailure>> {
        self.scorer.score(records)?;
        let score = &self.scorer.score;
        self.run.fold(score, key, line, self.ordinal, false)
    }
}

/// A record's place in its file's order, known where it is read: its line,
/// then its number among the records on that line (a JSON array's elements
/// may share one), counted from `last` (the place of the record before it).
/// Records on one line are never split between chunks, so places from
/// different chunks compare as the records' order in the file.
fn place(line: u32, last: &mut (u32, u64)) -> u64 {
    let base = u64::from(line) << 32;
    let place = match *last {
        (last_line, last_place) if last_line == line && last_place >= base => last_place + 1,
        _ => base,
    };
    *last = (line, place);
    place
}
