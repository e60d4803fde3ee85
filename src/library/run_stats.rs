//! `run_min`, `run_max`, `run_mean` and `run_std`: a per-run metric summarised
//! over the runs.

use crate::base::exact_sum::ExactSum;

/// How `run_min`, `run_max`, `run_mean` and `run_std` summarise a metric over runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStat {
    Min,
    Max,
    Mean,
    /// Population standard deviation (numpy's default, `ddof=0`).
    Std,
}

impl RunStat {
    pub fn keyword(self) -> &'static str {
        match self {
            RunStat::Min => "min",
            RunStat::Max => "max",
            RunStat::Mean => "mean",
            RunStat::Std => "std",
        }
    }

    /// The summary of `values` (nulls skipped); null when there is none.
    pub fn of(self, values: &[f64]) -> Option<f64> {
        if values.is_empty() {
            return None;
        }
        let n = values.len() as f64;
        let mean = || {
            let mut sum = ExactSum::default();
            values.iter().for_each(|&x| sum.add(x));
            sum.total() / n
        };
        Some(match self {
            RunStat::Min => values.iter().copied().fold(f64::INFINITY, f64::min),
            RunStat::Max => values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            RunStat::Mean => mean(),
            RunStat::Std => {
                let m = mean();
                let mut squares = ExactSum::default();
                values.iter().for_each(|&x| squares.add((x - m) * (x - m)));
                (squares.total() / n).sqrt()
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::RunStat;

    #[test]
    fn run_summaries_use_the_population_standard_deviation() {
        let xs = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(RunStat::Min.of(&xs), Some(1.0));
        assert_eq!(RunStat::Max.of(&xs), Some(4.0));
        assert_eq!(RunStat::Mean.of(&xs), Some(2.5));
        // numpy.std([1, 2, 3, 4]) == sqrt(1.25)
        assert_eq!(RunStat::Std.of(&xs), Some(1.25f64.sqrt()));
        assert_eq!(RunStat::Std.of(&[0.7]), Some(0.0));
        assert_eq!(RunStat::Mean.of(&[]), None);
    }
}
