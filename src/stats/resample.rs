//! The bootstrap of any metric computed from items that is not a single ratio of
//! sums (an F1, a percentile, kappa, `mean(x) * 100`, `2·p·r / (p + r)`): each
//! replicate recomputes the metric's aggregates from reweighted items, with the
//! accumulators the run itself uses, then its formula (`ir::formula`).
//!
//! Units are what is resampled: items for an interval, items matched by key
//! for a paired change (a key repeated in a run is one unit). With at most
//! `MAX_GROUPS` units each unit is drawn on its own (`bootstrap`). Above it,
//! where n·B would pass `BOOTSTRAP_MAX_DRAWS`, the units are dealt into
//! `MAX_GROUPS` groups in a seeded random order and whole groups are drawn
//! (`grouped_bootstrap`): each group's accumulators are built once, and a
//! replicate merges `MAX_GROUPS` of them, so its cost does not grow with the
//! items. Random groups of a large set are exchangeable, and the spread of a
//! sum of group totals is that of the items' sum, so the interval of a smooth
//! metric keeps its width; a percentile is computed on the groups' sorted
//! values weighted by their draws, never by copying them.
//!
//! Replicate b draws `G` groups (units) with replacement from its own generator
//! (`bootstrap::replicate_generators`, label `interval:METRIC` or
//! `change:METRIC`, seed `stats::SEED`), so the result depends only on the
//! items in file order.

use std::borrow::Cow;

use crate::base::stats::bootstrap::{
    self, paired_result, percentile_interval, replicate_generators, valid_level, Method,
    PairedResult, BOOTSTRAP_MAX_DRAWS,
};
use crate::base::stats::rng::SplitMix64;
use crate::base::value::Value;
use crate::ir::formula::Formula;
use crate::ir::{evaluate, Frame, Op};
use crate::library::aggregates::AggregateFn;
use crate::plan::Plan;
use crate::stats::aggregate::{Accumulator, Observation};
use fold::Fold;

/// How many units or groups a replicate draws at most: the n at which n·B
/// reaches `BOOTSTRAP_MAX_DRAWS` for B = 2000.
pub const MAX_GROUPS: usize = (BOOTSTRAP_MAX_DRAWS as usize) / bootstrap::DEFAULT_REPLICATES;

/// The metrics to recompute: the observed aggregates' functions and the
/// formulas over them, in order.
pub struct Recipe<'a> {
    pub functions: Vec<AggregateFn>,
    pub formulas: &'a [Formula],
}

/// Where resampling reads each item's observation of each aggregate of the
/// recipe: a run's value table, or a prior run's rows read back.
pub trait Observed: Sync {
    fn observation(&self, item: usize, k: usize) -> Cow<'_, Observation>;

    /// Aggregate `k`'s observations as a `count`'s or `ratio`'s flags read
    /// in place, when the source keeps them so: a fold then reads a byte per
    /// item instead of a call and an observation.
    fn flags(&self, _k: usize) -> Option<Flags<'_>> {
        None
    }
}

/// One side's units: `count` of them, and each counted item's unit and its
/// place in `source`. Flat, so that a million items are one allocation, not
/// a million.
pub struct Units<'o> {
    pub count: usize,
    pub rows: Vec<(u32, usize)>,
    pub source: &'o dyn Observed,
}

impl<'o> Units<'o> {
    /// Each of `items` (places in `source`) its own unit.
    pub fn items(source: &'o dyn Observed, items: impl Iterator<Item = usize>) -> Self {
        let rows: Vec<(u32, usize)> = (0..).zip(items).collect();
        Units {
            count: rows.len(),
            rows,
            source,
        }
    }

    /// Items of `count` units: `units[i]` is item i's unit (`None`: left out).
    pub fn paired(count: usize, units: &[Option<u32>], source: &'o dyn Observed) -> Self {
        let rows = units
            .iter()
            .enumerate()
            .filter_map(|(i, unit)| unit.map(|u| (u, i)))
            .collect();
        Units {
            count,
            rows,
            source,
        }
    }

    /// Each counted item's unit and observation of aggregate `k`.
    fn observations(&self, k: usize) -> impl Iterator<Item = (u32, Cow<'o, Observation>)> + '_ {
        (self.rows.iter()).map(move |&(unit, item)| (unit, self.source.observation(item, k)))
    }
}

impl<'a> Recipe<'a> {
    /// The plan's observed aggregates and formulas.
    pub fn of(plan: &'a Plan) -> Self {
        let observed = plan.stats.observed.iter();
        Recipe {
            functions: observed
                .map(|a| plan.aggregates[a.index()].function)
                .collect(),
            formulas: &plan.stats.formulas,
        }
    }

