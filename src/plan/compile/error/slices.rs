//! The compiler's errors about slices and `by:`, with their words and codes.

use crate::base::diagnostic::Words;
use crate::base::suggest::suggestion_or;
use crate::base::types::Type;

#[derive(Debug)]
pub enum SliceError {
    /// `by:` names no declared slice.
    UnknownSlice { name: String, slices: Vec<String> },
    /// A slice's expression gives a list or an object.
    NotScalar { slice: String, found: Type },
    /// `by:` on a metric computed once across runs.
    MetricAcross { metric: String },
    /// A gate with `by:` reads a metric that is not computed by that slice.
    MetricNotBy {
        gate: String,
        metric: String,
        slice: String,
    },
    /// A gate with `by:` reads an aggregate directly.
    AggregateInGate { gate: String },
    /// `slices: worst` on an expression gate, which has no better direction.
    WorstNeedsMetric { gate: String },
    /// `significance` on a gate with `by:` that no paired test per slice value
    /// can decide: `slices: worst`, or a metric that is not one `ratio`,
    /// `mean`, `sum` or `count` of the items.
    SignificanceUntestable {
        gate: String,
        metric: String,
        worst: bool,
    },
}

impl SliceError {
    pub(super) fn code_name(&self) -> &'static str {
        match self {
            SliceError::UnknownSlice { .. } => "unknown_slice",
            SliceError::NotScalar { .. } => "slice_not_scalar",
            SliceError::MetricAcross { .. } => "slice_of_across_metric",
            SliceError::MetricNotBy { .. } => "gate_metric_not_by",
            SliceError::AggregateInGate { .. } => "aggregate_in_sliced_gate",
            SliceError::WorstNeedsMetric { .. } => "worst_needs_metric",
            SliceError::SignificanceUntestable { .. } => "slice_significance_untestable",
        }
    }

    pub(super) fn words(&self) -> Words {
        match self {
            SliceError::UnknownSlice { name, slices } => {
                Words::new(format!("the spec has no slice `{name}`")).help(suggestion_or(
                    name,
                    slices.iter().map(String::as_str),
                    || match slices.is_empty() {
                        true => "declare it under `slices:`, e.g. `slices: {category: gold.category}`"
                            .into(),
                        false => format!("slices: {}", slices.join(", ")),
                    },
                ))
            }
            SliceError::NotScalar { slice, found } => Words::new(format!(
                "slice `{slice}` must give a string, number or bool per item, but gives {found}"
            ))
            .help("each item falls in one slice value; pick one element, e.g. `tags[0]`"),
            SliceError::MetricAcross { metric } => Words::new(format!(
                "metric `{metric}` is computed across runs, so it cannot be computed per slice"
            ))
            .help("`by:` applies to metrics that aggregate items in a run"),
            SliceError::MetricNotBy {
                gate,
                metric,
                slice,
            } => Words::new(format!(
                "gate `{gate}` is by `{slice}`, but metric `{metric}` is not computed by `{slice}`"
            ))
            .help(format!("add `by: {slice}` to metric `{metric}`")),
            SliceError::AggregateInGate { gate } => Words::new(format!(
                "gate `{gate}` has `by:` but reads an aggregate over all items"
            ))
            .help("move the aggregate into a metric with `by:` and gate that metric"),
            SliceError::WorstNeedsMetric { gate } => Words::new(format!(
                "gate `{gate}`: `slices: worst` needs a gate on one metric (`metric:`)"
            ))
            .help("the worst slice is the lowest (or highest, for `better: lower`) value of the metric; use `slices: every` with an expression"),
            SliceError::SignificanceUntestable { gate, worst: true, .. } => Words::new(format!(
                "gate `{gate}` has `significance` and `slices: worst`, which no paired test decides"
            ))
            .help("the worst value may be another slice value than the baseline's worst; use `slices: every` (each value is tested against its own baseline items)"),
            SliceError::SignificanceUntestable { gate, metric, worst: false } => Words::new(format!(
                "gate `{gate}` has `significance` and `by:`, but `{metric}` has no paired test per slice value"
            ))
            .help("per slice value, a metric that is one `ratio`, `mean`, `sum` or `count` of the items is tested; gate such a metric, or remove `significance`"),
        }
    }
}
