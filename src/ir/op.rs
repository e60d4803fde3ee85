//! Compiled expressions: typed operations over resolved slots. No names, no syntax.

use std::sync::Arc;

use crate::base::value::Value;
use crate::library::builtins::Builtin;
use crate::library::matchers::Matcher;
use crate::syntax::BinaryOp;

#[derive(Debug, Clone)]
pub enum Op {
    Const(Value),
    /// A projected field of a dataset's record (null when the item has no record).
    Slot {
        dataset: usize,
        slot: usize,
    },
    /// A per-item field or matcher computed earlier in the plan.
    Derived(usize),
    /// An aggregate's result (metrics only).
    Aggregate(usize),
    /// Another metric's value (metrics and gates).
    Metric(usize),
    /// `baseline.NAME`: a metric's value in the baseline run (gates only; null
    /// without a baseline).
    Baseline(usize),
    /// `records(dataset)`: how many records the dataset kept (metrics only).
    DatasetRecords(usize),
    /// `run_min(metric)` and kin: a per-run metric summarised over the runs.
    RunStat(RunStat, usize),
    /// `base.name` on a value read whole.
    Field(Box<Op>, Arc<str>),
    Index(Box<Op>, Box<Op>),
    Not(Box<Op>),
    Neg(Box<Op>),
    Binary(BinaryOp, Box<Op>, Box<Op>),
    List(Vec<Op>),
    Call(&'static Builtin, Vec<Op>),
    /// `if(condition, then, else)`, evaluated lazily.
    If(Box<Op>, Box<Op>, Box<Op>),
    Matcher(Arc<Matcher>, Vec<Op>),
    /// A dataset path before projection assigns it a slot; none survive compilation.
    Path {
        dataset: usize,
        path: Vec<String>,
    },
}

impl Op {
    /// Visits this op and every op inside it, mutably.
    pub fn walk_mut(&mut self, f: &mut impl FnMut(&mut Op)) {
        f(self);
        match self {
            Op::Field(a, _) | Op::Not(a) | Op::Neg(a) => a.walk_mut(f),
            Op::Index(a, b) | Op::Binary(_, a, b) => {
                a.walk_mut(f);
                b.walk_mut(f);
            }
            Op::If(a, b, c) => {
                a.walk_mut(f);
                b.walk_mut(f);
                c.walk_mut(f);
            }
            Op::List(items) | Op::Call(_, items) | Op::Matcher(_, items) => {
                items.iter_mut().for_each(|op| op.walk_mut(f));
            }
            Op::Const(_)
            | Op::Slot { .. }
            | Op::Derived(_)
            | Op::Aggregate(_)
            | Op::Metric(_)
            | Op::Baseline(_)
            | Op::DatasetRecords(_)
            | Op::RunStat(..)
            | Op::Path { .. } => {}
        }
    }

    /// Visits this op and every op inside it.
    pub fn walk(&self, f: &mut impl FnMut(&Op)) {
        f(self);
        match self {
            Op::Field(a, _) | Op::Not(a) | Op::Neg(a) => a.walk(f),
            Op::Index(a, b) | Op::Binary(_, a, b) => {
                a.walk(f);
                b.walk(f);
            }
            Op::If(a, b, c) => {
                a.walk(f);
                b.walk(f);
                c.walk(f);
            }
            Op::List(items) | Op::Call(_, items) | Op::Matcher(_, items) => {
                items.iter().for_each(|op| op.walk(f));
            }
            Op::Const(_)
            | Op::Slot { .. }
            | Op::Derived(_)
            | Op::Aggregate(_)
            | Op::Metric(_)
            | Op::Baseline(_)
            | Op::DatasetRecords(_)
            | Op::RunStat(..)
            | Op::Path { .. } => {}
        }
    }
}

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
    pub const ALL: [(&'static str, RunStat); 4] = [
        ("run_min", RunStat::Min),
        ("run_max", RunStat::Max),
        ("run_mean", RunStat::Mean),
        ("run_std", RunStat::Std),
    ];

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
            let mut sum = crate::base::exact_sum::ExactSum::default();
            values.iter().for_each(|&x| sum.add(x));
            sum.total() / n
        };
        Some(match self {
            RunStat::Min => values.iter().copied().fold(f64::INFINITY, f64::min),
            RunStat::Max => values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            RunStat::Mean => mean(),
            RunStat::Std => {
                let m = mean();
                let mut squares = crate::base::exact_sum::ExactSum::default();
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
