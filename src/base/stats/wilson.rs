//! The Wilson score interval for a proportion, computed as statsmodels'
//! `proportion_confint(count, nobs, alpha = 1 − level, method = "wilson")`
//! (statsmodels 0.15), operation for operation, so the two agree to the last
//! few bits: with z = Φ⁻¹(1 − (1 − level)/2) and q = count/n,
//!
//! ```text
//! center = (q + z²/(2n)) / (1 + z²/n)
//! half   = z·√(q(1 − q)/n + z²/(4n²)) / (1 + z²/n)
//! ```
//!
//! and the bounds center ∓ half are clipped to [0, 1].

use super::normal::normal_quantile;

/// The two-sided Wilson interval at `level` (e.g. 0.95) for `successes` out
/// of `n`; `None` when n = 0 or the level is not strictly between 0 and 1.
pub fn wilson(successes: u64, n: u64, level: f64) -> Option<(f64, f64)> {
    if n == 0 || !(level > 0.0 && level < 1.0) {
        return None;
    }
    let alpha = (1.0 - level) / 2.0;
    let crit = -normal_quantile(alpha);
    let crit2 = crit * crit;
    let nobs = n as f64;
    let q = successes.min(n) as f64 / nobs;
    let denom = 1.0 + crit2 / nobs;
    let center = (q + crit2 / (2.0 * nobs)) / denom;
    let dist = crit * (q * (1.0 - q) / nobs + crit2 / (4.0 * nobs * nobs)).sqrt() / denom;
    Some((
        (center - dist).clamp(0.0, 1.0),
        (center + dist).clamp(0.0, 1.0),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fixture() -> serde_json::Value {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/stats/wilson.json"
        );
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    /// Agreement with statsmodels: 1e-12 relative, or 1e-15 absolute near 0.
    fn agrees(ours: f64, theirs: f64) -> bool {
        (ours - theirs).abs() <= 1e-12 * theirs.abs() + 1e-15
    }

    #[test]
    fn equals_statsmodels() {
        let fixture = fixture();
        let cases = fixture["cases"].as_array().unwrap();
        assert!(cases.len() > 250);
        for case in cases {
            let count = case["count"].as_u64().unwrap();
            let n = case["n"].as_u64().unwrap();
            let level = case["level"].as_f64().unwrap();
            let (low, high) = wilson(count, n, level).unwrap();
            let (want_low, want_high) = (
                case["low"].as_f64().unwrap(),
                case["high"].as_f64().unwrap(),
            );
            assert!(
                agrees(low, want_low) && agrees(high, want_high),
                "{count}/{n} at {level}: ({low}, {high}) vs ({want_low}, {want_high})"
            );
        }
    }

    #[test]
    fn undefined_without_items_or_level() {
        assert_eq!(wilson(0, 0, 0.95), None);
        assert_eq!(wilson(1, 2, 1.0), None);
        assert_eq!(wilson(1, 2, 0.0), None);
        assert_eq!(wilson(1, 2, f64::NAN), None);
    }

    proptest! {
        #[test]
        fn within_unit_interval_around_the_proportion(
            n in 1u64..2_000_000,
            share in 0.0f64..=1.0,
            level in 0.01f64..0.9999,
        ) {
            let k = ((n as f64) * share).floor() as u64;
            let (low, high) = wilson(k, n, level).unwrap();
            let q = k as f64 / n as f64;
            prop_assert!((0.0..=1.0).contains(&low) && (0.0..=1.0).contains(&high));
            prop_assert!(low <= q + 1e-15 && q <= high + 1e-15, "{low} {q} {high}");
        }
    }
}
