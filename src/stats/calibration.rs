//! Calibration: how well a confidence (a probability from 0 to 1) predicts
//! whether each item is correct. `ece` bins the confidences; `brier` is their
//! mean squared error against 1 (correct) or 0. Every sum is exact, so the
//! result does not depend on how items were split between threads.

use crate::base::codec::{Decoded, Reader, Writer};
use crate::base::exact_sum::{ExactSum, FixedSum};
use crate::library::error::RuntimeErrorKind;

/// The items of one aggregate, binned by confidence.
#[derive(Debug, Clone)]
pub struct Calibration {
    /// Equal-width bins over [0, 1]; bin `b` of `B` holds `[b/B, (b+1)/B)`, the
    /// last also 1.
    bins: Vec<Bin>,
    /// Σ (confidence − correct)², for the Brier score.
    squared: ExactSum,
    n: u64,
}

#[derive(Debug, Clone, Default)]
struct Bin {
    n: u64,
    correct: u64,
    confidence: ExactSum,
}

impl Calibration {
    pub(crate) fn encode(&self, w: &mut Writer) {
        w.seq(self.bins.iter(), |w, bin| {
            w.u64(bin.n);
            w.u64(bin.correct);
            bin.confidence.encode(w);
        });
        self.squared.encode(w);
        w.u64(self.n);
    }

    pub(crate) fn decode(r: &mut Reader<'_>) -> Decoded<Self> {
        Ok(Calibration {
            bins: r.seq(|r| {
                Ok(Bin {
                    n: r.u64()?,
                    correct: r.u64()?,
                    confidence: ExactSum::decode(r)?,
                })
            })?,
            squared: ExactSum::decode(r)?,
            n: r.u64()?,
        })
    }
}

impl Calibration {
    /// `bins` is at least 1 (the compiler checks it).
    pub fn new(bins: u32) -> Self {
        Calibration {
            bins: vec![Bin::default(); bins.max(1) as usize],
            squared: ExactSum::default(),
            n: 0,
        }
    }

    /// One item; a confidence outside [0, 1] is an error, not a value to clamp.
    pub fn add(&mut self, confidence: f64, correct: bool) -> Result<(), RuntimeErrorKind> {
        if !(0.0..=1.0).contains(&confidence) {
            return Err(RuntimeErrorKind::ConfidenceOutOfRange { found: confidence });
        }
        let count = self.bins.len();
        // min(floor(c·B), B − 1): a confidence of exactly 1 is in the last bin.
        let index = ((confidence * count as f64).floor() as usize).min(count - 1);
        let bin = &mut self.bins[index];
        bin.n += 1;
        bin.correct += u64::from(correct);
        bin.confidence.add(confidence);
        let error = confidence - if correct { 1.0 } else { 0.0 };
        self.squared.add(error * error);
        self.n += 1;
        Ok(())
    }

    pub fn merge(&mut self, other: &Calibration) {
        // An empty bin adds nothing: most of a one-item group's bins are.
        for (bin, theirs) in (self.bins.iter_mut().zip(&other.bins)).filter(|(_, b)| b.n > 0) {
            bin.n += theirs.n;
            bin.correct += theirs.correct;
            bin.confidence.merge(&theirs.confidence);
        }
        self.squared.merge(&other.squared);
        self.n += other.n;
    }

