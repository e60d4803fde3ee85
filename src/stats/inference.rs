//! Intervals on the metrics computed from items, and paired tests of their change
//! against a prior run on the items both share. The arithmetic is
//! `base::stats`; this module decides which test fits, and pairs items by key.
//!
//! - Interval: a `ratio` gets the Wilson score interval; a `mean` or `sum`
//!   the percentile bootstrap over items (B = [`REPLICATES`], seed [`SEED`],
//!   labelled `interval:METRIC`), or its normal approximation above
//!   `BOOTSTRAP_MAX_DRAWS` draws; a `count` of items none.
//! - Change: items are matched by key (the key's JSON text); items without a
//!   key, or in one run only, are left out and counted. A key repeated in a run
//!   (`duplicates: keep`) is one unit: its items' contributions are added up.
//!   A `ratio` whose filter holds on the same shared items in both runs (and no
//!   repeated key) gets McNemar's exact test on the discordant items, with the
//!   Wald interval of the paired difference; any other metric the paired
//!   bootstrap (labelled `change:METRIC`).
//!
//! Everything depends only on the items in file order, never on threads.

use std::collections::HashMap;

use foldhash::fast::FixedState;

use crate::base::stats::binomial::{binom_test_greater, clopper_pearson_lower, mcnemar};
use crate::base::stats::bootstrap::{self, RatioOfSums};
use crate::base::stats::normal::normal_quantile;
use crate::base::stats::wilson::wilson;
use crate::report_model::item_values::ValueKind;

/// Bootstrap replicates.
pub const REPLICATES: usize = bootstrap::DEFAULT_REPLICATES;
/// The seed of every bootstrap; each metric draws its own stream from its label.
pub const SEED: u64 = 0;

/// A metric's interval at `level`.
#[derive(Debug, Clone, PartialEq)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
    /// `wilson`, `bootstrap` or `normal`.
    pub method: &'static str,
    pub level: f64,
}

impl Interval {
    /// A bootstrap's or normal approximation's interval at `level`.
    pub fn of(found: &bootstrap::Interval, level: f64) -> Interval {
        Interval {
            low: found.low,
            high: found.high,
            method: found.method.name(),
            level,
        }
    }
}

/// The change of a metric (new − old) on the items two runs share.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeTest {
    pub delta: f64,
    pub low: f64,
    pub high: f64,
    /// Two-sided.
    pub p_value: f64,
    /// One-sided: that the metric went down, and up.
    pub p_down: f64,
    pub p_up: f64,
    /// One-sided bounds at `level`, each the interval of one one-sided test:
    /// the change is at most `at_most` (a test of a drop) and at least
    /// `at_least` (a test of a rise).
    pub at_most: f64,
    pub at_least: f64,
    /// Holm's adjusted p-value of a one-sided test (`true`: of a drop) that is
    /// one of a decision's family (see `stats::family`), and the family's size.
    pub holm: Option<(bool, f64, usize)>,
    /// `mcnemar`, `paired_bootstrap` or `paired_normal`.
    pub test: &'static str,
    pub level: f64,
    /// Units (keys) both runs have.
    pub items: usize,
    /// Items left out: in the new run only, in the old run only, without a key.
    pub only_new: usize,
    pub only_old: usize,
    pub keyless: usize,
}

impl ChangeTest {
    /// A bootstrap's or normal approximation's result, before its items are counted.
    pub fn of(found: &bootstrap::PairedResult, level: f64) -> ChangeTest {
        ChangeTest {
            delta: found.delta,
            low: found.low,
            high: found.high,
            p_value: found.p_value,
            p_down: found.p_decrease,
            p_up: found.p_increase,
            at_most: found.at_most,
            at_least: found.at_least,
            holm: None,
            test: match found.method {
                bootstrap::Method::Bootstrap => "paired_bootstrap",
                bootstrap::Method::GroupedBootstrap => "paired_grouped_bootstrap",
                bootstrap::Method::Normal => "paired_normal",
            },
            level,
            items: 0,
            only_new: 0,
            only_old: 0,
            keyless: 0,
        }
    }

    /// The side the change moved to (a drop when it did not move at all):
    /// the one-sided test every output reports.
    pub fn moved_down(&self) -> bool {
        self.delta < 0.0 || (self.delta == 0.0 && self.p_down <= self.p_up)
    }

