use super::super::permutation::exact_paired_permutation;
use super::*;
use proptest::prelude::*;

/// Data sets drawn from a fixed stream, so every run of the tests is the same.
struct Sample(SplitMix64);

impl Sample {
    fn new(label: &str) -> Self {
        Sample(SplitMix64::seeded(label, 0))
    }
    fn bernoulli(&mut self, n: usize, p: f64) -> Vec<Option<f64>> {
        (0..n)
            .map(|_| Some(f64::from(u8::from(self.0.next_f64() < p))))
            .collect()
    }
    /// Exponential(1): skewed (skewness 2), mean 1.
    fn exponential(&mut self, n: usize) -> Vec<Option<f64>> {
        (0..n).map(|_| Some(self.unit_exponential())).collect()
    }
    /// Gamma(4, 1), the sum of four exponentials: skewness 1, mean 4.
    fn gamma4(&mut self, n: usize) -> Vec<Option<f64>> {
        (0..n)
            .map(|_| Some((0..4).map(|_| self.unit_exponential()).sum()))
            .collect()
    }
    fn unit_exponential(&mut self) -> f64 {
        -(1.0 - self.0.next_f64()).ln()
    }
}

#[test]
fn quantiles_follow_numpy_linear() {
    // numpy.quantile([3, 1, 4, 1, 5, 9, 2, 6], q) printed with repr.
    let mut data = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0];
    data.sort_by(f64::total_cmp);
    assert_eq!(quantile(&data, 0.025), 1.0);
    assert_eq!(quantile(&data, 0.975), 8.475_000_000_000_001);
    assert_eq!(quantile(&data, 0.5), 3.5);
    assert_eq!(quantile(&data, 0.3), 2.1);
    assert_eq!(quantile(&data, 1.0), 9.0);
    assert_eq!(quantile(&[7.0], 0.3), 7.0);
}

#[test]
fn points_and_undefined_statistics() {
    assert_eq!(
        RatioOfSums::mean(&[Some(1.0), None, Some(2.0)]).point(),
        Some(1.5)
    );
    assert_eq!(
        RatioOfSums::ratio(&[true, true, false], &[true, false, true]).point(),
        Some(0.5)
    );
    assert_eq!(RatioOfSums::total(vec![1.0, 2.0]).point(), Some(3.0));
    assert_eq!(RatioOfSums::mean(&[None, None]).point(), None);
    assert_eq!(RatioOfSums::mean(&[]).point(), None);
    assert_eq!(RatioOfSums::mean(&[Some(f64::NAN)]).point(), None);
    let none = RatioOfSums::mean(&[None]);
    assert_eq!(bootstrap_interval(&none, 0.95, 100, "m", 0), None);
    assert_eq!(normal_interval(&none, 0.95), None);
    let one = RatioOfSums::mean(&[Some(0.25)]);
    assert_eq!(
        bootstrap_interval(&one, 0.95, 100, "m", 0),
        Some((0.25, 0.25))
    );
    assert_eq!(bootstrap_interval(&one, 1.0, 100, "m", 0), None);
    assert_eq!(bootstrap_interval(&one, 0.95, 0, "m", 0), None);
}

#[test]
fn results_are_pinned_by_data_label_seed_and_replicates() {
    let stat = RatioOfSums::mean(&Sample::new("pinned").exponential(50));
    let first = bootstrap_interval(&stat, 0.95, 1000, "score/interval", 7).unwrap();
    assert_eq!(
        first,
        bootstrap_interval(&stat, 0.95, 1000, "score/interval", 7).unwrap()
    );
    assert_ne!(
        first,
        bootstrap_interval(&stat, 0.95, 1000, "score/interval", 8).unwrap()
    );
    assert_ne!(
        first,
        bootstrap_interval(&stat, 0.95, 1000, "other/interval", 7).unwrap()
    );
    // The generator, seeding, resampling and quantile rule together: a change
    // to any of them changes reported intervals, so it must be deliberate.
    assert_eq!(first, PINNED_INTERVAL);
}

