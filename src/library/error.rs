//! Every way evaluating an expression can fail, as data; their words are written
//! here and nowhere else. The built-ins, matchers and measures of this layer
//! return a [`RuntimeErrorKind`]; the interpreter (`ir`) adds the operators'
//! kinds and where the failing expression is written, and the evaluator the
//! aggregates' kinds. Each kind keeps the value it found, so a message can show
//! it and a test can match it.

use std::fmt;

use crate::base::diagnostic::{Kind, Words};
use crate::base::value::{Value, ValueError};

#[derive(Debug, Clone, PartialEq)]
pub enum RuntimeErrorKind {
    /// Reading a value: a field of a non-object, a key that cannot be one.
    Value(ValueError),
    // ---- operators (the interpreter) ----
    NotNeedsBool {
        found: Value,
    },
    NegNeedsNumber {
        found: Value,
    },
    /// `and` / `or` on a non-bool.
    LogicNeedsBools {
        op: &'static str,
        found: Value,
    },
    /// A binary operator on operands it has no meaning for.
    CannotApply {
        op: &'static str,
        left: Value,
        right: Value,
    },
    CannotIndex {
        base: Value,
        index: Value,
    },
    IfConditionNotBool {
        found: Value,
    },
    // ---- built-ins ----
    ArgumentType {
        position: usize,
        function: &'static str,
        expected: &'static str,
        found: Value,
    },
    SplitEmptySeparator,
    /// A list built by a function would be longer than [`crate::library::builtins::MAX_LIST`].
    ListTooLong {
        function: &'static str,
        length: f64,
    },
    /// A string built by an expression would be longer than [`crate::library::builtins::MAX_TEXT`].
    TextTooLong {
        function: &'static str,
    },
    JoinNeedsStrings {
        found: Value,
    },
    NumCannotRead {
        found: Value,
    },
    NumCannotConvert {
        found: Value,
    },
    OrderByKeyNotName {
        found: Value,
    },
    OrderByNotObject {
        found: Value,
    },
    OrderByMixedField {
        field: String,
    },
    // ---- ranking measures ----
    GainNotNumber {
        found: Value,
    },
    GainsNotList {
        found: Value,
    },
    BadCutoff {
        found: Value,
    },
    JudgementsNotLevels {
        found: Value,
    },
    JudgementsNotObject {
        found: Value,
    },
    RankingNotList {
        found: Value,
    },
    RankingIdNotString {
        found: Value,
    },
    // ---- page spans ----
    SpanNotObject {
        what: &'static str,
        found: Value,
    },
    SpanFields {
        what: &'static str,
        found: Value,
    },
    SpansNotList {
        what: &'static str,
        found: Value,
    },
    BadTolerance {
        found: Value,
    },
    // ---- matchers ----
    NeedlesNotList {
        found: Value,
    },
    NeedleNotString {
        found: Value,
    },
    // ---- aggregates (the evaluator folds them) ----
    WhereNeedsBool {
        found: Value,
    },
    AggregateNeedsBool {
        found: Value,
    },
    AggregateNeedsNumber {
        found: Value,
    },
    LabelNotScalar {
        found: Value,
    },
    ConfidenceOutOfRange {
        found: f64,
    },
    SliceNotScalar {
        found: Value,
    },
}

impl From<ValueError> for RuntimeErrorKind {
    fn from(error: ValueError) -> Self {
        RuntimeErrorKind::Value(error)
    }
}

/// A value as messages show it: its type, then a short rendering.
struct Typed<'a>(&'a Value);

impl fmt::Display for Typed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.0.type_name(), self.0.preview())
    }
}

impl Kind for RuntimeErrorKind {
    fn code(&self) -> &'static str {
        use RuntimeErrorKind as K;
        match self {
            K::Value(error) => error.code(),
            K::NotNeedsBool { .. } => "not_needs_bool",
            K::NegNeedsNumber { .. } => "neg_needs_number",
            K::LogicNeedsBools { .. } => "logic_needs_bools",
            K::CannotApply { .. } => "cannot_apply",
            K::CannotIndex { .. } => "cannot_index",
            K::IfConditionNotBool { .. } => "if_condition_not_bool",
            K::ArgumentType { .. } => "argument_type",
            K::SplitEmptySeparator => "split_empty_separator",
            K::ListTooLong { .. } => "list_too_long",
            K::TextTooLong { .. } => "text_too_long",
            K::JoinNeedsStrings { .. } => "join_needs_strings",
            K::NumCannotRead { .. } => "num_cannot_read",
            K::NumCannotConvert { .. } => "num_cannot_convert",
            K::OrderByKeyNotName { .. } => "order_by_key_not_name",
            K::OrderByNotObject { .. } => "order_by_not_object",
            K::OrderByMixedField { .. } => "order_by_mixed_field",
            K::GainNotNumber { .. } => "gain_not_number",
            K::GainsNotList { .. } => "gains_not_list",
            K::BadCutoff { .. } => "bad_cutoff",
            K::JudgementsNotLevels { .. } => "judgements_not_levels",
            K::JudgementsNotObject { .. } => "judgements_not_object",
            K::RankingNotList { .. } => "ranking_not_list",
            K::RankingIdNotString { .. } => "ranking_id_not_string",
            K::SpanNotObject { .. } => "span_not_object",
            K::SpanFields { .. } => "span_fields",
            K::SpansNotList { .. } => "spans_not_list",
            K::BadTolerance { .. } => "bad_tolerance",
            K::NeedlesNotList { .. } => "needles_not_list",
            K::NeedleNotString { .. } => "needle_not_string",
            K::WhereNeedsBool { .. } => "where_needs_bool",
            K::AggregateNeedsBool { .. } => "aggregate_needs_bool",
            K::AggregateNeedsNumber { .. } => "aggregate_needs_number",
            K::LabelNotScalar { .. } => "label_not_scalar",
            K::ConfidenceOutOfRange { .. } => "confidence_out_of_range",
            K::SliceNotScalar { .. } => "slice_not_scalar",
        }
    }

    fn describe(&self) -> Words {
        let words = Words::new(self.to_string());
        match self {
            RuntimeErrorKind::ConfidenceOutOfRange { .. } => words
                .help("calibration reads probabilities: divide a percentage by 100, or pass a model's probability rather than a score"),
            _ => words,
        }
    }
}

