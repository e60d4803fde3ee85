//! Aggregate accumulators: one per aggregate call in the metrics, fed item by item.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::base::codec::{Decoded, Reader, Writer};
use crate::base::exact_sum::ExactSum;
use crate::base::value::{format_number, Key, Value};
use crate::library::aggregates::AggregateFn;
use crate::library::error::RuntimeErrorKind;
pub use crate::report_model::item_values::Observation;
use crate::stats::calibration::Calibration;

#[derive(Debug, Clone)]
pub enum Accumulator {
    Count(u64),
    Ratio {
        hits: u64,
        total: u64,
    },
    Sum {
        sum: ExactSum,
        n: u64,
    },
    Extreme {
        best: Option<f64>,
        max: bool,
    },
    Values(Vec<f64>),
    Confusion(Confusion),
    Calibration(Calibration),
    /// `stability`: each keyed item's place in its file, key and value in this
    /// run, in item order; compared across runs once every run is read.
    Track(Vec<(u64, Key, Value)>),
}

impl Accumulator {
    pub fn new(function: AggregateFn) -> Self {
        match function {
            AggregateFn::Count => Accumulator::Count(0),
            AggregateFn::Ratio => Accumulator::Ratio { hits: 0, total: 0 },
            AggregateFn::Sum | AggregateFn::Mean => Accumulator::Sum {
                sum: ExactSum::default(),
                n: 0,
            },
            AggregateFn::Min => Accumulator::Extreme {
                best: None,
                max: false,
            },
            AggregateFn::Max => Accumulator::Extreme {
                best: None,
                max: true,
            },
            AggregateFn::Percentile(_) => Accumulator::Values(Vec::new()),
            AggregateFn::Kappa
            | AggregateFn::Agreement
            | AggregateFn::MacroF1
            | AggregateFn::MicroF1
            | AggregateFn::WeightedF1
            | AggregateFn::Confusion => Accumulator::Confusion(Confusion::default()),
            AggregateFn::Ece(bins) => Accumulator::Calibration(Calibration::new(bins)),
            AggregateFn::Brier => Accumulator::Calibration(Calibration::new(1)),
            AggregateFn::Stability => Accumulator::Track(Vec::new()),
        }
    }

    /// Adds one keyed item to a `stability` accumulator (items without a key
    /// cannot be found in other runs and are left out).
    pub fn track(&mut self, place: u64, key: Option<&Key>, value: Value) {
        if let (Accumulator::Track(items), Some(key)) = (self, key) {
            items.push((place, key.clone(), value));
        }
    }

    /// What one item that passed the `where` filter gives the aggregate,
    /// written over `slot`, without adding it (`observe` adds it): `value` is
    /// the argument's value (`None` for `count()`); null numbers are skipped,
    /// as in SQL. Every error an item can give an aggregate is found here, so
    /// items scored out of order (a streamed join) fold later, in item order,
    /// without failing.
    ///
    /// The observation is what intervals resample and item-values.jsonl keeps:
    /// 1 or 0 for a condition (`count`, `ratio`), the number, the two labels, or
    /// the confidence and correctness; `Out` for a skipped null.
    // The usual observations (a condition's flag, a number) are made inline
    // and written in place, as a tag and a number: returned from a call, or
    // moved in whole, an observation went through memory in pieces (the bytes
    // between tag and number, a calibrated item's bool) that the next loads
    // stalled on, a third of the 46-aggregate benchmark's scoring.
    #[inline]
    pub fn observe_into(
        &self,
        value: Option<&Value>,
        slot: &mut Observation,
    ) -> Result<(), RuntimeErrorKind> {
        let number = match (self, value) {
            (Accumulator::Count(_) | Accumulator::Ratio { .. }, None | Some(Value::Bool(true))) => {
                1.0
            }
            (
                Accumulator::Count(_) | Accumulator::Ratio { .. },
                Some(Value::Bool(false) | Value::Null),
            ) => 0.0,
            (
                Accumulator::Sum { .. } | Accumulator::Extreme { .. } | Accumulator::Values(_),
                Some(Value::Number(x)),
            ) => *x,
            _ => {
                *slot = self.any_observation(value)?;
                return Ok(());
            }
        };
        match slot {
            Observation::Number(x) => *x = number,
            _ => *slot = Observation::Number(number),
        }
        Ok(())
    }

