//! `significance:` on a shaped gate: a drop beyond `max_drop` or
//! `max_drop_relative` fails only when the paired test against the baseline
//! finds it significant, one-sided in the metric's bad direction, at the gate's
//! level (p < significance). `min_gain` bounds are held as without it. Without a
//! paired test (the baseline kept no item values, or the metric is not computed
//! from items) the bound applies as it would without `significance`, and the
//! reason says so.

use crate::plan::ShapePlan;
use crate::spec::Better;
use crate::stats::inference::{fixed, p_text, ChangeTest};

/// The paired changes of one run, per metric (plan order), and their level.
#[derive(Debug, Clone, Copy)]
pub struct Tests<'a> {
    pub changes: &'a [Option<ChangeTest>],
}

impl Tests<'static> {
    /// No tests (slice values: their items are not kept apart).
    pub const NONE: Tests<'static> = Tests { changes: &[] };
}

impl<'a> Tests<'a> {
    /// What a gate with `significance` holds its change bounds to.
    pub fn of(&self, shape: &ShapePlan) -> Option<Tested<'a>> {
        let alpha = shape.significance?;
        Some(Tested {
            change: self
                .changes
                .get(shape.metric.index())
                .and_then(Option::as_ref),
            alpha,
        })
    }
}

pub struct Tested<'a> {
    change: Option<&'a ChangeTest>,
    alpha: f64,
}

/// A change beyond its bound, judged.
pub enum Judged {
    Significant(String),
    Noise(String),
    Untested(String),
}

impl Tested<'_> {
    pub fn judge(&self, shape: &ShapePlan) -> Judged {
        let Some(change) = self.change else {
            return Judged::Untested(format!(
                "no paired test of `{}` against the baseline, so `significance` could not apply",
                shape.metric_name
            ));
        };
        let p = match shape.better {
            Better::Higher => change.p_down,
            Better::Lower => change.p_up,
        };
        let summary = describe(&shape.metric_name, change, p);
        let alpha = crate::base::value::format_number(self.alpha);
        if p < self.alpha {
            Judged::Significant(format!("{summary}: significant at {alpha}"))
        } else {
            Judged::Noise(format!("{summary}: within noise at significance {alpha}"))
        }
    }
}

/// `precision dropped 0.031 (95% CI −0.052 … −0.010, p = 0.004, McNemar, 212 items)`,
/// with `p` the one-sided p-value the gate used.
pub fn describe(metric: &str, change: &ChangeTest, p: f64) -> String {
    let moved = if change.delta < 0.0 {
        "dropped"
    } else {
        "rose"
    };
    format!(
        "{metric} {moved} {} ({}% CI {} … {}, p {}, {}, {} items)",
        fixed(change.delta.abs()),
        crate::base::value::format_number(change.level * 100.0),
        fixed(change.low),
        fixed(change.high),
        p_text(p),
        change.test_name(),
        change.items
    )
}
