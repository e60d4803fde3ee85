//! The evaluation plan: a spec compiled against its params. Names are resolved to
//! slots, types are checked, and every dataset knows which fields it must read.
//! The evaluator sees only this.

pub mod compile;
mod display;
mod op;
mod projection;

use std::path::PathBuf;

pub use compile::compile;
pub use op::Op;
pub use projection::{FieldPath, ProjectedField, Projection};

use crate::diagnostic::Location;
use crate::spec::{Better, DataType, Duplicates, Format, Join, ParamType};
use crate::types::Type;
use crate::value::Value;

#[derive(Debug)]
pub struct Plan {
    pub spec_name: String,
    pub spec_version: String,
    pub spec_path: PathBuf,
    pub spec_display: String,
    pub spec_text: String,
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
}

#[derive(Debug)]
pub struct ParamValue {
    pub name: String,
    pub ty: ParamType,
    pub value: Value,
    /// Set with `--param` rather than the spec's default.
    pub overridden: bool,
}

#[derive(Debug)]
pub struct DatasetPlan {
    pub name: String,
    pub format: Format,
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
}

/// A schema rule bound to the projected field it checks.
#[derive(Debug)]
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
#[derive(Debug)]
pub struct Check {
    pub op: Op,
    pub text: String,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DerivedKind {
    Field,
    Matcher,
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
}

#[derive(Debug)]
pub struct Aggregate {
    pub function: AggregateFn,
    pub arg: Option<Op>,
    pub filter: Option<Op>,
    pub text: String,
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
    /// Position in the spec, for reports that list metrics as declared.
    pub declared: usize,
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
    pub op: Op,
    /// The gate's reported value: the left side of a top-level comparison, else the result.
    /// `None`: the value is the gate's own result.
    pub value: Option<Op>,
    pub value_ty: Type,
    pub severity: Severity,
    pub message: Option<String>,
    pub text: String,
}

impl Plan {
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