    #[inline(never)]
    fn any_observation(&self, value: Option<&Value>) -> Result<Observation, RuntimeErrorKind> {
        Ok(match self {
            Accumulator::Count(_) | Accumulator::Ratio { .. } => {
                Observation::Number(f64::from(u8::from(condition(value)?)))
            }
            Accumulator::Sum { .. } | Accumulator::Extreme { .. } | Accumulator::Values(_) => {
                number(value)?.map_or(Observation::Out, Observation::Number)
            }
            Accumulator::Confusion(_) => match value {
                Some(Value::List(pair)) => match (label(&pair[0])?, label(&pair[1])?) {
                    (Some(a), Some(b)) => Observation::labels(a, b),
                    _ => Observation::Out,
                },
                _ => Observation::Out,
            },
            Accumulator::Calibration(_) => match value {
                Some(Value::List(pair)) => match calibrated(&pair[0], &pair[1])? {
                    Some((confidence, correct)) => Observation::Calibrated(confidence, correct),
                    None => Observation::Out,
                },
                _ => Observation::Out,
            },
            Accumulator::Track(_) => unreachable!("stability items are tracked with their key"),
        })
    }

    /// What one item gives the aggregate ([`Accumulator::observe_into`]).
    #[cfg(test)]
    pub fn observation(&self, value: Option<&Value>) -> Result<Observation, RuntimeErrorKind> {
        let mut observation = Observation::Out;
        self.observe_into(value, &mut observation)?;
        Ok(observation)
    }

    /// Adds one item at once: its observation, observed.
    #[cfg(test)]
    pub fn add(&mut self, value: Option<Value>) -> Result<Observation, RuntimeErrorKind> {
        let observation = self.observation(value.as_ref())?;
        self.observe(&observation, 1)?;
        Ok(observation)
    }

    /// Folds in one observation once: [`Accumulator::observe`] with `times` 1.
    // A count's or ratio's counters are added to inline; the general fold,
    // out of line, kept the call and its frame for every item of every
    // aggregate.
    #[inline]
    pub fn observe_one(&mut self, observation: &Observation) -> Result<(), RuntimeErrorKind> {
        match (self, observation) {
            (Accumulator::Count(n), Observation::Number(hit)) => *n += *hit as u64,
            (Accumulator::Ratio { hits, total }, Observation::Number(hit)) => {
                *total += 1;
                *hits += *hit as u64;
            }
            // An item filtered out of a `where` adds nothing, to any aggregate.
            (_, Observation::Out) => {}
            (accumulator, observation) => return accumulator.observe(observation, 1),
        }
        Ok(())
    }

    /// Folds in `counted` observations of a condition, `hits` of them 1 and
    /// the rest 0, as [`Accumulator::observe_one`] of each would: a count's
    /// or ratio's flags, counted a column at a time.
    pub fn observe_flags(&mut self, hits: u64, counted: u64) {
        match self {
            Accumulator::Count(n) => *n += hits,
            Accumulator::Ratio { hits: h, total } => {
                *h += hits;
                *total += counted;
            }
            _ => unreachable!("only a count or a ratio observes flags"),
        }
    }

