//! Keys: how a record's key is computed, and the errors about keys that both
//! looked-up datasets and the items dataset report.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use crate::base::diagnostic::{Diagnostic, Location};
use crate::base::value::Key;
use crate::eval::error::EvalError;
use crate::ir::{evaluate_on_record, DatasetId, ExprLocations, Record, RuntimeError};
use crate::plan::DatasetPlan;

/// Join tables hash millions of keys; foldhash is several times faster than SipHash,
/// and a fixed seed keeps runs reproducible (no output depends on table order).
pub(in crate::eval) type FastMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;

/// A record's key; `locations` (the plan's) places a key that fails.
pub(in crate::eval) fn key_of(
    dataset: &DatasetPlan,
    dataset_id: DatasetId,
    record: &Record,
    locations: &ExprLocations,
) -> Result<Option<Key>, Diagnostic> {
    let value = evaluate_on_record(&dataset.key, dataset_id, record).and_then(|v| {
        Key::from_value(v).map_err(|e| RuntimeError::from(e).or_at(Some(dataset.key_at)))
    });
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

pub(in crate::eval) fn duplicate_error(
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

/// The keys a chunk of the items dataset has read, each with the line it was
/// first read on: how a key read twice is found under `duplicates: error`.
/// While every key is greater than the one before (ids written in order, the
/// usual file) none can repeat, so keys are only appended: a table probed and
/// written at a random place per record was most of what the check cost (a
/// million keys do not fit in a cache). The first key out of order turns them
/// into the table.
#[derive(Debug)]
pub(in crate::eval) enum SeenKeys {
    Increasing(Vec<(Key, u32)>),
    Table(FastMap<Key, u32>),
}

impl Default for SeenKeys {
    fn default() -> Self {
        SeenKeys::Increasing(Vec::new())
    }
}

impl SeenKeys {
    /// Marks `key` read on `line`: the line it was first read on, if it was.
    pub(in crate::eval) fn insert(&mut self, key: &Key, line: u32) -> Option<u32> {
        match self {
            SeenKeys::Increasing(keys) => {
                if keys.last().is_none_or(|(last, _)| last < key) {
                    keys.push((key.clone(), line));
                    return None;
                }
                *self = SeenKeys::Table(std::mem::take(keys).into_iter().collect());
                self.insert(key, line)
            }
            SeenKeys::Table(table) => match table.entry(key.clone()) {
                Entry::Vacant(slot) => {
                    slot.insert(line);
                    None
                }
                Entry::Occupied(slot) => Some(*slot.get()),
            },
        }
    }

    /// The line `key` was first read on, if it was.
    pub(in crate::eval) fn get(&self, key: &Key) -> Option<u32> {
        match self {
            SeenKeys::Increasing(keys) => keys
                .binary_search_by(|(k, _)| k.cmp(key))
                .ok()
                .map(|i| keys[i].1),
            SeenKeys::Table(table) => table.get(key).copied(),
        }
    }

    /// Every key with its line, in no particular order.
    pub(in crate::eval) fn iter(&self) -> Box<dyn Iterator<Item = (&Key, u32)> + '_> {
        match self {
            SeenKeys::Increasing(keys) => Box::new(keys.iter().map(|(k, line)| (k, *line))),
            SeenKeys::Table(table) => Box::new(table.iter().map(|(k, line)| (k, *line))),
        }
    }

    /// The least and the greatest key, when every key was greater than the
    /// one before; `None` for none or for keys out of order.
    fn bounds(&self) -> Option<(&Key, &Key)> {
        match self {
            SeenKeys::Increasing(keys) => Some((&keys.first()?.0, &keys.last()?.0)),
            SeenKeys::Table(_) => None,
        }
    }

    fn is_empty(&self) -> bool {
        match self {
            SeenKeys::Increasing(keys) => keys.is_empty(),
            SeenKeys::Table(table) => table.is_empty(),
        }
    }

    /// The first of these keys (by line) that an earlier chunk also read:
    /// its line here, its line there, and the key.
    pub(in crate::eval) fn first_repeat_of(
        &self,
        earlier: &[&SeenKeys],
    ) -> Option<(u32, u32, &Key)> {
        // Keys increasing through the chunks (a file sorted by its key): no
        // earlier chunk can hold one of these.
        let after = |(least, _): (&Key, &Key)| {
            earlier.iter().all(|e| match e.bounds() {
                Some((_, greatest)) => greatest < least,
                None => e.is_empty(),
            })
        };
        if self.bounds().is_some_and(after) {
            return None;
        }
        let first_line = |key: &Key| earlier.iter().find_map(|e| e.get(key));
        self.iter()
            .filter_map(|(key, line)| first_line(key).map(|first| (line, first, key)))
            .min_by_key(|&(line, _, _)| line)
    }
}

pub(in crate::eval) fn stop_line(diagnostic: &Diagnostic) -> usize {
    diagnostic.location.as_ref().map_or(usize::MAX, |l| l.line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn seen(keys: &[u64], first_line: u32) -> SeenKeys {
        let mut seen = SeenKeys::default();
        for (line, key) in (first_line..).zip(keys) {
            assert_eq!(seen.insert(&Key::Num(*key), line), None);
        }
        seen
    }

    proptest! {
        /// Whatever the order: what a table of every key says.
        #[test]
        fn seen_keys_answer_as_a_table(keys in prop::collection::vec(0u64..40, 0..60)) {
            let mut seen = SeenKeys::default();
            let mut table: HashMap<u64, u32> = HashMap::new();
            for (line, key) in (1..).zip(&keys) {
                let expected = match table.get(key) {
                    Some(&first) => Some(first),
                    None => {
                        table.insert(*key, line);
                        None
                    }
                };
                prop_assert_eq!(seen.insert(&Key::Num(*key), line), expected);
            }
            for key in 0..40 {
                prop_assert_eq!(seen.get(&Key::Num(key)), table.get(&key).copied());
            }
            let increasing = keys.windows(2).all(|w| w[0] < w[1]);
            prop_assert_eq!(matches!(seen, SeenKeys::Increasing(_)), increasing);
        }
    }

    #[test]
    fn a_repeat_across_chunks_is_found_when_both_increase() {
        let (a, b) = (seen(&[1, 2, 3], 1), seen(&[3, 4, 5], 4));
        assert_eq!(b.first_repeat_of(&[&a]), Some((4, 3, &Key::Num(3))));
        // Ranges apart: none, with an empty chunk between them.
        let (empty, c) = (seen(&[], 4), seen(&[4, 5], 4));
        assert_eq!(c.first_repeat_of(&[&a, &empty]), None);
        // An earlier chunk out of order is searched.
        let mut shuffled = seen(&[9], 1);
        assert_eq!(shuffled.insert(&Key::Num(2), 2), None);
        assert_eq!(c.first_repeat_of(&[&a, &shuffled]), None);
        assert_eq!(
            seen(&[2, 8], 3).first_repeat_of(&[&shuffled]),
            Some((3, 2, &Key::Num(2)))
        );
        // The first by line, not the first found.
        let later = seen(&[2, 3], 10);
        assert_eq!(later.first_repeat_of(&[&a]), Some((10, 2, &Key::Num(2))));
    }
}
