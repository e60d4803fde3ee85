//! The evaluation plan: a spec compiled against its params and inputs. Names are
//! resolved to typed ids, types are checked, and every dataset knows which fields
//! it must read. The evaluator sees only this. Compiling is pure: the plan is
//! built from values in one place (`compile`), and nothing outside this module
//! writes its fields.

mod compile;
mod display;
mod explain;
mod projection;

use std::path::PathBuf;

pub use compile::compile;
#[cfg(test)]
pub(crate) use compile::testing;
pub use explain::{detectable, detectable_in, explain, explain_with, Power};
pub use projection::{FieldPath, ProjectedField, Projection};

use crate::base::diagnostic::Location;
use crate::base::source::SourceFile;
use crate::base::types::Type;
use crate::base::value::Value;
use crate::inputs::{PriorReport, ReportPlan, RunFile};
use crate::ir::formula::Formula;
use crate::ir::{
    AggregateId, DatasetId, DerivedId, ExprAt, ExprLocations, Linked, MetricId, Op, Stage,
};
use crate::library::aggregates::AggregateFn;
use crate::report_model::item_values::ValueKind;
use crate::spec::{
    Better, Change, CsvOptions, DataType, Duplicates, Format, GateRuns, GateSlices, Join,
    NoBaseline, ParamType,
};

#[derive(Debug)]
pub struct Plan {
    pub spec_name: String,
    pub spec_version: String,
    pub spec_path: PathBuf,
    pub spec_display: String,
    pub spec_text: String,
    /// Every file the spec was read from: the spec, then its bases (`extends`).
    pub spec_files: Vec<std::sync::Arc<SourceFile>>,
    /// The folders the spec's own templates (and what they include) load from.
    pub template_dirs: Vec<PathBuf>,
    pub params: Vec<ParamValue>,
    /// Looked-up datasets first, then the items dataset, which is read last and streamed.
    pub datasets: Vec<DatasetPlan>,
    /// The dataset whose records are the items: the last of `datasets`.
    pub items_dataset: DatasetId,
    /// Per-item values in dependency order, indexed by [`DerivedId`].
    pub derived: Vec<Derived>,
    /// Indexed by [`crate::ir::AggregateId`].
    pub aggregates: Vec<Aggregate>,
    /// In dependency order, indexed by [`MetricId`].
    pub metrics: Vec<MetricPlan>,
    /// As declared; `by:` refers to them by index.
    pub slices: Vec<SlicePlan>,
    /// As declared, then one check per slice with `values:` (`slices.NAME`).
    pub gates: Vec<GatePlan>,
    /// Label names in rule order; the label itself is the derived value `label_slot`.
    pub labels: Vec<String>,
    pub label_slot: Option<DerivedId>,
    /// Fields and matchers as declared: what `items.jsonl` shows of each item.
    pub item_columns: Vec<ItemColumn>,
    pub offenders: Option<OffendersPlan>,
    pub reports: Vec<ReportPlan>,
    /// Keep every item's values for the reports (items.jsonl, HTML, templates
    /// that list items); otherwise items are folded and dropped as they stream.
    pub keep_items: bool,
    /// Some template reads `items`: only then does the template context hold
    /// every item (as JSON values, a copy far larger than items.jsonl).
    pub templates_read_items: bool,
    /// The prior report that `baseline.NAME` and change bounds compare against.
    pub baseline: Option<PriorReport>,
    /// The latency metric and the accuracy metrics plotted against it, per run.
    pub tradeoff: Option<Tradeoff>,
    /// Intervals, paired tests and the per-item store.
    pub stats: StatsPlan,
    /// The aggregates' filters and arguments, each distinct one once.
    pub shared: SharedExprs,
    /// Where each expression the ops' [`ExprAt`]s name is written.
    pub locations: ExprLocations,
}

