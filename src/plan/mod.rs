//! The evaluation plan: a spec compiled against its params. Names are resolved to
//! slots, types are checked, and every dataset knows which fields it must read.
//! The evaluator sees only this.

pub mod compile;
mod display;
mod explain;
mod op;
mod projection;

use std::path::PathBuf;

pub use compile::compile;
pub use explain::explain;
pub use op::{Op, RunStat};
pub use projection::{FieldPath, ProjectedField, Projection};

use crate::diagnostic::Location;
use crate::report::PriorRun;
use crate::spec::{
    Better, Change, CsvOptions, DataType, Duplicates, Format, GateRuns, Join, NoBaseline, ParamType,
};
use crate::types::Type;
use crate::value::Value;

#[derive(Debug)]
pub struct Plan {
    pub spec_name: String,
    pub spec_version: String,
    pub spec_path: PathBuf,
    pub spec_display: String,
    pub spec_text: String,
    /// Every file the spec was read from: the spec, then its bases (`extends`).
    pub spec_files: Vec<std::sync::Arc<crate::source::SourceFile>>,
    /// The folders the spec's own templates (and what they include) load from.
    pub template_dirs: Vec<PathBuf>,
    /// The spec's lock, once checked: stamped on reports.
    pub lock: Option<crate::lock::LockStamp>,
    pub params: Vec<ParamValue>,
    /// Looked-up datasets first, then the items dataset, which is read last and streamed.
    pub datasets: Vec<DatasetPlan>,
    /// Index in `datasets` of the items dataset.
    pub items: usize,
    /// Per-item values in dependency order; slot `i` is `derived[i]`.
    pub derived: Vec<Derived>,
    pub aggregates: Vec<Aggregate>,
    /// In dependency order; `Op::Metric(i)` refers to `metrics[i]`.
    pub metrics: Vec<MetricPlan>,
    pub gates: Vec<GatePlan>,
    /// Label names in rule order; the label itself is the derived value `label_slot`.
    pub labels: Vec<String>,
    pub label_slot: Option<usize>,
    /// Fields and matchers as declared: what `items.jsonl` shows of each item.
    pub item_columns: Vec<ItemColumn>,
    pub offenders: Option<OffendersPlan>,
    pub reports: Vec<ReportPlan>,
    /// The environment the reports render in: built-in templates and the spec's
    /// own, loaded and parsed when the spec compiled (and not again).
    pub report_env: minijinja::Environment<'static>,
    /// Keep every item's values for the reports (items.jsonl, HTML, templates
    /// that list items); otherwise items are folded and dropped as they stream.
    pub keep_items: bool,
    /// The prior run that `baseline.NAME` and change bounds compare against.
    pub baseline: Option<PriorRun>,
    /// The latency metric and the accuracy metrics plotted against it, per run.
    pub tradeoff: Option<Tradeoff>,
}

/// `tradeoff:` resolved to metric slots.
#[derive(Debug)]
pub struct Tradeoff {
    pub latency: usize,
    pub accuracy: Vec<usize>,
}

#[derive(Debug)]
pub struct ItemColumn {
    pub name: String,
    pub kind: DerivedKind,
    pub ty: Type,
    /// Slot in `derived`.
    pub slot: usize,
}

#[derive(Debug)]
pub struct OffendersPlan {
    pub when: Op,
    pub text: String,
    /// Where `when` is written, for errors evaluating it.
    pub at: Location,
    /// Name and derived slot of each value shown.
    pub show: Vec<(String, usize)>,
    pub limit: usize,
}

/// One report file: a built-in format, or a template (built in or the spec's own).
#[derive(Debug, Clone)]
pub struct ReportPlan {
    /// File name inside the output folder.
    pub file: String,
    pub kind: ReportPlanKind,
}

#[derive(Debug, Clone)]
pub enum ReportPlanKind {
    Json,
    Items,
    /// A template by name in the report environment (built-in or the spec's).
    Template(String),
}

#[derive(Debug)]
pub struct ParamValue {
    pub name: String,
    pub ty: ParamType,
    pub value: Value,
    /// Set with `--param` rather than the spec's default.
    pub overridden: bool,
}

#[derive(Debug, Clone)]
pub struct DatasetPlan {
    pub name: String,
    /// The spec's, unless a `--dataset` path's extension names another.
    pub format: Format,
    pub csv: CsvOptions,
    pub path: PathBuf,
    /// The path as shown to the user and written in reports.
    pub display_path: String,
    /// Evaluated with only this dataset's record in scope.
    pub key: Op,
    pub key_text: String,
    pub duplicates: Duplicates,
    pub join: Join,
    pub projection: Projection,
    pub rules: Vec<Rule>,
    pub checks: Vec<Check>,
    /// Where the dataset was declared, for data errors that concern the declaration.
    pub declared_at: Location,
    /// Pinned by the spec's lock.
    pub frozen: bool,
    /// Several files, each a run (`runs:`), in natural order of their paths;
    /// empty for a dataset read from one `path`.
    pub runs: Vec<RunFile>,
    /// Names each run from its records; `None`: from its file name.
    pub run_name: Option<Check>,
}

/// One file of a dataset with several runs.
#[derive(Debug, Clone)]
pub struct RunFile {
    pub path: PathBuf,
    pub display_path: String,
}

