//! Every error loading a spec reports, as data; their words are written here and
//! nowhere else. A site builds a [`SpecError`] and places it
//! (`Diagnostic::of(&kind).at(location)`).

use crate::base::diagnostic::{Kind, Words};
use crate::base::suggest::{suggestion, suggestion_or};
use crate::base::value::format_number;
use crate::spec::DataType;

#[derive(Debug)]
pub enum SpecError {
    // ---- files: reading, YAML, `extends` ----
    EmptySpec,
    InvalidYaml {
        message: String,
    },
    CannotReadSpec {
        path: String,
        error: String,
        /// Named by an `extends` (else: the spec on the command line).
        via_extends: bool,
    },
    ExtendsCycle {
        chain: Vec<String>,
    },
    BadExtends {
        found: &'static str,
    },
    ExtendsTooDeep {
        limit: usize,
    },
    RemoveWithoutExtends,
    RemoveUnknown {
        section: &'static str,
        name: String,
        /// The names the base has in that section.
        known: Vec<String>,
    },
    RemoveNotAName {
        found: &'static str,
    },
    // ---- mappings and single values ----
    NotAMapping {
        what: String,
        found: &'static str,
    },
    UnknownKey {
        key: String,
        known: &'static [&'static str],
    },
    MissingTopKey {
        key: String,
    },
    MissingExpr {
        owner: String,
        key: String,
    },
    NotAnExpression {
        found: &'static str,
    },
    BadName {
        text: String,
    },
    NotAString {
        found: &'static str,
    },
    NotANumber {
        found: &'static str,
    },
    NotABool {
        found: &'static str,
    },
    NotAKeyword {
        text: String,
        words: Vec<String>,
    },
    // ---- the top level ----
    BadVersion {
        version: String,
    },
    ItemsUnspecified,
    NoDatasets,
    // ---- params ----
    ParamNoType {
        param: String,
    },
    ParamNoDefault {
        param: String,
    },
    BadParamDefault {
        param: String,
        problem: String,
    },
    // ---- datasets ----
    RunNameWithoutRuns {
        dataset: String,
    },
    PathAndRuns {
        dataset: String,
    },
    DatasetNoKey {
        dataset: String,
    },
    ChecksNotAList {
        found: &'static str,
    },
    CheckIncomplete,
    NotAFieldPath {
        field: String,
    },
    RuleNoType {
        field: String,
    },
    BadRule {
        found: &'static str,
    },
    CsvOptionOnFormat {
        key: &'static str,
        format: &'static str,
    },
    EmptyListSeparator,
    BadDelimiter {
        text: String,
    },
    MinOnNonNumber {
        field: String,
        ty: DataType,
        /// `min` or `max`.
        key: &'static str,
    },
    RuleBoundsCrossed {
        field: String,
        min: f64,
        max: f64,
    },
    UnknownDataType {
        text: String,
    },
    BadRuns {
        found: &'static str,
    },
    // ---- matchers, metrics, labels, offenders ----
    MatcherNoKind {
        matcher: String,
        kinds: &'static [&'static str],
    },
    CutoffWithoutKs {
        metric: String,
        /// Written as a mapping (which lacks `ks`), not as a bare expression.
        is_mapping: bool,
    },
    KsWithoutCutoff {
        metric: String,
    },
    KsNotAList {
        found: &'static str,
    },
    BadCutoff {
        text: String,
    },
    NegativeTolerance {
        value: f64,
    },
    /// `confidence` or `significance` outside (0, 1).
    NotAProbability {
        key: String,
        value: f64,
    },
    /// `significance` on a gate that bounds no change against the baseline.
    SignificanceWithoutChange {
        gate: String,
        expr: bool,
    },
    LabelsNotAList {
        found: &'static str,
    },
    BadLabelRule {
        found: &'static str,
    },
    DuplicateLabel {
        label: String,
    },
    OffendersNoWhen,
    ShowNotAList {
        found: &'static str,
    },
    BadLimit {
        text: String,
    },
    // ---- slices ----
    SliceValuesNotAList {
        found: &'static str,
    },
    BadSliceValue {
        found: &'static str,
    },
    DuplicateSliceValue {
        value: String,
    },
    ByNotSlices {
        found: &'static str,
    },
    SliceTwiceInBy {
        slice: String,
    },
    BadMinItems {
        text: String,
    },
    SliceKeyWithoutBy {
        key: &'static str,
    },
    // ---- gates, tradeoff, reports ----
    GateExprAndMetric {
        gate: String,
    },
    GateNoRule {
        gate: String,
    },
    GateNoBound {
        metric: String,
    },
    TradeoffNoLatency,
    TradeoffNoAccuracy,
    AccuracyNotMetrics {
        found: &'static str,
    },
    ReportsNotAList {
        found: &'static str,
    },
    ReportKind,
}