    /// Folds in one observation `times` times (a bootstrap replicate's weight).
    /// `Out` adds nothing (a counted `ratio` item is 1 or 0, never `Out`).
    pub fn observe(
        &mut self,
        observation: &Observation,
        times: u64,
    ) -> Result<(), RuntimeErrorKind> {
        match (self, observation) {
            _ if times == 0 => {}
            (Accumulator::Count(n), Observation::Number(hit)) => *n += (*hit as u64) * times,
            (Accumulator::Ratio { hits, total }, Observation::Number(hit)) => {
                *total += times;
                *hits += (*hit as u64) * times;
            }
            (Accumulator::Sum { sum, n }, Observation::Number(x)) => {
                for _ in 0..times {
                    sum.add(*x);
                }
                *n += times;
            }
            (Accumulator::Extreme { best, max }, Observation::Number(x))
                if best.is_none_or(|b| better(*x, b, *max)) =>
            {
                *best = Some(*x);
            }
            (Accumulator::Values(values), Observation::Number(x)) => {
                values.extend(std::iter::repeat_n(*x, times as usize));
            }
            (Accumulator::Confusion(confusion), Observation::Labels(labels)) => {
                let (a, b) = &**labels;
                confusion.add_times(a.clone(), b.clone(), times);
            }
            (Accumulator::Calibration(calibration), Observation::Calibrated(c, ok)) => {
                for _ in 0..times {
                    calibration.add(*c, *ok)?;
                }
            }
            // `Out`, or an observation of another aggregate's kind (a baseline
            // file whose aggregate changed function): nothing to add.
            _ => {}
        }
        Ok(())
    }

    /// Folds in the accumulator of other items. Every accumulator merges
    /// exactly and in any order, so the result does not depend on how the
    /// items were split: sums are exact, a minimum or maximum breaks a tie
    /// of -0 and +0 by sign, and `stability`'s items merge by their places.
    pub fn merge(&mut self, other: &Accumulator) {
        match (self, other) {
            (Accumulator::Count(a), Accumulator::Count(b)) => *a += b,
            (Accumulator::Ratio { hits, total }, Accumulator::Ratio { hits: h, total: t }) => {
                *hits += h;
                *total += t;
            }
            (Accumulator::Sum { sum, n }, Accumulator::Sum { sum: s, n: m }) => {
                sum.merge(s);
                *n += m;
            }
            (Accumulator::Extreme { best, max }, Accumulator::Extreme { best: other, .. }) => {
                if let &Some(x) = other {
                    if best.is_none_or(|b| better(x, b, *max)) {
                        *best = Some(x);
                    }
                }
            }
            (Accumulator::Values(a), Accumulator::Values(b)) => a.extend_from_slice(b),
            (Accumulator::Confusion(a), Accumulator::Confusion(b)) => a.merge(b),
            (Accumulator::Calibration(a), Accumulator::Calibration(b)) => a.merge(b),
            (Accumulator::Track(a), Accumulator::Track(b)) => {
                let in_order = a.last().zip(b.first()).is_none_or(|(x, y)| x.0 < y.0);
                a.extend_from_slice(b);
                if !in_order {
                    a.sort_by_key(|(place, _, _)| *place);
                }
            }
            _ => unreachable!("accumulators of one aggregate have one kind"),
        }
    }

    /// Folds in `other` `times` times, as that many merges would (a bootstrap
    /// replicate that draws a group `times` times); integer counts are
    /// multiplied instead, where a merge per draw was most of a replicate.
    pub fn merge_times(&mut self, other: &Accumulator, times: u64) {
        match (&mut *self, other) {
            (Accumulator::Count(a), Accumulator::Count(b)) => *a += b * times,
            (Accumulator::Ratio { hits, total }, Accumulator::Ratio { hits: h, total: t }) => {
                *hits += h * times;
                *total += t * times;
            }
            (Accumulator::Confusion(a), Accumulator::Confusion(b)) => a.merge_times(b, times),
            _ => {
                for _ in 0..times {
                    self.merge(other);
                }
            }
        }
    }

