//! Gates: each decides pass, warn or fail from the metrics (and the baseline),
//! and says why when it does not pass.

use crate::base::value::{format_number, Value};
use crate::eval::decide::significance::{Judged, Tested, Tests};
use crate::eval::error::EvalError;
use crate::ir::{evaluate, Frame, RuntimeError};
use crate::plan::{GatePlan, GateRule, Severity, ShapePlan};
use crate::spec::{Better, Change, NoBaseline};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum GateStatus {
    Pass,
    Warn,
    Fail,
}

impl GateStatus {
    pub fn keyword(self) -> &'static str {
        match self {
            GateStatus::Pass => "pass",
            GateStatus::Warn => "warn",
            GateStatus::Fail => "fail",
        }
    }
}

#[derive(Debug, Clone)]
pub struct GateOutcome {
    /// The gated value: the metric, or the left side of a top-level comparison.
    pub value: Value,
    /// Every condition held (a warn-severity gate that does not pass warns).
    pub pass: bool,
    pub status: GateStatus,
    /// The fail level the value is held to, when the gate has one.
    pub threshold: Option<Value>,
    pub warn_threshold: Option<Value>,
    /// The gated metric's baseline value (shaped gates; null without one).
    pub baseline: Value,
    /// Why the gate did not pass, one line per failed condition.
    pub reasons: Vec<String>,
    /// With several runs: the run whose outcome this is (the worst, or the best).
    pub run: Option<std::sync::Arc<str>>,
    /// A gate with `by:`: each slice value's outcome, slice by slice.
    pub slices: Vec<SliceGateOutcome>,
    /// The paired tests that made the gate fail (`significance`): which, and
    /// their Holm-adjusted p-values.
    pub failed_by: Vec<FailedTest>,
}

/// A test that failed a gate: its metric, slice value and run, and the
/// adjusted p-value compared with the gate's level.
#[derive(Debug, Clone, PartialEq)]
pub struct FailedTest {
    pub metric: String,
    /// Index into `plan.slices`, and the value.
    pub slice: Option<(usize, std::sync::Arc<str>)>,
    pub run: Option<std::sync::Arc<str>>,
    pub p_adjusted: f64,
}

/// How one value of a slice fared under a gate with `by:`.
#[derive(Debug, Clone)]
pub struct SliceGateOutcome {
    /// Index into `plan.slices`.
    pub slice: usize,
    pub value: std::sync::Arc<str>,
    pub items: usize,
    /// `None`: skipped, having fewer than `min_items` items.
    pub status: Option<GateStatus>,
    pub gated: Value,
    pub threshold: Option<Value>,
    pub reasons: Vec<String>,
}

/// Changes are compared with this much relative slack, so that `0.78` counts as
/// exactly `0.02` below `0.80` despite binary rounding.
const CHANGE_SLACK: f64 = 1e-9;

pub fn evaluate_gate(
    gate: &GatePlan,
    metrics: &[Value],
    aggregates: &[Value],
    baseline: &[Value],
    has_baseline: bool,
    tests: Tests<'_>,
) -> Result<GateOutcome, EvalError> {
    let frame = Frame {
        metrics,
        aggregates,
        baseline,
        ..Frame::default()
    };
    let fail = |error| EvalError::GateNotEvaluated {
        gate: gate.name.clone(),
        error,
    };
    let on_failure = match gate.severity {
        Severity::Fail => GateStatus::Fail,
        Severity::Warn => GateStatus::Warn,
    };
    match &gate.rule {
        GateRule::Expr { op, value, bound } => {
            // A gate that cannot be decided (a metric has no value) does not pass,
            // whatever its expression makes of the null (`r != 1`, `r in [null, 1]`).
            let result = evaluate(op, &frame).map_err(fail)?;
            let unvalued = reads_no_value(op, &frame);
            let pass = result == Value::Bool(true) && !unvalued;
            let value = match value {
                Some(value) => evaluate(value, &frame).map_err(fail)?,
                None => result.clone(),
            };
            let threshold = match bound {
                Some(bound) => Some(evaluate(bound, &frame).map_err(fail)?),
                None => None,
            };
            let reasons = match (&result, &threshold) {
                _ if unvalued => vec!["undecided: a metric it reads has no value (null)".into()],
                (Value::Bool(true), _) => Vec::new(),
                (Value::Null, _) => vec!["undecided: a value it needs is missing (null)".into()],
                (_, Some(threshold)) => vec![format!(
                    "`{}` is false: {} against {}",
                    gate.text,
                    value.preview(),
                    threshold.preview()
                )],
                _ => vec![format!("`{}` is false", gate.text)],
            };
            Ok(GateOutcome {
                value,
                pass,
                status: if pass { GateStatus::Pass } else { on_failure },
                threshold,
                warn_threshold: None,
                baseline: Value::Null,
                reasons,
                run: None,
                slices: Vec::new(),
                failed_by: Vec::new(),
            })
        }
        GateRule::Shape(shape) => {
            shaped_gate(shape, &frame, on_failure, has_baseline, tests).map_err(fail)
        }
        GateRule::SliceValues { .. } => unreachable!("decided by `slice_gates`"),
    }
}

