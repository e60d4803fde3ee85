//! What a gate with `significance` can detect: the smallest change in its bad
//! direction that a one-sided test at level α would call significant, estimated
//! from the baseline's items as the distance from the baseline value to its
//! interval's bound on the bad side, at level 1 − 2α (the one-sided bound at α):
//! the Wilson interval for a ratio, the delta-method normal interval otherwise. A paired test whose runs agree on
//! most items detects less; this is the scale a reader should compare the
//! gate's bound to.

use crate::base::stats::bootstrap::{normal_interval, RatioOfSums};
use crate::base::stats::wilson::wilson;
use crate::plan::{Plan, ShapePlan};
use crate::report_model::item_values::ValueKind;
use crate::spec::Better;

/// `None` without a baseline that kept the metric's item values.
pub fn detectable(plan: &Plan, shape: &ShapePlan, alpha: f64) -> Option<(f64, usize)> {
    detectable_in(plan, shape, alpha, None)
}

/// [`detectable`] on the baseline's items with `value` of slice `slice`
/// (`None`: all items); `None` also when the baseline kept no slice values
/// (item-values before version 4).
pub fn detectable_in(
    plan: &Plan,
    shape: &ShapePlan,
    alpha: f64,
    within: Option<(&str, &str)>,
) -> Option<(f64, usize)> {
    let values = plan.baseline.as_ref()?.values.as_ref()?;
    let column = values.column(&shape.metric_name)?;
    let kind = values.metrics[column].kind;
    let slice = match within {
        Some((slice, value)) => Some((values.slices.iter().position(|s| s == slice)?, value)),
        None => None,
    };
    let contributions: Vec<Option<f64>> = (values.rows())
        .filter(|r| slice.is_none_or(|(s, value)| &*r.slices[s] == value))
        .map(|r| r.values[column])
        .collect();
    let level = 1.0 - 2.0 * alpha;
    let counted = contributions.iter().filter(|v| v.is_some()).count();
    let stat = match kind {
        ValueKind::Sum | ValueKind::Count => {
            RatioOfSums::total(contributions.iter().map(|v| v.unwrap_or(0.0)).collect())
        }
        ValueKind::Ratio | ValueKind::Mean => {
            let (num, den) = contributions
                .iter()
                .map(|v| v.map_or((0.0, 0.0), |x| (x, 1.0)))
                .unzip();
            RatioOfSums::new(num, den)
        }
    };
    let point = stat.point()?;
    let (low, high) = match kind {
        ValueKind::Ratio => {
            let hits = contributions.iter().filter(|v| **v == Some(1.0)).count();
            wilson(hits as u64, counted as u64, level)?
        }
        _ => normal_interval(&stat, level)?,
    };
    let distance = match shape.better {
        Better::Higher => point - low,
        Better::Lower => high - point,
    };
    Some((distance.max(0.0), counted))
}