impl Kind for SpecError {
    fn code(&self) -> &'static str {
        use SpecError as E;
        match self {
            E::EmptySpec => "empty_spec",
            E::InvalidYaml { .. } => "invalid_yaml",
            E::CannotReadSpec { .. } => "cannot_read_spec",
            E::ExtendsCycle { .. } => "extends_cycle",
            E::BadExtends { .. } => "bad_extends",
            E::ExtendsTooDeep { .. } => "extends_too_deep",
            E::RemoveWithoutExtends => "remove_without_extends",
            E::RemoveUnknown { .. } => "remove_unknown",
            E::RemoveNotAName { .. } => "remove_not_a_name",
            E::NotAMapping { .. } => "not_a_mapping",
            E::UnknownKey { .. } => "unknown_key",
            E::MissingTopKey { .. } => "missing_top_key",
            E::MissingExpr { .. } => "missing_expr",
            E::NotAnExpression { .. } => "not_an_expression",
            E::BadName { .. } => "bad_name",
            E::NotAString { .. } => "not_a_string",
            E::NotANumber { .. } => "not_a_number",
            E::NotABool { .. } => "not_a_bool",
            E::NotAKeyword { .. } => "not_a_keyword",
            E::BadVersion { .. } => "bad_version",
            E::ItemsUnspecified => "items_unspecified",
            E::NoDatasets => "no_datasets",
            E::ParamNoType { .. } => "param_no_type",
            E::ParamNoDefault { .. } => "param_no_default",
            E::BadParamDefault { .. } => "bad_param_default",
            E::RunNameWithoutRuns { .. } => "run_name_without_runs",
            E::PathAndRuns { .. } => "path_and_runs",
            E::DatasetNoKey { .. } => "dataset_no_key",
            E::ChecksNotAList { .. } => "checks_not_a_list",
            E::CheckIncomplete => "check_incomplete",
            E::NotAFieldPath { .. } => "not_a_field_path",
            E::RuleNoType { .. } => "rule_no_type",
            E::BadRule { .. } => "bad_rule",
            E::CsvOptionOnFormat { .. } => "csv_option_on_format",
            E::EmptyListSeparator => "empty_list_separator",
            E::BadDelimiter { .. } => "bad_delimiter",
            E::MinOnNonNumber { .. } => "min_on_non_number",
            E::RuleBoundsCrossed { .. } => "rule_bounds_crossed",
            E::UnknownDataType { .. } => "unknown_data_type",
            E::BadRuns { .. } => "bad_runs",
            E::MatcherNoKind { .. } => "matcher_no_kind",
            E::CutoffWithoutKs { .. } => "cutoff_without_ks",
            E::KsWithoutCutoff { .. } => "ks_without_cutoff",
            E::KsNotAList { .. } => "ks_not_a_list",
            E::BadCutoff { .. } => "bad_cutoff",
            E::NegativeTolerance { .. } => "negative_tolerance",
            E::NotAProbability { .. } => "not_a_probability",
            E::SignificanceWithoutChange { .. } => "significance_without_change",
            E::LabelsNotAList { .. } => "labels_not_a_list",
            E::BadLabelRule { .. } => "bad_label_rule",
            E::DuplicateLabel { .. } => "duplicate_label",
            E::OffendersNoWhen => "offenders_no_when",
            E::ShowNotAList { .. } => "show_not_a_list",
            E::BadLimit { .. } => "bad_limit",
            E::SliceValuesNotAList { .. } => "slice_values_not_a_list",
            E::BadSliceValue { .. } => "bad_slice_value",
            E::DuplicateSliceValue { .. } => "duplicate_slice_value",
            E::ByNotSlices { .. } => "by_not_slices",
            E::SliceTwiceInBy { .. } => "slice_twice_in_by",
            E::BadMinItems { .. } => "bad_min_items",
            E::SliceKeyWithoutBy { .. } => "slice_key_without_by",
            E::GateExprAndMetric { .. } => "gate_expr_and_metric",
            E::GateNoRule { .. } => "gate_no_rule",
            E::GateNoBound { .. } => "gate_no_bound",
            E::TradeoffNoLatency => "tradeoff_no_latency",
            E::TradeoffNoAccuracy => "tradeoff_no_accuracy",
            E::AccuracyNotMetrics { .. } => "accuracy_not_metrics",
            E::ReportsNotAList { .. } => "reports_not_a_list",
            E::ReportKind => "report_kind",
        }
    }

    fn describe(&self) -> Words {
        use SpecError as E;
        match self {
            E::EmptySpec => Words::new("the spec file is empty")
                .help("start from `evalspec init` or a preset in specs/"),
            E::InvalidYaml { message } => Words::new(format!("invalid YAML: {message}"))
                .maybe_help(message.contains("duplicate mapping key").then(|| {
                    "each key may appear once per mapping; remove or rename the repeated one".into()
                })),
            E::CannotReadSpec { path, error, via_extends } => {
                Words::new(format!("cannot read spec `{path}`: {error}")).help(if error.contains("not UTF-8") {
                    "save the spec as UTF-8 text"
                } else if *via_extends {
                    "`extends` is a path relative to the spec that names it"
                } else {
                    "check the path; specs are YAML files such as specs/rag-precision.yaml"
                })
            }
            E::ExtendsCycle { chain } => Words::new(format!(
                "`extends` goes round in a circle: {}",
                chain.join(" → ")
            ))
            .help("a spec may not extend itself, directly or through its bases"),
            E::BadExtends { found } => Words::new(format!(
                "`extends` must be the path of a spec, found {found}"
            ))
            .help("e.g. `extends: ../release-1.4/rag-precision.yaml`"),
            E::ExtendsTooDeep { limit } => Words::new(format!(
                "`extends` goes more than {limit} specs deep"
            ))
            .help("a release overlay extends a base, which may extend another: keep the chain short"),
            E::RemoveWithoutExtends => Words::new("`remove` needs a base spec to remove from")
                .label("this spec has no `extends`")
                .help("add `extends: BASE.yaml`, or delete the entries from this spec itself"),
            E::RemoveUnknown { section, name, known } => {
                let what = section.trim_end_matches('s');
                Words::new(format!("`remove`: the base spec has no {what} `{name}`"))
                    .label(format!("not a {what} of the base"))
                    .help(suggestion_or(name, known.iter().map(String::as_str), || {
                        if known.is_empty() {
                            format!("the base spec has no {section}")
                        } else {
                            format!("its {section}: {}", known.join(", "))
                        }
                    }))
            }
            E::RemoveNotAName { found } => Words::new(format!(
                "`remove` lists names, found {found}"
            ))
            .help("e.g. `remove: {gates: [scu], metrics: [scu_violations], reports: [junit]}`"),
            E::NotAMapping { what, found } => {
                Words::new(format!("{what} must be a mapping, found {found}"))
            }
            // Every key evalspec knows is ASCII: a key with anything else is shown
            // escaped, or `thrеshold` (a Cyrillic е) would read as `threshold`.
            E::UnknownKey { key, known } => Words::new(format!("unknown key `{}`", ascii_visible(key)))
                .label("not a key here")
                .help(suggestion_or(key, known.iter().copied(), || {
                    format!("known keys: {}", known.join(", "))
                })),
            E::MissingTopKey { key } => Words::new(format!("the spec has no `{key}`"))
                .help(format!("add a top-level `{key}:`")),
            E::MissingExpr { owner, key } => Words::new(format!("`{owner}` has no `{key}`"))
                .help(format!("add `{key}: …` with the expression")),
            E::NotAnExpression { found } => Words::new(format!(
                "expected an expression, found {found}"
            ))
            .help("write the expression as a string; quote it if it starts with `[` or contains `: `"),
            E::BadName { text } => Words::new(format!("`{text}` is not a valid name"))
                .help("names start with a letter or `_` and contain letters, digits and `_`; keywords are reserved"),
            E::NotAString { found } => Words::new(format!("expected a string, found {found}")),
            E::NotANumber { found } => Words::new(format!("expected a number, found {found}")),
            E::NotABool { found } => Words::new(format!("expected true or false, found {found}")),
            E::NotAKeyword { text, words } => {
                Words::new(format!("`{text}` is not one of: {}", words.join(", ")))
                    .maybe_help(suggestion(text, words.iter().map(String::as_str)))
            }
            E::BadVersion { version } => Words::new(format!(
                "version `{version}` is not a semantic version"
            ))
            .help("write MAJOR.MINOR.PATCH, e.g. `1.4.0`"),
            E::ItemsUnspecified => {
                Words::new("the spec does not say which dataset holds the items")
                    .help("add `items: NAME`, naming the dataset with one record per scored item")
            }
            E::NoDatasets => Words::new("the spec declares no datasets").help(
                "add a `datasets:` section, e.g. `gold: {format: jsonl, path: gold.jsonl, key: qid}`",
            ),
            E::ParamNoType { param } => Words::new(format!("param `{param}` has no `type`"))
                .help("add `type: number`, `integer`, `string`, `bool` or `list`"),
            E::ParamNoDefault { param } => Words::new(format!("param `{param}` has no `default`"))
                .help("every param needs a default; `--param NAME=VALUE` overrides it"),
            E::BadParamDefault { param, problem } => {
                Words::new(format!("default of param `{param}`: {problem}"))
            }
            E::RunNameWithoutRuns { dataset } => Words::new(format!(
                "dataset `{dataset}` has `run_name` but no `runs`"
            ))
            .help("`run_name` names each file of `runs: [...]`; a single `path` is one run"),
            E::PathAndRuns { dataset } => Words::new(format!(
                "dataset `{dataset}` has both `path` and `runs`"
            ))
            .help("give one file as `path`, or several (each a run) as `runs`"),
            E::DatasetNoKey { dataset } => Words::new(format!("dataset `{dataset}` has no `key`"))
                .help("add `key: qid` (an expression over the record's fields that identifies it)"),
            E::ChecksNotAList { found } => Words::new(format!(
                "`checks` must be a list, found {found}"
            ))
            .help("write `checks: [{expr: \"len(gold) > 0\", message: \"gold is empty\"}]`"),
            E::CheckIncomplete => Words::new("a check needs `expr` and `message`"),
            E::NotAFieldPath { field } => Words::new(format!("`{field}` is not a field path"))
                .help("write a field name, names joined by dots (`answer_json.claim`), or `list[].field` for each element"),
            E::RuleNoType { field } => Words::new(format!("the rule for `{field}` has no `type`")),
            E::BadRule { found } => Words::new(format!(
                "a schema rule must be a type or a mapping, found {found}"
            ))
            .help("write `field: string`, `field: list<string>?` or `field: {type: string, nonempty: true}`"),
            E::CsvOptionOnFormat { key, format } => Words::new(format!(
                "`{key}` applies to csv and tsv datasets, not {format}"
            ))
            .help("remove it, or set `format: csv`"),
            E::EmptyListSeparator => Words::new("`list_separator` cannot be empty")
                .help("e.g. `list_separator: \"|\"`; without it a list cell is a JSON array"),
            E::BadDelimiter { text } => Words::new(format!(
                "a delimiter is one ASCII character other than a quote or a line break, found {text:?}"
            ))
            .help("e.g. `delimiter: \";\"`, or `format: tsv` for tabs"),
            E::MinOnNonNumber { field, ty, key } => Words::new(format!(
                "`{key}` bounds numbers, but field `{field}` is {ty}"
            ))
            .help(format!("declare the field `number` or `integer`, or remove `{key}`")),
            E::RuleBoundsCrossed { field, min, max } => Words::new(format!(
                "field `{field}` has `min` {} above `max` {}, so no value could pass",
                format_number(*min),
                format_number(*max)
            ))
            .help("swap the bounds, or fix the one that is wrong"),
            E::UnknownDataType { text } => Words::new(format!("unknown data type `{text}`"))
                .help("types: any, string, bool, number, integer, object, list, list<T>; add `?` for optional"),
            E::BadRuns { found } => Words::new(format!(
                "`runs` must be a file, folder or glob, or a list of them, found {found}"
            ))
            .help("e.g. `runs: runs/seed-*.jsonl`"),
            E::MatcherNoKind { matcher, kinds } => {
                Words::new(format!("matcher `{matcher}` has no `kind`"))
                    .help(format!("kinds: {}", kinds.join(", ")))
            }
            E::CutoffWithoutKs { metric, is_mapping } => Words::new(format!(
                "metric `{metric}` names a cutoff `{{k}}` but gives no `ks`"
            ))
            .help(if *is_mapping {
                "add `ks: [5, 10]`: one metric per cutoff"
            } else {
                "write it as a mapping with `expr:` and `ks: [5, 10]`"
            }),
            E::KsWithoutCutoff { metric } => Words::new(format!(
                "metric `{metric}` has `ks` but its name has no `{{k}}`"
            ))
            .help(format!(
                "name it e.g. `{metric}_{{k}}`, so that each cutoff gets its own metric"
            )),
            E::KsNotAList { found } => {
                Words::new(format!("`ks` must be a list of cutoffs, found {found}"))
            }
            E::BadCutoff { text } => Words::new(format!(
                "a cutoff must be a distinct whole number ≥ 1, found `{text}`"
            )),
            E::NegativeTolerance { value } => Words::new(format!(
                "a tolerance cannot be negative, found {value}"
            ))
            .help("the tolerance is how far the metric may move in its bad direction, e.g. `0.01`"),
            E::NotAProbability { key, value } => Words::new(format!(
                "`{key}` must be a number between 0 and 1 (exclusive), found {}",
                format_number(*value)
            ))
            .help(if key == "confidence" {
                "e.g. `confidence: 0.9` for 90% intervals"
            } else {
                "e.g. `significance: 0.05`: a change fails only when p < 0.05"
            }),
            E::SignificanceWithoutChange { gate, expr } => Words::new(format!(
                "the gate `{gate}` has `significance` but bounds no change against the baseline"
            ))
            .help(if *expr {
                "`significance` needs a shaped gate: `metric:` with `max_drop`, `max_drop_relative`, `min_gain` or `min_gain_relative`"
            } else {
                "add `max_drop:` (or another change bound), or remove `significance`"
            }),
            E::LabelsNotAList { found } => Words::new(format!("`labels` must be a list, found {found}"))
                .help("write one `- LABEL: condition` per line; the first label whose condition holds is the item's"),
            E::BadLabelRule { found } => Words::new(format!(
                "a label rule must be one `LABEL: condition` pair, found {found}"
            ))
            .help("e.g. `- HALLUCINATION: not answerable and not refused`"),
            E::DuplicateLabel { label } => Words::new(format!("the label `{label}` has two rules"))
                .help("join the conditions with `or` in one rule"),
            E::OffendersNoWhen => Words::new("`offenders` has no `when`")
                .help("add `when: label != \"OK\"` (or any per-item condition)"),
            E::ShowNotAList { found } => {
                Words::new(format!("`show` must be a list of fields, found {found}"))
            }
            E::BadLimit { text } => Words::new(format!(
                "`limit` must be a whole number ≥ 1, found `{text}`"
            )),
            E::SliceValuesNotAList { found } => Words::new(format!(
                "`values` must be a list of the slice's expected values, found {found}"
            ))
            .help("e.g. `values: [billing, shipping, refunds]`"),
            E::BadSliceValue { found } => Words::new(format!(
                "a slice value must be a string, number, bool or null, found {found}"
            )),
            E::DuplicateSliceValue { value } => {
                Words::new(format!("slice value `{value}` is listed twice"))
                    .help("values with the same text are one slice: `1` and `\"1\"` are the same")
            }
            E::ByNotSlices { found } => Words::new(format!(
                "`by` must name a slice or a list of slices, found {found}"
            ))
            .help("e.g. `by: category` or `by: [category, intent]`, naming entries of `slices:`"),
            E::SliceTwiceInBy { slice } => {
                Words::new(format!("slice `{slice}` is named twice in `by`"))
            }
            E::BadMinItems { text } => Words::new(format!(
                "`min_items` must be a whole number ≥ 1, found `{text}`"
            )),
            E::SliceKeyWithoutBy { key } => Words::new(format!(
                "`{key}` applies only to a gate with `by:`"
            ))
            .help("add `by: SLICE` to gate every value of a slice, or remove this key"),
            E::GateExprAndMetric { gate } => Words::new(format!(
                "gate `{gate}` has both `expr` and `metric`"
            ))
            .help("write either an expression (`expr:`) or a metric with thresholds (`metric:`, `threshold:`, `max_drop:`, …)"),
            E::GateNoRule { gate } => Words::new(format!(
                "gate `{gate}` has neither `expr` nor `metric`"
            ))
            .help("add `expr: precision >= 0.8`, or `metric: precision` with `threshold: 0.8`"),
            E::GateNoBound { metric } => Words::new(format!("the gate on `{metric}` sets no bound"))
                .help("add `threshold:`, `warn_threshold:`, `max_drop:`, `max_drop_relative:`, `min_gain:` or `min_gain_relative:`"),
            E::TradeoffNoLatency => Words::new("`tradeoff` has no `latency`")
                .help("add `latency: p95_latency_ms`, the metric on the curve's x axis"),
            E::TradeoffNoAccuracy => Words::new("`tradeoff` has no `accuracy`")
                .help("add `accuracy: [precision, chr]`, the metrics on the y axis"),
            E::AccuracyNotMetrics { found } => Words::new(format!(
                "`accuracy` must be a metric or a list of metrics, found {found}"
            )),
            E::ReportsNotAList { found } => Words::new(format!(
                "`reports` must be a list, found {found}"
            ))
            .help("e.g. `reports: [markdown, junit, {template: report.md.j2, path: report.md}]`"),
            E::ReportKind => Words::new("a report needs exactly one of `format` and `template`")
                .help("e.g. `{format: junit, path: gates.xml}` or `{template: report.md.j2}`"),
        }
    }
}

