//! Every error the compiler reports, as data; their words are in `words.rs` and
//! nowhere else, their stable codes in `codes.rs`. A site builds a
//! [`CompileError`] and places it (`Diagnostic::of(&kind).at(location)`).

use crate::base::types::Type;

mod codes;
mod slices;
mod words;

pub use slices::SliceError;

/// Where an unknown name was written, for what the error suggests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameScope {
    Item,
    Metric,
    Gate,
    Params,
}

/// What is wrong with a matcher option's value.
#[derive(Debug)]
pub enum OptionProblem {
    NotOneOf {
        choices: &'static [&'static str],
    },
    BadRegex {
        error: String,
    },
    Wrong {
        expected: &'static str,
        found: &'static str,
    },
}

#[derive(Debug)]
pub enum CompileError {
    // ---- names and params ----
    UnknownParamOverride {
        name: String,
        known: Vec<String>,
    },
    BadParamOverride {
        name: String,
        text: String,
        message: String,
        declared_as: &'static str,
    },
    LockedParamOverride {
        name: String,
        text: String,
    },
    ReservedName {
        name: &'static str,
        what: &'static str,
    },
    NameClash {
        name: String,
        first: &'static str,
        second: &'static str,
    },
    LabelNameTaken {
        what: &'static str,
    },
    DuplicateMetric {
        name: String,
    },
    ParamMetricClash {
        name: String,
    },
    ItemsNotADataset {
        name: String,
        datasets: Vec<String>,
    },
    UnknownName {
        name: String,
        scope: NameScope,
        is_item_name: bool,
        is_metric: bool,
        candidates: Vec<String>,
    },
    UnknownExplicitParam {
        name: String,
        params: Vec<String>,
    },
    BaselineOutsideGate,
    UnknownBaselineMetric {
        name: String,
        metrics: Vec<String>,
    },
    // ---- expressions ----
    Syntax {
        message: String,
        text: String,
    },
    FieldOfNonObject {
        field: String,
        base: Type,
    },
    BadIndex {
        base: Type,
        index: Type,
    },
    NotNeedsBool {
        found: Type,
    },
    NegNeedsNumber {
        found: Type,
    },
    LogicNeedsBools {
        op: &'static str,
        found: Type,
    },
    CannotCompare {
        left: Type,
        right: Type,
        op: &'static str,
    },
    InNeedsList {
        op: &'static str,
        found: Type,
    },
    CannotAdd {
        left: Type,
        right: Type,
    },
    ArithmeticNeedsNumbers {
        op: &'static str,
        found: Type,
    },
    // ---- calls ----
    WhereOnNonAggregate {
        name: String,
    },
    UnknownFunction {
        name: String,
        suggestion: Option<String>,
    },
    IfArity {
        found: usize,
    },
    IfConditionNotBool {
        found: Type,
    },
    BuiltinArity {
        name: &'static str,
        min: usize,
        /// `None`: any number from `min`.
        max: Option<usize>,
        found: usize,
        example: &'static str,
    },
    BuiltinArgType {
        position: usize,
        name: &'static str,
        expected: &'static str,
        found: Type,
        example: &'static str,
    },
    RunStatScope {
        name: String,
    },
    RunStatNeedsMetric {
        name: String,
    },
    RecordsOnlyInMetrics,
    RecordsNeedsDataset {
        datasets: Vec<String>,
    },
    // ---- aggregates ----
    NestedAggregate {
        name: String,
    },
    AggregateScope {
        name: String,
        in_gate: bool,
    },
    AggregateArity {
        name: String,
        max: usize,
        found: usize,
        example: &'static str,
    },
    PercentileLevel,
    EceBins {
        max: u32,
    },
    CorrectNotBool {
        name: String,
        found: Type,
    },
    WhereNotBool {
        found: Type,
    },
    CountsNeedCondition {
        name: String,
        found: Type,
    },
    AggregateNeedsNumber {
        name: String,
        found: Type,
    },
    // ---- fields, matchers, labels, offenders ----
    LabelNotBool {
        label: String,
        found: Type,
    },
    UnknownOffenderShow {
        name: String,
        candidates: Vec<String>,
    },
    OffendersWhenNotBool {
        found: Type,
    },
    UnknownMatcherKind {
        kind: String,
        kinds: &'static [&'static str],
    },
    MissingMatcherInput {
        matcher: String,
        kind: &'static str,
        input: &'static str,
    },
    MatcherInputNotExpression {
        input: &'static str,
        found: &'static str,
    },
    MatcherInputType {
        input: &'static str,
        kind: &'static str,
        expected: &'static str,
        found: Type,
    },
    MissingMatcherOption {
        matcher: String,
        kind: &'static str,
        option: &'static str,
    },
    UnknownMatcherKey {
        kind: &'static str,
        key: String,
        known: Vec<&'static str>,
    },
    MatcherRejected {
        matcher: String,
        message: String,
    },
    BadMatcherOption {
        option: String,
        problem: OptionProblem,
    },
    // ---- metrics ----
    MetricNotNumber {
        name: String,
        found: Type,
    },
    MixedRuns {
        name: String,
    },
    SummaryOfAcross {
        name: String,
    },
    UnknownTradeoffMetric {
        name: String,
        metrics: Vec<String>,
    },
    TradeoffAcross {
        name: String,
    },
    Cycle {
        what: &'static str,
        names: Vec<String>,
    },
    // ---- gates ----
    GateNotBool {
        name: String,
        found: Type,
    },
    UnknownGateMetric {
        name: String,
        metrics: Vec<String>,
    },
    GateNeedsBetter {
        metric: String,
    },
    NegativeAllowance {
        change: &'static str,
        value: f64,
    },
    GateBoundNotNumber {
        found: Type,
    },
    BadSeverity {
        found: String,
    },
    // ---- datasets ----
    KeepOnLookup {
        dataset: String,
    },
    AllowEmptyOnLookup {
        dataset: String,
    },
    CheckNotBool {
        found: Type,
    },
    // ---- slices ----
    Slice(SliceError),
}
