//! The spec's declarations after structural validation, in declaration order.

use std::path::PathBuf;
use std::sync::Arc;

use crate::base::diagnostic::Location;
use crate::base::source::{ceil_char_boundary, floor_char_boundary, SourceFile};
use crate::base::value::Value;
use crate::spec::yaml::Node;

mod gates;

pub use gates::*;

#[derive(Debug)]
pub struct Spec {
    /// The spec file itself.
    pub source: Arc<SourceFile>,
    /// Every file the spec was read from: the spec, then its bases through `extends`.
    pub files: Vec<Arc<SourceFile>>,
    /// The spec as it was resolved: the file's own text, or for a spec built through
    /// `extends`, the merged YAML. What reports carry and hash.
    pub resolved_text: String,
    pub name: String,
    pub version: String,
    pub description: Option<String>,
    /// The dataset whose records are the items being scored.
    pub items: Name,
    pub params: Vec<ParamDecl>,
    pub datasets: Vec<DatasetDecl>,
    pub fields: Vec<FieldDecl>,
    pub matchers: Vec<MatcherDecl>,
    /// Named per-item values that metrics and gates with `by:` are broken down by.
    pub slices: Vec<SliceDecl>,
    pub metrics: Vec<MetricDecl>,
    pub gates: Vec<GateDecl>,
    /// Ordered `LABEL: condition` rules; an item takes the first label whose
    /// condition holds.
    pub labels: Vec<LabelRule>,
    pub offenders: Option<OffendersDecl>,
    /// Which per-run metrics the latency-vs-accuracy table and curve plot.
    pub tradeoff: Option<TradeoffDecl>,
    /// `None`: the default reports.
    pub reports: Option<Vec<ReportDecl>>,
    /// `confidence:` the level of intervals and paired tests (`None`: 0.95).
    pub confidence: Option<f64>,
    /// `keep_item_values:` write item-values.jsonl beside report.json (default true).
    pub keep_item_values: bool,
}

/// A user-chosen name and where it was written.
#[derive(Debug, Clone)]
pub struct Name {
    pub text: String,
    pub node: Node,
    pub key_path: String,
}

impl Name {
    /// Where the name is written, with its YAML key path.
    pub fn location(&self) -> Location {
        self.node.location().with_key_path(&self.key_path)
    }
}

/// An expression as written in the spec, able to locate any byte inside itself.
#[derive(Debug, Clone)]
pub struct ExprText {
    pub text: String,
    pub node: Node,
    pub key_path: String,
}

impl ExprText {
    /// The location of `text[start..end]` in the spec file.
    /// Offsets inside a character are widened to the whole character.
    pub fn location(&self, start: usize, end: usize) -> Location {
        let start = floor_char_boundary(&self.text, start);
        let end = ceil_char_boundary(&self.text, end.max(start + 1));
        let last = floor_char_boundary(&self.text, end.saturating_sub(1));
        let from = self.node.source_offset(&self.text, start);
        let to = self.node.source_offset(&self.text, last) + 1;
        Location::in_source(&self.node.source, from, to.saturating_sub(from).max(1))
            .with_key_path(&self.key_path)
    }

    /// The location of the whole expression.
    pub fn whole(&self) -> Location {
        self.location(0, self.text.len())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamType {
    Number,
    Integer,
    String,
    Bool,
    List,
}

impl ParamType {
    pub fn keyword(self) -> &'static str {
        match self {
            ParamType::Number => "number",
            ParamType::Integer => "integer",
            ParamType::String => "string",
            ParamType::Bool => "bool",
            ParamType::List => "list",
        }
    }
}

#[derive(Debug, Clone)]
pub struct ParamDecl {
    pub name: Name,
    pub ty: ParamType,
    pub default: Value,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub description: Option<String>,
    /// `locked: true`: `--param` may not change it, so a lock pins its value
    /// with the spec's text.
    pub locked: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One JSON object per line; blank lines skipped.
    Jsonl,
    /// One JSON array of objects.
    Json,
    /// TREC relevance judgements, one record per query.
    TrecQrels,
    /// A TREC run, one ranked record per query.
    TrecRun,
    /// RFC 4180 CSV with a header row; cells typed by the dataset's schema.
    Csv,
    /// CSV separated by tabs.
    Tsv,
    /// Apache Parquet; columns become fields, nested lists and structs lists and objects.
    Parquet,
}

impl Format {
    pub const ALL: [(&'static str, Format); 7] = [
        ("jsonl", Format::Jsonl),
        ("json", Format::Json),
        ("csv", Format::Csv),
        ("tsv", Format::Tsv),
        ("parquet", Format::Parquet),
        ("trec_qrels", Format::TrecQrels),
        ("trec_run", Format::TrecRun),
    ];

    pub fn keyword(self) -> &'static str {
        match self {
            Format::Jsonl => "jsonl",
            Format::Json => "json",
            Format::TrecQrels => "trec_qrels",
            Format::TrecRun => "trec_run",
            Format::Csv => "csv",
            Format::Tsv => "tsv",
            Format::Parquet => "parquet",
        }
    }