impl DatasetPlan {
    /// This dataset as read for one of its runs.
    pub fn for_run(&self, file: &RunFile) -> DatasetPlan {
        DatasetPlan {
            path: file.path.clone(),
            display_path: file.display_path.clone(),
            runs: Vec::new(),
            ..self.clone()
        }
    }
}

/// A schema rule bound to the projected field it checks.
#[derive(Debug, Clone)]
pub struct Rule {
    pub field: String,
    pub path: FieldPath,
    /// `list[].field`: checked on `field` of each element of the list at `path`.
    pub each: Option<Vec<String>>,
    pub ty: DataType,
    pub optional: bool,
    pub nonempty: bool,
    pub min: Option<f64>,
}

/// A per-record condition, evaluated with only the record (and params) in scope.
#[derive(Debug, Clone)]
pub struct Check {
    pub op: Op,
    pub text: String,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DerivedKind {
    Field,
    Matcher,
    /// The item's label, from the `labels:` rules.
    Label,
}

#[derive(Debug)]
pub struct Derived {
    pub name: String,
    pub kind: DerivedKind,
    pub op: Op,
    pub ty: Type,
    pub text: String,
    pub at: Location,
}

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
}

#[derive(Debug)]
pub struct Aggregate {
    pub function: AggregateFn,
    /// The argument; for two-label aggregates, a list of both.
    pub arg: Option<Op>,
    pub filter: Option<Op>,
    pub text: String,
    /// What is aggregated, as written: the text inside the parentheses.
    pub subject: String,
    pub at: Location,
}

#[derive(Debug)]
pub struct MetricPlan {
    pub name: String,
    pub op: Op,
    pub ty: Type,
    pub empty: Option<f64>,
    pub better: Option<Better>,
    pub text: String,
    pub description: Option<String>,
    /// How far the metric may move in its bad direction before a diff calls it a regression.
    pub tolerance: Option<f64>,
    /// Position in the spec, for reports that list metrics as declared.
    pub declared: usize,
    /// Computed once over all runs (`stability`, `run_mean`, …) rather than per run.
    pub across: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Fail,
    Warn,
}

impl Severity {
    pub fn keyword(self) -> &'static str {
        match self {
            Severity::Fail => "fail",
            Severity::Warn => "warn",
        }
    }
}

#[derive(Debug)]
pub struct GatePlan {
    pub name: String,
    pub rule: GateRule,
    /// Reads per-run values, so with several runs it is decided per run.
    pub per_run: bool,
    pub runs: GateRuns,
    pub value_ty: Type,
    pub severity: Severity,
    pub message: Option<String>,
    /// The expression, or a canonical description of a shaped gate.
    pub text: String,
}

#[derive(Debug)]
pub enum GateRule {
    Expr {
        op: Op,
        /// The gate's reported value: the left side of a top-level comparison.
        /// `None`: the value is the gate's own result.
        value: Option<Op>,
        /// The right side of a top-level comparison: the threshold reports draw.
        bound: Option<Op>,
    },
    Shape(ShapePlan),
}

/// A gate on one metric: thresholds, and bounds on its change against the baseline.
#[derive(Debug)]
pub struct ShapePlan {
    /// `Op::Metric` of the gated metric.
    pub metric: Op,
    pub metric_name: String,
    pub better: Better,
    pub threshold: Option<Op>,
    pub warn_threshold: Option<Op>,
    pub changes: Vec<(Change, Op)>,
    pub when_no_baseline: NoBaseline,
}

impl GateRule {
    /// Every op of the rule.
    pub fn ops(&self) -> Vec<&Op> {
        match self {
            GateRule::Expr { op, value, bound } => std::iter::once(op)
                .chain(value.as_ref())
                .chain(bound.as_ref())
                .collect(),
            GateRule::Shape(shape) => std::iter::once(&shape.metric)
                .chain(shape.threshold.as_ref())
                .chain(shape.warn_threshold.as_ref())
                .chain(shape.changes.iter().map(|(_, op)| op))
                .collect(),
        }
    }
}

impl GatePlan {
    /// Every op of the gate, for linking.
    pub fn ops_mut(&mut self) -> Vec<&mut Op> {
        match &mut self.rule {
            GateRule::Expr { op, value, bound } => std::iter::once(op)
                .chain(value.as_mut())
                .chain(bound.as_mut())
                .collect(),
            GateRule::Shape(shape) => std::iter::once(&mut shape.metric)
                .chain(shape.threshold.as_mut())
                .chain(shape.warn_threshold.as_mut())
                .chain(shape.changes.iter_mut().map(|(_, op)| op))
                .collect(),
        }
    }
}

impl Plan {
    /// Some dataset is read as several runs.
    pub fn has_runs(&self) -> bool {
        self.datasets.iter().any(|d| !d.runs.is_empty())
    }

    pub fn param(&self, name: &str) -> Option<&Value> {
        self.params
            .iter()
            .find(|p| p.name == name)
            .map(|p| &p.value)
    }

    /// Metrics in the order the spec declares them.
    pub fn metrics_in_declared_order(&self) -> Vec<(usize, &MetricPlan)> {
        let mut metrics: Vec<(usize, &MetricPlan)> = self.metrics.iter().enumerate().collect();
        metrics.sort_by_key(|(_, m)| m.declared);
        metrics
    }
}