    /// What merging each of `groups` (of one number of bins) as many times as
    /// its weight gives, with each bin's sums added as fixed-point digits
    /// rather than term by term: a bootstrap replicate's calibration.
    pub fn weighted_sum<'a>(groups: impl Iterator<Item = (&'a Calibration, u64)>) -> Calibration {
        let mut groups = groups.filter(|&(_, w)| w > 0).peekable();
        let bins = groups.peek().map_or(1, |(group, _)| group.bins.len());
        let mut sum = Calibration::new(bins as u32);
        let mut confidence = vec![FixedSum::default(); bins];
        let mut squared = FixedSum::default();
        for (group, w) in groups {
            let filled = (sum.bins.iter_mut().zip(&mut confidence))
                .zip(&group.bins)
                .filter(|(_, theirs)| theirs.n > 0);
            for ((bin, confidence), theirs) in filled {
                bin.n += theirs.n * w;
                bin.correct += theirs.correct * w;
                theirs.confidence.add_to(confidence, w);
            }
            group.squared.add_to(&mut squared, w);
            sum.n += group.n * w;
        }
        for (bin, confidence) in sum.bins.iter_mut().zip(confidence) {
            bin.confidence = confidence.exact();
        }
        sum.squared = squared.exact();
        sum
    }

    /// `Σ_b n_b/N · |accuracy_b − confidence_b|` over the non-empty bins, which is
    /// `Σ_b |correct_b − Σ confidence_b| / N`: one rounding per bin, then the sum.
    pub fn ece(&self) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let mut total = ExactSum::default();
        for bin in self.bins.iter().filter(|b| b.n > 0) {
            let mut gap = bin.confidence.clone();
            gap.add(-(bin.correct as f64));
            total.add(gap.total().abs());
        }
        Some(total.total() / self.n as f64)
    }

    /// `Σ (confidence − correct)² / N`, correct as 1 or 0.
    pub fn brier(&self) -> Option<f64> {
        (self.n > 0).then(|| self.squared.total() / self.n as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::stats::rng::SplitMix64;

    fn calibration(bins: u32, items: &[(f64, bool)]) -> Calibration {
        let mut c = Calibration::new(bins);
        for &(confidence, correct) in items {
            c.add(confidence, correct).unwrap();
        }
        c
    }

    #[test]
    fn ece_by_hand() {
        // Two bins. [0, 0.5): 0.2 (wrong), 0.4 (right): accuracy 0.5, mean
        // confidence 0.3. [0.5, 1]: 0.9, 1.0 (right), 0.5 (wrong): accuracy 2/3,
        // mean 0.8. ECE = 2/5·0.2 + 3/5·(0.8 − 2/3) = |1 − 0.6|/5 + |2 − 2.4|/5 = 0.16.
        let items = [
            (0.2, false),
            (0.4, true),
            (0.9, true),
            (1.0, true),
            (0.5, false),
        ];
        let c = calibration(2, &items);
        let ece = c.ece().unwrap();
        assert!((ece - 0.16).abs() < 1e-15, "{ece}");
        // One bin: |accuracy − mean confidence| over all items = |3 − 3.0|/5, but
        // exactly: 0.2, 0.4 and 0.9 as binary floats sum a hair above 1.5.
        let one_bin = calibration(1, &items).ece().unwrap();
        assert!(one_bin > 0.0 && one_bin < 1e-16, "{one_bin}");
        // Brier: (0.04 + 0.36 + 0.01 + 0 + 0.25) / 5.
        let brier = c.brier().unwrap();
        assert!((brier - 0.132).abs() < 1e-15, "{brier}");
    }

    #[test]
    fn split_and_merged_it_is_the_same() {
        let items: Vec<(f64, bool)> = (0..50).map(|i| (f64::from(i) / 49.0, i % 3 == 0)).collect();
        let whole = calibration(7, &items);
        let mut first = calibration(7, &items[..17]);
        first.merge(&calibration(7, &items[17..]));
        assert_eq!(first.ece(), whole.ece());
        assert_eq!(first.brier(), whole.brier());
    }

    #[test]
    fn a_weighted_sum_scores_as_merging_each_group_its_weight_times() {
        let mut rng = SplitMix64::seeded("calibrations", 3);
        for bins in [1, 3, 10] {
            for _ in 0..50 {
                let groups: Vec<(Calibration, u64)> = (0..rng.below(12))
                    .map(|_| {
                        let items: Vec<(f64, bool)> = (0..rng.below(8))
                            .map(|_| (rng.next_f64(), rng.below(2) == 0))
                            .collect();
                        (calibration(bins, &items), rng.below(4))
                    })
                    .collect();
                let mut merged = Calibration::new(bins);
                for (group, w) in &groups {
                    (0..*w).for_each(|_| merged.merge(group));
                }
                let sum = Calibration::weighted_sum(groups.iter().map(|(g, w)| (g, *w)));
                assert_eq!(sum.ece().map(f64::to_bits), merged.ece().map(f64::to_bits));
                assert_eq!(
                    sum.brier().map(f64::to_bits),
                    merged.brier().map(f64::to_bits)
                );
            }
        }
    }

    #[test]
    fn no_items_no_value_and_a_confidence_outside_zero_to_one_is_an_error() {
        let empty = Calibration::new(10);
        assert_eq!(empty.ece(), None);
        assert_eq!(empty.brier(), None);
        let mut c = Calibration::new(10);
        for bad in [1.5, -0.1, f64::NAN] {
            let error = c.add(bad, true).unwrap_err();
            assert!(matches!(
                error,
                RuntimeErrorKind::ConfidenceOutOfRange { .. }
            ));
        }
        assert_eq!(c.brier(), None);
    }
}