    /// The format a file's extension names (`.jsonl`, `.json`, `.csv`, `.tsv`,
    /// `.parquet`, in any case); `None` for any other.
    pub fn from_extension(path: &std::path::Path) -> Option<Format> {
        let extension = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match extension.as_str() {
            "jsonl" => Format::Jsonl,
            "json" => Format::Json,
            "csv" => Format::Csv,
            "tsv" => Format::Tsv,
            "parquet" => Format::Parquet,
            _ => return None,
        })
    }

    /// CSV or TSV: the formats `delimiter` and `list_separator` apply to.
    pub fn is_delimited(self) -> bool {
        matches!(self, Format::Csv | Format::Tsv)
    }
}

/// How a CSV or TSV dataset is split into cells and list cells into elements.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CsvOptions {
    /// One ASCII byte; `,` for csv and a tab for tsv unless set.
    pub delimiter: Option<u8>,
    /// A list cell that is not a JSON array is split at this text.
    pub list_separator: Option<String>,
}

/// What to do when two records of a dataset share a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Duplicates {
    /// Stop with an error naming both lines.
    Error,
    /// Keep the first record; later ones are dropped.
    First,
    /// Keep the last record, at the first one's position (like a Python dict).
    Last,
    /// Items only: every record is its own item.
    Keep,
}

impl Duplicates {
    pub fn keyword(self) -> &'static str {
        match self {
            Duplicates::Error => "error",
            Duplicates::First => "first",
            Duplicates::Last => "last",
            Duplicates::Keep => "keep",
        }
    }
}

/// How a looked-up dataset joins the items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Join {
    /// An item without a record is still scored; the record reads as null.
    Left,
    /// An item without a record is skipped (and counted).
    Inner,
}

impl Join {
    pub fn keyword(self) -> &'static str {
        match self {
            Join::Left => "left",
            Join::Inner => "inner",
        }
    }
}

#[derive(Debug, Clone)]
pub struct DatasetDecl {
    pub name: Name,
    /// As written, or named by the extension of `path` (or of the first `runs`
    /// pattern), else `jsonl`.
    pub format: Format,
    pub csv: CsvOptions,
    /// Default path, resolved against the folder of the spec file that declares it;
    /// `--dataset NAME=PATH` overrides it.
    pub path: Option<PathBuf>,
    /// Several files, each a run of the same dataset (instead of `path`).
    pub runs: Option<RunsDecl>,
    /// Pinned by `evalspec freeze`: a change is drift.
    pub frozen: bool,
    /// `allow_empty:` (items dataset only) a run that scores no item is not an error.
    pub allow_empty: bool,
    pub key: ExprText,
    pub duplicates: Duplicates,
    pub join: Join,
    pub schema: Vec<FieldRule>,
    pub checks: Vec<RecordCheck>,
}

/// `runs:` the files of a dataset read as separate runs: files, folders (every
/// file inside) or glob patterns, each resolved against the declaring file's folder.
#[derive(Debug, Clone)]
pub struct RunsDecl {
    pub patterns: Vec<PathBuf>,
    pub name: RunName,
    pub node: Node,
}

/// Where a run's name comes from.
#[derive(Debug, Clone)]
pub enum RunName {
    /// The file name without its extension (`runs/seed-1.jsonl` → `seed-1`).
    File,
    /// An expression over the record (like `key`); every record of a file must agree.
    Expr(ExprText),
}

/// `tradeoff:` the latency metric and the accuracy metrics it is plotted against.
#[derive(Debug, Clone)]
pub struct TradeoffDecl {
    pub latency: Name,
    pub accuracy: Vec<Name>,
}

/// A data contract rule: the record field at `path` must have type `ty`.
#[derive(Debug, Clone)]
pub struct FieldRule {
    pub path: Vec<String>,
    /// `list[].field`: the rule applies to `field` of each element of the list at `path`.
    pub each: Option<Vec<String>>,
    pub ty: DataType,
    /// Null or missing is accepted.
    pub optional: bool,
    /// Strings and lists must not be empty.
    pub nonempty: bool,
    /// Numbers must be at least this.
    pub min: Option<f64>,
    /// Numbers must be at most this.
    pub max: Option<f64>,
    pub node: Node,
}

/// A per-record condition of a dataset's contract, with the message shown when it fails.
#[derive(Debug, Clone)]
pub struct RecordCheck {
    pub expr: ExprText,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DataType {
    Any,
    String,
    Bool,
    Number,
    Integer,
    Object,
    List(Option<Box<DataType>>),
}

impl std::fmt::Display for DataType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DataType::Any => f.write_str("any"),
            DataType::String => f.write_str("string"),
            DataType::Bool => f.write_str("bool"),
            DataType::Number => f.write_str("number"),
            DataType::Integer => f.write_str("integer"),
            DataType::Object => f.write_str("object"),
            DataType::List(None) => f.write_str("list"),
            DataType::List(Some(element)) => write!(f, "list<{element}>"),
        }
    }
}