const PINNED_INTERVAL: (f64, f64) = (0.788_468_887_001_358_1, 1.396_711_628_973_7);

#[test]
fn a_total_is_resampled_as_a_sum() {
    let stat = RatioOfSums::total(vec![1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0]);
    let (low, high) = bootstrap_interval(&stat, 0.9, 2000, "count", 0).unwrap();
    assert!(
        (0.0..5.0).contains(&low) && high > 5.0 && high <= 8.0,
        "{low} {high}"
    );
    // Its normal interval: 5 ± z·√Σ(x − x̄)² = 5 ± 1.645·√1.875.
    let (low, high) = normal_interval(&stat, 0.9).unwrap();
    assert!((high - 5.0 - 1.644_853_626_951_472_2 * 1.875f64.sqrt()).abs() < 1e-12);
    assert!((5.0 - low - (high - 5.0)).abs() < 1e-12);
}

#[test]
fn the_normal_fallback_matches_the_bootstrap_on_many_items() {
    let mut sample = Sample::new("large");
    let stat = RatioOfSums::mean(&sample.exponential(4000));
    let (low, high) = bootstrap_interval(&stat, 0.95, 1000, "x", 0).unwrap();
    let (nlow, nhigh) = normal_interval(&stat, 0.95).unwrap();
    assert!(
        ((high - low) / (nhigh - nlow) - 1.0).abs() < 0.1,
        "{low} {high} {nlow} {nhigh}"
    );
    let auto = interval(&stat, 0.95, 1_000_000, "x", 0).unwrap();
    assert_eq!(
        (auto.low, auto.high, auto.method.name()),
        (nlow, nhigh, "normal")
    );
    assert_eq!(
        interval(&stat, 0.95, 100, "x", 0).unwrap().method,
        Method::Bootstrap
    );

    let old = RatioOfSums::mean(&sample.exponential(4000));
    let boot = paired_bootstrap(&stat, &old, 0.95, 1000, "x", 0).unwrap();
    let normal = paired_normal(&stat, &old, 0.95).unwrap();
    assert_eq!(boot.delta, normal.delta);
    let ratio = (boot.high - boot.low) / (normal.high - normal.low);
    assert!((ratio - 1.0).abs() < 0.1, "{boot:?} {normal:?}");
    assert!(
        (boot.p_value - normal.p_value).abs() < 0.05,
        "{boot:?} {normal:?}"
    );
    assert_eq!(
        paired(&stat, &old, 0.95, 1_000_000, "x", 0).unwrap(),
        normal
    );
}

/// How many of 1,000 simulated data sets of 200 items have their 95% interval
/// (B replicates) cover the true mean.
fn coverage(
    replicates: usize,
    mut data: impl FnMut(&mut Sample) -> Vec<Option<f64>>,
    truth: f64,
) -> usize {
    let mut sample = Sample::new("coverage");
    let covered = (0..1000)
        .filter(|set| {
            let stat = RatioOfSums::mean(&data(&mut sample));
            let label = format!("set{set}");
            let (low, high) = bootstrap_interval(&stat, 0.95, replicates, &label, 0).unwrap();
            low <= truth && truth <= high
        })
        .count();
    eprintln!("coverage at B = {replicates}: {covered} of 1000");
    covered
}

/// Seconds in a debug build: B = 200. Linear quantiles of B replicates span
/// about (B − 1)/(B + 1) of the nominal mass, so at B = 200 the interval is
/// ~1% short of 95%; the skewed case (true coverage ~94% even at large B, as
/// the percentile bootstrap undercovers skewed means) gets 92–97 here. The
/// ignored test below checks both at the default B = 2000 within 93–97.
#[test]
fn bootstrap_covers_known_means() {
    let covered = coverage(200, |s| s.bernoulli(200, 0.3), 0.3);
    assert!((930..=970).contains(&covered), "Bernoulli(0.3): {covered}");
    let covered = coverage(200, |s| s.gamma4(200), 4.0);
    assert!((920..=970).contains(&covered), "Gamma(4): {covered}");
}

