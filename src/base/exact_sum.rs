//! Exact float sums, so that sums and means never depend on how items were split
//! between threads.

/// A float sum that is exact until the final rounding (Shewchuk's algorithm, as
/// Python's `math.fsum`): the result is the correctly rounded sum whatever the order
/// of the terms, so sums and means are the same for any split of the items.
#[derive(Debug, Clone, Default)]
pub struct ExactSum {
    partials: Vec<f64>,
    /// Infinities and NaN, which the exact partials cannot hold.
    special: f64,
}

impl ExactSum {
    pub fn add(&mut self, mut x: f64) {
        if !x.is_finite() {
            self.special += x;
            return;
        }
        let mut i = 0;
        for j in 0..self.partials.len() {
            let mut y = self.partials[j];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let hi = x + y;
            let lo = y - (hi - x);
            if lo != 0.0 {
                self.partials[i] = lo;
                i += 1;
            }
            x = hi;
        }
        self.partials.truncate(i);
        self.partials.push(x);
    }

    pub fn merge(&mut self, other: &ExactSum) {
        other.partials.iter().for_each(|&p| self.add(p));
        self.special += other.special;
    }

    /// The correctly rounded total.
    pub fn total(&self) -> f64 {
        if self.special != 0.0 || self.special.is_nan() {
            return self.special;
        }
        let p = &self.partials;
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
