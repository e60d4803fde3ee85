//! The percentile bootstrap over items, for any metric that is a ratio of
//! per-item sums (a mean, `ratio(x where w)`, a total, a count), alone or as a
//! paired change between two runs on the same items.
//!
//! A replicate resamples whole items: it draws n item indices uniformly with
//! replacement (SplitMix64, Lemire's unbiased bounded integers) and adds each
//! drawn item's numerator and denominator, which is the multinomial weighting
//! Σ cᵢ·numᵢ / Σ cᵢ·denᵢ without ever building the counts cᵢ or a copy of the
//! data. Replicate b draws from its own generator, seeded by the b-th output of
//! `SplitMix64::seeded(label, seed)`, so replicates could run on any thread in
//! any order and still give the same numbers: results depend only on the data
//! in item order, the label, the seed and B.
//!
//! Rules (also in grammar/README.md, "Statistics"):
//! - interval: numpy's default ("linear", Hyndman–Fan type 7) quantiles at
//!   (1 − level)/2 and (1 + level)/2 of the defined replicates, widened if
//!   needed to contain the point estimate (rounding or extreme skew);
//! - replicates whose denominator sums to 0 are left out; none left: `None`;
//! - paired p-values, d the replicates' changes and B′ how many are defined:
//!   one-sided p_decrease = (1 + #{d ≥ 0}) / (1 + B′), p_increase =
//!   (1 + #{d ≤ 0}) / (1 + B′), two-sided p = min(1, 2·min of the two);
//! - above `BOOTSTRAP_MAX_DRAWS` draws (n·B) `interval` and `paired` switch to
//!   the normal approximation by the delta method (`Method::Normal`).

use super::normal::{normal_cdf, normal_quantile};
use super::rng::SplitMix64;

/// B, the replicates of a bootstrap, unless a spec says otherwise.
pub const DEFAULT_REPLICATES: usize = 2000;

/// The largest n·B the automatic choice resamples (4·10^5: B = 2000 up to 200
/// items, the small eval sets where the normal approximation is weakest; 9–15
/// ns a draw, so ~5 ms a metric). Above it the delta-method normal interval
/// (under a millisecond at 50,000 items). At 2·10^7 draws a 10,000-item run
/// spent 0.4 s of its 0.46 s on bootstraps, 6x slower than without them.
pub const BOOTSTRAP_MAX_DRAWS: u64 = 400_000;

/// Per-item contributions to Σ num / Σ den, or to the total Σ num (a sum or a
/// count) when there is no denominator.
#[derive(Clone, Debug, PartialEq)]
pub struct RatioOfSums {
    num: Vec<f64>,
    den: Option<Vec<f64>>,
}

impl RatioOfSums {
    /// Σ num / Σ den; `num` and `den` have one entry per item.
    pub fn new(num: Vec<f64>, den: Vec<f64>) -> Self {
        assert_eq!(
            num.len(),
            den.len(),
            "one numerator and denominator per item"
        );
        RatioOfSums {
            num,
            den: Some(den),
        }
    }

    /// The mean of the defined values; an undefined (null) item still counts
    /// as an item to resample but adds nothing to either sum.
    pub fn mean(values: &[Option<f64>]) -> Self {
        let num = values.iter().map(|v| v.unwrap_or(0.0)).collect();
        let den = values
            .iter()
            .map(|v| if v.is_some() { 1.0 } else { 0.0 })
            .collect();
        RatioOfSums {
            num,
            den: Some(den),
        }
    }

    /// `ratio(x where w)`: the share of items with `w` that also have `x`.
    pub fn ratio(x: &[bool], w: &[bool]) -> Self {
        assert_eq!(x.len(), w.len(), "one x and one w per item");
        let num = x
            .iter()
            .zip(w)
            .map(|(&x, &w)| f64::from(u8::from(x && w)))
            .collect();
        let den = w.iter().map(|&w| f64::from(u8::from(w))).collect();
        RatioOfSums {
            num,
            den: Some(den),
        }
    }

    /// The total Σ values (a sum; a count when the values are 0 and 1).
    pub fn total(values: Vec<f64>) -> Self {
        RatioOfSums {
            num: values,
            den: None,
        }
    }

    /// How many items.
    pub fn len(&self) -> usize {
        self.num.len()
    }

    pub fn is_empty(&self) -> bool {
        self.num.is_empty()
    }