    /// The formulas' values from the aggregates' values, for the formulas
    /// `needed` marks (null for the others, which no needed formula reads): a
    /// formula that fails or is not finite is null, and null takes `empty`, as
    /// the run itself computes its metrics. Evaluating only what a target reads
    /// matters because a replicate does this: the 46-metric spec's F1s read 3
    /// of the up to 45 formulas before them.
    fn values(&self, aggregates: &[Value], needed: &[bool]) -> Vec<Value> {
        let mut metrics = Vec::with_capacity(needed.len());
        for (formula, &needed) in self.formulas.iter().zip(needed) {
            if !needed {
                metrics.push(Value::Null);
                continue;
            }
            let frame = Frame {
                aggregates,
                metrics: &metrics,
                ..Frame::default()
            };
            let value = match evaluate(&formula.op, &frame) {
                Ok(Value::Number(x)) if !x.is_finite() => Value::Null,
                Ok(value) => value,
                Err(_) => Value::Null,
            };
            metrics.push(match (value, formula.empty) {
                (Value::Null, Some(empty)) => Value::Number(empty),
                (value, _) => value,
            });
        }
        metrics
    }

    /// Whether another run's file has every aggregate formula `target` reads:
    /// `columns[k]` is its column of aggregate k, if any.
    pub fn found_in(&self, target: usize, columns: &[Option<usize>]) -> bool {
        let reads = self.reads(target);
        reads
            .iter()
            .zip(columns)
            .all(|(read, c)| !read || c.is_some())
    }

    /// The aggregates formula `target` reads, itself or through earlier formulas.
    pub fn reads(&self, target: usize) -> Vec<bool> {
        self.read_by([target]).aggregates
    }

    /// The formulas and aggregates `targets` read, themselves or through
    /// earlier formulas (a target reads itself).
    fn read_by(&self, targets: impl IntoIterator<Item = usize>) -> Reads {
        let mut formulas = vec![false; self.formulas.len()];
        let mut aggregates = vec![false; self.functions.len()];
        for target in targets {
            formulas[target] = true;
        }
        for j in (0..formulas.len()).rev() {
            if !formulas[j] {
                continue;
            }
            self.formulas[j].op.walk(&mut |op| match op {
                Op::Aggregate(k) => aggregates[k.index()] = true,
                Op::Metric(m) => formulas[m.index()] = true,
                _ => {}
            });
        }
        let upto = formulas.iter().rposition(|&read| read).map_or(0, |j| j + 1);
        formulas.truncate(upto);
        Reads {
            formulas,
            aggregates,
        }
    }
}

/// What some formulas read: `formulas[j]` whether formula j is one of them or
/// read by one (up to the last that is), `aggregates[k]` whether aggregate k is.
struct Reads {
    formulas: Vec<bool>,
    aggregates: Vec<bool>,
}

/// Another run's observation rows in this recipe's order of aggregates:
/// borrowed when its file lists them in the same order (the same spec), else
/// copied with `columns[k]` (the other file's column of aggregate k) and `Out`
/// where it has none.
pub enum ObservedRows<'o> {
    Same(Vec<&'o [Observation]>),
    Mapped(Vec<Vec<Observation>>),
}

impl<'o> ObservedRows<'o> {
    pub fn new(rows: impl Iterator<Item = &'o [Observation]>, columns: &[Option<usize>]) -> Self {
        let same = columns.iter().enumerate().all(|(k, c)| *c == Some(k));
        if same {
            return ObservedRows::Same(rows.collect());
        }
        ObservedRows::Mapped(
            rows.map(|row| {
                columns
                    .iter()
                    .map(|c| {
                        c.and_then(|c| row.get(c).cloned())
                            .unwrap_or(Observation::Out)
                    })
                    .collect()
            })
            .collect(),
        )
    }

    pub fn row(&self, i: usize) -> &[Observation] {
        match self {
            ObservedRows::Same(rows) => rows[i],
            ObservedRows::Mapped(rows) => &rows[i],
        }
    }
}

impl Observed for ObservedRows<'_> {
    fn observation(&self, item: usize, k: usize) -> Cow<'_, Observation> {
        Cow::Borrowed(&self.row(item)[k])
    }
}

