//! How the bootstrap folds each aggregate's groups once, so that a replicate
//! that draws group g `weights[g]` times computes the aggregate from them
//! cheaply: counts and ratios as vectors of counts, confusion tables as
//! numbered cells, calibrations as fixed-point sums, percentiles as ranks,
//! anything else as accumulators merged as many times as drawn.

use std::collections::HashMap;

use super::Units;
use crate::base::natural::natural_cmp;
use crate::base::value::Value;
use crate::library::aggregates::AggregateFn;
use crate::stats::aggregate::{percentile_of, Accumulator, Confusion, Observation};
use crate::stats::calibration::Calibration;
use crate::stats::classification::{ClassCounts, ClassTable};
use crate::stats::percentile_ranks::{Ranks, MAX_MARKS};

pub(super) enum Fold {
    Accumulators(Vec<Accumulator>),
    /// A count or a ratio: each group's hits and items counted, apart, so
    /// that a replicate's totals are two sums of products over the groups
    /// (`merge_times` of each group was a tenth of a 46-aggregate run). In
    /// 32 bits, as the weights are: a product of two is one vectorised
    /// multiply on any x86-64 (of two 64-bit numbers it is three, and was not
    /// vectorised: two fifths of `value` in a 46-aggregate run). A group of
    /// more than 4 billion items keeps its accumulators.
    Counts {
        hits: Vec<u32>,
        totals: Vec<u32>,
    },
    /// A score of a confusion table (kappa, an F1, agreement): each group's
    /// cells as (truth, predicted, items) over class numbers in natural order
    /// of the labels, so that a replicate adds integers into a row per class
    /// instead of merging tables keyed by text (11 s of a run with 3,000
    /// classes).
    Cells {
        classes: usize,
        groups: Vec<Vec<(u32, u32, u64)>>,
    },
    /// A calibration's score (ece, brier): each group's calibration, summed
    /// with weights in fixed-point digits (`Calibration::weighted_sum`)
    /// instead of merged term by term (nearly all of an `ece` by slice).
    Calibrations(Vec<Calibration>),
    /// A percentile: each group's values, ranked.
    Sorted {
        q: f64,
        ranks: Ranks,
    },
}

impl Fold {
    pub(super) fn new(
        function: AggregateFn,
        k: usize,
        units: &Units<'_>,
        group_of: &[u32],
        groups: usize,
    ) -> Fold {
        let observations = || {
            (units.observations(k))
                .map(|(unit, observation)| (group_of[unit as usize] as usize, observation))
        };
        if let AggregateFn::Percentile(q) = function {
            let mut sorted = vec![Vec::new(); groups];
            for (g, observation) in observations() {
                if let Observation::Number(x) = *observation {
                    sorted[g].push(x);
                }
            }
            let ranks = Ranks::new(sorted, MAX_MARKS);
            return Fold::Sorted { q, ranks };
        }
        let mut accumulators = vec![Accumulator::new(function); groups];
        if let Some(flags) = units.source.flags(k) {
            for &(unit, item) in &units.rows {
                if let Some(flag) = flags.number(item) {
                    let g = group_of[unit as usize] as usize;
                    // Inline for a count or ratio: a call per item and aggregate otherwise.
                    let _ = accumulators[g].observe_one(&Observation::Number(flag));
                }
            }
            return Fold::of(accumulators);
        }
        for (g, observation) in observations() {
            // The run accepted these observations already; adding them again
            // cannot fail.
            let _ = accumulators[g].observe(&observation, 1);
        }
        Fold::of(accumulators)
    }