/// About 30 s in a debug build: `cargo test --release -- --ignored coverage`.
#[test]
#[ignore]
fn bootstrap_covers_known_means_at_the_default_replicates() {
    let covered = coverage(2000, |s| s.bernoulli(200, 0.3), 0.3);
    assert!((930..=970).contains(&covered), "Bernoulli(0.3): {covered}");
    let covered = coverage(2000, |s| s.gamma4(200), 4.0);
    assert!((930..=970).contains(&covered), "Gamma(4): {covered}");
}

#[test]
fn paired_p_value_is_close_to_the_exact_permutation_test() {
    let mut sample = Sample::new("paired");
    let mut worst: f64 = 0.0;
    for (n, shift) in [
        (12, 0.0),
        (12, 0.4),
        (14, 0.2),
        (16, 0.5),
        (16, 0.1),
        (18, 0.3),
        (20, 0.25),
    ] {
        let old: Vec<Option<f64>> = sample.exponential(n);
        let new: Vec<Option<f64>> = old
            .iter()
            .map(|x| Some(x.unwrap() + shift + 0.6 * (sample.0.next_f64() - 0.5)))
            .collect();
        let (new, old) = (RatioOfSums::mean(&new), RatioOfSums::mean(&old));
        let exact = exact_paired_permutation(&new, &old);
        let boot = paired_bootstrap(&new, &old, 0.95, 10_000, "paired", 0).unwrap();
        let gap = (boot.p_value - exact).abs();
        assert!(
            gap <= 0.05,
            "n = {n}, shift {shift}: bootstrap {} exact {exact}",
            boot.p_value
        );
        worst = worst.max(gap);
    }
    eprintln!("largest gap between bootstrap and permutation p: {worst}");
}

#[test]
fn paired_edge_cases() {
    let same = RatioOfSums::mean(&[Some(1.0), Some(0.0), Some(1.0)]);
    let result = paired_bootstrap(&same, &same, 0.95, 500, "m", 0).unwrap();
    assert_eq!(
        (result.delta, result.low, result.high, result.p_value),
        (0.0, 0.0, 0.0, 1.0)
    );
    let normal = paired_normal(&same, &same, 0.95).unwrap();
    assert_eq!(
        (normal.delta, normal.p_value, normal.p_decrease),
        (0.0, 1.0, 1.0)
    );
    // Every item gained exactly 1: no noise, the smallest p the replicates allow.
    let up = RatioOfSums::mean(&[Some(2.0), Some(1.0), Some(2.0)]);
    let result = paired_bootstrap(&up, &same, 0.95, 499, "m", 0).unwrap();
    assert_eq!((result.delta, result.low, result.high), (1.0, 1.0, 1.0));
    assert_eq!(result.p_value, 2.0 / 500.0);
    assert_eq!((result.p_increase, result.p_decrease), (1.0 / 500.0, 1.0));
    let normal = paired_normal(&up, &same, 0.95).unwrap();
    assert_eq!(
        (normal.p_value, normal.p_increase, normal.p_decrease),
        (0.0, 0.0, 1.0)
    );
    let down = paired_normal(&same, &up, 0.95).unwrap();
    assert_eq!(
        (down.p_value, down.p_increase, down.p_decrease),
        (0.0, 1.0, 0.0)
    );
}

