//! Every error reading a dataset reports, as data; their words are written here
//! and nowhere else. A site builds a [`DataError`] and places it
//! (`Diagnostic::of(&kind).at(location)`).

use std::sync::Arc;

use crate::base::diagnostic::{Diagnostic, Kind, Words};
use crate::base::value::{format_number, Value, ValueError};
use crate::ir::{ExprLocations, RuntimeError};
use crate::spec::DataType;

#[derive(Debug)]
pub enum DataError {
    // ---- files ----
    CannotRead {
        dataset: String,
        path: String,
        /// The operating system's words.
        error: String,
    },
    NotUtf8 {
        dataset: String,
    },
    /// A record that serde_json could not read: `syntax` for text that is not
    /// JSON, otherwise JSON of the wrong shape. `message` is serde_json's.
    InvalidRecord {
        dataset: String,
        syntax: bool,
        message: String,
    },
    /// A `json` dataset that is not one array of elements.
    InvalidArray {
        dataset: String,
        problem: ArrayProblem,
    },
    // ---- TREC files ----
    TrecLineNotUtf8 {
        dataset: String,
    },
    TrecColumns {
        dataset: String,
        qrels: bool,
        found: usize,
    },
    /// A relevance level (qrels) or a score (runs) that is not one.
    TrecValue {
        dataset: String,
        qrels: bool,
        text: String,
    },
    TrecDuplicateDocument {
        dataset: String,
        document: Arc<str>,
        query: Arc<str>,
        first_line: usize,
    },
    // ---- schema rules and checks ----
    Schema {
        dataset: String,
        field: String,
        problem: SchemaProblem,
    },
    CheckFailed {
        dataset: String,
        /// The check's own message, as the spec gives it.
        message: String,
        check: String,
    },
    /// A record of a run whose `run_name` differs from the run's first record's.
    RunNameDiffers {
        dataset: String,
        run_name: String,
        expected: Value,
    },
    CheckNotEvaluated {
        dataset: String,
        check: String,
        error: RuntimeError,
    },
}

/// Why a `json` dataset's text is not one array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrayProblem {
    NoOpeningBracket,
    NotClosed,
    NoSeparator,
    TextAfter,
    StringNotClosed,
    ElementNotClosed,
}

/// How a value breaks a schema rule.
#[derive(Debug)]
pub enum SchemaProblem {
    Unreadable(ValueError),
    Missing,
    WrongType { expected: DataType, found: Value },
    BelowMin { min: f64, found: Value },
    AboveMax { max: f64, found: Value },
    Empty,
}

impl DataError {
    /// The error as a diagnostic, not yet placed; a check that failed to evaluate
    /// also says (without printing it) what failed and where, from the plan's
    /// `locations`.
    pub fn report(&self, locations: &ExprLocations) -> Diagnostic {
        let diagnostic = Diagnostic::of(self);
        match self {
            DataError::CheckNotEvaluated { error, .. } => {
                diagnostic.caused_by(error.cause(locations))
            }
            _ => diagnostic,
        }
    }
}