    /// The groups' accumulators, as counts where they are a count's or a
    /// ratio's and as numbered cells where they are confusion tables.
    /// (No groups keep the accumulators: nothing says which kind they are.)
    pub(super) fn of(groups: Vec<Accumulator>) -> Fold {
        let one_kind = "accumulators of one aggregate have one kind";
        match groups.first() {
            Some(Accumulator::Count(_) | Accumulator::Ratio { .. }) => {
                let counts: Option<(Vec<u32>, Vec<u32>)> = (groups.iter())
                    .map(|group| {
                        let (hits, total) = match *group {
                            Accumulator::Count(n) => (n, 0),
                            Accumulator::Ratio { hits, total } => (hits, total),
                            _ => unreachable!("{one_kind}"),
                        };
                        Some((u32::try_from(hits).ok()?, u32::try_from(total).ok()?))
                    })
                    .collect();
                match counts {
                    Some((hits, totals)) => Fold::Counts { hits, totals },
                    None => Fold::Accumulators(groups),
                }
            }
            Some(Accumulator::Confusion(_)) => {
                let tables: Vec<&Confusion> = (groups.iter())
                    .map(|group| match group {
                        Accumulator::Confusion(table) => table,
                        _ => unreachable!("{one_kind}"),
                    })
                    .collect();
                Fold::cells(&tables)
            }
            Some(Accumulator::Calibration(_)) => Fold::Calibrations(
                (groups.into_iter())
                    .map(|group| match group {
                        Accumulator::Calibration(calibration) => calibration,
                        _ => unreachable!("{one_kind}"),
                    })
                    .collect(),
            ),
            _ => Fold::Accumulators(groups),
        }
    }

    fn cells(tables: &[&Confusion]) -> Fold {
        let mut labels: Vec<&str> = (tables.iter())
            .flat_map(|table| table.cells())
            .flat_map(|((truth, predicted), _)| [&**truth, &**predicted])
            .collect();
        labels.sort_unstable();
        labels.dedup();
        labels.sort_by(|a, b| natural_cmp(a, b));
        let class: HashMap<&str, u32> = labels.iter().zip(0..).map(|(&l, n)| (l, n)).collect();
        let groups = (tables.iter())
            .map(|table| {
                (table.cells())
                    .map(|((truth, predicted), &n)| (class[&**truth], class[&**predicted], n))
                    .collect()
            })
            .collect();
        Fold::Cells {
            classes: labels.len(),
            groups,
        }
    }

    /// The aggregate's value with group g counted `weights[g]` times.
    pub(super) fn value(&self, function: AggregateFn, weights: &[u32]) -> Value {
        match self {
            Fold::Accumulators(groups) => {
                let mut total = Accumulator::new(function);
                for (group, &w) in groups.iter().zip(weights) {
                    total.merge_times(group, u64::from(w));
                }
                total.finish(function)
            }
            Fold::Counts { hits, totals } => {
                // What `merge_times` adds up, group by group.
                let weighted = |counts: &[u32]| -> u64 {
                    (counts.iter().zip(weights))
                        .map(|(&n, &w)| u64::from(n) * u64::from(w))
                        .sum()
                };
                let total = match Accumulator::new(function) {
                    Accumulator::Count(_) => Accumulator::Count(weighted(hits)),
                    _ => Accumulator::Ratio {
                        hits: weighted(hits),
                        total: weighted(totals),
                    },
                };
                total.finish(function)
            }
            Fold::Cells { classes, groups } => {
                // What `merge_times` and `Confusion::classes` add up.
                let mut counts = vec![ClassCounts::default(); *classes];
                let mut named = vec![false; *classes];
                for (cells, &w) in groups.iter().zip(weights).filter(|(_, &w)| w > 0) {
                    let w = u64::from(w);
                    for &(truth, predicted, n) in cells {
                        let (truth, predicted) = (truth as usize, predicted as usize);
                        counts[truth].support += n * w;
                        counts[predicted].predicted += n * w;
                        if truth == predicted {
                            counts[truth].correct += n * w;
                        }
                        named[truth] = true;
                        named[predicted] = true;
                    }
                }
                let classes = counts.into_iter().zip(named).filter(|(_, named)| *named);
                ClassTable(classes.map(|(counts, _)| counts).collect()).value(function)
            }
            Fold::Calibrations(groups) => {
                let weights = weights.iter().map(|&w| u64::from(w));
                let sum = Calibration::weighted_sum(groups.iter().zip(weights));
                Accumulator::Calibration(sum).finish(function)
            }
            Fold::Sorted { q, ranks } => {
                let n = ranks.weighted_len(weights);
                let nth = |rank: u64| ranks.weighted_nth(weights, rank);
                percentile_of(n, nth, *q).map_or(Value::Null, Value::Number)
            }
        }
    }
}