/// The percentile interval of formula `target` over `units`; `point` is the
/// metric's value on all of them.
pub fn interval(
    recipe: &Recipe<'_>,
    target: usize,
    units: &Units<'_>,
    point: f64,
    level: f64,
    label: &str,
) -> Option<bootstrap::Interval> {
    if !valid_level(level) || units.count == 0 {
        return None;
    }
    let sides = Sides::new(recipe, recipe.read_by([target]), &[units], label);
    let mut values: Vec<f64> = Vec::with_capacity(bootstrap::DEFAULT_REPLICATES);
    sides.replicates(label, |value| values.extend(number(&value[0][target])));
    let (low, high) = percentile_interval(&mut values, level, point)?;
    Some(bootstrap::Interval {
        low,
        high,
        method: sides.method(),
    })
}

/// The paired change (new − old) of formula `target` on units both runs share
/// (`new[u]` and `old[u]` are the same unit); `None` when the metric is
/// undefined on the shared units or none is shared.
pub fn change(
    recipe: &Recipe<'_>,
    target: usize,
    new: &Units<'_>,
    old: &Units<'_>,
    level: f64,
    label: &str,
) -> Option<PairedResult> {
    if !valid_level(level) || new.count == 0 {
        return None;
    }
    let sides = Sides::new(recipe, recipe.read_by([target]), &[new, old], label);
    let whole = sides.values(&vec![1; sides.groups]);
    let delta = number(&whole[0][target])? - number(&whole[1][target])?;
    let mut changes = Vec::with_capacity(bootstrap::DEFAULT_REPLICATES);
    sides.replicates(label, |value| {
        if let (Some(x), Some(y)) = (number(&value[0][target]), number(&value[1][target])) {
            changes.push(x - y);
        }
    });
    paired_result(changes, delta, level, sides.method())
}

/// The interval of a metric across runs, `op` over run statistics of the
/// recipe's formulas (`run_mean(m)` with `m` a formula's index): `runs` holds
/// each run's units, items matched across runs by key, and a replicate gives a
/// unit the same weight in every run.
pub fn across_interval(
    recipe: &Recipe<'_>,
    op: &Op,
    runs: &[Units<'_>],
    point: f64,
    level: f64,
    label: &str,
) -> Option<bootstrap::Interval> {
    let count = runs.first()?.count;
    if !valid_level(level) || count == 0 {
        return None;
    }
    let mut targets = Vec::new();
    op.walk(&mut |op| {
        if let Op::RunStat(_, m) = op {
            targets.push(m.index());
        }
    });
    let sides: Vec<&Units<'_>> = runs.iter().collect();
    let sides = Sides::new(recipe, recipe.read_by(targets), &sides, label);
    let mut values: Vec<f64> = Vec::with_capacity(bootstrap::DEFAULT_REPLICATES);
    sides.replicates(label, |run_metrics| {
        let frame = Frame {
            run_metrics: &run_metrics,
            ..Frame::default()
        };
        if let Ok(Value::Number(x)) = evaluate(op, &frame) {
            values.extend(x.is_finite().then_some(x));
        }
    });
    let (low, high) = percentile_interval(&mut values, level, point)?;
    Some(bootstrap::Interval {
        low,
        high,
        method: sides.method(),
    })
}

/// Formula `target`'s value on all of `units`, each counted once.
pub fn value(recipe: &Recipe<'_>, target: usize, units: &Units<'_>) -> Option<f64> {
    let reads = recipe.read_by([target]);
    let aggregates: Vec<Value> = recipe
        .functions
        .iter()
        .enumerate()
        .map(|(k, function)| {
            if !reads.aggregates[k] {
                return Value::Null;
            }
            let mut accumulator = Accumulator::new(*function);
            for (_, observation) in units.observations(k) {
                // The run accepted these observations already.
                let _ = accumulator.observe(&observation, 1);
            }
            accumulator.finish(*function)
        })
        .collect();
    number(&recipe.values(&aggregates, &reads.formulas)[target])
}

fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(x) => Some(*x),
        _ => None,
    }
}

/// Each side's groups, built once: per aggregate the target formulas read,
/// per group, its accumulator (or, for a percentile, its sorted values).
struct Sides<'r> {
    recipe: &'r Recipe<'r>,
    /// The formulas a replicate evaluates: the targets and what they read.
    formulas: Vec<bool>,
    groups: usize,
    grouped: bool,
    /// Per side, per aggregate (`None`: not read).
    folds: Vec<Vec<Option<Fold>>>,
}

