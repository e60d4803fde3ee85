//! Exact float sums, so that sums and means never depend on how items were split
//! between threads.

/// A float sum that is exact until the final rounding (Shewchuk's algorithm, as
/// Python's `math.fsum`): the result is the correctly rounded sum whatever the order
/// of the terms, so sums and means are the same for any split of the items.
///
/// Terms of magnitude 2^960 and more are kept apart, scaled by 2^-600 (exactly:
/// a power of two), so that no intermediate overflows: `1e308 + 1e308 - 1e308`
/// is exactly 1e308, and a mean of values near f64's limit is finite.
#[derive(Debug, Clone, Default)]
pub struct ExactSum {
    partials: Vec<f64>,
    /// The partials of the terms of magnitude [`BIG`] and more, times 2^-600.
    big: Vec<f64>,
    /// Infinities and NaN, which the exact partials cannot hold.
    special: f64,
}

/// Terms at least this large are summed scaled down (see [`ExactSum`]).
const BIG: f64 = f64::from_bits((960 + 1023) << 52); // 2^960
/// The scale of the big terms: 2^SCALE.
const SCALE: i32 = 600;

/// Shewchuk's step: adds `x` to the non-overlapping `partials`.
fn add_partial(partials: &mut Vec<f64>, mut x: f64) {
    let mut i = 0;
    for j in 0..partials.len() {
        let mut y = partials[j];
        if x.abs() < y.abs() {
            std::mem::swap(&mut x, &mut y);
        }
        let hi = x + y;
        let lo = y - (hi - x);
        if lo != 0.0 {
            partials[i] = lo;
            i += 1;
        }
        x = hi;
    }
    partials.truncate(i);
    partials.push(x);
}

/// The correctly rounded sum of non-overlapping `partials` (Python's `fsum`).
fn rounded(p: &[f64]) -> f64 {
    let Some(mut n) = p.len().checked_sub(1) else {
        return 0.0;
    };
    let mut hi = p[n];
    let mut lo = 0.0;
    while n > 0 {
        let x = hi;
        let y = p[n - 1];
        n -= 1;
        hi = x + y;
        lo = y - (hi - x);
        if lo != 0.0 {
            break;
        }
    }
    // Round half-way cases as if the remaining partials were included.
    if n > 0 && ((lo < 0.0 && p[n - 1] < 0.0) || (lo > 0.0 && p[n - 1] > 0.0)) {
        let y = lo * 2.0;
        let x = hi + y;
        if y == x - hi {
            hi = x;
        }
    }
    hi
}

impl ExactSum {
    /// Its exact state, for a partial state sent elsewhere.
    pub fn encode(&self, w: &mut crate::base::codec::Writer) {
        w.seq(self.partials.iter(), |w, x| w.f64(*x));
        w.seq(self.big.iter(), |w, x| w.f64(*x));
        w.f64(self.special);
    }

    pub fn decode(r: &mut crate::base::codec::Reader<'_>) -> crate::base::codec::Decoded<Self> {
        Ok(ExactSum {
            partials: r.seq(|r| r.f64())?,
            big: r.seq(|r| r.f64())?,
            special: r.f64()?,
        })
    }
}

impl ExactSum {
    pub fn add(&mut self, x: f64) {
        if !x.is_finite() {
            self.special += x;
        } else if x.abs() >= BIG {
            add_partial(&mut self.big, x * power_of_two(-SCALE));
        } else {
            add_partial(&mut self.partials, x);
        }
    }

    pub fn merge(&mut self, other: &ExactSum) {
        other.partials.iter().for_each(|&p| self.add(p));
        (other.big.iter()).for_each(|&p| add_partial(&mut self.big, p));
        self.special += other.special;
    }