    /// The statistic on the data itself; `None` when Σ den = 0 or an input
    /// is not finite.
    pub fn point(&self) -> Option<f64> {
        let den = self.den.as_deref().unwrap_or(&[]);
        if !self.num.iter().chain(den).all(|v| v.is_finite()) {
            return None;
        }
        self.ratio_of(sum(&self.num), sum(den))
    }

    /// The numerators, one per item.
    pub fn numerators(&self) -> &[f64] {
        &self.num
    }

    /// The denominators, one per item; `None` for a total.
    pub fn denominators(&self) -> Option<&[f64]> {
        self.den.as_deref()
    }

    /// Item i's (numerator, denominator), the denominator 0 for a total.
    fn pair(&self, i: usize) -> [f64; 2] {
        [self.num[i], self.den.as_ref().map_or(0.0, |den| den[i])]
    }

    /// The statistic from summed contributions.
    fn ratio_of(&self, num: f64, den: f64) -> Option<f64> {
        match self.den {
            None => Some(num),
            Some(_) => (den != 0.0).then(|| num / den),
        }
    }
}

/// How an interval or a change was computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Bootstrap,
    /// The bootstrap over random groups of items (`eval::resample`).
    GroupedBootstrap,
    Normal,
}

impl Method {
    /// The name reports use: "bootstrap", "grouped_bootstrap" or "normal".
    pub fn name(self) -> &'static str {
        match self {
            Method::Bootstrap => "bootstrap",
            Method::GroupedBootstrap => "grouped_bootstrap",
            Method::Normal => "normal",
        }
    }
}

/// A confidence interval and how it was computed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
    pub method: Method,
}

/// The change new − old on shared items, its interval and p-values: the
/// two-sided `p_value`, and the one-sided ones a gate uses, `p_decrease`
/// (evidence that new < old) and `p_increase` (new > old);
/// `p_value = min(1, 2·min(p_decrease, p_increase))`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairedResult {
    pub delta: f64,
    pub low: f64,
    pub high: f64,
    pub p_value: f64,
    pub p_decrease: f64,
    pub p_increase: f64,
    /// One-sided bounds at `level`, the intervals of the one-sided tests: the
    /// change is at most `at_most` (what a test of a decrease reads) and at
    /// least `at_least` (a test of an increase).
    pub at_most: f64,
    pub at_least: f64,
    pub method: Method,
}

/// Whether n items and B replicates are within `BOOTSTRAP_MAX_DRAWS`.
pub fn bootstrap_fits(items: usize, replicates: usize) -> bool {
    (items as u64).saturating_mul(replicates as u64) <= BOOTSTRAP_MAX_DRAWS
}

/// The interval at `level`: the bootstrap with B = `replicates` when n·B is
/// within `BOOTSTRAP_MAX_DRAWS`, else the normal approximation.
pub fn interval(
    stat: &RatioOfSums,
    level: f64,
    replicates: usize,
    label: &str,
    seed: u64,
) -> Option<Interval> {
    let (low, high, method) = if bootstrap_fits(stat.len(), replicates) {
        let (low, high) = bootstrap_interval(stat, level, replicates, label, seed)?;
        (low, high, Method::Bootstrap)
    } else {
        let (low, high) = normal_interval(stat, level)?;
        (low, high, Method::Normal)
    };
    Some(Interval { low, high, method })
}

/// The percentile bootstrap interval (see the module rules); `None` when the
/// statistic is undefined, B = 0 or the level is not in (0, 1).
pub fn bootstrap_interval(
    stat: &RatioOfSums,
    level: f64,
    replicates: usize,
    label: &str,
    seed: u64,
) -> Option<(f64, f64)> {
    let point = stat.point()?;
    if !valid_level(level) || replicates == 0 {
        return None;
    }
    let items: Vec<[f64; 2]> = (0..stat.len()).map(|i| stat.pair(i)).collect();
    let mut values = Vec::with_capacity(replicates);
    for mut rng in replicate_generators(label, seed, replicates) {
        let [num, den] = draw(&items, &mut rng);
        values.extend(stat.ratio_of(num, den));
    }
    percentile_interval(&mut values, level, point)
}

/// The normal interval point ± z·se, se by the delta method: with
/// R = Σnum/Σden, se = √Σ(numᵢ − R·denᵢ)² / |Σden| (for a total,
/// se = √Σ(xᵢ − x̄)²), the standard deviation of the bootstrap's multinomial
/// weighting to first order.
pub fn normal_interval(stat: &RatioOfSums, level: f64) -> Option<(f64, f64)> {
    match &stat.den {
        None => normal_interval_of(stat.num.iter().map(|&x| (x, 0.0)), Kind::Total, level),
        Some(den) => {
            let items = stat.num.iter().copied().zip(den.iter().copied());
            normal_interval_of(items, Kind::Ratio, level)
        }
    }
}

