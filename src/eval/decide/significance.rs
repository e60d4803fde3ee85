//! `significance:` on a shaped gate: a drop beyond `max_drop` or
//! `max_drop_relative` fails only when the paired test against the baseline
//! finds it significant, one-sided in the metric's bad direction, at the gate's
//! level, after Holm's adjustment over every test of the run that can fail the
//! build (`adjust`: adjusted p < significance). `min_gain` bounds are held as without it. Without a
//! paired test (the baseline kept no item values, or the metric is not computed
//! from items) the bound applies as it would without `significance`, and the
//! reason says so.

use crate::base::diagnostic::Diagnostic;
use crate::eval::decide::run_stats::RunStats;
use crate::eval::state::slices::SliceValueOutcome;
use crate::plan::{GateRule, Plan, Severity, ShapePlan};
use crate::spec::{Better, Change};
use crate::stats::inference::{fixed, ChangeTest};

/// A metric, its bad direction (`true`: a drop), and where: with `by:`, a
/// slice and its `min_items`.
type Member = (usize, bool, Option<(usize, usize)>);

/// The one-sided tests a gate with `significance` can fail the build on: a
/// fail-severity shaped gate with a drop bound, per metric and bad direction
/// (`true`: a drop), in plan order and without repeats; with `by:`, per slice
/// of the gate and its `min_items` (`None`: the metric over all items).
fn family_members(plan: &Plan) -> Vec<Member> {
    let mut members = Vec::new();
    for gate in &plan.gates {
        let GateRule::Shape(shape) = &gate.rule else {
            continue;
        };
        let drops = (shape.changes.iter())
            .any(|(c, _)| matches!(c, Change::MaxDrop | Change::MaxDropRelative));
        if gate.severity != Severity::Fail || shape.significance.is_none() || !drops {
            continue;
        }
        let (m, down) = (shape.metric.index(), shape.better == Better::Higher);
        let wheres: Vec<Option<(usize, usize)>> = match &gate.by {
            None => vec![None],
            Some(by) => by.slices.iter().map(|&s| Some((s, by.min_items))).collect(),
        };
        for at in wheres {
            let member = (m, down, at);
            if !members.contains(&member) {
                members.push(member);
            }
        }
    }
    members
}

/// Holm's step-down over the tests that can fail the build, over all runs:
/// each gated metric's test over all items, and with `by:` each slice value's
/// with at least `min_items` items. A member without a test is left out (its
/// bound applies as without `significance`, and says why).
pub fn adjust(plan: &Plan, runs: &mut [RunStats], slices: &mut [Vec<Vec<SliceValueOutcome>>]) {
    let members = family_members(plan);
    let mut family = Vec::new();
    for run in runs.iter_mut() {
        for (m, change) in run.changes.iter_mut().enumerate() {
            let Some(change) = change.as_mut() else {
                continue;
            };
            // A metric gated on both sides (rare) is tested on the first here.
            if let Some(&(_, down, _)) = members.iter().find(|(x, _, at)| *x == m && at.is_none()) {
                family.push((change, down));
            }
        }
    }
    for run in slices.iter_mut() {
        for (s, values) in run.iter_mut().enumerate() {
            for value in values.iter_mut() {
                let items = value.items;
                for (m, change) in value.changes.iter_mut().enumerate() {
                    let Some(change) = change.as_mut() else {
                        continue;
                    };
                    let member = members.iter().find(|(x, _, at)| {
                        *x == m && at.is_some_and(|(slice, min)| slice == s && items >= min)
                    });
                    if let Some(&(_, down, _)) = member {
                        family.push((change, down));
                    }
                }
            }
        }
    }
    crate::stats::family::adjust(family);
}

/// Warnings for gates with `by:` and `significance` whose drop bound is below
/// what a slice value's items can detect: per value of the baseline with at
/// least `min_items` items, the smallest change the one-sided test at the gate's
/// level could call significant there (`plan::detectable_in`, before Holm's
/// adjustment, which only raises it), against the bound. `metrics` are the
/// values bounds are computed from.
pub fn power_warnings(plan: &Plan, metrics: &[crate::base::value::Value]) -> Vec<Diagnostic> {
    let Some(prior) = &plan.baseline else {
        return Vec::new();
    };
    let frame = crate::ir::Frame {
        metrics,
        ..crate::ir::Frame::default()
    };
    let mut warnings = Vec::new();
    for gate in &plan.gates {
        let (GateRule::Shape(shape), Some(by)) = (&gate.rule, &gate.by) else {
            continue;
        };
        let Some(alpha) = shape.significance else {
            continue;
        };
        for (change, op) in &shape.changes {
            let relative = match change {
                Change::MaxDrop => false,
                Change::MaxDropRelative => true,
                _ => continue,
            };
            let Ok(crate::base::value::Value::Number(limit)) =
                crate::ir::evaluate(op, &frame).map(crate::base::value::Value::into_float)
            else {
                continue;
            };
            for &s in &by.slices {
                let slice = &plan.slices[s].name;
                for (value, items) in prior.slice_values(slice) {
                    if (items as usize) < by.min_items {
                        continue;
                    }
                    let bound = match relative {
                        false => limit,
                        true => match prior.slice_metric(slice, value, &shape.metric_name) {
                            crate::base::value::Value::Number(b) => limit * b.abs(),
                            _ => continue,
                        },
                    };
                    let Some((smallest, n)) =
                        crate::plan::detectable_in(plan, shape, alpha, Some((slice, value)))
                    else {
                        continue;
                    };
                    if smallest > bound {
                        warnings.push(Diagnostic::warning(
                            "slice_too_small",
                            format!(
                                "gate `{}`: {slice}={value} has {n} baseline items, too few to call a drop of {} significant at {} (the smallest it can is about {}); a real drop there of that size would pass",
                                gate.name,
                                crate::base::value::format_number(bound),
                                crate::base::value::format_number(alpha),
                                crate::base::value::format_significant(smallest),
                            ),
                        ));
                    }
                }
            }
        }
    }
    warnings
}

/// The paired changes of one run, per metric (plan order), and their level.
#[derive(Debug, Clone, Copy)]
pub struct Tests<'a> {
    pub changes: &'a [Option<ChangeTest>],
}

impl Tests<'static> {
    /// No tests (the worst of a gate's slice values).
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
    /// With the p-value compared with the level (Holm's, in a family).
    Significant(String, f64),
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
        let down = shape.better == Better::Higher;
        let p = change
            .p_adjusted_toward(down)
            .unwrap_or_else(|| change.p_toward(down));
        let summary = describe(&shape.metric_name, change);
        let alpha = crate::base::value::format_number(self.alpha);
        if p < self.alpha {
            Judged::Significant(format!("{summary}: significant at {alpha}"), p)
        } else {
            Judged::Noise(format!("{summary}: within noise at significance {alpha}"))
        }
    }
}

/// `precision dropped 0.031 (95% bound ≤ −0.010, one-sided p = 0.004, Holm p =
/// 0.012, McNemar, 212 items)`: the one-sided test in the direction it moved, and
/// its adjusted p-value when the test is one of those that can fail the build.
pub fn describe(metric: &str, change: &ChangeTest) -> String {
    let moved = if change.delta < 0.0 {
        "dropped"
    } else {
        "rose"
    };
    format!(
        "{metric} {moved} {} ({}, {}, {} items)",
        fixed(change.delta.abs()),
        change.one_sided_text(),
        change.test_name(),
        change.items
    )
}
