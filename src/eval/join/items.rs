//! Reading the items dataset, for every join: each record checked and keyed,
//! its place in the file noted, and its key's repeats handled by the
//! duplicates policy. A chunk of the file is read on a thread of its own
//! ([`ItemKeys`]); a policy that needs every earlier key before an item can
//! be scored (`first`, `last`) or a join that scores items later keeps them
//! ([`Held`]), and [`resolve`] settles repeats across chunks in file order.

use std::collections::hash_map::Entry;

use crate::base::diagnostic::Diagnostic;
use crate::base::value::Key;
use crate::data::validate;
use crate::eval::join::duplicates::{on_repeat, Repeat, Role};
use crate::eval::join::keys::{duplicate_error, key_of, FastMap, SeenKeys};
use crate::eval::physical::Bucket;
use crate::ir::Record;
use crate::plan::{DatasetPlan, Plan};

/// An item read and kept to be scored later: its key, its record, and its
/// place in the file (see [`place`]); under `last`, the last record of its
/// key at the first one's place.
pub(in crate::eval) struct Held {
    pub(in crate::eval) key: Option<Key>,
    pub(in crate::eval) record: Record,
    pub(in crate::eval) place: u64,
}

/// What reading one chunk of the items dataset notes about its keys.
pub(in crate::eval) struct ItemKeys {
    repeat: Repeat,
    /// The keys read; items of others are skipped.
    bucket: Option<Bucket>,
    /// Every item is held, not only those the policy makes wait.
    hold_all: bool,
    pub(in crate::eval) keyless: usize,
    /// Records dropped or replaced under the policy, within the chunk.
    pub(in crate::eval) duplicates: usize,
    /// `duplicates: error`: each key's first line in this chunk, to find
    /// repeats within it (a stop) and across chunks.
    pub(in crate::eval) seen: SeenKeys,
    /// `first`/`last`: where in `held` each key's item is.
    held_at: FastMap<Key, usize>,
    pub(in crate::eval) held: Vec<Held>,
    /// The last record read: its line and place.
    last_place: (u32, u64),
}

/// A record read: to be scored now, at its place, held, or not this
/// evaluation's (another bucket's).
pub(in crate::eval) enum Read {
    Now(Option<Key>, Record, u64),
    Held,
    Skipped,
}

impl ItemKeys {
    /// A chunk's notes for `dataset` (the items dataset as read in this
    /// run); `hold_all`: every item is held to be scored later.
    pub(in crate::eval) fn new(
        dataset: &DatasetPlan,
        hold_all: bool,
        bucket: Option<Bucket>,
    ) -> Self {
        ItemKeys {
            repeat: on_repeat(dataset.duplicates, Role::Items),
            bucket,
            hold_all,
            keyless: 0,
            duplicates: 0,
            seen: SeenKeys::default(),
            held_at: FastMap::default(),
            held: Vec::new(),
            last_place: (0, 0),
        }
    }

    /// Checks and keys one record of the items dataset.
    pub(in crate::eval) fn read(
        &mut self,
        plan: &Plan,
        dataset: &DatasetPlan,
        record: Record,
    ) -> Result<Read, Diagnostic> {
        let id = plan.items_dataset;
        validate(dataset, id, &record, &plan.locations)?;
        let key = key_of(dataset, id, &record, &plan.locations)?;
        let place = place(record.line, &mut self.last_place);
        if self.bucket.is_some_and(|b| !b.covers(key.as_ref())) {
            return Ok(Read::Skipped);
        }
        let Some(k) = &key else {
            self.keyless += 1;
            return Ok(self.now_or_held(key, record, place));
        };
        match self.repeat {
            Repeat::Both => {}
            // Held items' repeats are found across every chunk by `resolve`.
            Repeat::Error if self.hold_all => {}
            Repeat::Error => {
                if let Some(first) = self.seen.insert(k, record.line) {
                    return Err(duplicate_error(dataset, k, first, record.line));
                }
            }
            Repeat::Earlier | Repeat::Later => match self.held_at.entry(k.clone()) {
                Entry::Vacant(slot) => {
                    slot.insert(self.held.len());
                    self.held.push(Held { key, record, place });
                    return Ok(Read::Held);
                }
                Entry::Occupied(slot) => {
                    self.duplicates += 1;
                    if self.repeat == Repeat::Later {
                        self.held[*slot.get()].record = record;
                    }
                    return Ok(Read::Held);
                }
            },
        }
        Ok(self.now_or_held(key, record, place))
    }

    fn now_or_held(&mut self, key: Option<Key>, record: Record, place: u64) -> Read {
        // Under `first`/`last` an item without a key waits too, so that the
        // items are scored in file order.
        if self.hold_all || matches!(self.repeat, Repeat::Earlier | Repeat::Later) {
            self.held.push(Held { key, record, place });
            return Read::Held;
        }
        Read::Now(key, record, place)
    }
}

/// The held items of every chunk (in file order) as one list in file order,
/// repeated keys settled across chunks as within them under `first` and
/// `last`: how many more records were dropped or replaced. Under `error` and
/// `keep` every item is kept: the index of the items finds a repeat.
pub(in crate::eval) fn resolve(dataset: &DatasetPlan, chunks: Vec<ItemKeys>) -> (Vec<Held>, usize) {
    let repeat = on_repeat(dataset.duplicates, Role::Items);
    let total = chunks.iter().map(|c| c.held.len()).sum();
    let mut all: Vec<Held> = Vec::with_capacity(total);
    if !matches!(repeat, Repeat::Earlier | Repeat::Later) {
        chunks.into_iter().for_each(|chunk| all.extend(chunk.held));
        return (all, 0);
    }
    let mut duplicates = 0;
    let mut at: FastMap<Key, usize> = FastMap::default();
    for chunk in chunks {
        for held in chunk.held {
            let Some(key) = &held.key else {
                all.push(held);
                continue;
            };
            match at.entry(key.clone()) {
                Entry::Vacant(slot) => {
                    slot.insert(all.len());
                    all.push(held);
                }
                Entry::Occupied(slot) => {
                    duplicates += 1;
                    if repeat == Repeat::Later {
                        all[*slot.get()].record = held.record;
                    }
                }
            }
        }
    }
    (all, duplicates)
}

/// A record's place in its file's order, known where it is read: its line,
/// then its number among the records on that line (a JSON array's elements
/// may share one), counted from `last` (the place of the record before it).
/// Records on one line are never split between chunks, so places from
/// different chunks compare as the records' order in the file.
pub(in crate::eval) fn place(line: u32, last: &mut (u32, u64)) -> u64 {
    let base = u64::from(line) << 32;
    let place = match *last {
        (last_line, last_place) if last_line == line && last_place >= base => last_place + 1,
        _ => base,
    };
    *last = (line, place);
    place
}