/// What a ratio of sums is: Σ num (its denominators unread) or Σ num / Σ den.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Total,
    Ratio,
}

/// [`normal_interval`] of items (numᵢ, denᵢ) read twice from where they are
/// kept, not copied out: a count over a million items was two 8 MB vectors
/// made and dropped per metric (a 46-aggregate run has 21 counts). The same
/// sums in the same order as [`RatioOfSums::point`] and [`influence`]: the
/// same bits.
pub fn normal_interval_of(
    items: impl Iterator<Item = (f64, f64)> + Clone,
    kind: Kind,
    level: f64,
) -> Option<(f64, f64)> {
    let num = finite_sum(items.clone().map(|(n, _)| n))?;
    let (point, squares) = match kind {
        Kind::Total => {
            let mean = num / items.clone().count().max(1) as f64;
            (
                num,
                items.map(|(x, _)| x - mean).map(|z| z * z).sum::<f64>(),
            )
        }
        Kind::Ratio => {
            let total = finite_sum(items.clone().map(|(_, d)| d))?;
            let point = (total != 0.0).then(|| num / total)?;
            let influence = items.map(|(n, d)| (n - point * d) / total);
            (point, influence.map(|z| z * z).sum::<f64>())
        }
    };
    if !valid_level(level) {
        return None;
    }
    let half = -normal_quantile((1.0 - level) / 2.0) * squares.sqrt();
    Some((point - half, point + half))
}

/// [`sum`] of values that are all finite; `None` otherwise.
fn finite_sum(mut values: impl Iterator<Item = f64>) -> Option<f64> {
    values.try_fold(0.0, |acc, v| v.is_finite().then_some(acc + v))
}

/// The change new − old on the same items (item i of `new` is item i of
/// `old`): the bootstrap when n·B is within `BOOTSTRAP_MAX_DRAWS`, else the
/// normal approximation.
pub fn paired(
    new: &RatioOfSums,
    old: &RatioOfSums,
    level: f64,
    replicates: usize,
    label: &str,
    seed: u64,
) -> Option<PairedResult> {
    if bootstrap_fits(new.len(), replicates) {
        paired_bootstrap(new, old, level, replicates, label, seed)
    } else {
        paired_normal(new, old, level)
    }
}

/// The paired bootstrap: each replicate gives an item the same weight on
/// both sides, so the per-item correlation between the runs is kept.
pub fn paired_bootstrap(
    new: &RatioOfSums,
    old: &RatioOfSums,
    level: f64,
    replicates: usize,
    label: &str,
    seed: u64,
) -> Option<PairedResult> {
    assert_eq!(new.len(), old.len(), "paired statistics share their items");
    let delta = new.point()? - old.point()?;
    if !valid_level(level) || replicates == 0 {
        return None;
    }
    let items: Vec<[f64; 4]> = (0..new.len())
        .map(|i| {
            let ([a, b], [c, d]) = (new.pair(i), old.pair(i));
            [a, b, c, d]
        })
        .collect();
    let mut changes = Vec::with_capacity(replicates);
    for mut rng in replicate_generators(label, seed, replicates) {
        let [a, b, c, d] = draw(&items, &mut rng);
        if let (Some(x), Some(y)) = (new.ratio_of(a, b), old.ratio_of(c, d)) {
            changes.push(x - y);
        }
    }
    paired_result(changes, delta, level, Method::Bootstrap)
}

/// The paired result from the replicates' changes (the defined ones) and the
/// change on the data itself; `None` without a defined replicate.
pub fn paired_result(
    mut changes: Vec<f64>,
    delta: f64,
    level: f64,
    method: Method,
) -> Option<PairedResult> {
    // (1 + count)/(1 + B′): the replicate share, never 0, of changes on the
    // side of zero that speaks against the alternative.
    let share = |count: usize| (1 + count) as f64 / (1 + changes.len()) as f64;
    let p_decrease = share(changes.iter().filter(|&&d| d >= 0.0).count());
    let p_increase = share(changes.iter().filter(|&&d| d <= 0.0).count());
    let p_value = (2.0 * p_decrease.min(p_increase)).min(1.0);
    let (low, high) = percentile_interval(&mut changes, level, delta)?;
    // `changes` is sorted now.
    let at_most = quantile(&changes, level).max(delta);
    let at_least = quantile(&changes, 1.0 - level).min(delta);
    Some(PairedResult {
        delta,
        low,
        high,
        p_value,
        p_decrease,
        p_increase,
        at_most,
        at_least,
        method,
    })
}