/// What intervals and paired tests need: their level, and the metrics computed
/// from items whose per-item contributions are kept (item-values.jsonl).
#[derive(Debug)]
pub struct StatsPlan {
    /// `confidence:` (or `--confidence`); 0.95 unless set.
    pub confidence: f64,
    /// `keep_item_values:`: write item-values.jsonl beside report.json.
    pub keep_item_values: bool,
    /// Per metric computed from items as a ratio of sums, in plan order.
    pub columns: Vec<ValueColumnPlan>,
    /// The aggregates whose per-item observations the formulas read, in plan order.
    pub observed: Vec<AggregateId>,
    /// Every other metric computed from items, as a formula over `observed`
    /// (with the metrics it reads), in plan order; `formula_metrics` names
    /// each one's metric.
    pub formulas: Vec<Formula>,
    pub formula_metrics: Vec<MetricId>,
    /// Metrics across runs over run statistics of formulas (`run_mean(m)`: `m`
    /// as its index in `formulas`), resampled with items matched across runs.
    pub across: Vec<(MetricId, Op)>,
}

impl StatsPlan {
    /// The formula of `metric`, when it has one that is tested.
    pub fn tested_formula(&self, metric: MetricId) -> Option<usize> {
        let j = self.formula_metrics.iter().position(|m| *m == metric)?;
        self.formulas[j].tested.then_some(j)
    }

    /// The metric column whose contributions are observed aggregate `a`'s
    /// observations: a metric computed from items folds the same aggregate
    /// that a formula reads (`precision_c0` is both a column and what an F1
    /// reads), so one kept column serves both, in memory and in
    /// item-values.jsonl.
    pub fn column_of(&self, a: AggregateId) -> Option<usize> {
        self.columns.iter().position(|c| c.aggregate == a)
    }

    /// Whether items keep anything for intervals and tests.
    pub fn keeps_values(&self) -> bool {
        !self.columns.is_empty() || !self.observed.is_empty()
    }
}

/// The aggregates' `where` filters and arguments with repeats merged
/// ([`Op::same`]): an item computes each distinct one once, when the first
/// aggregate that needs it asks.
#[derive(Debug, Default)]
pub struct SharedExprs {
    pub ops: Vec<Op>,
    /// Per aggregate (plan order): its filter's and its argument's place in `ops`.
    pub filter: Vec<Option<usize>>,
    pub arg: Vec<Option<usize>>,
}

/// The level of intervals and tests when neither the spec nor `--confidence` sets one.
pub const DEFAULT_CONFIDENCE: f64 = 0.95;

/// A metric that is one `ratio`, `mean`, `sum` or `count` over the items (not
/// across runs): each item's contribution to it is kept.
#[derive(Debug, Clone, Copy)]
pub struct ValueColumnPlan {
    pub metric: MetricId,
    pub aggregate: AggregateId,
    pub kind: ValueKind,
}

impl Plan {
    /// The function of each observed aggregate (`stats.observed`).
    pub fn observed_functions(&self) -> Vec<AggregateFn> {
        let aggregates = self.stats.observed.iter();
        aggregates
            .map(|a| self.aggregates[a.index()].function)
            .collect()
    }

    /// The column of a metric, when it has one.
    pub fn value_column(&self, metric: MetricId) -> Option<(usize, &ValueColumnPlan)> {
        self.stats
            .columns
            .iter()
            .enumerate()
            .find(|(_, c)| c.metric == metric)
    }
}

/// `tradeoff:` resolved to metric slots.
#[derive(Debug)]
pub struct Tradeoff {
    pub latency: MetricId,
    pub accuracy: Vec<MetricId>,
}

#[derive(Debug)]
pub struct ItemColumn {
    /// The field's or matcher's name as a JSON member's key with its colon
    /// (`"claim":`), escaped once here rather than on every line of
    /// items.jsonl.
    pub member: String,
    pub kind: DerivedKind,
    pub ty: Type,
    pub slot: DerivedId,
}

#[derive(Debug)]
pub struct OffendersPlan<S: Stage = Linked> {
    pub when: Op<S>,
    pub text: String,
    /// Where `when` is written, for errors evaluating it.
    pub at: Location,
    /// Name and id of each value shown.
    pub show: Vec<(String, S::Derived)>,
    pub limit: usize,
}