/// Whether `op` reads a metric or an aggregate of this run that has no value
/// (`baseline.NAME` may be null: it is a fact about another run).
fn reads_no_value(op: &crate::ir::Op, frame: &Frame<'_>) -> bool {
    let mut missing = false;
    op.walk(&mut |op| {
        let value = match op {
            crate::ir::Op::Metric(m) => frame.metrics.get(m.index()),
            crate::ir::Op::Aggregate(a) => frame.aggregates.get(a.index()),
            _ => None,
        };
        missing |= value.is_some_and(|v| matches!(v, Value::Null));
    });
    missing
}

fn number(op: &crate::ir::Op, frame: &Frame<'_>) -> Result<Option<f64>, RuntimeError> {
    Ok(match evaluate(op, frame)?.into_float() {
        Value::Number(n) => Some(n),
        Value::Bool(b) => Some(f64::from(u8::from(b))),
        _ => None,
    })
}

/// The worst status seen so far, and why.
#[derive(Default)]
struct Verdict {
    status: Option<GateStatus>,
    reasons: Vec<String>,
    /// The adjusted p-values of the tests that failed it.
    failed_by: Vec<f64>,
}

impl Verdict {
    fn flag(&mut self, level: GateStatus, reason: String) {
        self.status = Some(self.status.map_or(level, |s| s.max(level)));
        self.reasons.push(reason);
    }
}

fn shaped_gate(
    shape: &ShapePlan,
    frame: &Frame<'_>,
    on_failure: GateStatus,
    has_baseline: bool,
    tests: Tests<'_>,
) -> Result<GateOutcome, RuntimeError> {
    let index = shape.metric.index();
    let metric_value = frame.metrics[index].clone();
    let baseline = frame.baseline.get(index).cloned().unwrap_or(Value::Null);
    let bound = |op: &Option<crate::ir::Op>| op.as_ref().map(|op| number(op, frame)).transpose();
    let threshold = bound(&shape.threshold)?;
    let warn_threshold = bound(&shape.warn_threshold)?;
    let mut verdict = Verdict::default();
    let numeric = match metric_value.clone().into_float() {
        Value::Number(v) => Some(v),
        Value::Bool(b) => Some(f64::from(u8::from(b))),
        _ => None,
    };
    match numeric {
        Some(v) => {
            check_thresholds(
                shape,
                v,
                threshold,
                warn_threshold,
                on_failure,
                &mut verdict,
            );
            if !shape.changes.is_empty() {
                let test = tests.of(shape);
                check_changes(
                    shape,
                    v,
                    &baseline,
                    frame,
                    (on_failure, has_baseline, test),
                    &mut verdict,
                )?;
            }
        }
        None => verdict.flag(on_failure, format!("`{}` has no value", shape.metric_name)),
    }
    let mut decided = outcome(
        metric_value,
        verdict.status.unwrap_or(GateStatus::Pass),
        threshold,
        warn_threshold,
        baseline,
        verdict.reasons,
    );
    decided.failed_by = (verdict.failed_by.into_iter())
        .map(|p_adjusted| FailedTest {
            metric: shape.metric_name.clone(),
            slice: None,
            run: None,
            p_adjusted,
        })
        .collect();
    Ok(decided)
}

/// When gates bound changes against a baseline and the run has none: the
/// sentence every output gives (report.json's `baseline_missing`, a warning on
/// the terminal, the summaries), naming the gates and what `when_no_baseline`
/// made of each.
pub fn baseline_missing(plan: &crate::plan::Plan) -> Option<String> {
    if plan.baseline.is_some() {
        return None;
    }
    let gates: Vec<String> = (plan.gates.iter())
        .filter_map(|g| match &g.rule {
            GateRule::Shape(shape) if !shape.changes.is_empty() => Some(format!(
                "`{}` ({})",
                g.name,
                match shape.when_no_baseline {
                    NoBaseline::Pass => "passed",
                    NoBaseline::Warn => "warned",
                    NoBaseline::Fail => "failed",
                }
            )),
            _ => None,
        })
        .collect();
    if gates.is_empty() {
        return None;
    }
    Some(format!(
        "no baseline (run with --baseline): the change bounds of {} were not checked",
        gates.join(", ")
    ))
}

fn bad_side(better: Better) -> &'static str {
    match better {
        Better::Higher => "below",
        Better::Lower => "above",
    }
}

