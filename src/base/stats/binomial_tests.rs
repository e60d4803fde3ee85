use super::*;
use proptest::prelude::*;

fn fixture() -> serde_json::Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/stats/binomtest.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Agreement to `relative`, with an absolute floor for probabilities that
/// underflow (scipy then returns 0 or a subnormal).
fn agrees(ours: f64, theirs: f64, relative: f64) -> bool {
    (ours - theirs).abs() <= relative * theirs.abs() + 1e-300
}

/// scipy's own tails are off by up to 3.2e-12 relative at n = 3·10^7 (checked
/// against mpmath); up to n = 10^5 it agrees with us to 1e-12.
fn scipy_tolerance(n: u64) -> f64 {
    if n <= 100_000 {
        1e-12
    } else {
        5e-12
    }
}

#[test]
fn equals_scipy_binomtest() {
    let fixture = fixture();
    let cases = fixture["cases"].as_array().unwrap();
    assert!(cases.len() > 500);
    for case in cases {
        let k = case["k"].as_u64().unwrap();
        let n = case["n"].as_u64().unwrap();
        for (name, ours) in [
            ("p", binom_test_two_sided(k, n)),
            ("less", binom_test_less(k, n)),
            ("greater", binom_test_greater(k, n)),
        ] {
            let theirs = case[name].as_f64().unwrap();
            let tolerance = scipy_tolerance(n);
            assert!(
                agrees(ours, theirs, tolerance),
                "{name} {k}/{n}: {ours} vs {theirs}"
            );
        }
        let exact = case["exact_less"].as_f64().unwrap();
        let ours = binom_test_less(k, n);
        assert!(
            agrees(ours, exact, 1e-13),
            "exact {k}/{n}: {ours} vs {exact}"
        );
    }
}

#[test]
fn mcnemar_is_the_test_on_discordant_pairs() {
    assert_eq!(mcnemar(0, 0), 1.0);
    assert_eq!(mcnemar(3, 3), 1.0);
    // 10 vs 2: 2·P(X ≤ 2), X ~ Bin(12, 1/2) = 2·79/4096.
    assert!((mcnemar(10, 2) - 158.0 / 4096.0).abs() < 1e-16);
    assert_eq!(mcnemar(2, 10), mcnemar(10, 2));
}

#[test]
fn pmf_sums_to_one() {
    for n in [1u64, 7, 30, 31, 100, 1001, 20_000] {
        let total: f64 = (0..=n).map(|k| pmf(k, n)).sum();
        assert!((total - 1.0).abs() < 1e-13, "{n}: {total}");
    }
}

#[test]
fn ten_million_trials_are_fast() {
    let start = std::time::Instant::now();
    let p = binom_test_two_sided(4_999_000, 10_000_000);
    assert!(p > 0.5 && p < 0.6, "{p}");
    assert!(start.elapsed().as_millis() < 500);
}

proptest! {
    #[test]
    fn p_values_are_probabilities(n in 0u64..5_000, share in 0.0f64..=1.0) {
        let k = ((n as f64) * share).floor() as u64;
        for p in [binom_test_two_sided(k, n), binom_test_less(k, n), binom_test_greater(k, n)] {
            prop_assert!((0.0..=1.0).contains(&p), "{k}/{n}: {p}");
        }
        prop_assert_eq!(binom_test_two_sided(k, n), binom_test_two_sided(n - k, n));
        // The two-sided p is at least each one-sided tail of the rarer side.
        let one = binom_test_less(k, n).min(binom_test_greater(k, n));
        prop_assert!(binom_test_two_sided(k, n) >= one * (1.0 - 1e-12));
    }
}

#[test]
fn the_general_pmf_and_tail_at_one_half_are_the_symmetric_ones() {
    for n in [1u64, 2, 7, 20, 101, 1000, 40_000] {
        for k in [0, 1, n / 3, n / 2, n - 1, n] {
            let (a, b) = (pmf_at(k, n, 0.5), pmf(k, n));
            assert!(
                (a - b).abs() <= 1e-12 * b.max(1e-300),
                "pmf {k}/{n}: {a} {b}"
            );
            let (a, b) = (upper_tail_at(k, n, 0.5), binom_test_greater(k, n));
            assert!((a - b).abs() <= 1e-10, "tail {k}/{n}: {a} {b}");
        }
    }
}

/// The one-sided Clopper–Pearson bound is above 1/2 exactly when the exact
/// one-sided test rejects, and at the bound the tail is 1 − level
/// (scipy: `beta.ppf(0.05, 7, 4)` = 0.3933758).
#[test]
fn clopper_pearson_inverts_the_exact_test() {
    assert!((clopper_pearson_lower(7, 10, 0.95) - 0.393_375_8).abs() < 1e-6);
    for n in [1u64, 5, 13, 40, 300, 5000] {
        for k in 0..=n.min(400) {
            let k = if n > 400 { n / 2 - 200 + k } else { k };
            let bound = clopper_pearson_lower(k, n, 0.95);
            let rejects = binom_test_greater(k, n) < 0.05;
            assert_eq!(bound > 0.5, rejects, "{k} of {n}: bound {bound}");
        }
    }
}