    /// The aggregate's value; null when it has nothing to aggregate (an empty
    /// denominator), which a metric's `empty` replaces.
    pub fn finish(self, function: AggregateFn) -> Value {
        match (self, function) {
            (Accumulator::Count(n), _) => Value::Number(n as f64),
            (Accumulator::Ratio { total: 0, .. }, _) => Value::Null,
            (Accumulator::Ratio { hits, total }, _) => Value::Number(hits as f64 / total as f64),
            // A sum past f64's range has no value, as any non-finite number.
            (Accumulator::Sum { sum, .. }, AggregateFn::Sum) => finite(sum.total()),
            (Accumulator::Sum { n: 0, .. }, _) => Value::Null,
            (Accumulator::Sum { sum, n }, _) => finite(sum.mean(n)),
            (Accumulator::Extreme { best, .. }, _) => best.map_or(Value::Null, Value::Number),
            (Accumulator::Values(mut values), AggregateFn::Percentile(q)) => {
                values.sort_by(f64::total_cmp);
                percentile(&values, q).map_or(Value::Null, Value::Number)
            }
            (Accumulator::Values(_), _) => Value::Null,
            (Accumulator::Confusion(c), function) => c.table().value(function),
            (Accumulator::Calibration(c), AggregateFn::Brier) => {
                c.brier().map_or(Value::Null, Value::Number)
            }
            (Accumulator::Calibration(c), _) => c.ece().map_or(Value::Null, Value::Number),
            // Decided across runs, not by one run.
            (Accumulator::Track(_), _) => Value::Null,
        }
    }
}

impl Accumulator {
    /// Its exact state, for a partial state sent elsewhere.
    pub fn encode(&self, w: &mut Writer) {
        match self {
            Accumulator::Count(n) => {
                w.u8(0);
                w.u64(*n);
            }
            Accumulator::Ratio { hits, total } => {
                w.u8(1);
                w.u64(*hits);
                w.u64(*total);
            }
            Accumulator::Sum { sum, n } => {
                w.u8(2);
                sum.encode(w);
                w.u64(*n);
            }
            Accumulator::Extreme { best, max } => {
                w.u8(3);
                w.option(*best, Writer::f64);
                w.bool(*max);
            }
            Accumulator::Values(values) => {
                w.u8(4);
                w.seq(values.iter(), |w, x| w.f64(*x));
            }
            Accumulator::Confusion(confusion) => {
                w.u8(5);
                w.seq(confusion.counts.iter(), |w, ((a, b), n)| {
                    w.str(a);
                    w.str(b);
                    w.u64(*n);
                });
            }
            Accumulator::Calibration(calibration) => {
                w.u8(6);
                calibration.encode(w);
            }
            Accumulator::Track(items) => {
                w.u8(7);
                w.seq(items.iter(), |w, (place, key, value)| {
                    w.u64(*place);
                    w.key(key);
                    w.value(value);
                });
            }
        }
    }

    pub fn decode(r: &mut Reader<'_>) -> Decoded<Self> {
        Ok(match r.u8()? {
            0 => Accumulator::Count(r.u64()?),
            1 => Accumulator::Ratio {
                hits: r.u64()?,
                total: r.u64()?,
            },
            2 => Accumulator::Sum {
                sum: ExactSum::decode(r)?,
                n: r.u64()?,
            },
            3 => Accumulator::Extreme {
                best: r.option(Reader::f64)?,
                max: r.bool()?,
            },
            4 => Accumulator::Values(r.seq(Reader::f64)?),
            5 => Accumulator::Confusion(Confusion {
                counts: r
                    .seq(|r| Ok(((r.arc_str()?, r.arc_str()?), r.u64()?)))?
                    .into_iter()
                    .collect(),
            }),
            6 => Accumulator::Calibration(Calibration::decode(r)?),
            7 => Accumulator::Track(r.seq(|r| Ok((r.u64()?, r.key()?, r.value()?)))?),
            _ => return Err(r.expected("an accumulator's tag")),
        })
    }
}