fn check_thresholds(
    shape: &ShapePlan,
    v: f64,
    threshold: Option<Option<f64>>,
    warn_threshold: Option<Option<f64>>,
    on_failure: GateStatus,
    verdict: &mut Verdict,
) {
    let on_good_side = |bound: f64| match shape.better {
        Better::Higher => v >= bound,
        Better::Lower => v <= bound,
    };
    for (level, bound, what) in [
        (on_failure, threshold, "threshold"),
        (GateStatus::Warn, warn_threshold, "warning threshold"),
    ] {
        match bound {
            Some(Some(t)) if !on_good_side(t) => verdict.flag(
                level,
                format!(
                    "{} = {} is {} the {what} {}",
                    shape.metric_name,
                    format_number(v),
                    bad_side(shape.better),
                    format_number(t)
                ),
            ),
            Some(None) => verdict.flag(level, format!("the {what} has no value")),
            _ => {}
        }
    }
}

fn check_changes(
    shape: &ShapePlan,
    v: f64,
    baseline: &Value,
    frame: &Frame<'_>,
    (on_failure, has_baseline, test): (GateStatus, bool, Option<Tested<'_>>),
    verdict: &mut Verdict,
) -> Result<(), RuntimeError> {
    let name = &shape.metric_name;
    let Value::Number(b) = *baseline else {
        let missing = if has_baseline {
            format!("the baseline run has no value for `{name}`")
        } else {
            "no baseline (run with --baseline)".to_string()
        };
        match shape.when_no_baseline {
            // Passes, and says why the bounds were not checked.
            NoBaseline::Pass => verdict.reasons.push(format!(
                "{missing}: change bounds not checked (when_no_baseline: pass)"
            )),
            NoBaseline::Warn => verdict.flag(GateStatus::Warn, missing),
            NoBaseline::Fail => verdict.flag(on_failure, missing),
        }
        return Ok(());
    };
    // How much worse than the baseline, in the metric's bad direction.
    let worse = match shape.better {
        Better::Higher => b - v,
        Better::Lower => v - b,
    };
    let slack = CHANGE_SLACK * b.abs().max(v.abs()).max(1.0);
    for (change, op) in &shape.changes {
        let Some(limit) = number(op, frame)? else {
            verdict.flag(on_failure, format!("`{}` has no value", change.keyword()));
            continue;
        };
        let ok = match change {
            Change::MaxDrop => worse <= limit + slack,
            Change::MaxDropRelative => worse <= limit * b.abs() + slack,
            Change::MinGain => -worse >= limit - slack,
            // Against a zero baseline every change is infinitely large: any strict
            // improvement meets a relative gain.
            Change::MinGainRelative if b == 0.0 => -worse > 0.0,
            Change::MinGainRelative => -worse >= limit * b.abs() - slack,
        };
        if ok {
            continue;
        }
        let amount = match change {
            Change::MaxDrop | Change::MinGain => format_number(limit),
            Change::MaxDropRelative | Change::MinGainRelative => {
                format!("{}%", format_number(limit * 100.0))
            }
        };
        let rule = match change {
            Change::MaxDrop | Change::MaxDropRelative => {
                format!("may be at most {amount} {} it", bad_side(shape.better))
            }
            Change::MinGain | Change::MinGainRelative => {
                format!("must improve on it by at least {amount}")
            }
        };
        let reason = format!(
            "{name} = {} against baseline {}: {rule}",
            format_number(v),
            format_number(b)
        );
        // `significance` forgives drops that are noise; a gain a gate asks for
        // must be there whatever the test says.
        let drop = matches!(change, Change::MaxDrop | Change::MaxDropRelative);
        match test.as_ref().filter(|_| drop) {
            // Without `significance`, any change beyond the bound fails.
            None => verdict.flag(on_failure, reason),
            Some(test) => match test.judge(shape) {
                Judged::Significant(why, p) => {
                    if on_failure == GateStatus::Fail {
                        verdict.failed_by.push(p);
                    }
                    verdict.flag(on_failure, format!("{reason}; {why}"));
                }
                // Within noise: the gate passes, and says why.
                Judged::Noise(why) => verdict.reasons.push(format!("{reason}; {why}")),
                Judged::Untested(why) => verdict.flag(on_failure, format!("{reason} ({why})")),
            },
        }
    }
    Ok(())
}

fn outcome(
    value: Value,
    status: GateStatus,
    threshold: Option<Option<f64>>,
    warn_threshold: Option<Option<f64>>,
    baseline: Value,
    reasons: Vec<String>,
) -> GateOutcome {
    let as_value = |t: Option<Option<f64>>| t.map(|t| t.map_or(Value::Null, Value::Number));
    GateOutcome {
        value,
        pass: status == GateStatus::Pass,
        status,
        threshold: as_value(threshold),
        warn_threshold: as_value(warn_threshold),
        baseline,
        reasons,
        run: None,
        slices: Vec::new(),
        failed_by: Vec::new(),
    }
}
