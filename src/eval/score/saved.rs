//! A scored item kept compactly until it is folded in. A streamed join scores
//! items out of order, as the streamed dataset's records arrive (a later record
//! of a key replacing an earlier one's score), and folds them in item order at
//! the end, so that every number and file is what reading in order gives. What
//! the fold reads of an item is saved here: a byte per condition (`ratio`,
//! `count`), nine per other number, and the label (the item's line of the items
//! report is kept apart, `item_lines`);
//! the values shown of offenders only for the first few (`Shown`).

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::base::natural::key_order;
use crate::base::value::{Key, Value};
use crate::eval::score::{Roles, Score};
use crate::library::aggregates::AggregateFn;
use crate::plan::Plan;
use crate::stats::aggregate::Observation;
use crate::stats::resample::NOT_COUNTED;

/// Where one item's score starts in a [`ScoreArena`]: two offsets of 32 bits,
/// as a million items keep one each. Or a score that failed: its error's
/// number among its part's; or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::eval) struct Saved {
    bytes: u32,
    values: u32,
}

/// `Saved::bytes` of a failed score (its `values` numbers the failure) and
/// of none; no arena reaches them.
const FAILED: u32 = u32::MAX - 1;
const NONE: u32 = u32::MAX;

impl Saved {
    pub(in crate::eval) const NONE: Saved = Saved {
        bytes: NONE,
        values: NONE,
    };

    /// The score that failed with its part's `failure`-th error; `None`
    /// past what 32 bits number.
    pub(in crate::eval) fn failed(failure: usize) -> Option<Saved> {
        let values = u32::try_from(failure).ok().filter(|&v| v != NONE)?;
        Some(Saved {
            bytes: FAILED,
            values,
        })
    }

    pub(in crate::eval) fn is_failed(self) -> bool {
        self.bytes == FAILED
    }

    /// The number of the failure, for a score that failed.
    pub(in crate::eval) fn failure(self) -> Option<usize> {
        self.is_failed().then_some(self.values as usize)
    }
}

/// The derived values the fold reads: the label of every item (kept with its
/// score), and the values shown of an offender (kept in [`Shown`], for the
/// first few only).
pub(in crate::eval) struct Layout {
    always: Vec<usize>,
    shown: Vec<usize>,
}

impl Layout {
    pub(in crate::eval) fn of(plan: &Plan) -> Self {
        let always: Vec<usize> = plan.label_slot.iter().map(|s| s.index()).collect();
        let mut shown: Vec<usize> = (plan.offenders.iter())
            .flat_map(|o| o.show.iter().map(|(_, slot)| slot.index()))
            .filter(|slot| !always.contains(slot))
            .collect();
        shown.sort_unstable();
        shown.dedup();
        Layout { always, shown }
    }
}

/// An item's place in the order reports list offenders in (its key, then line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::eval) struct Rank {
    pub(in crate::eval) key: Option<Key>,
    pub(in crate::eval) line: u32,
    /// The item's number, for items on one line (a JSON array's).
    pub(in crate::eval) item: u32,
}

impl Ord for Rank {
    fn cmp(&self, other: &Self) -> Ordering {
        key_order(self.key.as_ref(), other.key.as_ref())
            .then(self.line.cmp(&other.line))
            .then(self.item.cmp(&other.item))
    }
}

impl PartialOrd for Rank {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The values shown of the first offenders in report order, kept while scores
/// arrive: a bounded number, so that memory does not grow with the offenders.
/// An offender's later score (`duplicates: last`) replaces or removes its
/// entry; an offender that was dropped and turns out to be needed after all is
/// found when folding (`restore` gives false).
pub(in crate::eval) struct Shown {
    entries: BTreeMap<Rank, Vec<Value>>,
    capacity: usize,
}

impl Shown {
    /// Offenders kept beyond the `limit` shown, for those a later score clears.
    const MARGIN: usize = 64;

    pub(in crate::eval) fn new(plan: &Plan) -> Self {
        let limit = plan.offenders.as_ref().map_or(0, |o| o.limit);
        Shown {
            entries: BTreeMap::new(),
            capacity: limit.saturating_add(Self::MARGIN),
        }
    }

    /// Records the item at `rank` just scored as `score`.
    pub(in crate::eval) fn score(
        &mut self,
        layout: &Layout,
        rank: impl FnOnce() -> Rank,
        score: &Score,
    ) {
        if layout.shown.is_empty() {
            return;
        }
        let rank = rank();
        // Past the last entry kept when full: neither kept now nor before.
        let full = self.entries.len() == self.capacity;
        if full
            && self
                .entries
                .last_key_value()
                .is_some_and(|(last, _)| rank > *last)
        {
            return;
        }
        self.entries.remove(&rank);
        if !score.offender {
            return;
        }
        if self.entries.len() == self.capacity {
            match self.entries.last_key_value() {
                Some((last, _)) if *last > rank => {
                    self.entries.pop_last();
                }
                _ => return,
            }
        }
        let values = layout.shown.iter().map(|&slot| score.derived[slot].clone());
        self.entries.insert(rank, values.collect());
    }