#[derive(Debug)]
pub struct ParamValue {
    pub name: String,
    pub ty: ParamType,
    pub value: Value,
    /// The spec's value, which `--param` may override.
    pub default: Value,
    /// Set with `--param` rather than the spec's default.
    pub overridden: bool,
    /// Declared `locked: true`: no `--param` may set it.
    pub locked: bool,
}

impl ParamValue {
    /// The value differs from the spec's default: what reports mark as overridden.
    pub fn differs(&self) -> bool {
        self.value != self.default
    }
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
    /// Where the key is written (a key that is a list or an object fails there).
    pub key_at: ExprAt,
    pub duplicates: Duplicates,
    pub join: Join,
    pub projection: Projection,
    pub rules: Vec<Rule>,
    pub checks: Vec<Check>,
    /// Where the dataset was declared, for data errors that concern the declaration.
    pub declared_at: Location,
    /// Pinned by the spec's lock.
    pub frozen: bool,
    /// `allow_empty:` a run of this (items) dataset that scores no item is
    /// not an error.
    pub allow_empty: bool,
    /// The fields the plan's expressions read into a slot of their own, with
    /// where each is first written, and no schema rule: one in no record of the
    /// file (a typo, most likely) is warned about.
    pub reads: Vec<FieldRead>,
    /// Several files, each a run (`runs:`), in natural order of their paths;
    /// empty for a dataset read from one `path`.
    pub runs: Vec<RunFile>,
    /// Names each run from its records; `None`: from its file name.
    pub run_name: Option<Check>,
    /// While one run is read: the run's name as `run_name` gave it for the run's
    /// first record, which every record of the run must repeat.
    pub expected_run_name: Option<Value>,
    /// A table in memory read instead of `path` (given by a library caller).
    pub table: Option<crate::base::table::Table>,
    /// Where a long read reports its progress; none: it is silent.
    pub events: Option<crate::base::events::EventSink>,
}

impl DatasetPlan {
    /// This dataset as read for one of its runs; `name` is the run's name when
    /// `run_name` reads it from the records.
    pub fn for_run(&self, file: &RunFile, name: Option<&Value>) -> DatasetPlan {
        DatasetPlan {
            path: file.path.clone(),
            display_path: file.display_path.clone(),
            runs: Vec::new(),
            expected_run_name: name.cloned(),
            ..self.clone()
        }
    }
}

/// A field an expression reads from a dataset's records.
#[derive(Debug, Clone)]
pub struct FieldRead {
    /// Its path, dotted (`answer_json.claim`).
    pub path: String,
    pub slot: crate::ir::SlotId,
    /// Where it is first read.
    pub at: crate::ir::ExprAt,
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
    pub max: Option<f64>,
}