#[derive(Debug, Clone)]
pub struct FieldDecl {
    pub name: Name,
    pub expr: ExprText,
}

/// A matcher as declared; its kind's table in `matchers` gives meaning to `args`.
#[derive(Debug, Clone)]
pub struct MatcherDecl {
    pub name: Name,
    pub kind: Name,
    /// Every key but `kind`, in order: inputs (expressions) and options (constants).
    pub args: Vec<MatcherArg>,
    pub key_path: String,
}

/// One key of a matcher besides `kind`: an input (an expression) or an option
/// (a constant); the matcher's kind says which.
#[derive(Debug, Clone)]
pub struct MatcherArg {
    pub name: Name,
    /// The value as an expression, when it is a scalar.
    pub expr: Option<ExprText>,
    /// The value as a constant.
    pub constant: Constant,
    /// What the value is, for errors (`a string`, `a list`, …).
    pub type_name: &'static str,
    /// Where the value is written.
    pub at: Location,
}

/// A constant written in the spec.
#[derive(Debug, Clone, PartialEq)]
pub enum Constant {
    Bool(bool),
    Int(i64),
    Str(String),
    /// Null, a float, a list or a mapping.
    Other,
}

/// `slices: {NAME: EXPR}` or `{NAME: {expr, values, unexpected}}`: a per-item
/// value whose distinct values each get their own metrics and gates.
#[derive(Debug, Clone)]
pub struct SliceDecl {
    pub name: Name,
    pub expr: ExprText,
    /// The values expected, as slice keys (their text), with where each is written.
    pub values: Option<Vec<(String, Node)>>,
    /// What a value seen but not listed, or listed but not seen, does.
    pub unexpected: Unexpected,
}

/// What a slice value outside `values:` (or one missing from the data) does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unexpected {
    Warn,
    Fail,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

impl Better {
    pub fn keyword(self) -> &'static str {
        match self {
            Better::Higher => "higher",
            Better::Lower => "lower",
        }
    }
}

#[derive(Debug, Clone)]
pub struct MetricDecl {
    pub name: Name,
    pub expr: ExprText,
    /// Reported when the metric has no value (an empty denominator).
    pub empty: Option<(f64, Node)>,
    pub better: Option<Better>,
    pub description: Option<String>,
    /// For a metric expanded from `ks`: its cutoff, bound to `k` in its expression.
    pub cutoff: Option<u32>,
    /// How far the metric may move in its bad direction before `diff
    /// --fail-on-regression` calls it a regression.
    pub tolerance: Option<f64>,
    /// `by:` the slices the metric is also computed per value of.
    pub by: Vec<Name>,
}

#[derive(Debug, Clone)]
pub struct LabelRule {
    pub label: Name,
    pub expr: ExprText,
}

/// Which items reports list as the top offenders.
#[derive(Debug, Clone)]
pub struct OffendersDecl {
    pub when: ExprText,
    /// Fields and matchers shown for each offender.
    pub show: Vec<Name>,
    pub limit: usize,
}

/// One report to write: a built-in format or a template of the spec's own.
#[derive(Debug, Clone)]
pub struct ReportDecl {
    pub kind: ReportKind,
    /// The output file, relative to the output folder.
    pub path: Option<String>,
    /// The folder a template path is relative to: that of the file declaring it.
    pub dir: PathBuf,
    pub node: Node,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportKind {
    Builtin(ReportFormat),
    /// A template file, relative to the spec.
    Template(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ReportFormat {
    Json,
    Markdown,
    Junit,
    Html,
    Summary,
    Items,
}

impl ReportFormat {
    pub const ALL: [(&'static str, ReportFormat); 6] = [
        ("json", ReportFormat::Json),
        ("markdown", ReportFormat::Markdown),
        ("junit", ReportFormat::Junit),
        ("html", ReportFormat::Html),
        ("summary", ReportFormat::Summary),
        ("items", ReportFormat::Items),
    ];

    pub fn keyword(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, f)| *f == self)
            .map_or("", |(k, _)| k)
    }

    /// The format named `text`: a keyword of [`ReportFormat::ALL`], or `md`,
    /// `xml` or `github`; otherwise an error listing the formats.
    pub fn parse(text: &str) -> Result<ReportFormat, String> {
        let aliases = [
            ("md", ReportFormat::Markdown),
            ("xml", ReportFormat::Junit),
            ("github", ReportFormat::Summary),
        ];
        (Self::ALL.iter().chain(aliases.iter()))
            .find(|(name, _)| *name == text)
            .map(|(_, format)| *format)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|(n, _)| *n).collect();
                format!("unknown format `{text}`; formats: {}", names.join(", "))
            })
    }

    /// The file written into the output folder unless the spec names another.
    pub fn default_file(self) -> &'static str {
        match self {
            ReportFormat::Json => "report.json",
            ReportFormat::Markdown => "report.md",
            ReportFormat::Junit => "junit.xml",
            ReportFormat::Html => "report.html",
            ReportFormat::Summary => "summary.md",
            ReportFormat::Items => "items.jsonl",
        }
    }
}
