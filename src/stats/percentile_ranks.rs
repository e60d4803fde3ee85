//! A percentile's groups ranked for the grouped bootstrap (`resample`): the
//! value of a rank among the groups' values, each group counted as often as a
//! replicate draws it, without copying a value.

/// How many counts [`Ranks`] keeps at most (4 MB): with 200 groups, a count
/// per distinct value up to 5,242 of them, every few values past that.
pub(super) const MAX_MARKS: usize = 1 << 20;

/// A percentile's groups, ranked for the bootstrap: each replicate asks for
/// the value of a rank among the groups' values, group g's counted `weights[g]`
/// times. Every rank's value is one of the distinct values (`all`), so the
/// answer is the least distinct value with more than `rank` weighted values at
/// or below it, found by bisection over `all`.
///
/// Counting the values at or below a distinct value takes a binary search in
/// every group; `marks` keeps those counts for every `stride`-th distinct value
/// (every one when they fit), so the bisection first narrows to two marks by
/// sums of counts, then searches each group only between its two marks. At 1M
/// items in 200 groups with 1,001 distinct values, a percentile's interval
/// took 85 ms instead of 427, with the same answers.
pub(super) struct Ranks {
    /// Each group's values, sorted.
    groups: Vec<Vec<f64>>,
    /// The distinct values, sorted.
    all: Vec<f64>,
    stride: usize,
    /// `marks[m * groups + g]`: how many of group g's values are at or below
    /// `all[m * stride]`.
    marks: Vec<u32>,
}

impl Ranks {
    /// `max_marks` bounds `marks`' length (a test sets it low to cover strides).
    pub(super) fn new(mut groups: Vec<Vec<f64>>, max_marks: usize) -> Ranks {
        groups.iter_mut().for_each(|v| v.sort_by(f64::total_cmp));
        // Each group's distinct values, then all of them: a million values
        // of a thousand distinct ones sort as two hundred thousand.
        let mut all: Vec<f64> = Vec::new();
        for values in &groups {
            let start = all.len();
            for &x in values {
                if all.len() == start || all[all.len() - 1] != x {
                    all.push(x);
                }
            }
        }
        all.sort_by(f64::total_cmp);
        all.dedup();
        let per_mark = groups.len().max(1);
        let marked = (max_marks / per_mark).max(1);
        let stride = all.len().div_ceil(marked).max(1);
        let count = all.len().div_ceil(stride);
        let mut marks = vec![0u32; count * groups.len()];
        for (g, values) in groups.iter().enumerate() {
            // Values are sorted, so each mark's count continues the last one's.
            let mut below = 0;
            for m in 0..count {
                let x = all[m * stride];
                while below < values.len() && values[below] <= x {
                    below += 1;
                }
                marks[m * groups.len() + g] = below as u32;
            }
        }
        Ranks {
            groups,
            all,
            stride,
            marks,
        }
    }

    /// How many values there are, group g's counted `weights[g]` times.
    pub(super) fn weighted_len(&self, weights: &[u32]) -> u64 {
        (self.groups.iter())
            .zip(weights)
            .map(|(g, &w)| g.len() as u64 * u64::from(w))
            .sum()
    }

    /// The value of rank `rank` (0 the least), group g's values counted
    /// `weights[g]` times.
    pub(super) fn weighted_nth(&self, weights: &[u32], rank: u64) -> f64 {
        let width = self.groups.len();
        let at_mark = |m: usize| -> u64 {
            let counts = &self.marks[m * width..(m + 1) * width];
            counts
                .iter()
                .zip(weights)
                .map(|(&c, &w)| u64::from(c) * u64::from(w))
                .sum()
        };
        // The first mark with more than `rank` values at or below it
        // (`mark_count` when none has): the answer is at it, or after the
        // mark before it.
        let mark_count = self.marks.len() / width.max(1);
        let (mut next_mark, mut hi) = (0, mark_count);
        while next_mark < hi {
            let mid = next_mark + (hi - next_mark) / 2;
            if at_mark(mid) > rank {
                hi = mid;
            } else {
                next_mark = mid + 1;
            }
        }
        let Some(before) = next_mark.checked_sub(1) else {
            return self.all[0];
        };
        // Between the two marks, each group's values lie between its two counts.
        let at_or_below = |x: f64| -> u64 {
            self.groups
                .iter()
                .enumerate()
                .zip(weights)
                .filter(|(_, w)| **w > 0)
                .map(|((g, values), w)| {
                    let from = self.marks[before * width + g] as usize;
                    let to = match next_mark < mark_count {
                        true => self.marks[next_mark * width + g] as usize,
                        false => values.len(),
                    };
                    let within = values[from..to].partition_point(|v| *v <= x);
                    (from + within) as u64 * u64::from(*w)
                })
                .sum()
        };
        // Clamped, as the plain bisection was: a rank past the last value
        // (never asked for) gets the greatest value, not a panic.
        let last = self.all.len() - 1;
        let (mut lo, mut hi) = (
            (before * self.stride + 1).min(last),
            (next_mark * self.stride).min(last),
        );
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if at_or_below(self.all[mid]) > rank {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        self.all[lo]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::stats::rng::SplitMix64;

    #[test]
    fn weighted_ranks_equal_the_expanded_sorted_values() {
        let mut rng = SplitMix64::new(7);
        // Values from -4.5 to 5 by halves; zero is -0.0, which must come back
        // with its sign (bits are compared).
        let groups: Vec<Vec<f64>> = (0..9)
            .map(|g| {
                (0..g * 3)
                    .map(|_| (rng.below(20) as f64) / 2.0 - 4.5)
                    .map(|x| if x == 0.0 { -0.0 } else { x })
                    .collect()
            })
            .collect();
        // A mark for every distinct value, for every few, and for the first only.
        for max_marks in [usize::MAX, 9 * 4, 9 * 3, 1] {
            let ranks = Ranks::new(groups.clone(), max_marks);
            for round in 0..20 {
                let weights: Vec<u32> = (0..groups.len()).map(|_| rng.below(4) as u32).collect();
                let mut expanded: Vec<f64> = groups
                    .iter()
                    .zip(&weights)
                    .flat_map(|(g, w)| {
                        g.iter()
                            .flat_map(move |x| std::iter::repeat_n(*x, *w as usize))
                    })
                    .collect();
                expanded.sort_by(f64::total_cmp);
                for (rank, x) in expanded.iter().enumerate() {
                    assert_eq!(
                        ranks.weighted_nth(&weights, rank as u64).to_bits(),
                        x.to_bits(),
                        "marks {max_marks}, stride {}, round {round}",
                        ranks.stride
                    );
                }
            }
        }
    }
}
