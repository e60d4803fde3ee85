//! Family-wise control. One decision (a `diff --fail-on-regression`, a run's
//! gates with `significance`) rests on many one-sided tests: every metric, slice
//! value and run that could fail the build. Holm's step-down procedure adjusts
//! their p-values together, so that when no tested change is real the decision
//! fails with probability at most its level, however many tests it reads and
//! however they correlate.
//!
//! The family is fixed before the data is looked at: every test that could fail
//! the build, whether or not its change went past its bound. A test that must also
//! pass a bound to fail only fails less often, so the guarantee holds for the
//! decision as made.

use crate::stats::inference::ChangeTest;

/// Holm-adjusted p-values, in the order given: with p₍₁₎ ≤ … ≤ p₍ₘ₎,
/// p̃₍ⱼ₎ = max over i ≤ j of min(1, (m − i + 1)·p₍ᵢ₎). A test is rejected at
/// level α when its adjusted p-value is below α, which is Holm's step-down at
/// α. Ties are ordered by position, so the result is deterministic.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]).then(a.cmp(&b)));
    let mut adjusted = vec![1.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        let scaled = ((m - rank) as f64 * p[i]).min(1.0);
        running = running.max(scaled);
        adjusted[i] = running;
    }
    adjusted
}

/// Holm's step-down over `tests`, each a paired test and the side it is tested
/// on (`true`: a drop): each keeps its adjusted p-value and the family's size.
pub fn adjust(tests: Vec<(&mut ChangeTest, bool)>) {
    let p: Vec<f64> = tests.iter().map(|(t, down)| t.p_toward(*down)).collect();
    let size = p.len();
    for ((test, down), adjusted) in tests.into_iter().zip(holm(&p)) {
        test.holm = Some((down, adjusted, size));
    }
}

#[cfg(test)]
mod tests {
    use super::holm;

    #[test]
    fn holm_matches_statsmodels() {
        // statsmodels.stats.multitest.multipletests([.01, .04, .03, .005], method="holm")
        let found = holm(&[0.01, 0.04, 0.03, 0.005]);
        let expected = [0.03, 0.06, 0.06, 0.02];
        for (f, e) in found.iter().zip(expected) {
            assert!((f - e).abs() < 1e-12, "{found:?}");
        }
    }

    #[test]
    fn one_test_is_its_own_p_and_none_is_empty() {
        assert_eq!(holm(&[0.2]), vec![0.2]);
        assert!(holm(&[]).is_empty());
        assert_eq!(holm(&[0.9, 0.9]), vec![1.0, 1.0]);
    }
}