/// Whether `x` replaces `best` as the maximum (`max`) or minimum: larger
/// (smaller), or equal and of the sign that order prefers (+0 over -0 for a
/// maximum), so that the extreme does not depend on the items' order.
fn better(x: f64, best: f64, max: bool) -> bool {
    match max {
        true => x > best || (x == best && x.total_cmp(&best).is_gt()),
        false => x < best || (x == best && x.total_cmp(&best).is_lt()),
    }
}

/// How two label sets for the same items cross: counts per (first, second) label.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Confusion {
    counts: BTreeMap<(Arc<str>, Arc<str>), u64>,
}

impl Confusion {
    pub fn add(&mut self, a: Arc<str>, b: Arc<str>) {
        self.add_times(a, b, 1);
    }

    pub fn add_times(&mut self, a: Arc<str>, b: Arc<str>, times: u64) {
        *self.counts.entry((a, b)).or_insert(0) += times;
    }

    pub fn merge(&mut self, other: &Confusion) {
        self.merge_times(other, 1);
    }

    /// `times` merges of `other` at once: its counts multiplied.
    pub fn merge_times(&mut self, other: &Confusion, times: u64) {
        if times == 0 {
            return;
        }
        for (pair, n) in &other.counts {
            // A look-up by reference first: cloning the pair's labels for
            // `entry` on every merge was most of a bootstrap of `kappa`.
            match self.counts.get_mut(pair) {
                Some(count) => *count += n * times,
                None => {
                    self.counts.insert(pair.clone(), n * times);
                }
            }
        }
    }

    /// Every non-zero cell: (first, second) label → items, in byte order.
    pub fn cells(&self) -> impl Iterator<Item = (&(Arc<str>, Arc<str>), &u64)> {
        self.counts.iter()
    }

    /// Items with both labels.
    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    /// Every label either side used, in natural order.
    pub fn labels(&self) -> Vec<Arc<str>> {
        let mut labels: Vec<Arc<str>> = self
            .counts
            .keys()
            .flat_map(|(a, b)| [a.clone(), b.clone()])
            .collect();
        labels.sort_by(|a, b| crate::base::natural::natural_cmp(a, b));
        labels.dedup();
        labels
    }

    /// Items labelled `a` by the first and `b` by the second.
    pub fn count(&self, a: &str, b: &str) -> u64 {
        self.counts
            .get(&(Arc::from(a), Arc::from(b)))
            .copied()
            .unwrap_or(0)
    }
}

/// A label for `kappa` and `agreement`: a string, number or bool; null leaves
/// the item out.
fn label(value: &Value) -> Result<Option<Arc<str>>, RuntimeErrorKind> {
    match value {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        Value::Bool(b) => Ok(Some(Arc::from(if *b { "true" } else { "false" }))),
        Value::Number(n) => Ok(Some(Arc::from(format_number(*n).as_str()))),
        Value::BigInt(b) => Ok(Some(Arc::from(b.to_string().as_str()))),
        other => Err(RuntimeErrorKind::LabelNotScalar {
            found: other.clone(),
        }),
    }
}

/// A calibration's item: its confidence and whether it is correct; null in
/// either leaves the item out.
fn calibrated(
    confidence: &Value,
    correct: &Value,
) -> Result<Option<(f64, bool)>, RuntimeErrorKind> {
    match (confidence, correct) {
        (Value::Null, _) | (_, Value::Null) => Ok(None),
        (Value::Number(c), Value::Bool(_)) if !(0.0..=1.0).contains(c) => {
            Err(RuntimeErrorKind::ConfidenceOutOfRange { found: *c })
        }
        (Value::Number(c), Value::Bool(ok)) => Ok(Some((*c, *ok))),
        (Value::Number(_), found) => Err(RuntimeErrorKind::AggregateNeedsBool {
            found: found.clone(),
        }),
        (found, _) => Err(RuntimeErrorKind::AggregateNeedsNumber {
            found: found.clone(),
        }),
    }
}