/// A per-record condition, evaluated with only the record (and params) in scope.
#[derive(Debug, Clone)]
pub struct Check<S: Stage = Linked> {
    pub op: Op<S>,
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
pub struct Derived<S: Stage = Linked> {
    pub name: String,
    pub kind: DerivedKind,
    pub op: Op<S>,
    pub ty: Type,
    pub text: String,
    pub at: Location,
}

#[derive(Debug)]
pub struct Aggregate<S: Stage = Linked> {
    pub function: AggregateFn,
    /// The argument; for two-label aggregates, a list of both.
    pub arg: Option<Op<S>>,
    pub filter: Option<Op<S>>,
    pub text: String,
    /// What is aggregated, as written: the text inside the parentheses.
    pub subject: String,
    pub at: Location,
    /// Where the arguments are written (an argument of the wrong type fails there).
    pub arg_at: Option<ExprAt>,
    /// Where `where` is written (a filter that is not a bool fails there).
    pub filter_at: Option<ExprAt>,
}

#[derive(Debug)]
pub struct MetricPlan<S: Stage = Linked> {
    pub name: String,
    pub op: Op<S>,
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
    /// `by:` the slices (indices into `plan.slices`) it is also computed per value of.
    pub by: Vec<usize>,
}

/// A slice: a per-item value each of whose distinct values (by their text, see
/// [`crate::base::value::slice_text`]) has its own item count and metrics.
#[derive(Debug)]
pub struct SlicePlan<S: Stage = Linked> {
    pub name: String,
    pub op: Op<S>,
    pub text: String,
    /// Where the slice is declared, for errors evaluating it.
    pub at: Location,
    /// `values:` the values expected, as their text.
    pub values: Option<Vec<std::sync::Arc<str>>>,
    /// What a value outside `values` (or one missing) does.
    pub unexpected: Severity,
    /// Per metric (plan order): computed per value, being `by` this slice or
    /// read by such a metric. Filled in by linking.
    pub metrics: Vec<bool>,
    /// The aggregates those metrics read: folded per value, in one pass.
    pub aggregates: Vec<usize>,
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
pub struct GatePlan<S: Stage = Linked> {
    pub name: String,
    pub rule: GateRule<S>,
    /// Reads per-run values, so with several runs it is decided per run.
    pub per_run: bool,
    pub runs: GateRuns,
    pub value_ty: Type,
    pub severity: Severity,
    pub message: Option<String>,
    /// The expression, or a canonical description of a shaped gate.
    pub text: String,
    /// `by:` the gate holds per slice value rather than on the whole.
    pub by: Option<GateBy>,
}

/// How a gate with `by:` is decided over slice values.
#[derive(Debug, Clone)]
pub struct GateBy {
    /// Indices into `plan.slices`; each slice is gated separately.
    pub slices: Vec<usize>,
    pub mode: GateSlices,
    /// Slice values with fewer items are skipped.
    pub min_items: usize,
}

#[derive(Debug)]
pub enum GateRule<S: Stage = Linked> {
    Expr {
        op: Op<S>,
        /// The gate's reported value: the left side of a top-level comparison.
        /// `None`: the value is the gate's own result.
        value: Option<Op<S>>,
        /// The right side of a top-level comparison: the threshold reports draw.
        bound: Option<Op<S>>,
    },
    Shape(ShapePlan<S>),
    /// A slice's values are exactly its `values:` (a check the spec implies).
    SliceValues {
        slice: usize,
    },
}

/// A gate on one metric: thresholds, and bounds on its change against the baseline.
#[derive(Debug)]
pub struct ShapePlan<S: Stage = Linked> {
    pub metric: S::Metric,
    pub metric_name: String,
    pub better: Better,
    pub threshold: Option<Op<S>>,
    pub warn_threshold: Option<Op<S>>,
    pub changes: Vec<(Change, Op<S>)>,
    pub when_no_baseline: NoBaseline,
    /// The bounds as written (threshold, warning threshold, each change), for `explain`.
    pub threshold_text: Option<String>,
    pub warn_threshold_text: Option<String>,
    pub change_texts: Vec<String>,
    /// `significance:` changes fail only when significant at this level.
    pub significance: Option<f64>,
}

impl<S: Stage> GateRule<S> {
    /// Every op of the rule.
    pub fn ops(&self) -> Vec<&Op<S>> {
        match self {
            GateRule::Expr { op, value, bound } => std::iter::once(op)
                .chain(value.as_ref())
                .chain(bound.as_ref())
                .collect(),
            GateRule::Shape(shape) => shape
                .threshold
                .iter()
                .chain(shape.warn_threshold.as_ref())
                .chain(shape.changes.iter().map(|(_, op)| op))
                .collect(),
            GateRule::SliceValues { .. } => Vec::new(),
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
    pub fn metrics_in_declared_order(&self) -> Vec<(MetricId, &MetricPlan)> {
        let mut metrics: Vec<(MetricId, &MetricPlan)> = self
            .metrics
            .iter()
            .enumerate()
            .map(|(i, m)| (MetricId::new(i), m))
            .collect();
        metrics.sort_by_key(|(_, m)| m.declared);
        metrics
    }
}
