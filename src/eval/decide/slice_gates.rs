//! Gates over slices: a gate with `by:` decided per slice value (every value must
//! pass, or the worst value is gated), and the check of a slice's `values:`.
//! Reasons name each slice value with its item count.

use std::sync::Arc;

use crate::base::value::Value;
use crate::eval::decide::across_runs::per_run_name;
use crate::eval::decide::gates::{evaluate_gate, GateOutcome, GateStatus, SliceGateOutcome};
use crate::eval::decide::significance::Tests;
use crate::eval::error::EvalError;
use crate::eval::state::slices::SliceValueOutcome;
use crate::plan::{GateBy, GatePlan, GateRule, Plan, Severity};
use crate::spec::{Better, GateSlices};

/// What gates over slices read in one run.
pub(in crate::eval) struct SliceRun<'a> {
    pub plan: &'a Plan,
    /// Per slice: its values in this run, in natural order.
    pub slices: &'a [Vec<SliceValueOutcome>],
    /// The run's name, with several.
    pub run: Option<&'a str>,
}

/// `category=refunds (5 items)`.
fn named(plan: &Plan, slice: usize, value: &str, items: usize) -> String {
    let s = if items == 1 { "" } else { "s" };
    format!("{}={value} ({items} item{s})", plan.slices[slice].name)
}

