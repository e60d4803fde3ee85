//! Exact binomial tests with p = 1/2: the two-sided test equals scipy's
//! `binomtest(k, n, 0.5).pvalue` (scipy 1.17), McNemar's exact test is that
//! test on the discordant pairs, and the one-sided tails are scipy's
//! `alternative="less"` / `"greater"`.
//!
//! Probabilities come from Loader's saddle-point form of the binomial pmf
//! ("Fast and accurate computation of binomial probabilities", 2000, the
//! method of R's `dbinom`), which never subtracts large log-factorials and so
//! keeps about 1e-15 relative accuracy for n up to 10^9:
//!
//! ```text
//! pmf(k) = exp(δ(n) − δ(k) − δ(n−k) − D(k, n/2) − D(n−k, n/2)) · √(n / (2π k (n−k)))
//! ```
//!
//! with δ the Stirling-series error ln k! − ((k+½) ln k − k + ln √(2π)) (a table
//! up to 30, its asymptotic series beyond) and D(x, m) = x ln(x/m) + m − x
//! (by a series when x is near m). A tail P(X ≤ k), k < n/2, is pmf(k) times
//! the sum of the ratios pmf(j)/pmf(k), accumulated downward until a term no
//! longer changes the sum: about 4·√n terms at the centre, so n = 10^7 takes
//! microseconds. The upper half follows by symmetry.

/// Scipy's relative tolerance when it gathers the outcomes "as likely as k".
const SCIPY_RERR: f64 = 1.0 + 1e-7;

/// Two-sided exact test of k successes in n trials against p = 1/2; 1 when
/// n = 0. As scipy: the observed tail P(X ≤ k) (or ≥ for k above n/2) plus
/// the opposite tail of the outcomes whose probability is at most
/// pmf(k)·(1 + 1e-7), capped at 1.
pub fn binom_test_two_sided(k: u64, n: u64) -> f64 {
    let k = k.min(n);
    let low = k.min(n - k);
    if 2 * low == n {
        return 1.0;
    }
    // Outcomes past `low` towards the mode whose pmf is within scipy's
    // tolerance of pmf(low) count on the far side (scipy includes them there
    // but not on the observed side). The ratio pmf(m)/pmf(m−1) = (n−m+1)/m.
    let mut far = low;
    let mut ratio = 1.0;
    while 2 * (far + 1) <= n {
        ratio *= (n - far) as f64 / (far + 1) as f64;
        if ratio > SCIPY_RERR {
            break;
        }
        far += 1;
    }
    (lower_tail(low, n) + lower_tail(far, n)).min(1.0)
}

/// One-sided P(X ≤ k) for X ~ Binomial(n, 1/2) (scipy's "less").
pub fn binom_test_less(k: u64, n: u64) -> f64 {
    if k >= n {
        1.0
    } else if 2 * k < n {
        lower_tail(k, n)
    } else {
        // P(X ≤ k) = 1 − P(X ≥ k + 1) = 1 − P(X ≤ n − k − 1), a lower tail.
        1.0 - lower_tail(n - k - 1, n)
    }
}

/// One-sided P(X ≥ k) for X ~ Binomial(n, 1/2) (scipy's "greater").
pub fn binom_test_greater(k: u64, n: u64) -> f64 {
    if k == 0 {
        1.0
    } else if k > n {
        0.0
    } else {
        binom_test_less(n - k, n)
    }
}

/// McNemar's exact test: b items went one way and c the other; the two-sided
/// binomial test of b in b + c (1 when there are no discordant pairs).
pub fn mcnemar(b: u64, c: u64) -> f64 {
    binom_test_two_sided(b, b.saturating_add(c))
}

/// P(X = k) for X ~ Binomial(n, p), Loader's form with the deviances taken
/// from np and nq.
pub fn pmf_at(k: u64, n: u64, p: f64) -> f64 {
    if k > n {
        return 0.0;
    }
    let q = 1.0 - p;
    if k == 0 {
        return q.powf(n as f64);
    }
    if k == n {
        return p.powf(n as f64);
    }
    if p <= 0.0 || q <= 0.0 {
        return 0.0;
    }
    let (nf, kf, rest) = (n as f64, k as f64, (n - k) as f64);
    let exponent = stirling_error(n)
        - stirling_error(k)
        - stirling_error(n - k)
        - deviance(kf, nf * p)
        - deviance(rest, nf * q);
    exponent.exp() * (nf / (2.0 * std::f64::consts::PI * kf * rest)).sqrt()
}

/// P(X ≥ k) for X ~ Binomial(n, p): the tail on the far side of the mean is
/// summed from k outwards until a term no longer changes it.
pub fn upper_tail_at(k: u64, n: u64, p: f64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if k > n {
        return 0.0;
    }
    let odds = p / (1.0 - p);
    let sum_from = |start: u64, up: bool| {
        let (mut term, mut sum, mut j) = (pmf_at(start, n, p), 0.0, start);
        loop {
            let next = sum + term;
            if next == sum && term < 1e-300_f64.max(sum * 1e-17) {
                break;
            }
            sum = next;
            if up {
                if j == n {
                    break;
                }
                // pmf(j+1)/pmf(j) = (n−j)/(j+1)·p/q
                term *= (n - j) as f64 / (j + 1) as f64 * odds;
                j += 1;
            } else {
                if j == 0 {
                    break;
                }
                // pmf(j−1)/pmf(j) = j/(n−j+1)·q/p
                term *= j as f64 / (n - j + 1) as f64 / odds;
                j -= 1;
            }
        }
        sum
    };
    if k as f64 > n as f64 * p {
        sum_from(k, true).min(1.0)
    } else {
        (1.0 - sum_from(k - 1, false)).max(0.0)
    }
}