impl Kind for DataError {
    fn code(&self) -> &'static str {
        use DataError as E;
        match self {
            E::CannotRead { .. } => "cannot_read_dataset",
            E::NotUtf8 { .. } => "not_utf8",
            E::InvalidRecord { syntax: true, .. } => "invalid_json",
            E::InvalidRecord { syntax: false, .. } => "invalid_record",
            E::InvalidArray { .. } => "invalid_json_array",
            E::TrecLineNotUtf8 { .. } => "trec_line_not_utf8",
            E::TrecColumns { .. } => "trec_columns",
            E::TrecValue { .. } => "trec_value",
            E::TrecDuplicateDocument { .. } => "trec_duplicate_document",
            E::Schema { .. } => "schema",
            E::CheckFailed { .. } => "check_failed",
            E::RunNameDiffers { .. } => "run_name_differs",
            E::CheckNotEvaluated { .. } => "check_not_evaluated",
        }
    }

    fn describe(&self) -> Words {
        use DataError as E;
        match self {
            E::CannotRead { dataset, path, error } => Words::new(format!(
                "cannot read dataset `{dataset}` from `{path}`: {error}"
            ))
            .help(format!(
                "fix `path:` in the spec or pass `--dataset {dataset}=PATH`"
            )),
            E::NotUtf8 { dataset } => Words::new(format!("{dataset}: the file is not valid UTF-8")),
            E::InvalidRecord { dataset, syntax, message } => {
                let what = if *syntax { "invalid JSON" } else { "invalid record" };
                Words::new(format!("{dataset}: {what}: {message}"))
                    .help("each record must be one JSON object")
            }
            E::InvalidArray { dataset, problem } => {
                Words::new(format!("{dataset}: invalid JSON: {problem}"))
                    .help("a `json` dataset is one JSON array of objects")
            }
            E::TrecLineNotUtf8 { dataset } => {
                Words::new(format!("{dataset}: the line is not valid UTF-8"))
                    .help("save the file as UTF-8")
            }
            E::TrecColumns { dataset, qrels, found } => {
                let (columns, shape) = if *qrels {
                    (4, "`qid iter docno rel`")
                } else {
                    (6, "`qid Q0 docno rank score tag`")
                };
                Words::new(format!(
                    "{dataset}: expected {columns} columns, found {found}"
                ))
                .help(format!("each line is {shape}"))
            }
            E::TrecValue { dataset, qrels, text } => {
                let rule = if *qrels {
                    "a relevance level must be a whole number"
                } else {
                    "a score must be a finite number"
                };
                Words::new(format!("{dataset}: {rule}, found `{text}`")).help("fix the line")
            }
            E::TrecDuplicateDocument { dataset, document, query, first_line } => Words::new(format!(
                "{dataset}: document `{document}` is listed twice for query `{query}` (first on line {first_line})"
            ))
            .help("each document may appear once per query"),
            E::Schema { dataset, field, problem } => {
                Words::new(format!("{dataset}: field `{field}` {problem}")).help(format!(
                    "fix the record, or the rule in `datasets.{dataset}.schema`"
                ))
            }
            E::CheckFailed { dataset, message, check } => {
                Words::new(format!("{dataset}: {message}"))
                    .help(format!("the record fails the check `{check}`"))
            }
            E::RunNameDiffers { dataset, run_name, expected } => {
                let expected = expected.preview();
                Words::new(format!(
                    "{dataset}: this record's `{run_name}` differs from the run's first record ({expected})"
                ))
                .help(format!(
                    "the record fails the check `{run_name} == {expected}`"
                ))
            }
            E::CheckNotEvaluated { dataset, check, error } => Words::new(format!(
                "{dataset}: cannot evaluate the check `{check}`: {error}"
            )),
        }
    }
}

impl std::fmt::Display for ArrayProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ArrayProblem::NoOpeningBracket => "expected `[` to start the array",
            ArrayProblem::NotClosed => "the array is not closed with `]`",
            ArrayProblem::NoSeparator => "expected `,` or `]` after an array element",
            ArrayProblem::TextAfter => "unexpected text after the array",
            ArrayProblem::StringNotClosed => "a string is not closed",
            ArrayProblem::ElementNotClosed => "an element is not closed",
        })
    }
}

impl std::fmt::Display for SchemaProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SchemaProblem::Unreadable(error) => write!(f, "{error}"),
            SchemaProblem::Missing => f.write_str("is missing or null, but the schema requires it"),
            SchemaProblem::WrongType { expected, found } => write!(
                f,
                "must be {}, found {} {}",
                data_type(expected),
                found.type_name(),
                found.preview()
            ),
            SchemaProblem::BelowMin { min, found } => write!(
                f,
                "must be at least {}, found {}",
                format_number(*min),
                found.preview()
            ),
            SchemaProblem::AboveMax { max, found } => write!(
                f,
                "must be at most {}, found {}",
                format_number(*max),
                found.preview()
            ),
            SchemaProblem::Empty => f.write_str("must not be empty"),
        }
    }
}

/// A schema type in words: `a string`, `a list of string values`.
fn data_type(ty: &DataType) -> String {
    match ty {
        DataType::List(Some(element)) => format!("a list of {element} values"),
        DataType::Integer => "an integer".into(),
        DataType::Any => "any value".into(),
        DataType::Object => "an object".into(),
        other => format!("a {other}"),
    }
}