    /// The one-sided p-value in the direction the change moved (see `moved_down`).
    pub fn p_moved(&self) -> f64 {
        if self.moved_down() {
            self.p_down
        } else {
            self.p_up
        }
    }

    /// The one-sided p-value of a drop (`down`) or of a rise.
    pub fn p_toward(&self, down: bool) -> f64 {
        if down {
            self.p_down
        } else {
            self.p_up
        }
    }

    /// Holm's adjusted p-value of the test of a drop (`down`) or a rise, when
    /// that test is in a family.
    pub fn p_adjusted_toward(&self, down: bool) -> Option<f64> {
        self.holm.filter(|(d, _, _)| *d == down).map(|(_, p, _)| p)
    }

    /// Holm's adjusted p-value of the test every output shows (`p_moved`),
    /// when that test is in a family.
    pub fn p_adjusted(&self) -> Option<f64> {
        self.p_adjusted_toward(self.moved_down())
    }

    /// The one-sided bound matching `p_moved`: the change is at most
    /// `at_most` after a drop, at least `at_least` after a rise.
    pub fn bound_moved(&self) -> f64 {
        if self.moved_down() {
            self.at_most
        } else {
            self.at_least
        }
    }

    /// The one-sided test every output shows, as text:
    /// `95% bound ≤ −0.010, one-sided p = 0.004` (with `, Holm p = 0.020 of 5
    /// tests` when adjusted).
    pub fn one_sided_text(&self) -> String {
        let level = crate::base::value::format_number(self.level * 100.0);
        let sign = if self.moved_down() { "≤" } else { "≥" };
        let mut text = format!(
            "{level}% bound {sign} {}, one-sided p {}",
            fixed(self.bound_moved()),
            p_text(self.p_moved())
        );
        // Of one test alone, the adjusted p is the p.
        let family = self.holm.filter(|h| h.0 == self.moved_down() && h.2 > 1);
        if let Some((_, adjusted, tests)) = family {
            text.push_str(&format!(", Holm p {} of {tests} tests", p_text(adjusted)));
        }
        text
    }

    /// The test's name in reasons: `McNemar`, `paired bootstrap`, ….
    pub fn test_name(&self) -> &'static str {
        match self.test {
            "mcnemar" => "McNemar",
            "paired_bootstrap" => "paired bootstrap",
            "paired_grouped_bootstrap" => "paired grouped bootstrap",
            _ => "paired normal approximation",
        }
    }
}

/// The interval of one metric from its items' contributions (item order),
/// read as they are kept: a ratio needs only its counts, and the normal
/// approximation (past the bootstrap's size) reads the items twice, so a
/// column of a million items is not copied out first.
pub fn interval(
    kind: ValueKind,
    values: impl Iterator<Item = Option<f64>> + Clone,
    level: f64,
    label: &str,
) -> Option<Interval> {
    // A count of items is what it is: no interval (its change is still tested).
    if kind == ValueKind::Count {
        return None;
    }
    if kind == ValueKind::Ratio {
        let (mut hits, mut total) = (0u64, 0u64);
        for value in values.flatten() {
            total += 1;
            hits += u64::from(value == 1.0);
        }
        let (low, high) = wilson(hits, total, level)?;
        return Some(Interval {
            low,
            high,
            method: "wilson",
            level,
        });
    }
    if !bootstrap::bootstrap_fits(values.clone().count(), REPLICATES) {
        let items = values.map(numerator_and_denominator);
        let statistic = if kind.is_total() {
            bootstrap::Kind::Total
        } else {
            bootstrap::Kind::Ratio
        };
        let (low, high) = bootstrap::normal_interval_of(items, statistic, level)?;
        let method = bootstrap::Method::Normal;
        return Some(Interval::of(
            &bootstrap::Interval { low, high, method },
            level,
        ));
    }
    let stat = statistic(kind, values);
    let found = bootstrap::interval(&stat, level, REPLICATES, &format!("interval:{label}"), SEED)?;
    Some(Interval::of(&found, level))
}

/// The items' contributions as a ratio of sums (a sum or a count: a total).
fn statistic(kind: ValueKind, values: impl Iterator<Item = Option<f64>>) -> RatioOfSums {
    let (num, den) = values.map(numerator_and_denominator).unzip();
    if kind.is_total() {
        RatioOfSums::total(num)
    } else {
        RatioOfSums::new(num, den)
    }
}

