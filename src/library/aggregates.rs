//! The aggregates: functions that fold the items into one value. Their rows in
//! the table of callables say what each takes; `eval` folds them.

/// An aggregate as the evaluator folds it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AggregateFn {
    Count,
    Sum,
    Mean,
    Min,
    Max,
    Ratio,
    /// A percentile in 0..=100, numpy's default linear interpolation.
    Percentile(f64),
    /// Cohen's kappa of two labels per item.
    Kappa,
    /// The share of items whose two labels agree.
    Agreement,
    /// Across runs: the share of items whose value is the same in every run.
    Stability,
    /// F1 per class (truth vs predicted label), averaged as scikit-learn's
    /// `f1_score(average="macro")`, `"micro"` and `"weighted"`.
    MacroF1,
    MicroF1,
    WeightedF1,
    /// The confusion matrix of two labels; its value is the items in it.
    Confusion,
    /// Expected calibration error over this many equal-width bins.
    Ece(u32),
    /// The Brier score: the mean squared error of a confidence against 0/1.
    Brier,
}

impl AggregateFn {
    /// A stable name for files that keep per-item observations
    /// (item-values.jsonl): `ratio`, `percentile:95`, `ece:10`, ….
    pub fn keyword(self) -> String {
        let name = match self {
            AggregateFn::Count => "count",
            AggregateFn::Sum => "sum",
            AggregateFn::Mean => "mean",
            AggregateFn::Min => "min",
            AggregateFn::Max => "max",
            AggregateFn::Ratio => "ratio",
            AggregateFn::Percentile(q) => return format!("percentile:{q}"),
            AggregateFn::Kappa => "kappa",
            AggregateFn::Agreement => "agreement",
            AggregateFn::Stability => "stability",
            AggregateFn::MacroF1 => "macro_f1",
            AggregateFn::MicroF1 => "micro_f1",
            AggregateFn::WeightedF1 => "weighted_f1",
            AggregateFn::Confusion => "confusion",
            AggregateFn::Ece(bins) => return format!("ece:{bins}"),
            AggregateFn::Brier => "brier",
        };
        name.to_string()
    }

    /// The function a [`AggregateFn::keyword`] names.
    pub fn from_keyword(keyword: &str) -> Option<AggregateFn> {
        if let Some(q) = keyword.strip_prefix("percentile:") {
            let q: f64 = q.parse().ok()?;
            return (0.0..=100.0)
                .contains(&q)
                .then_some(AggregateFn::Percentile(q));
        }
        if let Some(bins) = keyword.strip_prefix("ece:") {
            let bins: u32 = bins.parse().ok()?;
            return (bins > 0).then_some(AggregateFn::Ece(bins));
        }
        Some(match keyword {
            "count" => AggregateFn::Count,
            "sum" => AggregateFn::Sum,
            "mean" => AggregateFn::Mean,
            "min" => AggregateFn::Min,
            "max" => AggregateFn::Max,
            "ratio" => AggregateFn::Ratio,
            "kappa" => AggregateFn::Kappa,
            "agreement" => AggregateFn::Agreement,
            "stability" => AggregateFn::Stability,
            "macro_f1" => AggregateFn::MacroF1,
            "micro_f1" => AggregateFn::MicroF1,
            "weighted_f1" => AggregateFn::WeightedF1,
            "confusion" => AggregateFn::Confusion,
            "brier" => AggregateFn::Brier,
            _ => return None,
        })
    }
}

/// What an aggregate's arguments must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    /// A bool: the items where it holds are counted (`count` may omit it).
    Condition,
    /// A number; nulls are skipped.
    Number,
    /// A number, then the percentile as a literal from 0 to 100.
    NumberAndPercentile,
    /// Two labels of each item.
    TwoLabels,
    /// A confidence (a number from 0 to 1) and whether the item is correct (a bool).
    Calibration,
    /// A confidence, a bool, then the number of bins as a literal.
    CalibrationAndBins,
    /// Any value of each item, compared across runs.
    Value,
}

/// What an aggregate gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gives {
    Int,
    /// An integer when its argument is one, else a number.
    LikeArgument,
    Number,
}

/// One aggregate of the table.
#[derive(Debug)]
pub struct AggregateDef {
    pub name: &'static str,
    /// `None`: a percentile whose level is the second argument, or `ece`, whose
    /// bins are the third.
    pub function: Option<AggregateFn>,
    pub takes: Takes,
    /// Fewest and most arguments.
    pub arity: (usize, usize),
    pub gives: Gives,
    /// Folded over every run at once (never per run, so not in a gate).
    pub across_runs: bool,
    pub summary: &'static str,
    pub example: &'static str,
}

macro_rules! aggregate {
    ($name:literal, $function:expr, $takes:ident, $arity:expr, $gives:ident, $summary:literal, $example:literal) => {
        AggregateDef {
            name: $name,
            function: $function,
            takes: Takes::$takes,
            arity: $arity,
            gives: Gives::$gives,
            across_runs: false,
            summary: $summary,
            example: $example,
        }
    };
}