/// `key` with every character outside printable ASCII shown as `\u{435}`.
fn ascii_visible(key: &str) -> String {
    key.chars()
        .map(|c| match c {
            ' '..='~' => c.to_string(),
            c => c.escape_unicode().to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    /// The codes of the errors loading `text` (YAML, written as spec.yaml) reports.
    fn codes(text: &str) -> Vec<&'static str> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spec.yaml");
        std::fs::write(&path, text).unwrap();
        match crate::spec::load(&path) {
            Ok(_) => Vec::new(),
            Err(errors) => errors.iter().map(|e| e.code).collect(),
        }
    }

    const DATASETS: &str = "datasets:\n  gold: {format: jsonl, path: g.jsonl, key: id}\n";

    #[test]
    fn errors_are_kinds_that_tests_can_match() {
        let ok = format!("name: t\nversion: 1.0.0\n{DATASETS}");
        assert_eq!(codes(&ok), Vec::<&str>::new());
        assert_eq!(codes(&format!("{ok}metrcs: {{}}\n")), ["unknown_key"]);
        assert_eq!(
            codes(&format!("name: t\nversion: v1.0.0\n{DATASETS}")),
            ["bad_version"]
        );
        assert_eq!(codes(&format!("name: t\n{DATASETS}")), ["missing_top_key"]);
        assert_eq!(codes("name: t\nversion: 1.0.0\n"), ["no_datasets"]);
        assert_eq!(codes("  \n"), ["empty_spec"]);
        assert_eq!(codes("a: 1\na: 2\n"), ["invalid_yaml"]);
        assert_eq!(
            codes(&format!(
                "{ok}gates:\n  g: {{metric: m}}\nmetrics:\n  m_{{k}}: ratio(x)\n"
            )),
            ["cutoff_without_ks", "gate_no_bound"]
        );
        assert_eq!(
            codes("name: t\nversion: 1.0.0\ndatasets:\n  gold: {format: jsnl, path: g.jsonl}\n"),
            // No spurious `no_datasets`: the dataset that failed is reported already.
            ["not_a_keyword", "dataset_no_key"]
        );
    }

    #[test]
    fn the_unknown_key_suggests_the_closest_known_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spec.yaml");
        let text = format!("name: t\nversion: 1.0.0\n{DATASETS}metrcs: {{}}\n");
        std::fs::write(&path, text).unwrap();
        let errors = crate::spec::load(&path).unwrap_err();
        assert_eq!(errors[0].code, "unknown_key");
        let top_keys = crate::spec::load::TOP_KEYS.iter().copied();
        assert_eq!(errors[0].help, super::suggestion("metrcs", top_keys));
        assert!(errors[0].help.is_some());
    }

    #[test]
    fn extends_errors_are_kinds() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.yaml");
        let b = dir.path().join("b.yaml");
        std::fs::write(&a, "extends: b.yaml\n").unwrap();
        std::fs::write(&b, "extends: a.yaml\n").unwrap();
        let code = |path: &std::path::Path| crate::spec::load(path).unwrap_err()[0].code;
        assert_eq!(code(&a), "extends_cycle");
        assert_eq!(code(&dir.path().join("missing.yaml")), "cannot_read_spec");
        std::fs::write(&a, "extends: [b.yaml]\n").unwrap();
        assert_eq!(code(&a), "bad_extends");
    }
}