    /// Adds to `sum` what merging this sum `times` times would add.
    pub fn add_to(&self, sum: &mut FixedSum, times: u64) {
        self.partials.iter().for_each(|&p| sum.add_times(p, times));
        for &p in &self.big {
            // A partial past f64's range scaled back: added 2^k times as p/2^k.
            let mut k = 0;
            while !(p * power_of_two(SCALE - k)).is_finite() && k < 8 {
                k += 1;
            }
            match times.checked_mul(1 << k) {
                Some(many) => sum.add_times(p * power_of_two(SCALE - k), many),
                None => sum.add_special(p * f64::INFINITY, 1),
            }
        }
        sum.add_special(self.special, times);
    }

    /// The correctly rounded total (infinite only when the sum is past f64's range).
    pub fn total(&self) -> f64 {
        let (value, scale) = self.scaled();
        value * power_of_two(scale)
    }

    /// The total divided by `n`, without overflowing on the way: the mean of
    /// values near f64's limit is finite.
    pub fn mean(&self, n: u64) -> f64 {
        let (value, scale) = self.scaled();
        (value / n as f64) * power_of_two(scale)
    }

    /// The total as `value` · 2^`scale`, `value` correctly rounded.
    fn scaled(&self) -> (f64, i32) {
        if self.special != 0.0 || self.special.is_nan() {
            return (self.special, 0);
        }
        let big = rounded(&self.big);
        if big == 0.0 {
            return (rounded(&self.partials), 0);
        }
        // The small terms, scaled as the big ones are, join them (what
        // underflows is far below the big total's last bit).
        let mut all = self.big.clone();
        let down = power_of_two(-SCALE);
        (self.partials.iter()).for_each(|&p| add_partial(&mut all, p * down));
        (rounded(&all), SCALE)
    }
}

/// Where a `FixedSum`'s digit 0 starts: the least subnormal's bit, 2^-1074.
const LOWEST_BIT: i32 = -1074;
/// Bits per digit; a digit is kept in an `i64`, so that 2^30 terms can be
/// added before the carries are propagated.
const DIGIT_BITS: u32 = 32;
/// Terms added between two propagations of the carries.
const CARRY_ROOM: u32 = 1 << 30;

/// An exact sum of floats, each times a whole number, as a fixed-point number
/// of base-2^32 digits: adding `x` `n` times is an integer product and a few
/// digit additions, where `ExactSum::add` walks its partials once per time.
/// What a bootstrap replicate needs, which adds each drawn group's exact sums
/// as many times as the group was drawn; converted back (`exact`), it gives
/// the same correctly rounded total. Only the digits its terms reach are
/// kept (a few for sums of confidences), so a fresh one costs little.
#[derive(Debug, Clone, Default)]
pub struct FixedSum {
    /// `digits[i]` is worth 2^(32·(base + i) − 1074); the last one is spare,
    /// for the carry out of the others.
    base: usize,
    digits: Vec<i64>,
    /// Terms added since the carries were last propagated.
    pending: u32,
    special: f64,
}

impl FixedSum {
    /// Adds `x` `times` times, exactly.
    pub fn add_times(&mut self, x: f64, times: u64) {
        if times == 0 || x == 0.0 {
            return;
        }
        if !x.is_finite() {
            return self.add_special(x, times);
        }
        // A product of at most 53 + 32 bits, shifted by at most 31: fits a u128.
        let (mut times, step) = (times, u64::from(u32::MAX));
        while times > step {
            self.add_times(x, step);
            times -= step;
        }
        let bits = x.to_bits();
        let exponent = ((bits >> 52) & 0x7ff) as u32;
        let fraction = bits & ((1 << 52) - 1);
        // x = mantissa · 2^(offset + LOWEST_BIT).
        let (mantissa, offset) = match exponent {
            0 => (fraction, 0),
            _ => (fraction | 1 << 52, exponent - 1),
        };
        let mut wide = (u128::from(mantissa) * u128::from(times)) << (offset % DIGIT_BITS);
        let first = (offset / DIGIT_BITS) as usize;
        let pieces = (128 - wide.leading_zeros()).div_ceil(DIGIT_BITS) as usize;
        self.reach(first, first + pieces);
        let sign = if x < 0.0 { -1 } else { 1 };
        for digit in &mut self.digits[first - self.base..first - self.base + pieces] {
            *digit += sign * i64::from(wide as u32);
            wide >>= DIGIT_BITS;
        }
        self.pending += 1;
        if self.pending == CARRY_ROOM {
            self.carry();
        }
    }