/// Clopper–Pearson's one-sided lower bound at `level` on the success rate
/// of k successes in n trials: the p with P(X ≥ k | p) = 1 − level (0 for
/// k = 0). It is above 1/2 exactly when `binom_test_greater(k, n)` < 1 − level,
/// so the bound and the exact test always agree.
pub fn clopper_pearson_lower(k: u64, n: u64, level: f64) -> f64 {
    if k == 0 || n == 0 {
        return 0.0;
    }
    let alpha = 1.0 - level;
    let (mut low, mut high) = (0.0_f64, 1.0_f64);
    for _ in 0..100 {
        let mid = 0.5 * (low + high);
        if upper_tail_at(k, n, mid) < alpha {
            low = mid;
        } else {
            high = mid;
        }
    }
    low
}

/// P(X ≤ k) for k ≤ n/2: pmf(k) times Σ_{j ≤ k} pmf(j)/pmf(k).
fn lower_tail(k: u64, n: u64) -> f64 {
    let mut term = 1.0;
    let mut sum = 1.0;
    let mut j = k;
    while j > 0 {
        // pmf(j−1)/pmf(j) = j/(n−j+1)
        term *= j as f64 / (n - j + 1) as f64;
        let next = sum + term;
        if next == sum {
            break;
        }
        sum = next;
        j -= 1;
    }
    pmf(k, n) * sum
}

/// P(X = k) for X ~ Binomial(n, 1/2), Loader's form.
pub fn pmf(k: u64, n: u64) -> f64 {
    if k > n {
        return 0.0;
    }
    if k == 0 || k == n {
        return (-(n as f64) * std::f64::consts::LN_2).exp();
    }
    let (nf, kf, rest) = (n as f64, k as f64, (n - k) as f64);
    let half = nf / 2.0;
    let exponent = stirling_error(n)
        - stirling_error(k)
        - stirling_error(n - k)
        - deviance(kf, half)
        - deviance(rest, half);
    let log_scale = (2.0 * std::f64::consts::PI).ln() + kf.ln() + (-kf / nf).ln_1p();
    (exponent - 0.5 * log_scale).exp()
}

/// δ(n) = ln n! − ((n + ½) ln n − n + ln √(2π)): exact values up to 30
/// (mpmath, 40 digits), then the Stirling series 1/(12n) − 1/(360n³) + …,
/// truncated where the next term is below 1e-17.
fn stirling_error(n: u64) -> f64 {
    if n <= 30 {
        return STIRLING_ERROR[n as usize];
    }
    const S0: f64 = 1.0 / 12.0;
    const S1: f64 = 1.0 / 360.0;
    const S2: f64 = 1.0 / 1260.0;
    const S3: f64 = 1.0 / 1680.0;
    const S4: f64 = 1.0 / 1188.0;
    let x = n as f64;
    let xx = x * x;
    if n > 500 {
        (S0 - S1 / xx) / x
    } else if n > 80 {
        (S0 - (S1 - S2 / xx) / xx) / x
    } else if n > 35 {
        (S0 - (S1 - (S2 - S3 / xx) / xx) / xx) / x
    } else {
        (S0 - (S1 - (S2 - (S3 - S4 / xx) / xx) / xx) / xx) / x
    }
}

/// D(x, m) = x ln(x/m) + m − x, by the series 2x Σ v^(2j+1)/(2j+1) − (x−m)v,
/// v = (x−m)/(x+m), when x is within 10% of m (where the direct form cancels).
fn deviance(x: f64, m: f64) -> f64 {
    if (x - m).abs() < 0.1 * (x + m) {
        let mut v = (x - m) / (x + m);
        let mut sum = (x - m) * v;
        let mut ej = 2.0 * x * v;
        v *= v;
        let mut j = 1.0;
        loop {
            ej *= v;
            let next = sum + ej / (2.0 * j + 1.0);
            if next == sum {
                return next;
            }
            sum = next;
            j += 1.0;
        }
    }
    x * (x / m).ln() + m - x
}

// The table keeps 20 significant digits; the compiler rounds to the nearest double.
#[allow(clippy::excessive_precision)]
const STIRLING_ERROR: [f64; 31] = [
    0.0,                      // 0: unused (pmf handles k = 0 and k = n apart)
    0.08106146679532725822,   // 1
    0.041340695955409294094,  // 2
    0.027677925684998339149,  // 3
    0.020790672103765093112,  // 4
    0.016644691189821192163,  // 5
    0.013876128823070747999,  // 6
    0.011896709945891770095,  // 7
    0.010411265261972096497,  // 8
    0.0092554621827127329177, // 9
    0.0083305634333628712565, // 10
    0.007573675487951840795,  // 11
    0.0069428401072095298657, // 12
    0.0064089941880042070684, // 13
    0.0059513701127588477356, // 14
    0.005554733551962801371,  // 15
    0.0052076559196096404407, // 16
    0.0049013959484347378607, // 17
    0.0046291537493340285924, // 18
    0.0043855602492323242683, // 19
    0.0041663196919969224575, // 20
    0.0039679542186408596173, // 21
    0.0037876180684444345779, // 22
    0.0036229602246830947074, // 23
    0.0034720213829787669629, // 24
    0.0033331556367280928758, // 25
    0.0032049702280550380112, // 26
    0.0030862786826087770633, // 27
    0.002976063983550408826,  // 28
    0.0028734493623524663876, // 29
    0.0027776749297526936036, // 30
];

#[cfg(test)]
#[path = "binomial_tests.rs"]
mod tests;
