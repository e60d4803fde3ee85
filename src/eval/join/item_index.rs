//! The items in memory by key, for a join that streams the other dataset past
//! them (`index`, and each partition of `partitioned`): which items a
//! streamed record's key scores, in item order, and the set of key ids a
//! chunk of the streamed dataset has seen.

use std::cmp::Ordering;
use std::collections::hash_map::Entry;

use crate::base::value::Key;
use crate::eval::join::items::Held;
use crate::eval::join::keys::FastMap;
use crate::eval::outcome::report_order;
use crate::eval::score::saved::Rank;

/// The items in memory, by key: which items each key of the streamed dataset scores.
pub(in crate::eval) struct ItemIndex<'a> {
    /// Every item, in item order.
    items: &'a [Held],
    /// Each item's number among all the items, when these are some of them
    /// (a partition's); empty when they are all, numbered from 0.
    numbers: Vec<u32>,
    /// Each distinct item key's id; keys borrowed from the items, so that the
    /// index costs no reference count per item to build and to drop.
    ids: FastMap<&'a Key, u32>,
    /// Per key id, its first item; per item, the next item of its key.
    first: Vec<u32>,
    next: Vec<u32>,
}

const NONE: u32 = u32::MAX;

impl<'a> ItemIndex<'a> {
    /// The items `items`, in order; `numbers` as [`ItemIndex::numbers`].
    /// `None` past `u32::MAX - 1` items (item numbers are `u32`s).
    pub(in crate::eval) fn of(items: &'a [Held], numbers: Vec<u32>) -> Option<Self> {
        // Item numbers are u32s; NONE is kept free.
        if items.len() >= NONE as usize {
            return None;
        }
        let mut index = ItemIndex {
            items,
            numbers,
            ids: FastMap::with_capacity_and_hasher(items.len(), Default::default()),
            first: Vec::new(),
            next: vec![NONE; items.len()],
        };
        // Items of a key are chained in item order; `last` is each key's latest.
        let mut last: Vec<u32> = Vec::new();
        for (item, held) in (0..).zip(items) {
            let Some(key) = &held.key else { continue };
            match index.ids.entry(key) {
                Entry::Occupied(id) => {
                    let id = *id.get() as usize;
                    index.next[last[id] as usize] = item;
                    last[id] = item;
                }
                Entry::Vacant(vacant) => {
                    vacant.insert(index.first.len() as u32);
                    index.first.push(item);
                    last.push(item);
                }
            }
        }
        Some(index)
    }

    /// Whether the items, numbered from 0 in file order, are in report order
    /// (a gold set sorted by key): their lines of items.jsonl are then ordered
    /// by number ([`crate::eval::state::item_lines::LineSpool::order_by_ordinal`]).
    pub(in crate::eval) fn in_report_order(&self) -> bool {
        fn order(held: &Held) -> (Option<&Key>, Option<&str>, u32) {
            (held.key.as_ref(), None, held.record.line)
        }
        self.numbers.is_empty()
            && (self.items.windows(2))
                .all(|pair| report_order(order(&pair[0]), order(&pair[1])) != Ordering::Greater)
    }

    /// How many items there are.
    pub(in crate::eval) fn len(&self) -> usize {
        self.items.len()
    }

    /// Item `item`.
    pub(in crate::eval) fn item(&self, item: u32) -> &'a Held {
        &self.items[item as usize]
    }

    /// How many distinct keys the items have: their ids run from 0 to this.
    pub(in crate::eval) fn key_count(&self) -> usize {
        self.first.len()
    }

    /// The id of `key` among the items' keys, if an item has it.
    // Inlined into the streamed join's run of lookups, which is what lets
    // their cache misses overlap.
    #[inline]
    pub(in crate::eval) fn id_of(&self, key: &Key) -> Option<u32> {
        self.ids.get(key).copied()
    }

    /// The first item (in item order) whose key an earlier item has, with
    /// that earlier item: the first repeat a reader in file order meets.
    pub(in crate::eval) fn first_repeat(&self) -> Option<(u32, u32)> {
        let keyed = self.items.iter().filter(|held| held.key.is_some()).count();
        if self.first.len() == keyed {
            return None;
        }
        // A key's items are chained in order from its first: the least item
        // that is second in its chain is the first repeat.
        (self.first.iter())
            .filter_map(|&first| {
                let next = self.next[first as usize];
                (next != NONE).then_some((first, next))
            })
            .min_by_key(|&(_, again)| again)
    }

    /// The item's number among all the items.
    pub(in crate::eval) fn number(&self, item: u32) -> u32 {
        self.numbers.get(item as usize).copied().unwrap_or(item)
    }

    pub(in crate::eval) fn rank(&self, item: u32) -> Rank {
        let held = &self.items[item as usize];
        Rank {
            key: held.key.clone(),
            line: held.record.line,
            item: self.number(item),
        }
    }

    /// The items of the key with id `id`, in item order.
    pub(in crate::eval) fn items_of(&self, id: u32) -> impl Iterator<Item = u32> + '_ {
        std::iter::successors(Some(self.first[id as usize]), |&item| {
            Some(self.next[item as usize]).filter(|&n| n != NONE)
        })
    }
}

/// A set of item key ids, a bit each.
pub(in crate::eval) struct SeenIds(Vec<u64>);

impl SeenIds {
    pub(in crate::eval) fn new(ids: usize) -> Self {
        SeenIds(vec![0; ids.div_ceil(64)])
    }

    /// Adds `id`; whether it was in already.
    pub(in crate::eval) fn insert(&mut self, id: u32) -> bool {
        let (word, bit) = (&mut self.0[id as usize / 64], 1u64 << (id % 64));
        let was = *word & bit != 0;
        *word |= bit;
        was
    }

    /// Adds every id of `other` (a set of as many ids); how many were in already.
    pub(in crate::eval) fn add_all(&mut self, other: &SeenIds) -> usize {
        let words = self.0.iter_mut().zip(&other.0);
        words.fold(0, |repeats, (word, theirs)| {
            let both = (*word & theirs).count_ones() as usize;
            *word |= theirs;
            repeats + both
        })
    }

    /// How many ids are in.
    pub(in crate::eval) fn len(&self) -> usize {
        self.0.iter().map(|word| word.count_ones() as usize).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The bits say what a set of the ids inserted so far says, and
        /// adding one set to another what their union and intersection say.
        #[test]
        fn seen_ids_are_a_set(
            count in 1usize..300,
            ids in prop::collection::vec(0u32..300, 0..400),
            more in prop::collection::vec(0u32..300, 0..400),
        ) {
            let fill = |ids: Vec<u32>| {
                let (mut seen, mut set) = (SeenIds::new(count), std::collections::BTreeSet::new());
                for id in ids.into_iter().filter(|&id| (id as usize) < count) {
                    assert_eq!(seen.insert(id), !set.insert(id));
                }
                (seen, set)
            };
            let (mut seen, set) = fill(ids);
            let (other, other_set) = fill(more);
            prop_assert_eq!(seen.len(), set.len());
            prop_assert_eq!(seen.add_all(&other), set.intersection(&other_set).count());
            prop_assert_eq!(seen.len(), set.union(&other_set).count());
        }
    }
}