/// An item's contribution to the sums of a ratio: its value over 1, or
/// nothing over nothing when it has none (a total reads the numerator).
fn numerator_and_denominator(value: Option<f64>) -> (f64, f64) {
    value.map_or((0.0, 0.0), |x| (x, 1.0))
}

/// Which items of two runs are the same unit: items matched by key (the key's
/// JSON text), a key repeated in a run being one unit. Built once per pair of
/// runs and used for every metric.
#[derive(Debug, Default)]
pub struct Pairing {
    /// Per item of the new run, of the old run: its unit, when both runs have the key.
    new_unit: Vec<Option<u32>>,
    old_unit: Vec<Option<u32>>,
    /// Units, numbered in the new run's order of first appearance.
    pub units: usize,
    /// Every unit has exactly one item on each side.
    single: bool,
    pub only_new: usize,
    pub only_old: usize,
    pub keyless: usize,
}

impl Pairing {
    /// `new` and `old` give each item's key (`None`: no key), in item order.
    pub fn new<'k>(
        new: impl Iterator<Item = Option<&'k str>>,
        old: impl Iterator<Item = Option<&'k str>>,
    ) -> Pairing {
        let mut pairing = Pairing {
            single: true,
            ..Pairing::default()
        };
        // Per old key: its unit (assigned when the new run meets it) and items.
        let old: Vec<Option<&str>> = old.collect();
        let mut old_keys: HashMap<&str, (Option<u32>, u32), FixedState> =
            HashMap::with_capacity_and_hasher(old.len(), FixedState::default());
        for key in old.iter().flatten() {
            old_keys.entry(key).or_insert((None, 0)).1 += 1;
        }
        let mut seen_new: Vec<u32> = Vec::new();
        for key in new {
            let unit = match key.and_then(|k| old_keys.get_mut(k).map(|e| (k, e))) {
                Some((_, (unit, items))) => {
                    if *items > 1 {
                        pairing.single = false;
                    }
                    let unit = *unit.get_or_insert_with(|| {
                        seen_new.push(0);
                        (seen_new.len() - 1) as u32
                    });
                    seen_new[unit as usize] += 1;
                    Some(unit)
                }
                None => {
                    match key {
                        Some(_) => pairing.only_new += 1,
                        None => pairing.keyless += 1,
                    }
                    None
                }
            };
            pairing.new_unit.push(unit);
        }
        pairing.single &= seen_new.iter().all(|&n| n == 1);
        pairing.units = seen_new.len();
        for key in old {
            let unit = match key {
                Some(key) => old_keys.get(key).and_then(|(unit, _)| *unit),
                None => {
                    pairing.keyless += 1;
                    None
                }
            };
            if key.is_some() && unit.is_none() {
                pairing.only_old += 1;
            }
            pairing.old_unit.push(unit);
        }
        pairing
    }

    /// Per unit, the old run's items in it (item order): what [`Pairing::subset`]
    /// reads, built once per pairing.
    pub fn old_items(&self) -> UnitItems {
        let mut starts = vec![0u32; self.units + 1];
        for unit in self.old_unit.iter().flatten() {
            starts[*unit as usize + 1] += 1;
        }
        for u in 0..self.units {
            starts[u + 1] += starts[u];
        }
        let mut next = starts.clone();
        let mut items = vec![0u32; starts[self.units] as usize];
        for (j, unit) in self.old_unit.iter().enumerate() {
            if let Some(unit) = unit {
                let at = &mut next[*unit as usize];
                items[*at as usize] = j as u32;
                *at += 1;
            }
        }
        UnitItems { starts, items }
    }

    /// The pairing of the new run's items `members` (item indices, ascending)
    /// as their own, with the old run's items of their units (ascending): the
    /// caller gathers each side's contributions at those indices. A unit is
    /// kept with its first member; members not shared (a key the old run
    /// lacks, or none) are counted as `only_new`; the old run's items outside
    /// the kept units are not counted, having no slice value in the new run. A
    /// slice value's items are tested this way, at a cost of its own items.
    pub fn subset(&self, members: &[usize], old_items: &UnitItems) -> (Pairing, Vec<usize>) {
        let mut renumbered: HashMap<u32, u32, FixedState> = HashMap::default();
        let mut only_new = 0;
        let mut new_unit = Vec::with_capacity(members.len());
        for &i in members {
            new_unit.push(match self.new_unit[i] {
                Some(unit) => {
                    let next = renumbered.len() as u32;
                    Some(*renumbered.entry(unit).or_insert(next))
                }
                None => {
                    only_new += 1;
                    None
                }
            });
        }
        let mut old: Vec<usize> = (renumbered.keys())
            .flat_map(|&unit| {
                let (a, b) = (
                    old_items.starts[unit as usize],
                    old_items.starts[unit as usize + 1],
                );
                old_items.items[a as usize..b as usize]
                    .iter()
                    .map(|&j| j as usize)
            })
            .collect();
        old.sort_unstable();
        let old_unit = (old.iter())
            .map(|&j| self.old_unit[j].and_then(|u| renumbered.get(&u).copied()))
            .collect();
        let pairing = Pairing {
            new_unit,
            old_unit,
            units: renumbered.len(),
            single: self.single,
            only_new,
            only_old: 0,
            keyless: 0,
        };
        (pairing, old)
    }

    /// Per item of the new run, its unit (`None`: not shared).
    pub fn new_units(&self) -> &[Option<u32>] {
        &self.new_unit
    }

    /// Per item of the old run, its unit.
    pub fn old_units(&self) -> &[Option<u32>] {
        &self.old_unit
    }

    /// Writes the counts of shared and left-out items into a test's result.
    pub fn count(&self, test: &mut ChangeTest) {
        test.items = self.units;
        test.only_new = self.only_new;
        test.only_old = self.only_old;
        test.keyless = self.keyless;
    }

    /// Each unit's summed contributions on one side.
    fn sums(units: usize, of: &[Option<u32>], values: &[Option<f64>]) -> Vec<Unit> {
        let mut sums = vec![Unit::default(); units];
        for (unit, value) in of.iter().zip(values) {
            if let Some(unit) = unit {
                sums[*unit as usize].add(*value);
            }
        }
        sums
    }
}

