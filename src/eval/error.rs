//! Every error and warning evaluating a plan reports, as data; their words are
//! written here and nowhere else. A site builds an [`EvalError`] (or an
//! [`EvalWarning`]) and places it; an error from a failed evaluation keeps the
//! [`RuntimeError`], whose kind and place the diagnostic carries as its cause.

use std::sync::Arc;

use crate::base::diagnostic::{Diagnostic, Kind, Words};
use crate::base::value::{Key, Value};
use crate::ir::{ExprLocations, RuntimeError};

#[derive(Debug)]
pub enum EvalError {
    // ---- items ----
    ItemNotEvaluated {
        /// The item's key; `None` for an item without one.
        item: Option<Key>,
        /// `file:line` of each record the item joined.
        sources: Vec<String>,
        within: Within,
        error: RuntimeError,
    },
    TooManyItemErrors {
        shown: usize,
    },
    /// A run scored no item, and its items dataset does not say `allow_empty`.
    NothingScored {
        dataset: String,
        path: String,
        /// The run's name, for a spec read as runs.
        run: Option<String>,
    },
    // ---- keys ----
    KeyNotEvaluated {
        dataset: String,
        key: String,
        error: RuntimeError,
    },
    DuplicateKey {
        dataset: String,
        key: Key,
        first_line: u32,
    },
    // ---- runs ----
    /// Two files of a dataset read as runs have one run name.
    RunNamedTwice {
        dataset: String,
        run: String,
        first: String,
        second: String,
        /// Named by `run_name` (from the records) rather than by file name.
        from_records: bool,
    },
    RunsDiffer {
        first: String,
        second: String,
        first_runs: Vec<String>,
        second_runs: Vec<String>,
    },
    RunWithoutRecords {
        dataset: String,
        path: String,
    },
    RunNameNotScalar {
        dataset: String,
        run_name: String,
        found: Value,
    },
    RunNameNotEvaluated {
        dataset: String,
        run_name: String,
        error: RuntimeError,
    },
    // ---- metrics and gates ----
    MetricNotEvaluated {
        metric: String,
        error: RuntimeError,
    },
    GateNotEvaluated {
        gate: String,
        error: RuntimeError,
    },
    // ---- resources ----
    /// A temporary file of a join partitioned to disk (`--max-memory`) could not
    /// be written or read back.
    SpillFailed {
        path: String,
        error: String,
    },
    /// Lines of the items report past the memory kept for them could not be
    /// written to a temporary file under `dir`.
    ItemLinesNotSpilled {
        dir: String,
        error: String,
    },
    /// A join numbers `what` with 32 bits, and there were more.
    JoinTooLarge {
        what: &'static str,
    },
    /// `--join` asked for a join that cannot run this plan.
    JoinNotPossible {
        join: &'static str,
        reason: &'static str,
    },
    /// A partial state's bytes could not be read back.
    StateNotDecoded {
        reason: String,
    },
    /// A partial state of another spec, params or evalspec version.
    StateOfAnotherPlan {
        spec: String,
    },
}

/// Which of an item's values failed to evaluate.
#[derive(Debug)]
pub enum Within {
    /// A field, matcher or the label, by name.
    Derived(String),
    /// An aggregate's argument or filter, by the aggregate's text.
    Aggregate(String),
    /// `offenders.when`, by its text.
    OffendersWhen(String),
    /// A slice's expression, by the slice's name.
    Slice(String),
}

impl EvalError {
    /// The failed evaluation behind this error, if it is one.
    fn runtime(&self) -> Option<&RuntimeError> {
        match self {
            EvalError::ItemNotEvaluated { error, .. }
            | EvalError::KeyNotEvaluated { error, .. }
            | EvalError::RunNameNotEvaluated { error, .. }
            | EvalError::MetricNotEvaluated { error, .. }
            | EvalError::GateNotEvaluated { error, .. } => Some(error),
            _ => None,
        }
    }

    /// The error as a diagnostic, not yet placed; a failed evaluation also says
    /// (without printing it) what failed and where, from the plan's `locations`.
    pub fn report(&self, locations: &ExprLocations) -> Diagnostic {
        let diagnostic = Diagnostic::of(self);
        match self.runtime() {
            Some(error) => diagnostic.caused_by(error.cause(locations)),
            None => diagnostic,
        }
    }
}