/// The paired normal approximation: se = √Σzᵢ² with zᵢ the difference of the
/// two sides' delta-method influences; p_decrease = Φ(delta/se), p_increase =
/// Φ(−delta/se) (when se = 0: 0 for a change in the tested direction, else 1).
pub fn paired_normal(new: &RatioOfSums, old: &RatioOfSums, level: f64) -> Option<PairedResult> {
    assert_eq!(new.len(), old.len(), "paired statistics share their items");
    let (new_point, old_point) = (new.point()?, old.point()?);
    if !valid_level(level) {
        return None;
    }
    let delta = new_point - old_point;
    let variance: f64 = influence(new, new_point)
        .iter()
        .zip(influence(old, old_point))
        .map(|(a, b)| (a - b) * (a - b))
        .sum();
    let se = variance.sqrt();
    let half = -normal_quantile((1.0 - level) / 2.0) * se;
    let one_sided = |towards: f64| {
        if se > 0.0 {
            normal_cdf(-towards / se)
        } else if towards > 0.0 {
            0.0
        } else {
            1.0
        }
    };
    let (p_decrease, p_increase) = (one_sided(-delta), one_sided(delta));
    let one_side = -normal_quantile(1.0 - level) * se;
    Some(PairedResult {
        delta,
        low: delta - half,
        high: delta + half,
        p_value: (2.0 * p_decrease.min(p_increase)).min(1.0),
        p_decrease,
        p_increase,
        at_most: delta + one_side,
        at_least: delta - one_side,
        method: Method::Normal,
    })
}

/// Each item's first-order effect on the statistic: (numᵢ − R·denᵢ)/Σden,
/// or xᵢ − x̄ for a total.
fn influence(stat: &RatioOfSums, point: f64) -> Vec<f64> {
    match &stat.den {
        None => {
            let mean = point / stat.len().max(1) as f64;
            stat.num.iter().map(|x| x - mean).collect()
        }
        Some(den) => {
            let total = sum(den);
            stat.num
                .iter()
                .zip(den)
                .map(|(n, d)| (n - point * d) / total)
                .collect()
        }
    }
}

/// A sum in item order starting from +0 (`Iterator::sum` starts from −0).
fn sum(values: &[f64]) -> f64 {
    values.iter().fold(0.0, |acc, v| acc + v)
}

pub fn valid_level(level: f64) -> bool {
    level > 0.0 && level < 1.0
}

/// Replicate b's generator: a fresh SplitMix64 seeded with the b-th output of
/// the stream named by (label, seed).
pub fn replicate_generators(label: &str, seed: u64, replicates: usize) -> Vec<SplitMix64> {
    let mut root = SplitMix64::seeded(label, seed);
    (0..replicates)
        .map(|_| SplitMix64::new(root.next_u64()))
        .collect()
}

/// One replicate: the sums of n items drawn with replacement.
fn draw<const K: usize>(items: &[[f64; K]], rng: &mut SplitMix64) -> [f64; K] {
    let mut sums = [0.0; K];
    let n = items.len() as u64;
    for _ in 0..n {
        let item = &items[rng.below(n) as usize];
        for k in 0..K {
            sums[k] += item[k];
        }
    }
    sums
}

/// numpy's linear quantiles at (1 ∓ level)/2, widened to contain `point`.
pub fn percentile_interval(values: &mut [f64], level: f64, point: f64) -> Option<(f64, f64)> {
    if values.is_empty() {
        return None;
    }
    values.sort_unstable_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    let low = quantile(values, tail).min(point);
    let high = quantile(values, 1.0 - tail).max(point);
    Some((low, high))
}

/// numpy.quantile(sorted, q) with its default method "linear": the virtual
/// index (n − 1)·q, and numpy's two-sided interpolation between neighbours.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let last = sorted.len() - 1;
    let virtual_index = last as f64 * q;
    if virtual_index >= last as f64 {
        return sorted[last];
    }
    let below = virtual_index.floor();
    let (a, b) = (sorted[below as usize], sorted[below as usize + 1]);
    let t = virtual_index - below;
    let diff = b - a;
    if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    }
}

#[cfg(test)]
#[path = "bootstrap_tests.rs"]
mod tests;