/// Per unit of a [`Pairing`], the old run's items in it: unit `u`'s are
/// `items[starts[u]..starts[u + 1]]`.
#[derive(Debug, Default)]
pub struct UnitItems {
    starts: Vec<u32>,
    items: Vec<u32>,
}

/// Per unit both runs share: (numerator, denominator, items) on each side.
#[derive(Debug, Default, Clone, Copy)]
struct Unit {
    num: f64,
    den: f64,
    items: u32,
}

impl Unit {
    fn add(&mut self, value: Option<f64>) {
        if let Some(x) = value {
            self.num += x;
            self.den += 1.0;
        }
        self.items += 1;
    }
}

/// The paired test of a metric of `kind` between two runs paired by `pairing`
/// (`new` and `old` hold each item's contribution, in item order); `None` when
/// they share no item or the metric is undefined on the shared items.
pub fn change(
    kind: ValueKind,
    pairing: &Pairing,
    new: &[Option<f64>],
    old: &[Option<f64>],
    level: f64,
    label: &str,
) -> Option<ChangeTest> {
    if pairing.units == 0 {
        return None;
    }
    let new_sums = Pairing::sums(pairing.units, &pairing.new_unit, new);
    let old_sums = Pairing::sums(pairing.units, &pairing.old_unit, old);
    let pairs: Vec<(Unit, Unit)> = new_sums.into_iter().zip(old_sums).collect();
    let mcnemar_fits =
        kind == ValueKind::Ratio && pairing.single && pairs.iter().all(|(n, o)| n.den == o.den);
    let mut found = if mcnemar_fits {
        mcnemar_change(&pairs, level)?
    } else {
        bootstrap_change(kind, &pairs, level, label)?
    };
    pairing.count(&mut found);
    Some(found)
}