/// A `count`'s or `ratio`'s observation of an item: its condition (none: every
/// item counts), which must be a bool or null.
#[inline]
pub fn condition(value: Option<&Value>) -> Result<bool, RuntimeErrorKind> {
    match value {
        None | Some(Value::Bool(true)) => Ok(true),
        Some(Value::Bool(false) | Value::Null) => Ok(false),
        Some(found) => Err(RuntimeErrorKind::AggregateNeedsBool {
            found: found.clone(),
        }),
    }
}

fn number(value: Option<&Value>) -> Result<Option<f64>, RuntimeErrorKind> {
    match value {
        Some(Value::Number(x)) => Ok(Some(*x)),
        Some(Value::BigInt(b)) => Ok(Some(b.to_f64())),
        Some(Value::Null) | None => Ok(None),
        Some(found) => Err(RuntimeErrorKind::AggregateNeedsNumber {
            found: found.clone(),
        }),
    }
}

/// The `q`-th percentile (0..=100) of sorted values, computed exactly as numpy's
/// default (`method="linear"`): virtual index `n·p − p` with `p = q/100`, then a
/// linear interpolation that is evaluated from the nearer neighbour.
pub fn percentile(sorted: &[f64], q: f64) -> Option<f64> {
    percentile_of(sorted.len() as u64, |i| sorted[i as usize], q)
}

/// [`percentile`] of `n` sorted values given by their rank (`nth(0)` the least).
pub fn percentile_of(n: u64, mut nth: impl FnMut(u64) -> f64, q: f64) -> Option<f64> {
    if n == 0 {
        return None;
    }
    let p = q / 100.0;
    // numpy's own product for `linear`, `(n - 1)·p`: `n·p − p` is the same
    // number in exact arithmetic, not in floats (90th of 3 values: 1.8 vs
    // 1.8000000000000003).
    let virtual_index = ((n - 1) as f64 * p).clamp(0.0, (n - 1) as f64);
    let below = virtual_index.floor();
    let gamma = virtual_index - below;
    let lo = nth(below as u64);
    let hi = nth(((below as u64) + 1).min(n - 1));
    let diff = hi - lo;
    Some(if gamma >= 0.5 {
        hi - diff * (1.0 - gamma)
    } else {
        lo + diff * gamma
    })
}