proptest! {
    #[test]
    fn intervals_contain_the_point_and_p_is_a_probability(
        values in prop::collection::vec(prop::option::weighted(0.8, -100.0f64..100.0), 1..40),
        shifts in prop::collection::vec(-5.0f64..5.0, 40),
        level in 0.5f64..0.999,
        seed in any::<u64>(),
    ) {
        let stat = RatioOfSums::mean(&values);
        if let Some(point) = stat.point() {
            let (low, high) = bootstrap_interval(&stat, level, 50, "p", seed).unwrap();
            prop_assert!(low <= point && point <= high);
            let (low, high) = normal_interval(&stat, level).unwrap();
            prop_assert!(low <= point && point <= high);
            let shifted: Vec<Option<f64>> =
                values.iter().zip(&shifts).map(|(v, s)| v.map(|v| v + s)).collect();
            let new = RatioOfSums::mean(&shifted);
            for result in [
                paired_bootstrap(&new, &stat, level, 50, "p", seed).unwrap(),
                paired_normal(&new, &stat, level).unwrap(),
            ] {
                prop_assert!(result.low <= result.delta && result.delta <= result.high);
                for p in [result.p_value, result.p_decrease, result.p_increase] {
                    prop_assert!((0.0..=1.0).contains(&p));
                }
                let smaller = result.p_decrease.min(result.p_increase);
                prop_assert_eq!(result.p_value, (2.0 * smaller).min(1.0));
            }
        }
    }
}

/// The cost of a draw: `cargo test --release -- --ignored cost_per_draw --nocapture`.
#[test]
#[ignore]
fn cost_per_draw() {
    for (n, b) in [(200usize, 2000usize), (50_000, 2000), (1_000_000, 100)] {
        let mut sample = Sample::new("t");
        let new = RatioOfSums::mean(&sample.bernoulli(n, 0.3));
        let old = RatioOfSums::mean(&sample.exponential(n));
        let start = std::time::Instant::now();
        let _ = bootstrap_interval(&new, 0.95, b, "x", 0);
        let one = start.elapsed().as_secs_f64();
        let start = std::time::Instant::now();
        let _ = paired_bootstrap(&new, &old, 0.95, b, "x", 0);
        let two = start.elapsed().as_secs_f64();
        let start = std::time::Instant::now();
        let _ = paired_normal(&new, &old, 0.95);
        let three = start.elapsed().as_secs_f64();
        eprintln!("n={n} B={b}: interval {one:.4}s ({:.2} ns/draw), paired {two:.4}s ({:.2} ns/draw), normal {three:.5}s",
            one * 1e9 / (n * b) as f64, two * 1e9 / (n * b) as f64);
    }
}

/// The normal interval as it was defined before it read items in place: the
/// point, then each item's influence collected and its squares summed.
fn normal_by_influence(stat: &RatioOfSums, level: f64) -> Option<(f64, f64)> {
    let point = stat.point()?;
    if !valid_level(level) {
        return None;
    }
    let se = influence(stat, point)
        .iter()
        .map(|z| z * z)
        .sum::<f64>()
        .sqrt();
    let half = -normal_quantile((1.0 - level) / 2.0) * se;
    Some((point - half, point + half))
}

fn bits(interval: Option<(f64, f64)>) -> Option<(u64, u64)> {
    interval.map(|(low, high)| (low.to_bits(), high.to_bits()))
}

proptest! {
    /// Read in place, the normal interval has the same bits as through the
    /// collected influences: totals and ratios, with zero, negative and
    /// non-finite values, an empty denominator and a level out of range.
    #[test]
    fn the_normal_interval_read_in_place_has_the_same_bits(
        items in prop::collection::vec(
            (prop_oneof![-3.0..3.0f64, Just(0.0), Just(1.0), Just(f64::NAN), Just(f64::INFINITY)],
             prop_oneof![Just(0.0), Just(1.0), 0.0..2.0f64]),
            0..40,
        ),
        level in prop_oneof![Just(0.95), Just(0.5), Just(1.0)],
    ) {
        let (num, den): (Vec<f64>, Vec<f64>) = items.iter().copied().unzip();
        let total = RatioOfSums::total(num.clone());
        prop_assert_eq!(bits(normal_interval(&total, level)), bits(normal_by_influence(&total, level)));
        let ratio = RatioOfSums::new(num, den);
        prop_assert_eq!(bits(normal_interval(&ratio, level)), bits(normal_by_influence(&ratio, level)));
    }
}
