//! Test support: the exact paired permutation test. Under "no change" each
//! item's two values are exchangeable, so every one of the 2ⁿ ways to swap
//! items between the runs is equally likely; the two-sided p-value is the
//! share of swaps whose |change| is at least the observed one. Small n only.

use super::bootstrap::RatioOfSums;

/// The exact two-sided p-value for new − old (ratios of sums on the same
/// items), enumerating the swaps in Gray-code order (one item per step).
pub fn exact_paired_permutation(new: &RatioOfSums, old: &RatioOfSums) -> f64 {
    let n = new.len();
    assert!(
        n == old.len() && n <= 24,
        "exact permutations are for small n"
    );
    let den = |stat: &RatioOfSums, i: usize| stat.denominators().map_or(0.0, |d| d[i]);
    let total = new.denominators().is_none();
    let change = |s: &[f64; 4]| {
        if total {
            s[0] - s[2]
        } else {
            s[0] / s[1] - s[2] / s[3]
        }
    };
    let mut sums = [0.0; 4];
    for i in 0..n {
        sums[0] += new.numerators()[i];
        sums[1] += den(new, i);
        sums[2] += old.numerators()[i];
        sums[3] += den(old, i);
    }
    let observed = change(&sums).abs();
    let tolerance = 1e-9 * observed.max(1e-300);
    let mut swapped = vec![false; n];
    let mut extreme = 0u64;
    for step in 0u64..1 << n {
        if step > 0 {
            // Gray code: step flips the item at its lowest set bit.
            let i = step.trailing_zeros() as usize;
            let sign = if swapped[i] { -1.0 } else { 1.0 };
            swapped[i] = !swapped[i];
            let moved_num = sign * (old.numerators()[i] - new.numerators()[i]);
            let moved_den = sign * (den(old, i) - den(new, i));
            sums[0] += moved_num;
            sums[1] += moved_den;
            sums[2] -= moved_num;
            sums[3] -= moved_den;
        }
        if change(&sums).abs() >= observed - tolerance {
            extreme += 1;
        }
    }
    extreme as f64 / (1u64 << n) as f64
}