impl SliceRun<'_> {
    /// A gate with `by:` or a `values:` check, in this run.
    pub(in crate::eval) fn decide(&self, gate: &GatePlan) -> Result<GateOutcome, EvalError> {
        match (&gate.rule, &gate.by) {
            (GateRule::SliceValues { slice }, _) => Ok(self.check_values(gate, *slice)),
            (_, Some(by)) => self.by_slices(gate, by),
            _ => unreachable!("only gates over slices are decided here"),
        }
    }

    /// A metric's name in the baseline report: `NAME@RUN` with several runs.
    fn baseline_name(&self, metric: &str) -> String {
        match self.run {
            Some(run) => per_run_name(metric, run),
            None => metric.to_string(),
        }
    }

    /// Each metric's value for `value` of `slice` in the baseline run.
    fn baseline(&self, slice: usize, value: &str) -> Vec<Value> {
        let name = &self.plan.slices[slice].name;
        (self.plan.metrics.iter())
            .map(|m| match &self.plan.baseline {
                Some(prior) => prior.slice_metric(name, value, &self.baseline_name(&m.name)),
                None => Value::Null,
            })
            .collect()
    }

    fn by_slices(&self, gate: &GatePlan, by: &GateBy) -> Result<GateOutcome, EvalError> {
        let has_baseline = self.plan.baseline.is_some();
        let mut values: Vec<(SliceGateOutcome, Option<GateOutcome>)> = Vec::new();
        for &s in &by.slices {
            for entry in &self.slices[s] {
                let mut row = SliceGateOutcome {
                    slice: s,
                    value: entry.value.clone(),
                    items: entry.items,
                    status: None,
                    gated: Value::Null,
                    threshold: None,
                    reasons: Vec::new(),
                };
                if entry.items < by.min_items {
                    values.push((row, None));
                    continue;
                }
                let baseline = self.baseline(s, &entry.value);
                let tests = Tests {
                    changes: &entry.changes,
                };
                let outcome =
                    evaluate_gate(gate, &entry.metrics, &[], &baseline, has_baseline, tests)?;
                row.status = Some(outcome.status);
                row.gated = outcome.value.clone();
                row.threshold = outcome.threshold.clone();
                row.reasons = outcome.reasons.clone();
                let mut outcome = outcome;
                for test in &mut outcome.failed_by {
                    test.slice = Some((s, entry.value.clone()));
                }
                values.push((row, Some(outcome)));
            }
        }
        let mut decided = match by.mode {
            GateSlices::Every => self.every(gate, by, &values),
            GateSlices::Worst => self.worst(gate, by, &values)?,
        };
        decided.slices = values.into_iter().map(|(row, _)| row).collect();
        Ok(decided)
    }

    /// Every value must pass: the gate shows the value with the worst status (and
    /// of those, the worst value), and why each value that did not pass failed
    /// (or passed only as within noise).
    fn every(
        &self,
        gate: &GatePlan,
        by: &GateBy,
        values: &[(SliceGateOutcome, Option<GateOutcome>)],
    ) -> GateOutcome {
        let better = match &gate.rule {
            GateRule::Shape(shape) => Some(shape.better),
            _ => None,
        };
        let evaluated = values
            .iter()
            .filter_map(|(row, o)| o.as_ref().map(|o| (row, o)));
        let worst = evaluated.clone().map(|(_, o)| o.status).max();
        let Some(worst) = worst else {
            return self.nothing_gated(gate, by, values.len());
        };
        // Of the values with the worst status, the one with the worst value.
        let mut deciding: Option<&GateOutcome> = None;
        for (_, o) in evaluated.clone().filter(|(_, o)| o.status == worst) {
            let worse = match (deciding.map(|d| &d.value), &o.value, better) {
                (None, _, _) => true,
                (Some(Value::Number(d)), Value::Number(x), Some(Better::Higher)) => x < d,
                (Some(Value::Number(d)), Value::Number(x), Some(Better::Lower)) => x > d,
                _ => false,
            };
            if worse {
                deciding = Some(o);
            }
        }
        let deciding = deciding.expect("a value has the worst status");
        let mut decided = deciding.clone();
        decided.failed_by = (evaluated.clone())
            .flat_map(|(_, o)| o.failed_by.iter().cloned())
            .collect();
        // Values that did not pass, and those that passed with a reason (a drop
        // within noise says so).
        decided.reasons = evaluated
            .filter(|(_, o)| !o.pass || !o.reasons.is_empty())
            .flat_map(|(row, o)| {
                let name = named(self.plan, row.slice, &row.value, row.items);
                o.reasons.iter().map(move |r| format!("{name}: {r}"))
            })
            .collect();
        decided
    }

    /// The worst value over the slices (by the metric's `better`) is gated, against
    /// the worst value of the baseline run's slices.
    fn worst(
        &self,
        gate: &GatePlan,
        by: &GateBy,
        values: &[(SliceGateOutcome, Option<GateOutcome>)],
    ) -> Result<GateOutcome, EvalError> {
        let GateRule::Shape(shape) = &gate.rule else {
            unreachable!("`worst` is compiled only for gates on one metric")
        };
        let m = shape.metric.index();
        let worse = |a: f64, b: f64| match shape.better {
            Better::Higher => a < b,
            Better::Lower => a > b,
        };
        let mut pick: Option<(f64, &SliceGateOutcome)> = None;
        // `by_slices` made a row per value, in the slices' order.
        let entries = by.slices.iter().flat_map(|&s| &self.slices[s]);
        for ((row, outcome), entry) in values.iter().zip(entries) {
            debug_assert_eq!(row.value, entry.value, "a row per value, in order");
            if outcome.is_none() {
                continue;
            }
            if let Value::Number(x) = entry.metrics[m] {
                if pick.is_none_or(|(best, _)| worse(x, best)) {
                    pick = Some((x, row));
                }
            }
        }
        let mut metrics = vec![Value::Null; self.plan.metrics.len()];
        let mut baseline = vec![Value::Null; self.plan.metrics.len()];
        if let Some((x, _)) = pick {
            metrics[m] = Value::Number(x);
        }
        baseline[m] = self.baseline_worst(by, &shape.metric_name, shape.better);
        let has_baseline = self.plan.baseline.is_some();
        let mut decided = evaluate_gate(gate, &metrics, &[], &baseline, has_baseline, Tests::NONE)?;
        match pick {
            Some((_, row)) => {
                let name = named(self.plan, row.slice, &row.value, row.items);
                for reason in &mut decided.reasons {
                    *reason = format!("worst, {name}: {reason}");
                }
            }
            None if !decided.pass => {
                let nothing = self.nothing_gated(gate, by, values.len());
                decided.reasons = nothing.reasons;
            }
            None => {}
        }
        Ok(decided)
    }

    /// A gate with `by:` that gated no value (none was seen, or each had fewer
    /// than `min_items` items) does not pass: it has the gate's severity.
    fn nothing_gated(&self, gate: &GatePlan, by: &GateBy, skipped: usize) -> GateOutcome {
        let slices: Vec<String> = (by.slices.iter())
            .map(|&s| format!("`{}`", self.plan.slices[s].name))
            .collect();
        let slices = slices.join(", ");
        let reason = match skipped {
            0 => format!("nothing was gated: {slices} has no values"),
            n => format!(
                "nothing was gated: each of the {n} values of {slices} has fewer than {} items (min_items)",
                by.min_items
            ),
        };
        let status = match gate.severity {
            Severity::Fail => GateStatus::Fail,
            Severity::Warn => GateStatus::Warn,
        };
        GateOutcome {
            pass: false,
            status,
            reasons: vec![reason],
            ..passed()
        }
    }

    /// The worst value of `metric` over the baseline run's values of the gate's
    /// slices (those with at least `min_items` items).
    fn baseline_worst(&self, by: &GateBy, metric: &str, better: Better) -> Value {
        let Some(prior) = &self.plan.baseline else {
            return Value::Null;
        };
        let name = self.baseline_name(metric);
        let mut worst: Option<f64> = None;
        for &s in &by.slices {
            let slice = &self.plan.slices[s].name;
            for (value, items) in prior.slice_values(slice) {
                if (items as usize) < by.min_items {
                    continue;
                }
                if let Value::Number(x) = prior.slice_metric(slice, value, &name) {
                    let replace = worst.is_none_or(|w| match better {
                        Better::Higher => x < w,
                        Better::Lower => x > w,
                    });
                    if replace {
                        worst = Some(x);
                    }
                }
            }
        }
        worst.map_or(Value::Null, Value::Number)
    }

    /// `values:` the values seen are exactly those listed: each other value, and
    /// each listed value no item has, is a reason; the value is how many.
    fn check_values(&self, gate: &GatePlan, slice: usize) -> GateOutcome {
        let plan = self.plan;
        let listed: &[Arc<str>] = plan.slices[slice].values.as_deref().unwrap_or(&[]);
        let seen = &self.slices[slice];
        let mut reasons: Vec<String> = seen
            .iter()
            .filter(|e| !listed.contains(&e.value))
            .map(|e| {
                let name = named(plan, slice, &e.value, e.items);
                format!("{name}: not among the expected `values`")
            })
            .collect();
        for value in listed {
            if !seen.iter().any(|e| e.value == *value) {
                let name = &plan.slices[slice].name;
                reasons.push(format!(
                    "{name}={value}: listed in `values`, but no item has it"
                ));
            }
        }
        let status = match (reasons.is_empty(), gate.severity) {
            (true, _) => GateStatus::Pass,
            (false, Severity::Fail) => GateStatus::Fail,
            (false, Severity::Warn) => GateStatus::Warn,
        };
        GateOutcome {
            value: Value::Number(reasons.len() as f64),
            pass: status == GateStatus::Pass,
            status,
            reasons,
            ..passed()
        }
    }
}

/// A gate with nothing to hold it to: every value skipped, or none seen.
fn passed() -> GateOutcome {
    GateOutcome {
        value: Value::Null,
        pass: true,
        status: GateStatus::Pass,
        threshold: None,
        warn_threshold: None,
        baseline: Value::Null,
        reasons: Vec::new(),
        run: None,
        slices: Vec::new(),
        failed_by: Vec::new(),
    }
}