    /// Adds a sum of infinities and NaNs (or 0) `times` times: once is the
    /// same, since such a sum added to itself is itself.
    fn add_special(&mut self, special: f64, times: u64) {
        if times > 0 && (special != 0.0 || special.is_nan()) {
            self.special += special;
        }
    }

    /// Keeps digits `first..end` (absolute) and a spare one above them.
    fn reach(&mut self, first: usize, end: usize) {
        if self.digits.is_empty() {
            self.base = first;
        } else if first < self.base {
            let below = self.base - first;
            self.digits.splice(0..0, std::iter::repeat_n(0, below));
            self.base = first;
        }
        if self.digits.len() < end + 1 - self.base {
            self.digits.resize(end + 1 - self.base, 0);
        }
    }

    /// Leaves every digit but the last in [0, 2^32), the last (the spare one
    /// until it takes a carry, then a new spare above it) signed.
    fn carry(&mut self) {
        for i in 0..self.digits.len().saturating_sub(1) {
            let carry = self.digits[i] >> DIGIT_BITS;
            self.digits[i] -= carry << DIGIT_BITS;
            self.digits[i + 1] += carry;
        }
        if self.digits.last().is_some_and(|&top| top != 0) {
            self.digits.push(0);
        }
        self.pending = 0;
    }

    /// The same number as an `ExactSum`: each digit times its power of two is
    /// a float exactly (at most 32 significant bits, a multiple of 2^-1074).
    pub fn exact(mut self) -> ExactSum {
        self.carry();
        // A negative number's digits are carried as its magnitude's, so that
        // none is a borrow from a digit past f64's range.
        let negative = self
            .digits
            .iter()
            .rev()
            .find(|&&d| d != 0)
            .is_some_and(|&d| d < 0);
        let sign = if negative { -1.0 } else { 1.0 };
        if negative {
            self.digits.iter_mut().for_each(|d| *d = -*d);
            self.carry();
        }
        let mut sum = ExactSum::default();
        for (i, &digit) in self.digits.iter().enumerate().filter(|(_, &d)| d != 0) {
            let at = power_of_two((self.base + i) as i32 * DIGIT_BITS as i32 + LOWEST_BIT);
            sum.add(sign * digit as f64 * at);
        }
        sum.special = self.special;
        sum
    }
}