impl fmt::Display for RuntimeErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use RuntimeErrorKind as K;
        match self {
            K::Value(error) => write!(f, "{error}"),
            K::NotNeedsBool { found } => write!(f, "`not` needs a bool, found {}", Typed(found)),
            K::NegNeedsNumber { found } => write!(f, "`-` needs a number, found {}", Typed(found)),
            K::LogicNeedsBools { op, found } => {
                write!(f, "`{op}` needs bools, found {}", Typed(found))
            }
            K::CannotApply { op, left, right } => write!(
                f,
                "cannot apply `{op}` to {} and {}",
                Typed(left),
                Typed(right)
            ),
            K::CannotIndex { base, index } => {
                write!(f, "cannot index {} with {}", Typed(base), Typed(index))
            }
            K::IfConditionNotBool { found } => write!(
                f,
                "the condition of `if` must be a bool, found {}",
                Typed(found)
            ),
            K::ArgumentType {
                position,
                function,
                expected,
                found,
            } => write!(
                f,
                "argument {position} of `{function}` must be {expected}, found {}",
                Typed(found)
            ),
            K::SplitEmptySeparator => f.write_str("`split` needs a non-empty separator"),
            K::ListTooLong { function, length } => write!(
                f,
                "`{function}` would build a list of {length} elements; the limit is {}",
                crate::library::builtins::MAX_LIST
            ),
            K::TextTooLong { function } => write!(
                f,
                "`{function}` would build a string longer than {} MiB, the limit",
                crate::library::builtins::MAX_TEXT >> 20
            ),
            K::JoinNeedsStrings { found } => {
                write!(f, "`join` needs a list of strings, found {}", Typed(found))
            }
            K::NumCannotRead { found } => {
                write!(
                    f,
                    "`num` cannot read {} as a finite number",
                    found.preview()
                )
            }
            K::NumCannotConvert { found } => {
                write!(f, "`num` cannot convert a {}", found.type_name())
            }
            K::OrderByKeyNotName { found } => write!(
                f,
                "`order_by` keys must be field names, found {}",
                found.preview()
            ),
            K::OrderByNotObject { found } => {
                write!(f, "`order_by` sorts objects, found {}", found.preview())
            }
            K::OrderByMixedField { field } => write!(
                f,
                "`order_by`: field `{field}` must be all numbers or all strings"
            ),
            K::GainNotNumber { found } => {
                write!(f, "gains must be numbers, found {}", Typed(found))
            }
            K::GainsNotList { found } => {
                write!(f, "gains must be a list, found {}", found.type_name())
            }
            K::BadCutoff { found } => write!(
                f,
                "a cutoff must be a whole number ≥ 1, found {}",
                found.preview()
            ),
            K::JudgementsNotLevels { found } => write!(
                f,
                "judgements must be an object of document → level, found {}",
                found.type_name()
            ),
            K::JudgementsNotObject { found } => {
                write!(
                    f,
                    "judgements must be an object, found {}",
                    found.type_name()
                )
            }
            K::RankingNotList { found } => write!(
                f,
                "the ranking must be a list of ids, found {}",
                found.type_name()
            ),
            K::RankingIdNotString { found } => write!(
                f,
                "the ranking must hold string ids, found {}",
                Typed(found)
            ),
            K::SpanNotObject { what, found } => write!(
                f,
                "a {what} must be an object with doc_id, start_page and end_page, found {}",
                found.preview()
            ),
            K::SpanFields { what, found } => write!(
                f,
                "a {what} needs a string doc_id and numeric start_page and end_page, found {}",
                found.preview()
            ),
            K::SpansNotList { what, found } => {
                write!(f, "expected a list of {what}s, found {}", found.type_name())
            }
            K::BadTolerance { found } => write!(
                f,
                "a page tolerance must be a number ≥ 0 (or null for doc-only), found {}",
                found.preview()
            ),
            K::NeedlesNotList { found } => write!(
                f,
                "`needles` must be a list of strings, found {}",
                Typed(found)
            ),
            K::NeedleNotString { found } => {
                write!(f, "`needles` must hold strings, found {}", Typed(found))
            }
            K::WhereNeedsBool { found } => {
                write!(f, "`where` needs a bool, found {}", Typed(found))
            }
            K::AggregateNeedsBool { found } => write!(f, "expected a bool, found {}", Typed(found)),
            K::AggregateNeedsNumber { found } => {
                write!(f, "expected a number, found {}", Typed(found))
            }
            K::LabelNotScalar { found } => write!(
                f,
                "a label must be a string, number or bool, found {}",
                Typed(found)
            ),
            K::ConfidenceOutOfRange { found } => write!(
                f,
                "a confidence must be a probability from 0 to 1, found {}",
                crate::base::value::format_number(*found)
            ),
            K::SliceNotScalar { found } => write!(
                f,
                "a slice value must be a string, number, bool or null, found {}",
                Typed(found)
            ),
        }
    }
}