    /// Puts the values shown of the offender at `rank` back into `score`;
    /// false if they were not kept.
    pub(in crate::eval) fn restore(&self, layout: &Layout, rank: &Rank, score: &mut Score) -> bool {
        if layout.shown.is_empty() {
            return true;
        }
        let Some(values) = self.entries.get(rank) else {
            return false;
        };
        for (&slot, value) in layout.shown.iter().zip(values) {
            score.derived[slot] = value.clone();
        }
        true
    }
}

/// Scores, one after another: observations in `bytes`, values in `values`.
#[derive(Default)]
pub(in crate::eval) struct ScoreArena {
    bytes: Vec<u8>,
    values: Vec<Value>,
}

const OUT: u8 = 0;
const ZERO: u8 = 1;
const ONE: u8 = 2;
const NUMBER: u8 = 3;
const LABELS: u8 = 4;
const CALIBRATED: u8 = 5;
const TRACKED: u8 = 6;

impl ScoreArena {
    /// Saves the item just scored as `score`; `None` once the arena holds
    /// more than 32-bit offsets reach.
    pub(in crate::eval) fn save(
        &mut self,
        layout: &Layout,
        roles: &Roles,
        score: &Score,
    ) -> Option<Saved> {
        let at = Saved {
            bytes: u32::try_from(self.bytes.len())
                .ok()
                .filter(|&b| b < FAILED)?,
            values: u32::try_from(self.values.len())
                .ok()
                .filter(|&v| v < NONE)?,
        };
        let scored = score.contributions.iter().zip(&score.tracked);
        for (i, (observation, tracked)) in scored.enumerate() {
            if roles.flagged[i] {
                self.bytes.push(match score.flags[i] {
                    0 => ZERO,
                    1 => ONE,
                    _ => OUT,
                });
                continue;
            }
            if let Some(value) = tracked {
                self.bytes.push(TRACKED);
                self.values.push(value.clone());
                continue;
            }
            match observation {
                Observation::Out => self.bytes.push(OUT),
                // By bits: -0.0 must come back as -0.0.
                Observation::Number(x) if x.to_bits() == 0f64.to_bits() => self.bytes.push(ZERO),
                Observation::Number(x) if x.to_bits() == 1f64.to_bits() => self.bytes.push(ONE),
                Observation::Number(x) => {
                    self.bytes.push(NUMBER);
                    self.bytes.extend(x.to_le_bytes());
                }
                Observation::Labels(labels) => {
                    let (a, b) = &**labels;
                    self.bytes.push(LABELS);
                    self.values.push(Value::String(a.clone()));
                    self.values.push(Value::String(b.clone()));
                }
                Observation::Calibrated(confidence, correct) => {
                    self.bytes.push(CALIBRATED);
                    self.bytes.extend(confidence.to_le_bytes());
                    self.bytes.push(u8::from(*correct));
                }
            }
        }
        self.bytes.push(u8::from(score.offender));
        let texts = score.slice_texts.iter().cloned().map(Value::String);
        self.values.extend(texts);
        let kept = layout
            .always
            .iter()
            .map(|&slot| score.derived[slot].clone());
        self.values.extend(kept);
        Some(at)
    }

    /// Puts the score saved at `at` back into `score`, as scoring left it.
    pub(in crate::eval) fn restore(
        &self,
        plan: &Plan,
        (layout, roles): (&Layout, &Roles),
        at: Saved,
        score: &mut Score,
    ) {
        let (mut b, mut v) = (at.bytes as usize, at.values as usize);
        let number = |b: usize| {
            let bytes: [u8; 8] = self.bytes[b..b + 8].try_into().expect("eight bytes");
            f64::from_le_bytes(bytes)
        };
        for (i, aggregate) in plan.aggregates.iter().enumerate() {
            let tag = self.bytes[b];
            b += 1;
            // Only stability's aggregates track a value. Cleared
            // unconditionally, the `None` was built on the stack and copied in
            // a wider load than its store, a stall for every aggregate.
            if score.tracked[i].is_some() {
                score.tracked[i] = None;
            }
            if roles.flagged[i] {
                score.flags[i] = match tag {
                    ZERO => 0,
                    ONE => 1,
                    _ => NOT_COUNTED,
                };
                continue;
            }
            score.contributions[i] = match tag {
                OUT => Observation::Out,
                ZERO => Observation::Number(0.0),
                ONE => Observation::Number(1.0),
                NUMBER => {
                    b += 8;
                    Observation::Number(number(b - 8))
                }
                LABELS => {
                    v += 2;
                    Observation::labels(text(&self.values[v - 2]), text(&self.values[v - 1]))
                }
                CALIBRATED => {
                    b += 9;
                    Observation::Calibrated(number(b - 9), self.bytes[b - 1] == 1)
                }
                _ => {
                    score.tracked[i] = Some(self.values[v].clone());
                    v += 1;
                    debug_assert_eq!(aggregate.function, AggregateFn::Stability);
                    Observation::Out
                }
            };
        }
        score.offender = self.bytes[b] == 1;
        for text_slot in score.slice_texts.iter_mut() {
            *text_slot = text(&self.values[v]);
            v += 1;
        }
        for &slot in &layout.always {
            score.derived[slot] = self.values[v].clone();
            v += 1;
        }
    }
}

fn text(value: &Value) -> Arc<str> {
    match value {
        Value::String(text) => text.clone(),
        _ => Arc::from(""),
    }
}
