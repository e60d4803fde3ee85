//! Gates as declared: their rules, severities, and how they decide over runs,
//! slices and a baseline.

use super::{Better, ExprText, Name};
use crate::spec::yaml::Node;

#[derive(Debug, Clone)]
pub enum SeveritySpec {
    Fail,
    Warn,
    /// Decided by the params: an expression giving `"fail"` or `"warn"`.
    Expr(ExprText),
}

#[derive(Debug, Clone)]
pub struct GateDecl {
    pub name: Name,
    pub rule: GateRuleDecl,
    /// With several runs: whether every run must pass, or the best one.
    pub runs: GateRuns,
    pub severity: SeveritySpec,
    pub message: Option<String>,
    /// `by:` the slices the gate holds in; empty for a gate on the whole.
    pub by: Vec<Name>,
    /// With `by`: every slice must pass, or the worst slice's value is gated.
    pub slices: (GateSlices, Option<Node>),
    /// With `by`: slices with fewer items are skipped (listed as skipped).
    pub min_items: usize,
}

/// How a gate with `by:` decides over the slice values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateSlices {
    /// Every slice value must pass; the gate names each that does not.
    Every,
    /// The worst value over the slices (by the metric's `better`) is gated.
    Worst,
}

impl GateSlices {
    pub fn keyword(self) -> &'static str {
        match self {
            GateSlices::Every => "every",
            GateSlices::Worst => "worst",
        }
    }
}

/// How a gate over per-run metrics decides with several runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateRuns {
    /// Every run must pass; the gate shows the worst run.
    Every,
    /// At least one run must pass (the best run); the gate shows the first that does.
    Any,
}

impl GateRuns {
    pub fn keyword(self) -> &'static str {
        match self {
            GateRuns::Every => "every",
            GateRuns::Any => "any",
        }
    }
}

#[derive(Debug, Clone)]
pub enum GateRuleDecl {
    /// `expr:` any boolean over metrics, params and `baseline.NAME`.
    Expr(ExprText),
    /// `metric:` with thresholds and changes against the baseline.
    Shape(Box<GateShapeDecl>),
}

/// A gate on one metric in the usual shapes, without arithmetic. Every bound is
/// an expression over params and metrics (usually a number).
#[derive(Debug, Clone)]
pub struct GateShapeDecl {
    pub metric: Name,
    /// Overrides the metric's own `better`.
    pub better: Option<Better>,
    pub threshold: Option<ExprText>,
    pub warn_threshold: Option<ExprText>,
    pub changes: Vec<(Change, ExprText)>,
    pub when_no_baseline: NoBaseline,
    /// `significance:` a change fails only when a one-sided paired test against
    /// the baseline finds it significant at this level.
    pub significance: Option<f64>,
}

/// A bound on the change against the baseline, in the metric's good direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// May be worse than the baseline by at most this much.
    MaxDrop,
    /// … by at most this fraction of |baseline|.
    MaxDropRelative,
    /// Must be better than the baseline by at least this much.
    MinGain,
    /// … by at least this fraction of |baseline|.
    MinGainRelative,
}

impl Change {
    pub const ALL: [(&'static str, Change); 4] = [
        ("max_drop", Change::MaxDrop),
        ("max_drop_relative", Change::MaxDropRelative),
        ("min_gain", Change::MinGain),
        ("min_gain_relative", Change::MinGainRelative),
    ];

    pub fn keyword(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, c)| *c == self)
            .map_or("", |(k, _)| k)
    }
}

/// What a gate with change bounds does when there is no baseline value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoBaseline {
    Pass,
    Warn,
    Fail,
}