impl Kind for EvalError {
    fn code(&self) -> &'static str {
        use EvalError as E;
        match self {
            E::ItemNotEvaluated { .. } => "item_not_evaluated",
            E::TooManyItemErrors { .. } => "too_many_item_errors",
            E::NothingScored { .. } => "nothing_scored",
            E::KeyNotEvaluated { .. } => "key_not_evaluated",
            E::DuplicateKey { .. } => "duplicate_key",
            E::RunNamedTwice { .. } => "run_named_twice",
            E::RunsDiffer { .. } => "runs_differ",
            E::RunWithoutRecords { .. } => "run_without_records",
            E::RunNameNotScalar { .. } => "run_name_not_scalar",
            E::RunNameNotEvaluated { .. } => "run_name_not_evaluated",
            E::MetricNotEvaluated { .. } => "metric_not_evaluated",
            E::GateNotEvaluated { .. } => "gate_not_evaluated",
            E::SpillFailed { .. } => "spill_failed",
            E::ItemLinesNotSpilled { .. } => "item_lines_not_spilled",
            E::JoinTooLarge { .. } => "join_too_large",
            E::JoinNotPossible { .. } => "join_not_possible",
            E::StateNotDecoded { .. } => "state_not_decoded",
            E::StateOfAnotherPlan { .. } => "state_of_another_plan",
        }
    }

    fn describe(&self) -> Words {
        use EvalError as E;
        match self {
            E::ItemNotEvaluated { item, sources, within, error } => {
                let item = item
                    .as_ref()
                    .map_or_else(|| "(no key)".to_string(), |k| format!("`{k}`"));
                // Labels are evaluated as a chain of `if`s: a condition that is
                // not a bool is the label's, not an `if` the user never wrote.
                let what = match (within, error.kind.as_ref()) {
                    (
                        Within::Derived(name),
                        crate::library::error::RuntimeErrorKind::IfConditionNotBool { found },
                    ) if name == "label" => format!(
                        "the condition of a label must be a bool, found {} {}",
                        found.type_name(),
                        found.preview()
                    ),
                    _ => error.to_string(),
                };
                let within = match within {
                    Within::Derived(name) => format!("in `{name}`"),
                    Within::Aggregate(text) => format!("in `{text}`"),
                    Within::OffendersWhen(text) => format!("in `offenders.when` (`{text}`)"),
                    Within::Slice(name) => format!("in slice `{name}`"),
                };
                Words::new(format!(
                    "item {item} ({}): {within}: {what}",
                    sources.join(", ")
                ))
                .help("fix the data, or guard the expression (`??`, `if`, `is_list`, …)")
            }
            E::TooManyItemErrors { shown } => Words::new(format!(
                "stopped after {shown} items could not be evaluated"
            )),
            E::NothingScored {
                dataset,
                path,
                run,
            } => {
                let run = match run {
                    Some(run) => format!(" in run `{run}`"),
                    None => String::new(),
                };
                Words::new(format!(
                    "nothing was scored{run}: the items dataset `{dataset}` has no records (`{path}`)"
                ))
                .help(format!(
                    "give `{dataset}` its records; if a run may have no items, write `allow_empty: true` on dataset `{dataset}`"
                ))
            }
            E::KeyNotEvaluated { dataset, key, error } => Words::new(format!(
                "{dataset}: cannot compute the key `{key}`: {error}"
            ))
            .help("a key must be a string or a number"),
            E::DuplicateKey { dataset, key, first_line } => Words::new(format!(
                "{dataset}: duplicate key `{key}` (first on line {first_line})"
            ))
            .help(format!(
                "keys must be unique; or set `duplicates: first` or `last` on dataset `{dataset}` to keep one"
            )),
            E::RunNamedTwice { dataset, run, first, second, from_records } => Words::new(format!(
                "{dataset}: two files are the run `{run}`: {first} and {second}"
            ))
            .help(if *from_records {
                "each file must be a run of its own: check its `run_name` field"
            } else {
                "runs are named by their file names; rename one, or set `run_name`"
            }),
            E::RunsDiffer { first, second, first_runs, second_runs } => Words::new(format!(
                "datasets `{first}` and `{second}` have different runs: [{}] and [{}]",
                first_runs.join(", "),
                second_runs.join(", ")
            ))
            .help("datasets read as runs are paired by run name; give each the same runs"),
            E::RunWithoutRecords { dataset, path } => Words::new(format!(
                "{dataset}: `{path}` has no records, so its run has no name"
            ))
            .help("name runs by file (`run_name: file`), or give the file its records"),
            E::RunNameNotScalar { dataset, run_name, found } => Words::new(match found {
                Value::Null => format!("{dataset}: the run name `{run_name}` is null (or missing)"),
                found => format!(
                    "{dataset}: the run name `{run_name}` is {}: {}",
                    crate::base::types::with_article(found.type_name()),
                    found.preview()
                ),
            })
            .help("a run's name must be a string or a number"),
            E::RunNameNotEvaluated { dataset, run_name, error } => Words::new(format!(
                "{dataset}: cannot compute the run name `{run_name}`: {error}"
            )),
            E::MetricNotEvaluated { metric, error } => {
                Words::new(format!("metric `{metric}`: {error}"))
            }
            E::GateNotEvaluated { gate, error } => Words::new(format!("gate `{gate}`: {error}")),
            E::SpillFailed { path, error } => Words::new(format!(
                "cannot write or read the temporary file `{path}` of the join partitioned to disk: {error}"
            ))
            .help("point TMPDIR at a disk with room for the projected records, or raise --max-memory"),
            E::ItemLinesNotSpilled { dir, error } => Words::new(format!(
                "cannot write the items report's sorted lines to a temporary file in `{dir}`: {error}"
            ))
            .help("point TMPDIR at a disk with room for items.jsonl, or raise --max-memory"),
            E::JoinTooLarge { what } => Words::new(format!(
                "the join has more {what} than it can number (4,294,967,294)"
            ))
            .help("give a memory budget (--max-memory) so that the join is partitioned to disk, or split the datasets"),
            E::JoinNotPossible { join, reason } => Words::new(format!(
                "--join {join} cannot run this spec: {reason}"
            ))
            .help("the index and partitioned joins pair the items with exactly one other dataset; use --join table or --join auto"),
            E::StateNotDecoded { reason } => Words::new(format!(
                "cannot read a partial state: {reason}"
            ))
            .help("pass the bytes a partial evaluation of this spec encoded, whole"),
            E::StateOfAnotherPlan { spec } => Words::new(format!(
                "a partial state belongs to another spec, other params or another evalspec version than `{spec}`"
            ))
            .help("merge only states evaluated from the same spec, params and evalspec version"),
        }
    }
}

