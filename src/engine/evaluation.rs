//! What evaluating a spec gives, read as typed values: whether it passed, its
//! gates and metrics, its warnings, and its reports' bytes.

use std::path::{Path, PathBuf};

use crate::base::diagnostic::Diagnostic;
use crate::base::value::Value;
use crate::engine::spec::Spec;
use crate::eval::{GateStatus, Outcome};
use crate::plan::Plan;
use crate::report::{self, OutputFolder};

/// One evaluation of a spec.
pub struct Evaluation<'s> {
    spec: &'s Spec,
    outcome: Outcome,
    threads: usize,
}

/// One gate, decided.
#[derive(Debug, Clone, PartialEq)]
pub struct GateResult {
    pub name: String,
    /// `pass`, `warn` or `fail`.
    pub status: &'static str,
    /// `fail` (a failed gate fails the run) or `warn`.
    pub severity: &'static str,
    /// The gated value: the metric, or the left side of its comparison.
    pub value: Value,
    /// The gate's rule in words (its expression, or a shaped gate's).
    pub rule: String,
    /// Why it did not pass, one line per failed condition.
    pub reasons: Vec<String>,
}

impl<'s> Evaluation<'s> {
    pub(super) fn new(spec: &'s Spec, outcome: Outcome, threads: usize) -> Self {
        Evaluation {
            spec,
            outcome,
            threads,
        }
    }

    /// No `fail` gate failed: the exit code would be 0.
    pub fn passed(&self) -> bool {
        self.outcome.pass()
    }

    /// Every gate, in the spec's order.
    pub fn gates(&self) -> Vec<GateResult> {
        let plan = &self.spec.plan;
        (plan.gates.iter().zip(&self.outcome.gates))
            .map(|(gate, outcome)| GateResult {
                name: gate.name.clone(),
                status: match outcome.status {
                    GateStatus::Pass => "pass",
                    GateStatus::Warn => "warn",
                    GateStatus::Fail => "fail",
                },
                severity: match gate.severity {
                    crate::plan::Severity::Fail => "fail",
                    crate::plan::Severity::Warn => "warn",
                },
                value: outcome.value.clone(),
                rule: gate.text.clone(),
                reasons: outcome.reasons.clone(),
            })
            .collect()
    }

    /// Every metric's value, in the spec's order (with several runs, the
    /// metrics across runs; each run's are in report.json).
    pub fn metrics(&self) -> impl Iterator<Item = (&str, &Value)> + '_ {
        let plan = &self.spec.plan;
        (plan.metrics.iter().map(|m| m.name.as_str())).zip(&self.outcome.metrics)
    }

    /// The value of metric `name`.
    pub fn metric(&self, name: &str) -> Option<&Value> {
        self.metrics().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// What the evaluation noticed that does not stop it: data warnings, a
    /// lock's drift the caller allowed.
    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> + '_ {
        self.spec.warnings.iter().chain(&self.outcome.warnings)
    }

    /// report.json's text, as `evalspec run` writes it.
    pub fn report_json(&self) -> String {
        let report = report::report_json(&self.spec.plan, &self.outcome, self.spec.lock.as_ref());
        let mut text = serde_json::to_string_pretty(&report).expect("a report always serialises");
        text.push('\n');
        text
    }

    /// items.jsonl's bytes, as `--format items` writes them (one line per
    /// item, in key order).
    pub fn items_jsonl(&self) -> std::io::Result<Vec<u8>> {
        let mut out = Vec::new();
        report::write_items_jsonl(&self.outcome, false, &mut out)?;
        Ok(out)
    }

    /// The summary `evalspec run` prints.
    pub fn summary(&self) -> String {
        report::summary(&self.spec.plan, &self.outcome, self.spec.lock.as_ref())
    }

    /// Writes every report of the spec into `out` as one set (replaced whole
    /// or not at all); returns the files written.
    pub fn write_reports(&self, out: &Path) -> Result<Vec<PathBuf>, Diagnostic> {
        let folder = OutputFolder::check(out, &self.spec.plan)?;
        self.write_reports_in(&folder)
    }

    /// As [`Evaluation::write_reports`], into a folder checked already.
    pub fn write_reports_in(&self, folder: &OutputFolder) -> Result<Vec<PathBuf>, Diagnostic> {
        let (plan, lock) = (&self.spec.plan, self.spec.lock.as_ref());
        let templates = &self.spec.templates;
        report::write_reports(plan, &self.outcome, lock, templates, folder, self.threads)
    }

    /// The plan evaluated.
    pub fn plan(&self) -> &Plan {
        &self.spec.plan
    }

    /// Everything the evaluation gave, as the reports read it.
    pub fn outcome(&self) -> &Outcome {
        &self.outcome
    }

    /// The outcome, the spec's warnings added to its own.
    pub fn into_outcome(mut self) -> Outcome {
        let mut warnings = self.spec.warnings.clone();
        warnings.append(&mut self.outcome.warnings);
        self.outcome.warnings = warnings;
        self.outcome
    }
}
