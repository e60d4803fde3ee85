//! Slices: each item falls in one value of every slice, and the aggregates the
//! sliced metrics read are folded per value in the same pass as the whole (no
//! second read). A chunk's folds merge exactly into the next, and values are
//! listed in natural order, so the outcome does not depend on the thread count.

use std::sync::Arc;

use crate::base::codec::{Decoded, Reader, Writer};
use crate::base::diagnostic::Diagnostic;
use crate::base::natural::natural_cmp;
use crate::base::value::Value;
use crate::eval::decide::across_runs::metric_value;
use crate::eval::join::keys::FastMap;
use crate::ir::{evaluate, Frame};
use crate::library::error::RuntimeErrorKind;
use crate::plan::{Plan, SlicePlan};
use crate::stats::aggregate::{Accumulator, Observation};
use crate::stats::inference::{ChangeTest, Interval};

/// One slice's values in a chunk of items.
#[derive(Debug, Default)]
pub(in crate::eval) struct SliceFold {
    index: FastMap<Arc<str>, usize>,
    values: Vec<SliceEntry>,
}

/// One value of a slice: its items and the slice's aggregates over them.
#[derive(Debug)]
struct SliceEntry {
    value: Arc<str>,
    items: usize,
    /// In the order of `SlicePlan::aggregates`.
    accumulators: Vec<Accumulator>,
}

impl SliceFold {
    /// The entry of `value`, made when it is first seen; counts one more item.
    fn place(&mut self, plan: &Plan, slice: &SlicePlan, value: Arc<str>) -> usize {
        if let Some(&at) = self.index.get(&value) {
            self.values[at].items += 1;
            return at;
        }
        let at = self.values.len();
        self.index.insert(value.clone(), at);
        self.values.push(SliceEntry {
            value,
            items: 1,
            accumulators: (slice.aggregates.iter())
                .map(|&a| Accumulator::new(plan.aggregates[a].function))
                .collect(),
        });
        at
    }

    /// Every value with its items and accumulators, for a partial state sent
    /// elsewhere.
    pub(in crate::eval) fn encode(&self, w: &mut Writer) {
        w.seq(self.values.iter(), |w, entry| {
            w.str(&entry.value);
            w.usize(entry.items);
            w.seq(entry.accumulators.iter(), |w, a| a.encode(w));
        });
    }

    pub(in crate::eval) fn decode(r: &mut Reader<'_>) -> Decoded<SliceFold> {
        let values: Vec<SliceEntry> = r.seq(|r| {
            Ok(SliceEntry {
                value: r.arc_str()?,
                items: r.usize()?,
                accumulators: r.seq(Accumulator::decode)?,
            })
        })?;
        let index = (values.iter().enumerate())
            .map(|(at, entry)| (entry.value.clone(), at))
            .collect();
        Ok(SliceFold { index, values })
    }

    /// The value at `place` (an entry `place_item` gave).
    pub(in crate::eval) fn value_at(&self, place: usize) -> &Arc<str> {
        &self.values[place].value
    }

    /// Folds in a later chunk's values: counts add, accumulators merge exactly.
    pub(in crate::eval) fn merge(&mut self, other: SliceFold) {
        for entry in other.values {
            match self.index.get(&entry.value) {
                Some(&at) => {
                    let mine = &mut self.values[at];
                    mine.items += entry.items;
                    for (a, b) in mine.accumulators.iter_mut().zip(&entry.accumulators) {
                        a.merge(b);
                    }
                }
                None => {
                    self.index.insert(entry.value.clone(), self.values.len());
                    self.values.push(entry);
                }
            }
        }
    }
}

/// Puts the item in its value of each slice: `places[s]` is its entry in `folds[s]`.
pub(in crate::eval) fn place_item(
    plan: &Plan,
    texts: &[Arc<str>],
    folds: &mut [SliceFold],
    places: &mut [usize],
) {
    for (s, slice) in plan.slices.iter().enumerate() {
        places[s] = folds[s].place(plan, slice, texts[s].clone());
    }
}

/// Adds what the item gave an aggregate to the slices that fold it.
pub(in crate::eval) fn add(
    folds: &mut [SliceFold],
    places: &[usize],
    routes: &[(usize, usize)],
    observation: &Observation,
) -> Result<(), RuntimeErrorKind> {
    for &(s, position) in routes {
        folds[s].values[places[s]].accumulators[position].observe(observation, 1)?;
    }
    Ok(())
}

/// One value of a slice in one run: its items and every metric computed per
/// value (plan order; null for metrics not computed by this slice).
#[derive(Debug, Clone)]
pub struct SliceValueOutcome {
    pub value: Arc<str>,
    pub items: usize,
    pub metrics: Vec<Value>,
    /// Per metric (plan order), its interval on this value's items.
    pub intervals: Vec<Option<Interval>>,
    /// Per metric (plan order), its paired change against the baseline on
    /// this value's items (see `decide::run_stats::slice_intervals`).
    pub changes: Vec<Option<ChangeTest>>,
}

/// The slices' values with their metrics, each slice's values in natural order.
pub(in crate::eval) fn finish(
    plan: &Plan,
    folds: Vec<SliceFold>,
    dataset_records: &[Value],
) -> Result<Vec<Vec<SliceValueOutcome>>, Vec<Diagnostic>> {
    let mut out = Vec::with_capacity(folds.len());
    for (slice, fold) in plan.slices.iter().zip(folds) {
        let mut entries = fold.values;
        entries.sort_by(|a, b| natural_cmp(&a.value, &b.value).then_with(|| a.value.cmp(&b.value)));
        let mut values = Vec::with_capacity(entries.len());
        for entry in entries {
            let mut aggregates = vec![Value::Null; plan.aggregates.len()];
            for (&a, accumulator) in slice.aggregates.iter().zip(entry.accumulators) {
                aggregates[a] = accumulator.finish(plan.aggregates[a].function);
            }
            let mut metrics: Vec<Value> = Vec::with_capacity(plan.metrics.len());
            for (metric, needed) in plan.metrics.iter().zip(&slice.metrics) {
                if !needed {
                    metrics.push(Value::Null);
                    continue;
                }
                let frame = Frame {
                    aggregates: &aggregates,
                    metrics: &metrics,
                    dataset_records,
                    ..Frame::default()
                };
                metrics.push(metric_value(plan, metric, evaluate(&metric.op, &frame))?);
            }
            values.push(SliceValueOutcome {
                value: entry.value,
                items: entry.items,
                intervals: vec![None; metrics.len()],
                changes: vec![None; metrics.len()],
                metrics,
            });
        }
        out.push(values);
    }
    Ok(out)
}