/// 2^k, exactly, for k from -1074 (infinity past f64's range).
fn power_of_two(k: i32) -> f64 {
    match k {
        1024.. => f64::INFINITY,
        -1022.. => f64::from_bits(((k + 1023) as u64) << 52),
        _ => f64::from_bits(1 << (k - LOWEST_BIT)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::stats::rng::SplitMix64;

    #[test]
    fn large_terms_do_not_overflow_in_between() {
        let sum = |xs: &[f64]| {
            let mut s = ExactSum::default();
            xs.iter().for_each(|&x| s.add(x));
            s
        };
        assert_eq!(BIG, 2f64.powi(960));
        assert_eq!(sum(&[1e308, 1e308, -1e308]).total(), 1e308);
        assert_eq!(sum(&[1e308, -1e308, 1e308]).total(), 1e308);
        assert_eq!(sum(&[f64::MAX, f64::MAX]).mean(2), f64::MAX);
        assert_eq!(sum(&[1e308, 1e308]).total(), f64::INFINITY);
        assert_eq!(sum(&[1e308, 1.0, -1e308]).total(), 1.0);
        assert_eq!(sum(&[1e300, 1.0, 2.0]).total(), 1e300);
        // Split and merged, or counted in fixed point: the same.
        let (mut a, b) = (sum(&[1e308, 0.5]), sum(&[1e308, -1e308]));
        a.merge(&b);
        assert_eq!(a.total(), 1e308);
        let mut fixed = FixedSum::default();
        sum(&[1e308, 1e308, 3.0]).add_to(&mut fixed, 1);
        sum(&[-1e308]).add_to(&mut fixed, 1);
        assert_eq!(fixed.exact().total(), 1e308);
        let mut w = crate::base::codec::Writer::default();
        sum(&[1e308, 1e308, -1e308]).encode(&mut w);
        let bytes = w.into_bytes();
        let back = ExactSum::decode(&mut crate::base::codec::Reader::new(&bytes)).unwrap();
        assert_eq!(back.total(), 1e308);
    }

    #[test]
    fn sums_are_exact_and_order_independent() {
        let terms = [1e16, 1.0, -1e16, 0.1, 0.2, 0.3];
        let mut forward = ExactSum::default();
        terms.iter().for_each(|&x| forward.add(x));
        // Python: math.fsum([1e16, 1.0, -1e16, 0.1, 0.2, 0.3]) == 1.6
        assert_eq!(forward.total(), 1.6);
        let (mut a, mut b) = (ExactSum::default(), ExactSum::default());
        terms[..3].iter().for_each(|&x| a.add(x));
        terms[3..].iter().rev().for_each(|&x| b.add(x));
        a.merge(&b);
        assert_eq!(a.total(), forward.total());
    }

    /// Terms of every kind: confidences, their squares, values of one sign
    /// and both, subnormals, huge values that cancel, and any finite float.
    fn term(rng: &mut SplitMix64, kind: u64) -> f64 {
        match kind {
            0 => rng.next_f64(),
            1 => rng.next_f64().powi(2),
            2 => rng.next_f64() * 1e6 - 5e5,
            3 => f64::from_bits(rng.below(1 << 52)) * if rng.below(2) == 0 { 1.0 } else { -1.0 },
            4 => (rng.next_f64() - 0.5) * 1e300,
            _ => loop {
                let x = f64::from_bits(rng.next_u64());
                if x.is_finite() && x.abs() < 1e300 {
                    break x;
                }
            },
        }
    }

    #[test]
    fn a_fixed_sum_totals_as_an_exact_sum_of_as_many_terms() {
        let mut rng = SplitMix64::seeded("fixed sums", 1);
        for round in 0..600 {
            let kind = round % 6;
            let (mut exact, mut fixed) = (ExactSum::default(), FixedSum::default());
            for _ in 0..rng.below(40) {
                let (x, times) = (term(&mut rng, kind), rng.below(5));
                (0..times).for_each(|_| exact.add(x));
                fixed.add_times(x, times);
            }
            let total = fixed.exact().total();
            assert_eq!(total.to_bits(), exact.total().to_bits(), "round {round}");
        }
    }

    #[test]
    fn an_exact_sum_added_to_a_fixed_sum_is_as_many_merges() {
        let mut rng = SplitMix64::seeded("fixed merges", 1);
        for round in 0..200 {
            let (mut merged, mut fixed) = (ExactSum::default(), FixedSum::default());
            for _ in 0..rng.below(20) {
                let mut group = ExactSum::default();
                (0..rng.below(6)).for_each(|_| group.add(term(&mut rng, round % 6)));
                let times = rng.below(4);
                (0..times).for_each(|_| merged.merge(&group));
                group.add_to(&mut fixed, times);
            }
            let total = fixed.exact().total();
            assert_eq!(total.to_bits(), merged.total().to_bits(), "round {round}");
        }
        // Infinities and NaN are kept apart, as an exact sum keeps them.
        let mut special = ExactSum::default();
        special.add(f64::INFINITY);
        let mut fixed = FixedSum::default();
        special.add_to(&mut fixed, 2);
        assert_eq!(fixed.exact().total(), f64::INFINITY);
    }
}