/// McNemar's exact test on the shared items where the filter holds: b went
/// from hit to miss, c from miss to hit; the two-sided interval is the Wald
/// interval of the paired difference, (c − b)/n ± z·√(b + c − (c − b)²/n)/n,
/// clipped to [−1, 1]; the one-sided bounds invert the exact one-sided tests.
fn mcnemar_change(pairs: &[(Unit, Unit)], level: f64) -> Option<ChangeTest> {
    let counted = pairs.iter().filter(|(n, _)| n.den == 1.0);
    let (mut b, mut c, mut n) = (0u64, 0u64, 0u64);
    for (new, old) in counted {
        n += 1;
        match (old.num == 1.0, new.num == 1.0) {
            (true, false) => b += 1,
            (false, true) => c += 1,
            _ => {}
        }
    }
    if n == 0 {
        return None;
    }
    let nf = n as f64;
    let delta = (c as f64 - b as f64) / nf;
    let spread = (b + c) as f64 - (c as f64 - b as f64).powi(2) / nf;
    let z = -normal_quantile((1.0 - level) / 2.0);
    let half = z * spread.max(0.0).sqrt() / nf;
    // The one-sided bounds invert the exact tests: of the discordant items, the
    // share that went from hit to miss is at least Clopper–Pearson's bound, so
    // the change is at most (b + c)/n·(1 − 2·bound); they exclude 0 exactly
    // when the one-sided test rejects at 1 − level.
    let discordant = (b + c) as f64 / nf;
    let at_most = discordant * (1.0 - 2.0 * clopper_pearson_lower(b, b + c, level));
    let at_least = discordant * (2.0 * clopper_pearson_lower(c, b + c, level) - 1.0);
    Some(ChangeTest {
        delta,
        low: (delta - half).max(-1.0),
        high: (delta + half).min(1.0),
        p_value: mcnemar(b, c),
        p_down: binom_test_greater(b, b + c),
        p_up: binom_test_greater(c, b + c),
        at_most: at_most.max(delta),
        at_least: at_least.min(delta),
        holm: None,
        test: "mcnemar",
        level,
        items: 0,
        only_new: 0,
        only_old: 0,
        keyless: 0,
    })
}

/// The paired bootstrap (or its normal approximation) over the shared units,
/// with its one-sided p-values (see `base::stats::bootstrap`).
fn bootstrap_change(
    kind: ValueKind,
    pairs: &[(Unit, Unit)],
    level: f64,
    label: &str,
) -> Option<ChangeTest> {
    let side = |pick: fn(&(Unit, Unit)) -> Unit| {
        let units = pairs.iter().map(pick);
        if kind.is_total() {
            RatioOfSums::total(units.map(|u| u.num).collect())
        } else {
            let (num, den) = units.map(|u| (u.num, u.den)).unzip();
            RatioOfSums::new(num, den)
        }
    };
    let (new, old) = (side(|p| p.0), side(|p| p.1));
    let label = format!("change:{label}");
    let found = bootstrap::paired(&new, &old, level, REPLICATES, &label, SEED)?;
    Some(ChangeTest::of(&found, level))
}

/// Three decimals, with a true minus sign.
pub fn fixed(x: f64) -> String {
    let text = format!("{:.3}", x.abs());
    if x < 0.0 && text.chars().any(|c| c.is_ascii_digit() && c != '0') {
        format!("−{text}")
    } else {
        text
    }
}