pub static AGGREGATES: &[AggregateDef] = &[
    aggregate!(
        "count",
        Some(AggregateFn::Count),
        Condition,
        (0, 1),
        Int,
        "items where the condition holds (every item without one)",
        "count(shipped) or count()"
    ),
    aggregate!(
        "sum",
        Some(AggregateFn::Sum),
        Number,
        (1, 1),
        LikeArgument,
        "the exact sum (as Python's `math.fsum`); nulls are skipped",
        "mean(trace.latency_ms where shipped)"
    ),
    aggregate!(
        "mean",
        Some(AggregateFn::Mean),
        Number,
        (1, 1),
        Number,
        "the exact mean; nulls are skipped; no value without items",
        "mean(trace.latency_ms where shipped)"
    ),
    aggregate!(
        "min",
        Some(AggregateFn::Min),
        Number,
        (1, 1),
        LikeArgument,
        "the smallest value; nulls are skipped",
        "mean(trace.latency_ms where shipped)"
    ),
    aggregate!(
        "max",
        Some(AggregateFn::Max),
        Number,
        (1, 1),
        LikeArgument,
        "the largest value; nulls are skipped",
        "mean(trace.latency_ms where shipped)"
    ),
    aggregate!(
        "ratio",
        Some(AggregateFn::Ratio),
        Condition,
        (1, 1),
        Number,
        "the share of items where the condition holds; no value without items",
        "ratio(correct where shipped)"
    ),
    aggregate!(
        "p50",
        Some(AggregateFn::Percentile(50.0)),
        Number,
        (1, 1),
        Number,
        "the median (numpy's linear percentile)",
        "mean(trace.latency_ms where shipped)"
    ),
    aggregate!(
        "p95",
        Some(AggregateFn::Percentile(95.0)),
        Number,
        (1, 1),
        Number,
        "the 95th percentile (numpy's linear percentile)",
        "mean(trace.latency_ms where shipped)"
    ),
    aggregate!(
        "p99",
        Some(AggregateFn::Percentile(99.0)),
        Number,
        (1, 1),
        Number,
        "the 99th percentile (numpy's linear percentile)",
        "mean(trace.latency_ms where shipped)"
    ),
    aggregate!(
        "percentile",
        None,
        NumberAndPercentile,
        (2, 2),
        Number,
        "the q-th percentile, q from 0 to 100 (numpy's linear percentile)",
        "percentile(trace.latency_ms, 90)"
    ),
    aggregate!(
        "kappa",
        Some(AggregateFn::Kappa),
        TwoLabels,
        (2, 2),
        Number,
        "Cohen's kappa of two labels per item",
        "kappa(scholar.verdict, auditor.verdict)"
    ),
    aggregate!(
        "agreement",
        Some(AggregateFn::Agreement),
        TwoLabels,
        (2, 2),
        Number,
        "the share of items whose two labels agree",
        "kappa(scholar.verdict, auditor.verdict)"
    ),
    aggregate!(
        "macro_f1",
        Some(AggregateFn::MacroF1),
        TwoLabels,
        (2, 2),
        Number,
        "the unweighted mean of each class's F1 (scikit-learn's `f1_score`, `average=\"macro\"`)",
        "macro_f1(gold.intent, pred.intent)"
    ),
    aggregate!(
        "micro_f1",
        Some(AggregateFn::MicroF1),
        TwoLabels,
        (2, 2),
        Number,
        "F1 of the pooled counts (`average=\"micro\"`): the share of items whose labels agree",
        "micro_f1(gold.intent, pred.intent)"
    ),
    aggregate!(
        "weighted_f1",
        Some(AggregateFn::WeightedF1),
        TwoLabels,
        (2, 2),
        Number,
        "each class's F1 weighted by its true items (`average=\"weighted\"`)",
        "weighted_f1(gold.intent, pred.intent)"
    ),
    aggregate!(
        "confusion",
        Some(AggregateFn::Confusion),
        TwoLabels,
        (2, 2),
        Int,
        "the items with both labels; the confusion matrix and per-class scores go to the reports",
        "confusion(gold.intent, pred.intent)"
    ),
    aggregate!(
        "ece",
        None,
        CalibrationAndBins,
        (3, 3),
        Number,
        "expected calibration error over `bins` equal-width bins of the confidence",
        "ece(pred.confidence, pred.intent == gold.intent, 10)"
    ),
    aggregate!(
        "brier",
        Some(AggregateFn::Brier),
        Calibration,
        (2, 2),
        Number,
        "the mean of (confidence − correct)², correct as 1 or 0 (scikit-learn's `brier_score_loss`)",
        "brier(pred.confidence, pred.intent == gold.intent)"
    ),
    AggregateDef {
        across_runs: true,
        ..aggregate!(
            "stability",
            Some(AggregateFn::Stability),
            Value,
            (1, 1),
            Number,
            "across runs: the share of items whose value is the same in every run",
            "stability(label)"
        )
    },
];

pub fn lookup(name: &str) -> Option<&'static AggregateDef> {
    AGGREGATES.iter().find(|a| a.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_name_each_function_and_read_back() {
        let all = [
            AggregateFn::Count,
            AggregateFn::Sum,
            AggregateFn::Mean,
            AggregateFn::Min,
            AggregateFn::Max,
            AggregateFn::Ratio,
            AggregateFn::Percentile(95.0),
            AggregateFn::Percentile(12.5),
            AggregateFn::Kappa,
            AggregateFn::Agreement,
            AggregateFn::Stability,
            AggregateFn::MacroF1,
            AggregateFn::MicroF1,
            AggregateFn::WeightedF1,
            AggregateFn::Confusion,
            AggregateFn::Ece(10),
            AggregateFn::Brier,
        ];
        for function in all {
            assert_eq!(
                AggregateFn::from_keyword(&function.keyword()),
                Some(function)
            );
        }
        assert_eq!(AggregateFn::Percentile(95.0).keyword(), "percentile:95");
        for bad in ["percentile:101", "ece:0", "ece:x", "median", ""] {
            assert_eq!(AggregateFn::from_keyword(bad), None, "{bad}");
        }
    }
}