/// What a pass noticed about a dataset that does not stop it; `run` names the
/// run it was noticed in, when there are several.
#[derive(Debug)]
pub enum EvalWarning {
    Keyless {
        run: Option<Arc<str>>,
        dataset: String,
        records: usize,
        key: String,
    },
    Unmatched {
        run: Option<Arc<str>>,
        dataset: String,
        records: usize,
        items: String,
    },
    Missing {
        run: Option<Arc<str>>,
        dataset: String,
        items: usize,
        items_dataset: String,
        /// An inner join skips them; a left join scores them without the record.
        skipped: bool,
    },
    Duplicates {
        run: Option<Arc<str>>,
        dataset: String,
        records: usize,
        kept_last: bool,
    },
    /// A field the plan reads is in no record of the dataset's file.
    FieldInNoRecord {
        run: Option<Arc<str>>,
        dataset: String,
        field: String,
        path: String,
        records: usize,
    },
}

impl Kind for EvalWarning {
    fn code(&self) -> &'static str {
        match self {
            EvalWarning::Keyless { .. } => "keyless_records",
            EvalWarning::Unmatched { .. } => "unmatched_records",
            EvalWarning::Missing { .. } => "missing_records",
            EvalWarning::Duplicates { .. } => "duplicate_records",
            EvalWarning::FieldInNoRecord { .. } => "field_in_no_record",
        }
    }

    fn describe(&self) -> Words {
        let (run, text) = match self {
            EvalWarning::Keyless {
                run,
                dataset,
                records,
                key,
            } => (
                run,
                format!(
                    "{dataset}: {records} record(s) have no key (`{key}` is null) and join nothing"
                ),
            ),
            EvalWarning::Unmatched {
                run,
                dataset,
                records,
                items,
            } => (
                run,
                format!("{dataset}: {records} record(s) match no {items} item"),
            ),
            EvalWarning::Missing {
                run,
                dataset,
                items,
                items_dataset,
                skipped,
            } => {
                let fate = if *skipped {
                    "skipped"
                } else {
                    "scored with it missing"
                };
                (
                    run,
                    format!(
                        "{dataset}: {items} {items_dataset} item(s) have no record here ({fate})"
                    ),
                )
            }
            EvalWarning::Duplicates {
                run,
                dataset,
                records,
                kept_last,
            } => (
                run,
                format!(
                    "{dataset}: {records} record(s) repeat an earlier key (kept the {} one)",
                    if *kept_last { "last" } else { "first" }
                ),
            ),
            EvalWarning::FieldInNoRecord {
                run,
                dataset,
                field,
                path,
                records,
            } => (
                run,
                format!(
                    "{dataset}: field `{field}` is in none of the {records} record(s) of `{path}` (a typo?); it reads as null"
                ),
            ),
        };
        Words::new(match run {
            Some(run) => format!("run `{run}`: {text}"),
            None => text,
        })
    }
}