impl<'r> Sides<'r> {
    fn new(recipe: &'r Recipe<'r>, reads: Reads, sides: &[&Units<'_>], label: &str) -> Self {
        let units = sides[0].count;
        let grouped = units > MAX_GROUPS;
        let groups = units.min(MAX_GROUPS);
        // Unit u's group: its place in a seeded shuffle, dealt round-robin.
        // Units are numbered in a `u32` (`Units::rows`), and so are groups.
        let group_of: Vec<u32> = if grouped {
            let mut order: Vec<u32> = (0..units as u32).collect();
            let mut rng =
                SplitMix64::seeded(&format!("groups:{label}"), crate::stats::inference::SEED);
            for i in (1..units).rev() {
                order.swap(i, rng.below(i as u64 + 1) as usize);
            }
            let mut group_of = vec![0; units];
            for (place, unit) in order.into_iter().enumerate() {
                group_of[unit as usize] = (place % groups) as u32;
            }
            group_of
        } else {
            (0..units as u32).collect()
        };
        let folds = sides
            .iter()
            .map(|units| {
                recipe
                    .functions
                    .iter()
                    .enumerate()
                    .map(|(k, function)| {
                        reads.aggregates[k]
                            .then(|| Fold::new(*function, k, units, &group_of, groups))
                    })
                    .collect()
            })
            .collect();
        Sides {
            recipe,
            formulas: reads.formulas,
            groups,
            grouped,
            folds,
        }
    }

    fn method(&self) -> Method {
        if self.grouped {
            Method::GroupedBootstrap
        } else {
            Method::Bootstrap
        }
    }

    /// Per side, the target formulas' values with group g drawn
    /// `weights[g]` times.
    fn values(&self, weights: &[u32]) -> Vec<Vec<Value>> {
        self.folds
            .iter()
            .map(|folds| {
                let aggregates: Vec<Value> = folds
                    .iter()
                    .zip(&self.recipe.functions)
                    .map(|(fold, function)| match fold {
                        Some(fold) => fold.value(*function, weights),
                        None => Value::Null,
                    })
                    .collect();
                self.recipe.values(&aggregates, &self.formulas)
            })
            .collect()
    }

    /// Calls `each` with every replicate's per-side values.
    fn replicates(&self, label: &str, mut each: impl FnMut(Vec<Vec<Value>>)) {
        // A group is drawn at most `groups` times, so a weight fits in 32 bits
        // and a count times a weight in 64 (`Fold::value`'s products).
        let mut weights = vec![0u32; self.groups];
        let generators = replicate_generators(
            label,
            crate::stats::inference::SEED,
            bootstrap::DEFAULT_REPLICATES,
        );
        for mut rng in generators {
            weights.iter_mut().for_each(|w| *w = 0);
            for _ in 0..self.groups {
                weights[rng.below(self.groups as u64) as usize] += 1;
            }
            each(self.values(&weights));
        }
    }
}

#[path = "resample_fold.rs"]
mod fold;

/// A flag that is not 0 or 1: the item does not count.
pub const NOT_COUNTED: u8 = 2;

/// A `count`'s or `ratio`'s observations read in place: per item 1, 0, or
/// `NOT_COUNTED`.
#[derive(Clone, Copy)]
pub struct Flags<'t>(&'t [u8]);

impl<'t> Flags<'t> {
    /// Reads a column kept as flag bytes.
    pub fn of(bytes: &'t [u8]) -> Self {
        Flags(bytes)
    }

    /// `observations` as flag bytes: 1 for a hit, 0 for a miss, `NOT_COUNTED`
    /// where the item does not count.
    #[cfg(test)]
    pub fn encode<'o>(observations: impl Iterator<Item = &'o Observation>) -> Vec<u8> {
        observations
            .map(|o| match o {
                Observation::Number(x) if *x == 1.0 => 1,
                Observation::Number(x) if *x == 0.0 => 0,
                Observation::Out => NOT_COUNTED,
                other => panic!("not a count's or ratio's observation: {other:?}"),
            })
            .collect()
    }

    /// Item `item`'s 1 or 0, or none where it does not count (`Out`): what
    /// its observation holds.
    #[inline]
    pub fn number(self, item: usize) -> Option<f64> {
        flag_number(self.0[item])
    }
}

/// A flag's 1 or 0, or none for `NOT_COUNTED`.
#[inline]
pub fn flag_number(flag: u8) -> Option<f64> {
    match flag {
        NOT_COUNTED => None,
        flag => Some(f64::from(flag)),
    }
}

#[cfg(test)]
#[path = "resample_tests.rs"]
mod tests;
