//! What each compiler error says: the message, the label at its location and
//! the help, in plain words.

use super::{CompileError, NameScope, OptionProblem};
use crate::base::diagnostic::{Kind, Words};
use crate::base::suggest::{suggestion, suggestion_or};
use crate::base::types::with_article;

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn names(list: &[String]) -> impl Iterator<Item = &str> {
    list.iter().map(String::as_str)
}

impl Kind for CompileError {
    fn code(&self) -> &'static str {
        self.code_name()
    }

    fn describe(&self) -> Words {
        use CompileError as E;
        match self {
            E::UnknownParamOverride { name, known } => {
                Words::new(format!("`--param {name}=…`: the spec has no param `{name}`")).help(
                    suggestion_or(name, names(known), || {
                        if known.is_empty() {
                            "this spec declares no params".into()
                        } else {
                            format!("params: {}", known.join(", "))
                        }
                    }),
                )
            }
            E::BadParamOverride { name, text, message, declared_as } => {
                Words::new(format!("`--param {name}={text}`: {message}"))
                    .label(format!("`{name}` is declared here as {declared_as}"))
            }
            E::LockedParamOverride { name, text } => {
                Words::new(format!("`--param {name}={text}`: `{name}` is locked"))
                    .label(format!("`{name}` is declared here with `locked: true`"))
                    .help("a locked param keeps the spec's value; change it in the spec (and re-freeze its lock)")
            }
            E::NameClash { name, first, second } => {
                Words::new(format!("the name `{name}` is used by a {first} and a {second}"))
                    .help("datasets, fields, matchers and params share one namespace; rename one")
            }
            E::ReservedName { name, what } => {
                let meaning = match *name {
                    "params" => "`params.NAME` names a param",
                    _ => "`baseline.NAME` names a metric's value in the baseline report",
                };
                Words::new(format!("a {what} may not be named `{name}`: {meaning}"))
                    .help(format!("rename the {what}"))
            }
            E::LabelNameTaken { what } => Words::new(format!(
                "a {what} is named `label`, which the `labels:` rules give every item"
            ))
            .help(format!("rename the {what}; `label` holds each item's label")),
            E::DuplicateMetric { name } => Words::new(format!("two metrics are named `{name}`"))
                .help("a cutoff template (`{k}` with `ks`) and another metric give the same name; rename one"),
            E::ParamMetricClash { name } => {
                Words::new(format!("the name `{name}` is used by a param and a metric"))
                    .help("gates see metrics and params by name; rename one")
            }
            E::ItemsNotADataset { name, datasets } => {
                Words::new(format!("`items` names `{name}`, which is not a dataset"))
                    .maybe_help(suggestion(name, names(datasets)))
            }
            E::UnknownName { name, scope, is_item_name, is_metric, candidates } => {
                let help = match scope {
                    NameScope::Metric if *is_item_name => format!(
                        "`{name}` is a per-item value; aggregate it, e.g. `count({name})` or `ratio({name})`"
                    ),
                    NameScope::Gate if *is_item_name => {
                        format!("`{name}` is a per-item value; gates see metrics and params")
                    }
                    NameScope::Item if *is_metric => format!(
                        "`{name}` is a metric; per-item expressions see datasets, fields, matchers and params"
                    ),
                    NameScope::Params => "a severity may only use params".to_string(),
                    _ => suggestion_or(name, names(candidates), || {
                        if candidates.is_empty() {
                            "nothing is defined here yet".to_string()
                        } else {
                            format!("defined here: {}", candidates.join(", "))
                        }
                    }),
                };
                let what = match scope {
                    NameScope::Item => "not a dataset, field, matcher or param",
                    NameScope::Metric | NameScope::Gate => "not a metric or param",
                    NameScope::Params => "not a param",
                };
                Words::new(format!("unknown name `{name}`"))
                    .label(what)
                    .help(help)
            }
            E::UnknownExplicitParam { name, params } => {
                let help = match crate::base::suggest::did_you_mean(name, names(params)) {
                    Some(s) => format!("did you mean `params.{s}`?"),
                    None => format!("params: {}", params.join(", ")),
                };
                Words::new(format!("the spec has no param `{name}`")).help(help)
            }
            E::BaselineOutsideGate => Words::new("`baseline` is only known to gates").help(
                "compare against the baseline in a gate, e.g. `chr >= baseline.chr - 0.02`",
            ),
            E::UnknownBaselineMetric { name, metrics } => {
                let help = match crate::base::suggest::did_you_mean(name, names(metrics)) {
                    Some(s) => format!("did you mean `baseline.{s}`?"),
                    None => "`baseline.NAME` names a metric of this spec".to_string(),
                };
                Words::new(format!("the spec has no metric `{name}`")).help(help)
            }
            E::Syntax { message, text } => {
                let help = if message.contains("levels deep") {
                    "compute part of it in a field or metric of its own"
                } else if text.contains("&&") || text.contains("||") {
                    "write `and` / `or` instead of `&&` / `||`"
                } else if text.contains(" = ") {
                    "compare with `==`"
                } else {
                    "see grammar/README.md for the expression syntax"
                };
                Words::new(format!("syntax error: {message}")).help(help)
            }
            E::FieldOfNonObject { field, base } => {
                Words::new(format!("cannot read field `{field}` of {}", with_article(base)))
            }
            E::BadIndex { base, index } => {
                Words::new(format!("cannot index {} with {}", with_article(base), with_article(index)))
            }
            E::NotNeedsBool { found } => Words::new(format!("`not` needs a bool, found {found}"))
                .help("to test for a missing or empty value use `is_null(x)` or `not truthy(x)`"),
            E::NegNeedsNumber { found } => Words::new(format!("`-` needs a number, found {found}")),
            E::LogicNeedsBools { op, found } => {
                Words::new(format!("`{op}` needs bools, found {found}"))
            }
            E::CannotCompare { left, right, op } => {
                Words::new(format!("cannot compare {left} with {right} using `{op}`"))
            }
            E::InNeedsList { op, found } => Words::new(format!(
                "`{op}` needs a list (or a string) on the right, found {found}"
            )),
            E::CannotAdd { left, right } => Words::new(format!("cannot add {left} and {right}")),
            E::ArithmeticNeedsNumbers { op, found } => {
                Words::new(format!("`{op}` needs numbers, found {found}"))
            }
            E::WhereOnNonAggregate { name } => Words::new(format!(
                "`where` only filters aggregates, and `{name}` is not one"
            )),
            E::UnknownFunction { name, suggestion } => {
                Words::new(format!("unknown function `{name}`")).help(
                    suggestion
                        .clone()
                        .unwrap_or_else(|| "see grammar/README.md for the built-in functions".into()),
                )
            }
            E::IfArity { found } => Words::new(format!(
                "`if` takes 3 arguments (condition, then, else), found {found}"
            )),
            E::IfConditionNotBool { found } => Words::new(format!(
                "the condition of `if` must be a bool, found {found}"
            )),
            E::BuiltinArity { name, min, max, found, example } => {
                let expected = match max {
                    Some(max) if max == min => format!("{max} argument{}", plural(*max)),
                    Some(max) => format!("{min} to {max} arguments"),
                    None => format!("at least {min} argument{}", plural(*min)),
                };
                Words::new(format!("`{name}` takes {expected}, found {found}"))
                .help(format!("example: {example}"))
            }
            E::BuiltinArgType { position, name, expected, found, example } => Words::new(format!(
                "argument {position} of `{name}` must be {expected}, found {found}"
            ))
            .help(format!("example: {example}")),
            E::RunStatScope { name } => {
                Words::new(format!("`{name}` is only allowed in metrics and gates"))
                    .help("it summarises a metric over the runs")
            }
            E::RunStatNeedsMetric { name } => {
                Words::new(format!("`{name}` takes the name of a metric"))
                    .help(format!("example: {name}(precision)"))
            }
            E::RecordsOnlyInMetrics => Words::new("`records(dataset)` is only allowed in metrics"),
            E::RecordsNeedsDataset { datasets } => {
                Words::new("`records` takes the name of a dataset")
                    .help(format!("datasets: {}", datasets.join(", ")))
            }
            E::NestedAggregate { name } => Words::new(format!(
                "aggregate `{name}` cannot be nested inside another aggregate"
            )),
            E::AggregateScope { name, in_gate } => {
                Words::new(format!("aggregate `{name}` is only allowed in metrics")).help(
                    if *in_gate {
                        "define a metric with the aggregate and gate on the metric"
                    } else {
                        "per-item fields see one item at a time; move the aggregate into `metrics:`"
                    },
                )
            }
            E::AggregateArity { name, max, found, example } => Words::new(format!(
                "`{name}` takes {max} argument{}, found {found}",
                plural(*max)
            ))
            .help(format!("example: {example}")),
            E::PercentileLevel => Words::new("the percentile must be a number from 0 to 100"),
            E::EceBins { max } => Words::new(format!(
                "the number of bins must be a whole-number literal from 1 to {max}"
            ))
            .help("e.g. `ece(pred.confidence, pred.label == gold.label, 10)`"),
            E::CorrectNotBool { name, found } => Words::new(format!(
                "`{name}` needs whether each item is correct as a bool, found {found}"
            ))
            .help(format!(
                "compare, e.g. `{name}(pred.confidence, pred.label == gold.label{})`",
                if name == "ece" { ", 10" } else { "" }
            )),
            E::WhereNotBool { found } => Words::new(format!("`where` needs a bool, found {found}")),
            E::CountsNeedCondition { name, found } => Words::new(format!(
                "`{name}` counts items where its argument is true, but it is {found}"
            ))
            .help(format!("write a condition, e.g. `{name}(x > 0)`")),
            E::AggregateNeedsNumber { name, found } => {
                Words::new(format!("`{name}` needs a number, found {found}"))
            }
            E::LabelNotBool { label, found } => Words::new(format!(
                "the condition of label `{label}` must be true or false, found {found}"
            ))
            .help("e.g. `answerable and not refused and hit`"),
            E::UnknownOffenderShow { name, candidates } => Words::new(format!(
                "`offenders.show` names `{name}`, which is not a field or matcher"
            ))
            .maybe_help(suggestion(name, names(candidates))),
            E::OffendersWhenNotBool { found } => Words::new(format!(
                "`offenders.when` must be true or false, found {found}"
            ))
            .help("e.g. `label != \"OK\"`"),
            E::UnknownMatcherKind { kind, kinds } => {
                Words::new(format!("unknown matcher kind `{kind}`")).help(suggestion_or(
                    kind,
                    kinds.iter().copied(),
                    || format!("kinds: {}", kinds.join(", ")),
                ))
            }
            E::MissingMatcherInput { matcher, kind, input } => Words::new(format!(
                "matcher `{matcher}` ({kind}) needs the input `{input}`"
            ))
            .help(format!("add `{input}: <expression>`")),
            E::MatcherInputNotExpression { input, found } => Words::new(format!(
                "input `{input}` must be an expression, found {found}"
            )),
            E::MatcherInputType { input, kind, expected, found } => Words::new(format!(
                "input `{input}` of a {kind} matcher must be {expected}, found {found}"
            )),
            E::MissingMatcherOption { matcher, kind, option } => Words::new(format!(
                "matcher `{matcher}` ({kind}) needs the option `{option}`"
            )),
            E::UnknownMatcherKey { kind, key, known } => {
                Words::new(format!("a {kind} matcher has no key `{key}`")).help(suggestion_or(
                    key,
                    known.iter().copied(),
                    || format!("keys: kind, {}", known.join(", ")),
                ))
            }
            E::MatcherRejected { matcher, message } => {
                Words::new(format!("matcher `{matcher}`: {message}"))
            }
            E::BadMatcherOption { option, problem } => match problem {
                OptionProblem::NotOneOf { choices } => {
                    Words::new(format!("`{option}` must be one of: {}", choices.join(", ")))
                }
                OptionProblem::BadRegex { error } => {
                    Words::new(format!("`{option}` is not a valid regex: {error}"))
                        .help("regexes follow the Rust regex crate's syntax (as Python's `re`, without look-around or backreferences)")
                }
                OptionProblem::Wrong { expected, found } => {
                    Words::new(format!("`{option}` must be {expected}, found {found}"))
                }
            },
            E::MetricNotNumber { name, found } => {
                Words::new(format!("metric `{name}` must be a number, found {found}")).help(
                    "a metric aggregates items, e.g. `ratio(correct where shipped)` or `count(shipped)`",
                )
            }
            E::MixedRuns { name } => Words::new(format!(
                "metric `{name}` mixes per-run values with values across runs"
            ))
            .help("per-run metrics aggregate items; summarise them across runs with `run_mean(metric)`, `run_min`, `run_max` or `run_std`"),
            E::SummaryOfAcross { name } => Words::new(format!(
                "`{name}` is computed across runs, so it has no value per run to summarise"
            ))
            .help("`run_min`, `run_max`, `run_mean` and `run_std` summarise per-run metrics"),
            E::UnknownTradeoffMetric { name, metrics } => {
                Words::new(format!("the spec has no metric `{name}`"))
                    .maybe_help(suggestion(name, names(metrics)))
            }
            E::TradeoffAcross { name } => Words::new(format!(
                "`{name}` is computed across runs; the tradeoff plots per-run metrics"
            )),
            E::Cycle { what, names } => {
                let message = match names.as_slice() {
                    [one] => format!("{what} `{one}` depends on itself"),
                    _ => {
                        let mut path: Vec<&str> = names.iter().map(String::as_str).collect();
                        path.push(&names[0]);
                        format!("{what}s depend on each other in a cycle: {}", path.join(" → "))
                    }
                };
                Words::new(message)
                    .help("break the cycle by computing one of them from the inputs directly")
            }
            E::GateNotBool { name, found } => Words::new(format!(
                "gate `{name}` must be true or false, but its expression is {found}"
            ))
            .help("compare a metric with a threshold, e.g. `precision >= 0.8`"),
            E::UnknownGateMetric { name, metrics } => {
                Words::new(format!("unknown metric `{name}`"))
                    .maybe_help(suggestion(name, names(metrics)))
            }
            E::GateNeedsBetter { metric } => Words::new(format!(
                "the gate on `{metric}` needs to know which direction is better"
            ))
            .help(format!(
                "add `better: higher` (or `lower`) to metric `{metric}` or to this gate"
            )),
            E::NegativeAllowance { change, value } => Words::new(format!(
                "`{change}` must be at least 0, found {value}"
            ))
            .help("it is how far the metric may move in its bad direction; to demand a gain, use `min_gain`"),
            E::GateBoundNotNumber { found } => {
                Words::new(format!("a gate bound must be a number, found {found}"))
                    .help("write a number such as `0.8`, or a param")
            }
            E::BadSeverity { found } => Words::new(format!(
                "a severity must be \"fail\" or \"warn\", this one gives {found}"
            ))
            .help("write `fail`, `warn`, or an expression over params such as `if(strict, \"fail\", \"warn\")`"),
            E::KeepOnLookup { dataset } => Words::new(format!(
                "dataset `{dataset}` is looked up by key, so `duplicates: keep` cannot apply"
            ))
            .help("use `error`, `first` or `last`; `keep` is for the items dataset"),
            E::AllowEmptyOnLookup { dataset } => Words::new(format!(
                "dataset `{dataset}` is looked up by key, so `allow_empty` cannot apply"
            ))
            .help("`allow_empty: true` is for the items dataset; an empty looked-up dataset leaves every item without a record, which the run counts and warns about"),
            E::CheckNotBool { found } => Words::new(format!(
                "a check must be true or false, but this one is {found}"
            )),
            E::Slice(error) => error.words(),
        }
    }
}