/// A number, or null when it is not finite (NaN and infinities are never a value).
fn finite(x: f64) -> Value {
    match x.is_finite() {
        true => Value::Number(x),
        false => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_numpys_to_the_last_bit() {
        // numpy.percentile([0.3, 0.7, 1.9], 90) == 1.66
        assert_eq!(percentile(&[0.3, 0.7, 1.9], 90.0), Some(1.66));
        assert_eq!(percentile(&[1.0, 2.0, 3.0, 4.0], 50.0), Some(2.5));
        assert_eq!(percentile(&[5.0], 99.0), Some(5.0));
    }

    const FUNCTIONS: [AggregateFn; 10] = [
        AggregateFn::Count,
        AggregateFn::Ratio,
        AggregateFn::Sum,
        AggregateFn::Mean,
        AggregateFn::Min,
        AggregateFn::Max,
        AggregateFn::Percentile(50.0),
        AggregateFn::Kappa,
        AggregateFn::Ece(10),
        AggregateFn::Brier,
    ];

    fn arguments() -> Vec<Option<Value>> {
        let pair = |a, b| Some(Value::List(Arc::from(vec![a, b])));
        vec![
            None,
            Some(Value::Bool(true)),
            Some(Value::Bool(false)),
            Some(Value::Null),
            Some(Value::Number(0.25)),
            Some(Value::Number(-0.0)),
            Some(Value::Number(f64::NAN)),
            Some(Value::String(Arc::from("x"))),
            pair(Value::Number(0.75), Value::Bool(true)),
            pair(Value::String(Arc::from("a")), Value::String(Arc::from("b"))),
        ]
    }

    /// The inline observations and folds are the general ones, for every
    /// kind of accumulator and argument.
    #[test]
    fn inline_observations_and_folds_are_the_general_ones() {
        for function in FUNCTIONS {
            for argument in arguments() {
                let mut accumulator = Accumulator::new(function);
                let inline = accumulator.observation(argument.as_ref());
                let general = accumulator.any_observation(argument.as_ref());
                let at = format!("{function:?} of {argument:?}");
                assert_eq!(format!("{inline:?}"), format!("{general:?}"), "{at}");
                let Ok(observation) = general else { continue };
                let mut folded = accumulator.clone();
                let once = accumulator.observe_one(&observation);
                let general = folded.observe(&observation, 1);
                assert_eq!(once, general, "{at}");
                assert_eq!(format!("{accumulator:?}"), format!("{folded:?}"), "{at}");
            }
        }
    }

    /// Merging an accumulator `times` times at once is that many merges,
    /// for every kind.
    /// A minimum or maximum over both zeros, and `stability`'s items, come
    /// out the same whichever part of the items is merged into which.
    #[test]
    fn merges_do_not_depend_on_the_order_of_the_parts() {
        let extreme = |function, xs: &[f64]| {
            let mut a = Accumulator::new(function);
            for &x in xs {
                a.observe_one(&Observation::Number(x)).unwrap();
            }
            a
        };
        for function in [AggregateFn::Min, AggregateFn::Max] {
            let (plus, minus) = (
                extreme(function, &[0.0, 1.0]),
                extreme(function, &[-0.0, 1.0]),
            );
            let (mut ab, mut ba) = (plus.clone(), minus.clone());
            ab.merge(&minus);
            ba.merge(&plus);
            let (ab, ba) = (ab.finish(function), ba.finish(function));
            assert_eq!(format!("{ab:?}"), format!("{ba:?}"), "{function:?}");
        }
        let key = |k: &str| Key::Str(Arc::from(k));
        let tracked = |items: &[(u64, &str)]| {
            let mut a = Accumulator::new(AggregateFn::Stability);
            for &(place, k) in items {
                a.track(place, Some(&key(k)), Value::from(k));
            }
            a
        };
        let (early, late) = (
            tracked(&[(1, "a"), (5, "b")]),
            tracked(&[(3, "c"), (7, "d")]),
        );
        let (mut ab, mut ba) = (early.clone(), late.clone());
        ab.merge(&late);
        ba.merge(&early);
        let places = |a: &Accumulator| match a {
            Accumulator::Track(items) => items.iter().map(|(p, _, _)| *p).collect::<Vec<_>>(),
            _ => unreachable!(),
        };
        assert_eq!(places(&ab), [1, 3, 5, 7]);
        assert_eq!(places(&ba), [1, 3, 5, 7]);
    }

    #[test]
    fn a_merge_of_several_draws_is_as_many_merges() {
        for function in FUNCTIONS {
            let mut group = Accumulator::new(function);
            for argument in arguments() {
                if let Ok(observation) = group.any_observation(argument.as_ref()) {
                    let _ = group.observe(&observation, 1);
                }
            }
            for times in [0, 1, 2, 7] {
                let mut at_once = group.clone();
                at_once.merge_times(&group, times);
                let mut one_by_one = group.clone();
                for _ in 0..times {
                    one_by_one.merge(&group);
                }
                let at = format!("{function:?} x{times}");
                assert_eq!(format!("{at_once:?}"), format!("{one_by_one:?}"), "{at}");
            }
        }
    }

    #[test]
    fn percentiles_match_numpy_linear() {
        // Values from numpy.percentile(..., [50, 95, 99]).
        let xs = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&xs, 50.0), Some(2.5));
        assert_eq!(percentile(&xs, 95.0), Some(3.8499999999999996));
        assert_eq!(percentile(&[7.0], 99.0), Some(7.0));
        assert_eq!(percentile(&[1.0, 2.0, 3.0], 50.0), Some(2.0));
        assert_eq!(
            percentile(&[5.0, 5.0, 5.0, 9.0], 95.0),
            Some(8.399999999999999)
        );
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[test]
    fn percentiles_of_ties_single_values_and_even_and_odd_counts() {
        // By hand: index (n−1)·q/100, then linear between neighbours (numpy agrees).
        assert_eq!(percentile(&[1.0, 2.0, 3.0, 4.0, 5.0], 99.0), Some(4.96));
        assert_eq!(percentile(&[2.0, 2.0, 4.0, 4.0], 50.0), Some(3.0));
        assert_eq!(percentile(&[3.0, 3.0, 3.0], 95.0), Some(3.0));
        assert_eq!(percentile(&[10.0, 20.0], 95.0), Some(19.5));
        assert_eq!(percentile(&[42.0], 50.0), Some(42.0));
        assert_eq!(percentile(&[42.0], 0.0), Some(42.0));
        assert_eq!(percentile(&[1.0, 9.0], 0.0), Some(1.0));
        assert_eq!(percentile(&[1.0, 9.0], 100.0), Some(9.0));
    }

    fn confusion(pairs: &[(&str, &str)]) -> Confusion {
        let mut c = Confusion::default();
        for (a, b) in pairs {
            c.add(Arc::from(*a), Arc::from(*b));
        }
        c
    }

    #[test]
    fn a_table_lists_its_labels_and_counts_and_merges_as_one() {
        let mut pairs = vec![("refuse", "refuse"); 2];
        pairs.extend([("supported", "supported"); 5]);
        pairs.push(("unsupported", "supported"));
        let c = confusion(&pairs);
        assert_eq!(
            c.labels().iter().map(|l| l.as_ref()).collect::<Vec<_>>(),
            ["refuse", "supported", "unsupported"]
        );
        assert_eq!(c.count("unsupported", "supported"), 1);
        // Split anywhere, merged: the same table.
        let (mut first, second) = (confusion(&pairs[..3]), confusion(&pairs[3..]));
        first.merge(&second);
        assert_eq!(first, c);
    }

    #[test]
    fn labels_may_be_strings_numbers_or_bools_and_null_leaves_an_item_out() {
        let mut acc = Accumulator::new(AggregateFn::Agreement);
        let pair = |a: Value, b: Value| Some(Value::list(vec![a, b]));
        acc.add(pair(Value::Bool(true), Value::Bool(true))).unwrap();
        acc.add(pair(Value::Number(1.0), Value::Number(2.0)))
            .unwrap();
        acc.add(pair(Value::Null, Value::from("x"))).unwrap();
        assert_eq!(
            acc.clone().finish(AggregateFn::Agreement),
            Value::Number(0.5)
        );
        let error = acc
            .add(pair(Value::list(vec![]), Value::from("x")))
            .unwrap_err();
        assert!(
            matches!(error, RuntimeErrorKind::LabelNotScalar { .. }),
            "{error}"
        );
        assert!(error.to_string().starts_with("a label must be"), "{error}");
    }

    #[test]
    fn empty_ratio_and_mean_have_no_value_but_count_is_zero() {
        assert_eq!(
            Accumulator::new(AggregateFn::Ratio).finish(AggregateFn::Ratio),
            Value::Null
        );
        assert_eq!(
            Accumulator::new(AggregateFn::Mean).finish(AggregateFn::Mean),
            Value::Null
        );
        assert_eq!(
            Accumulator::new(AggregateFn::Count).finish(AggregateFn::Count),
            Value::Number(0.0)
        );
        let mut ratio = Accumulator::new(AggregateFn::Ratio);
        for v in [true, false, true] {
            ratio.add(Some(Value::Bool(v))).unwrap();
        }
        assert_eq!(ratio.finish(AggregateFn::Ratio), Value::Number(2.0 / 3.0));
    }
}