/// `= 0.004`, or `< 0.001` below that.
pub fn p_text(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".to_string()
    } else {
        format!("= {:.3}", p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Side = Vec<(&'static str, Option<f64>)>;

    fn side(items: &[(&'static str, Option<f64>)]) -> Side {
        items.to_vec()
    }

    fn change(
        kind: ValueKind,
        new: &Side,
        old: &Side,
        level: f64,
        label: &str,
    ) -> Option<ChangeTest> {
        let pairing = Pairing::new(
            new.iter().map(|(k, _)| Some(*k)),
            old.iter().map(|(k, _)| Some(*k)),
        );
        let values = |s: &Side| s.iter().map(|(_, v)| *v).collect::<Vec<_>>();
        super::change(kind, &pairing, &values(new), &values(old), level, label)
    }

    #[test]
    fn a_ratio_with_the_same_filter_gets_mcnemar_and_counts_what_is_left_out() {
        let old = side(&[
            ("a", Some(1.0)),
            ("b", Some(1.0)),
            ("c", Some(0.0)),
            ("x", None),
        ]);
        let new = side(&[
            ("a", Some(0.0)),
            ("b", Some(1.0)),
            ("c", Some(0.0)),
            ("y", Some(1.0)),
        ]);
        let found = change(ValueKind::Ratio, &new, &old, 0.95, "p").unwrap();
        assert_eq!(found.test, "mcnemar");
        assert_eq!((found.items, found.only_new, found.only_old), (3, 1, 1));
        assert!((found.delta + 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(found.p_value, 1.0);
    }

    #[test]
    fn no_discordant_items_give_p_one() {
        let old = side(&[("a", Some(1.0)), ("b", Some(0.0))]);
        let found = change(ValueKind::Ratio, &old, &old, 0.95, "p").unwrap();
        assert_eq!((found.delta, found.p_value), (0.0, 1.0));
    }

    #[test]
    fn a_repeated_key_is_one_unit_and_leaves_mcnemar() {
        let old = side(&[("a", Some(1.0)), ("a", Some(1.0)), ("b", Some(0.0))]);
        let new = side(&[("a", Some(1.0)), ("a", Some(0.0)), ("b", Some(0.0))]);
        let found = change(ValueKind::Ratio, &new, &old, 0.95, "p").unwrap();
        assert_eq!(found.test, "paired_bootstrap");
        assert_eq!(found.items, 2);
    }

    /// A subset of the new run's items is paired as the same items would be on
    /// their own: the test of a slice value is the test of its items.
    #[test]
    fn a_subset_is_paired_as_its_items_alone() {
        let old = side(&[
            ("a", Some(1.0)),
            ("b", Some(1.0)),
            ("c", Some(0.0)),
            ("d", Some(1.0)),
            ("b", Some(0.0)),
        ]);
        let new = side(&[
            ("d", Some(0.0)),
            ("a", Some(0.0)),
            ("b", Some(1.0)),
            ("x", Some(1.0)),
            ("c", Some(1.0)),
        ]);
        let keys = |s: &Side| s.iter().map(|(k, _)| Some(*k)).collect::<Vec<_>>();
        let pairing = Pairing::new(keys(&new).into_iter(), keys(&old).into_iter());
        // The new run's items 1, 2 and 3: keys a, b (repeated in the old run), x.
        let (sub, old_members) = pairing.subset(&[1, 2, 3], &pairing.old_items());
        assert_eq!(old_members, vec![0, 1, 4]);
        assert_eq!((sub.units, sub.only_new), (2, 1));
        let alone_new = side(&[("a", Some(0.0)), ("b", Some(1.0)), ("x", Some(1.0))]);
        let alone_old = side(&[("a", Some(1.0)), ("b", Some(1.0)), ("b", Some(0.0))]);
        let values = |s: &Side, at: &[usize]| at.iter().map(|&i| s[i].1).collect::<Vec<_>>();
        let found = super::change(
            ValueKind::Mean,
            &sub,
            &values(&new, &[1, 2, 3]),
            &values(&old, &old_members),
            0.95,
            "m",
        )
        .unwrap();
        let alone = change(ValueKind::Mean, &alone_new, &alone_old, 0.95, "m").unwrap();
        assert_eq!(
            (found.delta, found.p_down, found.items),
            (alone.delta, alone.p_down, alone.items)
        );
    }

    /// Past the bootstrap's size, a count's, sum's or mean's interval read in
    /// place is the one of its items copied out; below it, the bootstrap's.
    #[test]
    fn intervals_read_in_place_are_those_of_the_items_copied_out() {
        for n in [50, 5000] {
            let values: Vec<Option<f64>> = (0..n)
                .map(|i| (i % 7 != 3).then(|| f64::from((i * 37 % 11) as u32) / 4.0))
                .collect();
            assert_eq!(
                interval(ValueKind::Count, values.iter().copied(), 0.9, "m"),
                None
            );
            for kind in [ValueKind::Mean, ValueKind::Sum] {
                let found = interval(kind, values.iter().copied(), 0.9, "m").unwrap();
                let stat = statistic(kind, values.iter().copied());
                let copied = bootstrap::interval(&stat, 0.9, REPLICATES, "interval:m", SEED);
                assert_eq!(
                    found,
                    Interval::of(&copied.unwrap(), 0.9),
                    "{kind:?} of {n}"
                );
                let method = if n > 200 { "normal" } else { "bootstrap" };
                assert_eq!(found.method, method, "{kind:?} of {n}");
            }
        }
    }

    #[test]
    fn a_ratio_interval_is_wilson() {
        let values = [Some(1.0), Some(0.0), None, Some(1.0)];
        let found = interval(ValueKind::Ratio, values.into_iter(), 0.95, "p").unwrap();
        assert_eq!(found.method, "wilson");
        assert!(found.low < 2.0 / 3.0 && 2.0 / 3.0 < found.high);
    }
}
