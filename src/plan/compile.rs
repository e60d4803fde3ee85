//! Spec → plan: parse every expression, resolve names to slots, check types, order
//! fields and metrics by their dependencies, and work out what each dataset must
//! read. All errors of the spec are collected before giving up.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::builtins::{self, Builtin};
use crate::diagnostic::{Diagnostic, Location};
use crate::matchers::{self, Matcher, OptionDefault, OptionKind, OptionValue};
use crate::params;
use crate::plan::*;
use crate::report::{self as reports, PriorRun};
use crate::spec::yaml::NodeKind;
use crate::spec::{
    self, Better, ExprText, GateRuleDecl, GateShapeDecl, ParamType, ReportFormat, ReportKind,
    SeveritySpec, Spec,
};
use crate::suggest::did_you_mean;
use crate::syntax::{self, BinaryOp, Expr, ExprKind, Span, UnaryOp};
use crate::types::Type;
use crate::value::Value;

/// Values given on the command line.
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    pub params: Vec<(String, String)>,
    pub datasets: Vec<(String, PathBuf)>,
    /// `--format`: reports written besides the spec's own.
    pub formats: Vec<ReportFormat>,
    /// `--baseline`: the prior run gates compare against.
    pub baseline: Option<PathBuf>,
}

/// The name under which the `labels:` rules put each item's label.
pub const LABEL: &str = "label";

/// `records(dataset)`: a metric-scope count of a dataset's records.
const RECORDS: &str = "records";

/// Functions that fold items into one value (they accept `where`).
pub const AGGREGATES: &[&str] = &[
    "count",
    "sum",
    "mean",
    "min",
    "max",
    "ratio",
    "p50",
    "p95",
    "p99",
    "percentile",
    "kappa",
    "agreement",
    "stability",
];

pub fn compile(spec: &Spec, overrides: &Overrides) -> Result<Plan, Vec<Diagnostic>> {
    let mut compiler = Compiler::new(spec);
    compiler.params(overrides);
    compiler.check_names();
    let derived = compiler.derived();
    let offenders = compiler.offenders();
    let metrics = compiler.metrics();
    let gates = compiler.gates();
    let tradeoff = compiler.tradeoff();
    let datasets = compiler.datasets(overrides);
    let (reports, report_env, template_dirs) = compiler.reports(overrides);
    let baseline = overrides.baseline.as_ref().and_then(|path| {
        PriorRun::load(path)
            .map_err(|d| compiler.errors.push(d))
            .ok()
    });
    if !compiler.errors.is_empty() {
        return Err(compiler.errors);
    }
    let metric_order = compiler.metric_order.clone();
    let mut plan = compiler.link(derived, metrics, gates, datasets, offenders);
    plan.tradeoff = tradeoff.map(|t| Tradeoff {
        latency: metric_order[t.latency],
        accuracy: t.accuracy.iter().map(|&m| metric_order[m]).collect(),
    });
    plan.keep_items = reports.iter().any(|(_, uses_items)| *uses_items);
    plan.reports = reports.into_iter().map(|(r, _)| r).collect();
    plan.report_env = report_env;
    plan.template_dirs = template_dirs;
    plan.baseline = baseline;
    Ok(plan)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// A dataset's key: bare names are the record's own fields.
    Record(usize),
    /// Per-item fields and matchers, and aggregate arguments.
    Item {
        in_aggregate: bool,
    },
    Metric,
    Gate,
    /// Only params: severities.
    Params,
}

/// What one expression refers to besides slots: the fields or metrics it depends on.
struct ExprCtx<'a> {
    text: &'a ExprText,
    deps: Vec<usize>,
}

struct Compiler<'s> {
    spec: &'s Spec,
    errors: Vec<Diagnostic>,
    params: Vec<ParamValue>,
    /// Fields, then matchers, as declared: the namespace of per-item values.
    derived_names: Vec<String>,
    aggregates: Vec<Aggregate>,
    /// Declaration index → position in dependency order, once known.
    derived_order: Vec<usize>,
    metric_order: Vec<usize>,
    /// Metric types by declaration index, once compiled (for gates).
    metric_types: Vec<Type>,
    /// By declaration index: computed across runs rather than per run.
    metric_across: Vec<bool>,
    /// While compiling a metric expanded from `ks`: the cutoff that `k` names.
    cutoff: Option<u32>,
}

struct DerivedDecl {
    derived: Derived,
    deps: Vec<usize>,
}

struct MetricDecl {
    metric: MetricPlan,
    deps: Vec<usize>,
}

impl<'s> Compiler<'s> {
    fn new(spec: &'s Spec) -> Self {
        let derived_names = spec
            .fields
            .iter()
            .map(|f| f.name.text.clone())
            .chain(spec.matchers.iter().map(|m| m.name.text.clone()))
            .chain((!spec.labels.is_empty()).then(|| LABEL.to_string()))
            .collect();
        Self {
            spec,
            errors: Vec::new(),
            params: Vec::new(),
            derived_names,
            aggregates: Vec::new(),
            derived_order: Vec::new(),
            metric_order: Vec::new(),
            metric_types: Vec::new(),
            metric_across: Vec::new(),
            cutoff: None,
        }
    }

    fn locate_name(&self, name: &spec::Name) -> Location {
        name.node.location().with_key_path(&name.key_path)
    }

    fn params(&mut self, overrides: &Overrides) {
        self.params = self
            .spec
            .params
            .iter()
            .map(|p| ParamValue {
                name: p.name.text.clone(),
                ty: p.ty,
                value: p.default.clone(),
                overridden: false,
            })
            .collect();
        for (name, text) in &overrides.params {
            let Some(index) = self.spec.params.iter().position(|p| &p.name.text == name) else {
                let known: Vec<&str> = self
                    .spec
                    .params
                    .iter()
                    .map(|p| p.name.text.as_str())
                    .collect();
                let mut d = Diagnostic::error(format!(
                    "`--param {name}=…`: the spec has no param `{name}`"
                ));
                d = match did_you_mean(name, known.iter().copied()) {
                    Some(s) => d.help(format!("did you mean `{s}`?")),
                    None if known.is_empty() => d.help("this spec declares no params"),
                    None => d.help(format!("params: {}", known.join(", "))),
                };
                self.errors.push(d);
                continue;
            };
            let decl = &self.spec.params[index];
            let parsed = params::parse_cli(decl.ty, text)
                .and_then(|v| spec::check_param_range(&v, decl.min, decl.max).map(|()| v));
            match parsed {
                Ok(value) => {
                    self.params[index].value = value;
                    self.params[index].overridden = true;
                }
                Err(message) => self.errors.push(
                    Diagnostic::error(format!("`--param {name}={text}`: {message}"))
                        .at(self.locate_name(&decl.name))
                        .label(format!(
                            "`{name}` is declared here as {}",
                            decl.ty.keyword()
                        )),
                ),
            }
        }
    }

    /// Per-item names (datasets, fields, matchers) and params share one namespace.
    fn check_names(&mut self) {
        let mut seen: Vec<(&str, &'static str)> = Vec::new();
        let spec = self.spec;
        let names = spec
            .datasets
            .iter()
            .map(|d| (&d.name, "dataset"))
            .chain(spec.fields.iter().map(|f| (&f.name, "field")))
            .chain(spec.matchers.iter().map(|m| (&m.name, "matcher")))
            .chain(spec.params.iter().map(|p| (&p.name, "param")));
        for (name, what) in names {
            if let Some((_, other)) = seen.iter().find(|(n, _)| *n == name.text) {
                self.errors.push(
                    Diagnostic::error(format!(
                        "the name `{}` is used by a {other} and a {what}",
                        name.text
                    ))
                    .at(self.locate_name(name))
                    .help("datasets, fields, matchers and params share one namespace; rename one"),
                );
            } else {
                seen.push((&name.text, what));
            }
        }
        if let (Some(first), Some((_, what))) =
            (spec.labels.first(), seen.iter().find(|(n, _)| *n == LABEL))
        {
            self.errors.push(
                Diagnostic::error(format!(
                    "a {what} is named `{LABEL}`, which the `labels:` rules give every item"
                ))
                .at(self.locate_name(&first.label))
                .help(format!(
                    "rename the {what}; `{LABEL}` holds each item's label"
                )),
            );
        }
        for (i, metric) in spec.metrics.iter().enumerate() {
            if spec.metrics[..i]
                .iter()
                .any(|m| m.name.text == metric.name.text)
            {
                self.errors.push(
                    Diagnostic::error(format!("two metrics are named `{}`", metric.name.text))
                        .at(self.locate_name(&metric.name))
                        .help("a cutoff template (`{k}` with `ks`) and another metric give the same name; rename one"),
                );
            }
            if spec.params.iter().any(|p| p.name.text == metric.name.text) {
                self.errors.push(
                    Diagnostic::error(format!(
                        "the name `{}` is used by a param and a metric",
                        metric.name.text
                    ))
                    .at(self.locate_name(&metric.name))
                    .help("gates see metrics and params by name; rename one"),
                );
            }
        }
        if !spec.datasets.iter().any(|d| d.name.text == spec.items.text) {
            let names: Vec<&str> = spec.datasets.iter().map(|d| d.name.text.as_str()).collect();
            let mut d = Diagnostic::error(format!(
                "`items` names `{}`, which is not a dataset",
                spec.items.text
            ))
            .at(self.locate_name(&spec.items));
            if let Some(s) = did_you_mean(&spec.items.text, names.iter().copied()) {
                d = d.help(format!("did you mean `{s}`?"));
            }
            self.errors.push(d);
        }
    }

    // ---- per-item values ----------------------------------------------------------

    fn derived(&mut self) -> Vec<Derived> {
        let spec = self.spec;
        let mut decls: Vec<Option<DerivedDecl>> = Vec::new();
        for field in &spec.fields {
            let decl = self
                .compile_expr(
                    &field.expr,
                    Scope::Item {
                        in_aggregate: false,
                    },
                )
                .map(|(op, ty, deps)| DerivedDecl {
                    derived: Derived {
                        name: field.name.text.clone(),
                        kind: DerivedKind::Field,
                        op,
                        ty,
                        text: field.expr.text.clone(),
                        at: self.locate_name(&field.name),
                    },
                    deps,
                });
            decls.push(decl);
        }
        for matcher in &spec.matchers {
            let decl = self.matcher(matcher);
            decls.push(decl);
        }
        if !spec.labels.is_empty() {
            decls.push(self.labels());
        }
        let names = self.derived_names.clone();
        let deps: Vec<Vec<usize>> = decls
            .iter()
            .map(|d| d.as_ref().map_or_else(Vec::new, |d| d.deps.clone()))
            .collect();
        let order =
            self.order_by_dependencies(&names, &deps, "field", |this, i| this.derived_location(i));
        let Some(order) = order else {
            return Vec::new();
        };
        if decls.iter().any(Option::is_none) {
            return Vec::new();
        }
        let mut decls: Vec<Option<Derived>> =
            decls.into_iter().map(|d| d.map(|d| d.derived)).collect();
        self.derived_order = inverse(&order);
        order
            .iter()
            .map(|&i| decls[i].take().expect("each derived value is placed once"))
            .collect()
    }

    fn derived_location(&self, index: usize) -> Location {
        let fields = self.spec.fields.len();
        let matchers = self.spec.matchers.len();
        if index < fields {
            self.locate_name(&self.spec.fields[index].name)
        } else if index < fields + matchers {
            self.locate_name(&self.spec.matchers[index - fields].name)
        } else {
            self.locate_name(&self.spec.labels[0].label)
        }
    }

    /// The `labels:` rules as one derived value: the first label whose condition
    /// holds, else null.
    fn labels(&mut self) -> Option<DerivedDecl> {
        let spec = self.spec;
        let mut rules = Vec::new();
        let mut deps = Vec::new();
        for rule in &spec.labels {
            let Some((op, ty, rule_deps)) = self.compile_expr(
                &rule.expr,
                Scope::Item {
                    in_aggregate: false,
                },
            ) else {
                continue;
            };
            if !Type::Bool.accepts(&ty) {
                self.errors.push(
                    Diagnostic::error(format!(
                        "the condition of label `{}` must be true or false, found {ty}",
                        rule.label.text
                    ))
                    .at(rule.expr.location(0, rule.expr.text.len()))
                    .help("e.g. `answerable and not refused and hit`"),
                );
                continue;
            }
            deps.extend(rule_deps);
            rules.push((op, rule.label.text.clone()));
        }
        if rules.len() != spec.labels.len() {
            return None;
        }
        let op = rules.into_iter().rev().fold(
            Op::Const(Value::Null),
            |otherwise, (condition, label)| {
                Op::If(
                    Box::new(condition),
                    Box::new(Op::Const(Value::from(label.as_str()))),
                    Box::new(otherwise),
                )
            },
        );
        let text = spec
            .labels
            .iter()
            .map(|r| format!("{}: {}", r.label.text, r.expr.text))
            .collect::<Vec<_>>()
            .join("; ");
        Some(DerivedDecl {
            derived: Derived {
                name: LABEL.to_string(),
                kind: DerivedKind::Label,
                op,
                ty: Type::Str,
                text,
                at: self.locate_name(&spec.labels[0].label),
            },
            deps,
        })
    }

    /// `offenders:` compiled once the per-item values are ordered.
    fn offenders(&mut self) -> Option<OffendersPlan> {
        let decl = self.spec.offenders.as_ref()?;
        let compiled = self.compile_expr(
            &decl.when,
            Scope::Item {
                in_aggregate: false,
            },
        );
        let mut show = Vec::new();
        for name in &decl.show {
            match self.derived_names.iter().position(|n| *n == name.text) {
                Some(index) => show.push((name.text.clone(), index)),
                None => {
                    let mut d = Diagnostic::error(format!(
                        "`offenders.show` names `{}`, which is not a field or matcher",
                        name.text
                    ))
                    .at(self.locate_name(name));
                    if let Some(s) =
                        did_you_mean(&name.text, self.derived_names.iter().map(String::as_str))
                    {
                        d = d.help(format!("did you mean `{s}`?"));
                    }
                    self.errors.push(d);
                }
            }
        }
        let (when, ty, _) = compiled?;
        if !Type::Bool.accepts(&ty) {
            self.errors.push(
                Diagnostic::error(format!(
                    "`offenders.when` must be true or false, found {ty}"
                ))
                .at(decl.when.location(0, decl.when.text.len()))
                .help("e.g. `label != \"OK\"`"),
            );
            return None;
        }
        Some(OffendersPlan {
            when,
            text: decl.when.text.clone(),
            at: decl.when.location(0, decl.when.text.len()),
            show,
            limit: decl.limit,
        })
    }

    fn matcher(&mut self, decl: &spec::MatcherDecl) -> Option<DerivedDecl> {
        let Some(kind) = matchers::kind(&decl.kind.text) else {
            let mut d = Diagnostic::error(format!("unknown matcher kind `{}`", decl.kind.text))
                .at(self.locate_name(&decl.kind));
            d = match did_you_mean(&decl.kind.text, matchers::KIND_NAMES.iter().copied()) {
                Some(s) => d.help(format!("did you mean `{s}`?")),
                None => d.help(format!("kinds: {}", matchers::KIND_NAMES.join(", "))),
            };
            self.errors.push(d);
            return None;
        };
        let mut ok = true;
        let mut inputs = Vec::new();
        let mut deps = Vec::new();
        let mut texts = Vec::new();
        for (input, param) in kind.inputs {
            let Some((name, node)) = decl.args.iter().find(|(n, _)| n.text == *input) else {
                self.errors.push(
                    Diagnostic::error(format!(
                        "matcher `{}` ({}) needs the input `{input}`",
                        decl.name.text, kind.name
                    ))
                    .at(self.locate_name(&decl.name))
                    .help(format!("add `{input}: <expression>`")),
                );
                ok = false;
                continue;
            };
            let Some(text) = node.scalar_text() else {
                self.errors.push(
                    Diagnostic::error(format!(
                        "input `{input}` must be an expression, found {}",
                        node.type_name()
                    ))
                    .at(self.locate_name(name)),
                );
                ok = false;
                continue;
            };
            let expr = ExprText {
                text: text.into_owned(),
                node: node.clone(),
                key_path: name.key_path.clone(),
            };
            match self.compile_expr(
                &expr,
                Scope::Item {
                    in_aggregate: false,
                },
            ) {
                Some((op, ty, input_deps)) => {
                    if !param.accepts(&ty) {
                        self.errors.push(
                            Diagnostic::error(format!(
                                "input `{input}` of a {} matcher must be {}, found {ty}",
                                kind.name,
                                param.describe()
                            ))
                            .at(expr.location(0, expr.text.len())),
                        );
                        ok = false;
                    }
                    texts.push(format!("{input}: {}", expr.text));
                    inputs.push(op);
                    deps.extend(input_deps);
                }
                None => ok = false,
            }
        }
        let mut options = Vec::new();
        for option in kind.options {
            let given = decl.args.iter().find(|(n, _)| n.text == option.name);
            let value = match (given, option.default) {
                (Some((name, node)), _) => self.option_value(option.name, option.kind, name, node),
                (None, Some(default)) => Some(match default {
                    OptionDefault::Bool(b) => OptionValue::Bool(b),
                    OptionDefault::Count(n) => OptionValue::Count(n),
                    OptionDefault::Text(t) if matches!(option.kind, OptionKind::Regex) => {
                        OptionValue::Regex(
                            regex::Regex::new(t).expect("built-in default regexes are valid"),
                        )
                    }
                    OptionDefault::Text(t) => OptionValue::Text(t.to_string()),
                }),
                (None, None) => {
                    self.errors.push(
                        Diagnostic::error(format!(
                            "matcher `{}` ({}) needs the option `{}`",
                            decl.name.text, kind.name, option.name
                        ))
                        .at(self.locate_name(&decl.name)),
                    );
                    None
                }
            };
            match value {
                Some(value) => {
                    if given.is_some() {
                        texts.push(format!("{}: {}", option.name, describe_option(&value)));
                    }
                    options.push(value);
                }
                None => ok = false,
            }
        }
        let known: Vec<&str> = kind
            .inputs
            .iter()
            .map(|(n, _)| *n)
            .chain(kind.options.iter().map(|o| o.name))
            .collect();
        for (name, _) in &decl.args {
            if !known.contains(&name.text.as_str()) {
                let mut d = Diagnostic::error(format!(
                    "a {} matcher has no key `{}`",
                    kind.name, name.text
                ))
                .at(self.locate_name(name));
                d = match did_you_mean(&name.text, known.iter().copied()) {
                    Some(s) => d.help(format!("did you mean `{s}`?")),
                    None => d.help(format!("keys: kind, {}", known.join(", "))),
                };
                self.errors.push(d);
                ok = false;
            }
        }
        if !ok {
            return None;
        }
        match Matcher::build(kind, &options) {
            Ok(matcher) => Some(DerivedDecl {
                derived: Derived {
                    name: decl.name.text.clone(),
                    kind: DerivedKind::Matcher,
                    op: Op::Matcher(Arc::new(matcher), inputs),
                    ty: (kind.returns)(),
                    text: format!("{}({})", kind.name, texts.join(", ")),
                    at: self.locate_name(&decl.name),
                },
                deps,
            }),
            Err(message) => {
                self.errors.push(
                    Diagnostic::error(format!("matcher `{}`: {message}", decl.name.text))
                        .at(self.locate_name(&decl.name)),
                );
                None
            }
        }
    }

    fn option_value(
        &mut self,
        option: &str,
        kind: OptionKind,
        name: &spec::Name,
        node: &spec::yaml::Node,
    ) -> Option<OptionValue> {
        let value = match (kind, &node.kind) {
            (OptionKind::Bool, NodeKind::Bool(b)) => Ok(OptionValue::Bool(*b)),
            (OptionKind::Count, NodeKind::Int(n)) if *n >= 0 => Ok(OptionValue::Count(*n as usize)),
            (OptionKind::Text, NodeKind::Str(s)) => Ok(OptionValue::Text(s.clone())),
            (OptionKind::Choice(choices), NodeKind::Str(s)) if choices.contains(&s.as_str()) => {
                Ok(OptionValue::Text(s.clone()))
            }
            (OptionKind::Choice(choices), _) => {
                Err(format!("`{option}` must be one of: {}", choices.join(", ")))
            }
            (OptionKind::Regex, NodeKind::Str(s)) => regex::Regex::new(s)
                .map(OptionValue::Regex)
                .map_err(|e| format!("`{option}` is not a valid regex: {e}")),
            (OptionKind::Bool, _) => Err(format!("`{option}` must be true or false")),
            (OptionKind::Count, _) => Err(format!("`{option}` must be a whole number ≥ 0")),
            (OptionKind::Text | OptionKind::Regex, _) => {
                Err(format!("`{option}` must be a string"))
            }
        };
        value
            .map_err(|message| {
                self.errors.push(
                    Diagnostic::error(format!("{message}, found {}", node.type_name()))
                        .at(node.location().with_key_path(&name.key_path)),
                );
            })
            .ok()
    }

    // ---- metrics and gates --------------------------------------------------------

    fn metrics(&mut self) -> Vec<MetricPlan> {
        let spec = self.spec;
        let mut decls: Vec<Option<MetricDecl>> = Vec::new();
        for (declared, metric) in spec.metrics.iter().enumerate() {
            self.cutoff = metric.cutoff;
            let compiled = self.compile_expr(&metric.expr, Scope::Metric);
            self.cutoff = None;
            let decl = compiled.and_then(|(op, ty, deps)| {
                if !ty.is_numeric() && ty != Type::Any && ty != Type::Bool {
                    self.errors.push(
                        Diagnostic::error(format!("metric `{}` must be a number, found {ty}", metric.name.text))
                            .at(metric.expr.location(0, metric.expr.text.len()))
                            .help("a metric aggregates items, e.g. `ratio(correct where shipped)` or `count(shipped)`"),
                    );
                    return None;
                }
                Some(MetricDecl {
                    metric: MetricPlan {
                        name: metric.name.text.clone(),
                        op,
                        ty: if ty == Type::Bool { Type::Bool } else { ty },
                        empty: metric.empty.as_ref().map(|(v, _)| *v),
                        better: metric.better,
                        text: metric.expr.text.clone(),
                        description: metric.description.clone(),
                        tolerance: metric.tolerance,
                        declared,
                        across: false,
                    },
                    deps,
                })
            });
            decls.push(decl);
        }
        let names: Vec<String> = spec.metrics.iter().map(|m| m.name.text.clone()).collect();
        let deps: Vec<Vec<usize>> = decls
            .iter()
            .map(|d| d.as_ref().map_or_else(Vec::new, |d| d.deps.clone()))
            .collect();
        let order = self.order_by_dependencies(&names, &deps, "metric", |this, i| {
            this.locate_name(&this.spec.metrics[i].name)
        });
        let Some(order) = order else {
            return Vec::new();
        };
        if decls.iter().any(Option::is_none) {
            return Vec::new();
        }
        self.metric_types = decls
            .iter()
            .map(|d| d.as_ref().map_or(Type::Float, |d| d.metric.ty.clone()))
            .collect();
        let Some(across) = self.classify_metrics(&order, &mut decls) else {
            return Vec::new();
        };
        self.metric_across = across;
        let mut decls: Vec<Option<MetricPlan>> =
            decls.into_iter().map(|d| d.map(|d| d.metric)).collect();
        self.metric_order = inverse(&order);
        order
            .iter()
            .map(|&i| decls[i].take().expect("each metric is placed once"))
            .collect()
    }

    /// `tradeoff:` by metric declaration index; each must be a per-run metric.
    fn tradeoff(&mut self) -> Option<Tradeoff> {
        let spec = self.spec;
        let decl = spec.tradeoff.as_ref()?;
        let slot = |this: &mut Self, name: &spec::Name| -> Option<usize> {
            let names = spec.metrics.iter().map(|m| m.name.text.as_str());
            let Some(index) = spec.metrics.iter().position(|m| m.name.text == name.text) else {
                let mut d = Diagnostic::error(format!("the spec has no metric `{}`", name.text))
                    .at(this.locate_name(name));
                if let Some(s) = did_you_mean(&name.text, names) {
                    d = d.help(format!("did you mean `{s}`?"));
                }
                this.errors.push(d);
                return None;
            };
            if this.metric_across.get(index).copied().unwrap_or(false) {
                this.errors.push(
                    Diagnostic::error(format!(
                        "`{}` is computed across runs; the tradeoff plots per-run metrics",
                        name.text
                    ))
                    .at(this.locate_name(name)),
                );
                return None;
            }
            Some(index)
        };
        let latency = slot(self, &decl.latency);
        let accuracy: Vec<Option<usize>> = decl.accuracy.iter().map(|a| slot(self, a)).collect();
        Some(Tradeoff {
            latency: latency?,
            accuracy: accuracy.into_iter().collect::<Option<_>>()?,
        })
    }

    /// Which metrics are computed once across runs: those reading a cross-run
    /// aggregate (`stability`) or summary (`run_mean`, …), or such a metric. A
    /// metric may not also read per-run values outside those summaries, and a
    /// summary must summarise a per-run metric.
    fn classify_metrics(
        &mut self,
        order: &[usize],
        decls: &mut [Option<MetricDecl>],
    ) -> Option<Vec<bool>> {
        let n = decls.len();
        let (mut across, mut per_run) = (vec![false; n], vec![false; n]);
        let mut ok = true;
        for &i in order {
            let Some(decl) = decls[i].as_ref() else {
                continue;
            };
            let mut summarised = Vec::new();
            decl.metric.op.walk(&mut |op| match op {
                Op::Aggregate(a) if self.aggregates[*a].function == AggregateFn::Stability => {
                    across[i] = true;
                }
                Op::Aggregate(_) | Op::DatasetRecords(_) => per_run[i] = true,
                Op::RunStat(_, m) => {
                    across[i] = true;
                    summarised.push(*m);
                }
                Op::Metric(m) => {
                    across[i] |= across[*m];
                    per_run[i] |= per_run[*m];
                }
                _ => {}
            });
            let metric = &self.spec.metrics[i];
            let at = metric.expr.location(0, metric.expr.text.len());
            if across[i] && per_run[i] {
                self.errors.push(
                    Diagnostic::error(format!(
                        "metric `{}` mixes per-run values with values across runs",
                        metric.name.text
                    ))
                    .at(at.clone())
                    .help("per-run metrics aggregate items; summarise them across runs with `run_mean(metric)`, `run_min`, `run_max` or `run_std`"),
                );
                ok = false;
            }
            for m in summarised {
                if across[m] {
                    self.errors.push(
                        Diagnostic::error(format!(
                            "`{}` is computed across runs, so it has no value per run to summarise",
                            self.spec.metrics[m].name.text
                        ))
                        .at(at.clone())
                        .help("`run_min`, `run_max`, `run_mean` and `run_std` summarise per-run metrics"),
                    );
                    ok = false;
                }
            }
            if let Some(decl) = decls[i].as_mut() {
                decl.metric.across = across[i];
            }
        }
        ok.then_some(across)
    }

    fn gates(&mut self) -> Vec<GatePlan> {
        let spec = self.spec;
        let mut gates = Vec::new();
        for gate in &spec.gates {
            let compiled = match &gate.rule {
                GateRuleDecl::Expr(expr) => self.expr_gate(&gate.name.text, expr),
                GateRuleDecl::Shape(shape) => self.shaped_gate(shape),
            };
            let severity = match &gate.severity {
                SeveritySpec::Fail => Some(Severity::Fail),
                SeveritySpec::Warn => Some(Severity::Warn),
                SeveritySpec::Expr(expr) => self.severity(expr),
            };
            let (Some((rule, value_ty, text)), Some(severity)) = (compiled, severity) else {
                continue;
            };
            let mut per_run = false;
            for op in rule.ops() {
                op.walk(&mut |op| match op {
                    Op::Aggregate(_) | Op::DatasetRecords(_) => per_run = true,
                    Op::Metric(m) | Op::Baseline(m) => {
                        per_run |= !self.metric_across.get(*m).copied().unwrap_or(false);
                    }
                    _ => {}
                });
            }
            gates.push(GatePlan {
                name: gate.name.text.clone(),
                rule,
                per_run,
                runs: gate.runs,
                value_ty,
                severity,
                message: gate.message.clone(),
                text,
            });
        }
        gates
    }

    fn expr_gate(&mut self, name: &str, expr: &ExprText) -> Option<(GateRule, Type, String)> {
        let parsed = self.parse_expr(expr)?;
        let mut ctx = ExprCtx {
            text: expr,
            deps: Vec::new(),
        };
        let (op, ty) = self.lower(&parsed, Scope::Gate, &mut ctx)?;
        if !Type::Bool.accepts(&ty) || ty == Type::Null {
            self.errors.push(
                Diagnostic::error(format!(
                    "gate `{name}` must be true or false, but its expression is {ty}"
                ))
                .at(expr.location(0, expr.text.len()))
                .help("compare a metric with a threshold, e.g. `precision >= 0.8`"),
            );
            return None;
        }
        // The reported value and threshold: the sides of a top-level comparison.
        let (value, value_ty, bound) = match &parsed.kind {
            ExprKind::Binary(op, left, right) if op.is_comparison() => {
                let (value, value_ty) = self.lower(left, Scope::Gate, &mut ctx)?;
                let (bound, _) = self.lower(right, Scope::Gate, &mut ctx)?;
                (Some(value), value_ty, Some(bound))
            }
            _ => (None, Type::Bool, None),
        };
        Some((
            GateRule::Expr { op, value, bound },
            value_ty,
            expr.text.clone(),
        ))
    }

    /// `metric:` with thresholds and change bounds; each bound is a number
    /// computed from params and metrics.
    fn shaped_gate(&mut self, shape: &GateShapeDecl) -> Option<(GateRule, Type, String)> {
        let spec = self.spec;
        let Some(index) = spec
            .metrics
            .iter()
            .position(|m| m.name.text == shape.metric.text)
        else {
            let mut d = Diagnostic::error(format!("unknown metric `{}`", shape.metric.text))
                .at(self.locate_name(&shape.metric));
            if let Some(s) = did_you_mean(
                &shape.metric.text,
                spec.metrics.iter().map(|m| m.name.text.as_str()),
            ) {
                d = d.help(format!("did you mean `{s}`?"));
            }
            self.errors.push(d);
            return None;
        };
        let Some(better) = shape.better.or(spec.metrics[index].better) else {
            self.errors.push(
                Diagnostic::error(format!(
                    "the gate on `{}` needs to know which direction is better",
                    shape.metric.text
                ))
                .at(self.locate_name(&shape.metric))
                .help(format!(
                    "add `better: higher` (or `lower`) to metric `{}` or to this gate",
                    shape.metric.text
                )),
            );
            return None;
        };
        let bound = |this: &mut Self, expr: &ExprText| {
            let (op, ty, _) = this.compile_expr(expr, Scope::Gate)?;
            if !Type::Float.accepts(&ty) {
                this.errors.push(
                    Diagnostic::error(format!("a gate bound must be a number, found {ty}"))
                        .at(expr.location(0, expr.text.len()))
                        .help("write a number such as `0.8`, or a param"),
                );
                return None;
            }
            Some(op)
        };
        let threshold = shape.threshold.as_ref().map(|e| bound(self, e));
        let warn_threshold = shape.warn_threshold.as_ref().map(|e| bound(self, e));
        let changes: Vec<_> = shape
            .changes
            .iter()
            .map(|(change, e)| bound(self, e).map(|op| (*change, op)))
            .collect();
        let threshold = threshold.map_or(Some(None), |t| t.map(Some))?;
        let warn_threshold = warn_threshold.map_or(Some(None), |t| t.map(Some))?;
        let changes: Vec<_> = changes.into_iter().collect::<Option<_>>()?;
        let name = &shape.metric.text;
        let (at_least, at_most) = match better {
            Better::Higher => (">=", "below"),
            Better::Lower => ("<=", "above"),
        };
        let mut parts = Vec::new();
        if let Some(t) = &shape.threshold {
            parts.push(format!("{name} {at_least} {}", t.text));
        }
        if let Some(t) = &shape.warn_threshold {
            parts.push(format!("warn unless {name} {at_least} {}", t.text));
        }
        for (change, e) in &shape.changes {
            parts.push(match change {
                spec::Change::MaxDrop => format!("at most {} {at_most} baseline", e.text),
                spec::Change::MaxDropRelative => {
                    format!("at most {} × |baseline| {at_most} baseline", e.text)
                }
                spec::Change::MinGain => format!("at least {} better than baseline", e.text),
                spec::Change::MinGainRelative => {
                    format!("at least {} × |baseline| better than baseline", e.text)
                }
            });
        }
        let ty = self.metric_types.get(index).cloned().unwrap_or(Type::Float);
        Some((
            GateRule::Shape(ShapePlan {
                metric: Op::Metric(index),
                metric_name: name.clone(),
                better,
                threshold,
                warn_threshold,
                changes,
                when_no_baseline: shape.when_no_baseline,
            }),
            ty,
            parts.join("; "),
        ))
    }

    /// A severity decided by params: evaluated now, since params are constants.
    fn severity(&mut self, expr: &ExprText) -> Option<Severity> {
        let (op, _, _) = self.compile_expr(expr, Scope::Params)?;
        let value = crate::eval::evaluate_constant(&op);
        match value {
            Ok(Value::String(s)) if &*s == "fail" => Some(Severity::Fail),
            Ok(Value::String(s)) if &*s == "warn" => Some(Severity::Warn),
            other => {
                let found = match other {
                    Ok(v) => v.preview(),
                    Err(e) => e,
                };
                self.errors.push(
                    Diagnostic::error(format!("a severity must be \"fail\" or \"warn\", this one gives {found}"))
                        .at(expr.location(0, expr.text.len()))
                        .help("write `fail`, `warn`, or an expression over params such as `if(strict, \"fail\", \"warn\")`"),
                );
                None
            }
        }
    }

    // ---- reports ------------------------------------------------------------------

    /// The reports to write (report.json always first), each with whether it
    /// needs every item kept; and the environment they render in, whose templates
    /// are loaded and parsed now, before any data is read.
    fn reports(
        &mut self,
        overrides: &Overrides,
    ) -> (
        Vec<(ReportPlan, bool)>,
        minijinja::Environment<'static>,
        Vec<PathBuf>,
    ) {
        let spec = self.spec;
        let spec_dir = spec
            .source
            .path
            .parent()
            .map_or_else(PathBuf::new, Path::to_path_buf);
        // items.jsonl keeps every item in memory: asked for, not by default.
        let default = [ReportFormat::Markdown];
        type Wanted = (ReportKind, Option<String>, Option<Location>, PathBuf);
        let declared: Vec<Wanted> = match &spec.reports {
            Some(reports) => reports
                .iter()
                .map(|r| {
                    let at = r.node.location().with_key_path("reports");
                    (r.kind.clone(), r.path.clone(), Some(at), r.dir.clone())
                })
                .collect(),
            None => default
                .iter()
                .map(|f| (ReportKind::Builtin(*f), None, None, spec_dir.clone()))
                .collect(),
        };
        let mut wanted = declared;
        for format in &overrides.formats {
            if !wanted
                .iter()
                .any(|(k, _, _, _)| *k == ReportKind::Builtin(*format))
            {
                wanted.push((ReportKind::Builtin(*format), None, None, spec_dir.clone()));
            }
        }
        let mut dirs: Vec<PathBuf> = Vec::new();
        let mut names: Vec<(String, PathBuf)> = Vec::new();
        let mut out: Vec<(ReportPlan, bool)> = vec![(
            ReportPlan {
                file: ReportFormat::Json.default_file().to_string(),
                kind: ReportPlanKind::Json,
            },
            false,
        )];
        for (kind, file, at, dir) in wanted {
            let (file, plan_kind, uses_items) = match kind {
                ReportKind::Builtin(ReportFormat::Json) if file.is_none() => continue,
                ReportKind::Builtin(format) => {
                    let file = file.unwrap_or_else(|| format.default_file().to_string());
                    match reports::builtin_template(format) {
                        Some(name) => (file, ReportPlanKind::Template(name.to_string()), false),
                        None if format == ReportFormat::Items => {
                            (file, ReportPlanKind::Items, true)
                        }
                        None => (file, ReportPlanKind::Json, false),
                    }
                }
                ReportKind::Template(path) => {
                    let full = dir.join(&path);
                    let (Some(dir), Some(name)) =
                        (full.parent(), full.file_name().and_then(|n| n.to_str()))
                    else {
                        continue;
                    };
                    if !full.is_file() {
                        let mut d = Diagnostic::error(format!(
                            "template `{path}` not found (looked for `{}`)",
                            full.display()
                        ))
                        .help("template paths are relative to the spec file");
                        if let Some(at) = at.clone() {
                            d = d.at(at);
                        }
                        self.errors.push(d);
                        continue;
                    }
                    // Templates are found by file name across their folders, so
                    // two of one name in different folders would be ambiguous.
                    if let Some(other) = names.iter().find(|(n, d)| n == name && d != dir) {
                        let mut d = Diagnostic::error(format!(
                            "two templates are named `{name}` (in `{}` and `{}`)",
                            other.1.display(),
                            dir.display()
                        ))
                        .help("rename one; templates load by file name from their folders");
                        if let Some(at) = at.clone() {
                            d = d.at(at);
                        }
                        self.errors.push(d);
                        continue;
                    }
                    names.push((name.to_string(), dir.to_path_buf()));
                    if !dirs.iter().any(|d| d == dir) {
                        dirs.push(dir.to_path_buf());
                    }
                    let file = file.unwrap_or_else(|| {
                        name.trim_end_matches(".j2")
                            .trim_end_matches(".jinja")
                            .to_string()
                    });
                    (file, ReportPlanKind::Template(name.to_string()), false)
                }
            };
            let contained = Path::new(&file)
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)));
            let clash = out.iter().any(|(r, _)| r.file == file);
            if !contained || clash {
                let problem = if contained {
                    format!("two reports are written to `{file}`")
                } else {
                    format!("the report path `{file}` leaves the output folder")
                };
                let mut d = Diagnostic::error(problem)
                    .help("give each report its own `path`, relative to the --out folder");
                if let Some(at) = at {
                    d = d.at(at);
                }
                self.errors.push(d);
                continue;
            }
            out.push((
                ReportPlan {
                    file,
                    kind: plan_kind,
                },
                uses_items,
            ));
        }
        // Parse the spec's templates now, so that a template error stops the run
        // before any data is read.
        let env = reports::environment(dirs.clone());
        for (report, uses_items) in &mut out {
            if let ReportPlanKind::Template(name) = &report.kind {
                match reports::check_template(&env, name) {
                    Ok(reads_items) => *uses_items |= reads_items,
                    Err(d) => self.errors.push(d),
                }
            }
        }
        (out, env, dirs)
    }

    // ---- datasets -----------------------------------------------------------------

    fn datasets(&mut self, overrides: &Overrides) -> Vec<(usize, DatasetPlan)> {
        let spec = self.spec;
        for (name, _) in &overrides.datasets {
            if !spec.datasets.iter().any(|d| &d.name.text == name) {
                let names: Vec<&str> = spec.datasets.iter().map(|d| d.name.text.as_str()).collect();
                let mut d = Diagnostic::error(format!(
                    "`--dataset {name}=…`: the spec has no dataset `{name}`"
                ));
                d = match did_you_mean(name, names.iter().copied()) {
                    Some(s) => d.help(format!("did you mean `{s}`?")),
                    None => d.help(format!("datasets: {}", names.join(", "))),
                };
                self.errors.push(d);
            }
        }
        self.errors.extend(crate::data::check_stdin_overrides(
            overrides
                .datasets
                .iter()
                .map(|(n, p)| (n.as_str(), p.as_path())),
        ));
        let mut out = Vec::new();
        for (index, decl) in spec.datasets.iter().enumerate() {
            let is_items = decl.name.text == spec.items.text;
            if decl.duplicates == spec::Duplicates::Keep && !is_items {
                self.errors.push(
                    Diagnostic::error(format!(
                        "dataset `{}` is looked up by key, so `duplicates: keep` cannot apply",
                        decl.name.text
                    ))
                    .at(self.locate_name(&decl.name))
                    .help("use `error`, `first` or `last`; `keep` is for the items dataset"),
                );
            }
            let overridden = overrides
                .datasets
                .iter()
                .rev()
                .find(|(n, _)| *n == decl.name.text);
            let runs = decl
                .runs
                .as_ref()
                .map(|runs| self.run_files(decl, runs, overridden.map(|(_, p)| p)));
            let path = match (overridden, &decl.path, &runs) {
                (_, _, Some(runs)) => runs.first().map(|r| r.path.clone()),
                (Some((_, path)), _, _) => Some(path.clone()),
                (None, Some(path), _) => Some(path.clone()),
                (None, None, None) => {
                    self.errors.push(
                        Diagnostic::error(format!("dataset `{}` has no path", decl.name.text))
                            .at(self.locate_name(&decl.name))
                            .help(format!(
                                "add `path:` to the dataset or pass `--dataset {}=PATH`",
                                decl.name.text
                            )),
                    );
                    None
                }
            };
            let Some((key, _, _)) = self.compile_expr(&decl.key, Scope::Record(index)) else {
                continue;
            };
            let run_name = match decl.runs.as_ref().map(|r| &r.name) {
                Some(spec::RunName::Expr(expr)) => {
                    let Some((op, _, _)) = self.compile_expr(expr, Scope::Record(index)) else {
                        continue;
                    };
                    Some(Check {
                        op,
                        text: expr.text.clone(),
                        message: format!(
                            "every record of a run must have the same `{}`",
                            expr.text
                        ),
                    })
                }
                _ => None,
            };
            let Some(path) = path else { continue };
            let rules = decl
                .schema
                .iter()
                .map(|rule| Rule {
                    field: match &rule.each {
                        Some(each) if each.is_empty() => format!("{}[]", rule.path.join(".")),
                        Some(each) => format!("{}[].{}", rule.path.join("."), each.join(".")),
                        None => rule.path.join("."),
                    },
                    path: FieldPath {
                        slot: 0,
                        rest: rule.path.clone(),
                    },
                    each: rule.each.clone(),
                    ty: rule.ty.clone(),
                    optional: rule.optional,
                    nonempty: rule.nonempty,
                    min: rule.min,
                })
                .collect();
            let checks = decl
                .checks
                .iter()
                .filter_map(|check| {
                    let (op, ty, _) = self.compile_expr(&check.expr, Scope::Record(index))?;
                    if !Type::Bool.accepts(&ty) {
                        self.errors.push(
                            Diagnostic::error(format!(
                                "a check must be true or false, but this one is {ty}"
                            ))
                            .at(check.expr.location(0, check.expr.text.len())),
                        );
                        return None;
                    }
                    Some(Check {
                        op,
                        text: check.expr.text.clone(),
                        message: check.message.clone(),
                    })
                })
                .collect();
            out.push((
                index,
                DatasetPlan {
                    name: decl.name.text.clone(),
                    // A file given on the command line (the first, of a folder or
                    // glob of runs) says its own format.
                    format: overridden
                        .map(|(_, p)| runs.as_ref().and_then(|r| r.first()).map_or(p, |r| &r.path))
                        .and_then(|p| spec::Format::from_extension(p))
                        .unwrap_or(decl.format),
                    csv: decl.csv.clone(),
                    display_path: match (&decl.runs, overridden) {
                        (Some(_), Some((_, pattern))) => pattern.display().to_string(),
                        (Some(runs), None) => runs
                            .patterns
                            .iter()
                            .map(|p| p.display().to_string())
                            .collect::<Vec<_>>()
                            .join(", "),
                        (None, _) => path.display().to_string(),
                    },
                    path,
                    key,
                    key_text: decl.key.text.clone(),
                    duplicates: decl.duplicates,
                    join: decl.join,
                    projection: Projection::default(),
                    rules,
                    checks,
                    declared_at: self.locate_name(&decl.name),
                    frozen: decl.frozen,
                    runs: runs.unwrap_or_default(),
                    run_name,
                },
            ));
        }
        out
    }

    /// The files of a dataset's runs (`runs:`, or `--dataset NAME=PATTERN`).
    fn run_files(
        &mut self,
        decl: &spec::DatasetDecl,
        runs: &spec::RunsDecl,
        overridden: Option<&PathBuf>,
    ) -> Vec<RunFile> {
        let patterns = overridden.map_or_else(|| runs.patterns.clone(), |p| vec![p.clone()]);
        match crate::data::find_run_files(&patterns) {
            Ok(files) => files
                .into_iter()
                .map(|path| RunFile {
                    display_path: path.display().to_string(),
                    path,
                })
                .collect(),
            Err(message) => {
                let mut d = Diagnostic::error(format!(
                    "dataset `{}`: {message}",
                    decl.name.text
                ))
                .help("`runs` takes files, folders or glob patterns (e.g. `runs/seed-*.jsonl`), relative to the spec");
                if overridden.is_none() {
                    d = d.at(runs
                        .node
                        .location()
                        .with_key_path(format!("datasets.{}.runs", decl.name.text)));
                }
                self.errors.push(d);
                Vec::new()
            }
        }
    }

    /// Orders datasets (lookups first, items last), builds each projection from the
    /// paths the plan reads, and rewrites every path into a slot.
    fn link(
        self,
        mut derived: Vec<Derived>,
        mut metrics: Vec<MetricPlan>,
        mut gates: Vec<GatePlan>,
        datasets: Vec<(usize, DatasetPlan)>,
        mut offenders: Option<OffendersPlan>,
    ) -> Plan {
        let spec = self.spec;
        let items_spec_index = spec
            .datasets
            .iter()
            .position(|d| d.name.text == spec.items.text)
            .expect("checked");
        let (mut items, mut lookups): (Vec<_>, Vec<_>) = datasets
            .into_iter()
            .partition(|(i, _)| *i == items_spec_index);
        lookups.append(&mut items);
        let mut plan_index = vec![usize::MAX; spec.datasets.len()];
        for (position, (spec_index, _)) in lookups.iter().enumerate() {
            plan_index[*spec_index] = position;
        }
        let mut datasets: Vec<DatasetPlan> = lookups.into_iter().map(|(_, d)| d).collect();
        let mut aggregates = self.aggregates;

        // Every path each dataset must provide.
        let mut paths: Vec<BTreeSet<Vec<String>>> = vec![BTreeSet::new(); datasets.len()];
        let mut collect = |op: &mut Op| {
            if let Op::Path { dataset, path } = op {
                paths[plan_index[*dataset]].insert(path.clone());
            }
        };
        for dataset in &mut datasets {
            dataset.key.walk_mut(&mut collect);
            for check in dataset.checks.iter_mut().chain(dataset.run_name.as_mut()) {
                check.op.walk_mut(&mut collect);
            }
        }
        for_each_op(
            &mut derived,
            &mut aggregates,
            &mut metrics,
            &mut gates,
            offenders.as_mut(),
            &mut collect,
        );
        for (dataset, paths) in datasets.iter_mut().zip(&mut paths) {
            for rule in &dataset.rules {
                paths.insert(rule.path.rest.clone());
            }
        }
        for (dataset, paths) in datasets.iter_mut().zip(&paths) {
            dataset.projection = Projection::build(paths.iter().map(Vec::as_slice));
            let projection = dataset.projection.clone();
            for rule in &mut dataset.rules {
                rule.path = projection.resolve(&rule.path.rest);
            }
        }
        let projections: Vec<Projection> = datasets.iter().map(|d| d.projection.clone()).collect();
        let (derived_order, metric_order) = (&self.derived_order, &self.metric_order);
        let mut resolve = |op: &mut Op| {
            match op {
                Op::Derived(i) => *i = derived_order[*i],
                Op::Metric(i) | Op::Baseline(i) | Op::RunStat(_, i) => *i = metric_order[*i],
                Op::DatasetRecords(i) => *i = plan_index[*i],
                _ => {}
            }
            if let Op::Path { dataset, path } = op {
                let dataset = plan_index[*dataset];
                let resolved = projections[dataset].resolve(path);
                let mut new = Op::Slot {
                    dataset,
                    slot: resolved.slot,
                };
                for name in resolved.rest {
                    new = Op::Field(Box::new(new), Arc::from(name.as_str()));
                }
                *op = new;
            }
        };
        for dataset in &mut datasets {
            dataset.key.walk_mut(&mut resolve);
            for check in dataset.checks.iter_mut().chain(dataset.run_name.as_mut()) {
                check.op.walk_mut(&mut resolve);
            }
        }
        for_each_op(
            &mut derived,
            &mut aggregates,
            &mut metrics,
            &mut gates,
            offenders.as_mut(),
            &mut resolve,
        );
        if let Some(offenders) = &mut offenders {
            for (_, slot) in &mut offenders.show {
                *slot = derived_order[*slot];
            }
        }
        let item_columns = self
            .derived_names
            .iter()
            .enumerate()
            .filter(|(i, _)| derived[derived_order[*i]].kind != DerivedKind::Label)
            .map(|(i, name)| ItemColumn {
                name: name.clone(),
                kind: derived[derived_order[i]].kind,
                ty: derived[derived_order[i]].ty.clone(),
                slot: derived_order[i],
            })
            .collect();
        let label_slot = derived.iter().position(|d| d.kind == DerivedKind::Label);

        let items = datasets.len() - 1;
        Plan {
            spec_name: spec.name.clone(),
            spec_version: spec.version.clone(),
            spec_path: spec.source.path.clone(),
            spec_display: spec.source.display.clone(),
            spec_text: spec.resolved_text.clone(),
            spec_files: spec.files.clone(),
            template_dirs: Vec::new(),
            lock: None,
            params: self.params,
            datasets,
            items,
            derived,
            aggregates,
            metrics,
            gates,
            labels: spec.labels.iter().map(|r| r.label.text.clone()).collect(),
            label_slot,
            item_columns,
            offenders,
            reports: Vec::new(),
            report_env: minijinja::Environment::empty(),
            keep_items: false,
            baseline: None,
            tradeoff: None,
        }
    }

    // ---- expressions --------------------------------------------------------------

    /// Parses and lowers one expression; returns its op, type and dependencies.
    fn compile_expr(&mut self, text: &ExprText, scope: Scope) -> Option<(Op, Type, Vec<usize>)> {
        let expr = self.parse_expr(text)?;
        let mut ctx = ExprCtx {
            text,
            deps: Vec::new(),
        };
        let (op, ty) = self.lower(&expr, scope, &mut ctx)?;
        Some((op, ty, ctx.deps))
    }

    /// Parses one expression, reporting a syntax error at its place in the spec.
    fn parse_expr(&mut self, text: &ExprText) -> Option<Expr> {
        match syntax::parse(&text.text) {
            Ok(expr) => Some(expr),
            Err(error) => {
                self.errors.push(
                    Diagnostic::error(format!("syntax error: {}", error.message))
                        .at(text
                            .location(error.span.start, error.span.end.max(error.span.start + 1)))
                        .help(syntax_help(&text.text)),
                );
                None
            }
        }
    }

    fn error_at(
        &mut self,
        ctx: &ExprCtx<'_>,
        span: Span,
        message: impl Into<String>,
    ) -> &mut Diagnostic {
        let location = ctx.text.location(span.start, span.end);
        self.errors.push(Diagnostic::error(message).at(location));
        self.errors.last_mut().expect("just pushed")
    }

    fn lower(&mut self, expr: &Expr, scope: Scope, ctx: &mut ExprCtx<'_>) -> Option<(Op, Type)> {
        match &expr.kind {
            ExprKind::Null => Some((Op::Const(Value::Null), Type::Null)),
            ExprKind::Bool(b) => Some((Op::Const(Value::Bool(*b)), Type::Bool)),
            ExprKind::Number(n) => {
                let ty = if n.fract() == 0.0
                    && !ctx.text.text[expr.span.start..expr.span.end].contains(['.', 'e', 'E'])
                {
                    Type::Int
                } else {
                    Type::Float
                };
                Some((Op::Const(Value::Number(*n)), ty))
            }
            ExprKind::String(s) => Some((Op::Const(Value::from(s.as_str())), Type::Str)),
            ExprKind::List(items) => {
                let lowered: Vec<Option<(Op, Type)>> = items
                    .iter()
                    .map(|item| self.lower(item, scope, ctx))
                    .collect();
                let lowered: Vec<(Op, Type)> = lowered.into_iter().collect::<Option<_>>()?;
                let element = lowered
                    .iter()
                    .map(|(_, t)| t.clone())
                    .reduce(|a, b| a.join(&b))
                    .unwrap_or(Type::Any);
                Some((
                    Op::List(lowered.into_iter().map(|(op, _)| op).collect()),
                    Type::list_of(element),
                ))
            }
            ExprKind::Name(name) => self.name(name, expr.span, scope, ctx),
            ExprKind::Member(..) | ExprKind::Index(..) => {
                if let Some(result) = self.explicit_param(expr, scope, ctx) {
                    return result;
                }
                if let Some(result) = self.baseline_metric(expr, scope, ctx) {
                    return result;
                }
                if let Some(op) = self.dataset_path(expr, scope) {
                    return Some((op, Type::Any));
                }
                match &expr.kind {
                    ExprKind::Member(base, name) => {
                        let (base_op, base_ty) = self.lower(base, scope, ctx)?;
                        if !matches!(base_ty, Type::Any | Type::Object | Type::Null) {
                            self.error_at(
                                ctx,
                                expr.span,
                                format!("cannot read field `{name}` of a {base_ty}"),
                            );
                            return None;
                        }
                        Some((
                            Op::Field(Box::new(base_op), Arc::from(name.as_str())),
                            Type::Any,
                        ))
                    }
                    ExprKind::Index(base, index) => {
                        let base = self.lower(base, scope, ctx);
                        let index = self.lower(index, scope, ctx);
                        let ((base_op, base_ty), (index_op, index_ty)) = (base?, index?);
                        let element = match &base_ty {
                            Type::List(element) if Type::Int.accepts(&index_ty) => {
                                (**element).clone()
                            }
                            Type::Any | Type::Object | Type::Null
                                if matches!(index_ty, Type::Str | Type::Int | Type::Any) =>
                            {
                                Type::Any
                            }
                            _ => {
                                self.error_at(
                                    ctx,
                                    expr.span,
                                    format!("cannot index a {base_ty} with a {index_ty}"),
                                );
                                return None;
                            }
                        };
                        Some((Op::Index(Box::new(base_op), Box::new(index_op)), element))
                    }
                    _ => unreachable!(),
                }
            }
            ExprKind::Unary(op, operand) => {
                let (inner, ty) = self.lower(operand, scope, ctx)?;
                match op {
                    UnaryOp::Not if Type::Bool.accepts(&ty) => {
                        Some((Op::Not(Box::new(inner)), Type::Bool))
                    }
                    UnaryOp::Neg if Type::Float.accepts(&ty) => Some((
                        Op::Neg(Box::new(inner)),
                        if ty == Type::Int {
                            Type::Int
                        } else {
                            Type::Float
                        },
                    )),
                    UnaryOp::Not => {
                        self.error_at(ctx, operand.span, format!("`not` needs a bool, found {ty}"))
                            .help = Some("to test for a missing or empty value use `is_null(x)` or `not truthy(x)`".into());
                        None
                    }
                    UnaryOp::Neg => {
                        self.error_at(ctx, operand.span, format!("`-` needs a number, found {ty}"));
                        None
                    }
                }
            }
            ExprKind::Binary(op, left, right) => {
                let l = self.lower(left, scope, ctx);
                let r = self.lower(right, scope, ctx);
                let ((lop, lty), (rop, rty)) = (l?, r?);
                let ty = self.binary_type(*op, &lty, &rty, expr, left, right, ctx)?;
                Some((Op::Binary(*op, Box::new(lop), Box::new(rop)), ty))
            }
            ExprKind::Call {
                name,
                name_span,
                args,
                filter,
            } => self.call(name, *name_span, args, filter.as_deref(), expr, scope, ctx),
        }
    }

    /// `params.NAME`: a param, named explicitly (the only way to reach one from a
    /// dataset's key or checks, where bare names are the record's fields). `None`
    /// when `params` is a dataset of the spec.
    fn explicit_param(
        &mut self,
        expr: &Expr,
        scope: Scope,
        ctx: &mut ExprCtx<'_>,
    ) -> Option<Option<(Op, Type)>> {
        let (root, name) = name_dot_name(expr)?;
        let shadowed = matches!(scope, Scope::Item { .. })
            && self.spec.datasets.iter().any(|d| d.name.text == "params");
        if root != "params" || shadowed {
            return None;
        }
        if self.params.iter().any(|p| &p.name == name) {
            return Some(self.name(name, expr.span, Scope::Params, ctx));
        }
        let names: Vec<&str> = self.params.iter().map(|p| p.name.as_str()).collect();
        let help = match did_you_mean(name, names.iter().copied()) {
            Some(s) => format!("did you mean `params.{s}`?"),
            None => format!("params: {}", names.join(", ")),
        };
        self.error_at(ctx, expr.span, format!("the spec has no param `{name}`"))
            .help = Some(help);
        Some(None)
    }

    /// `baseline.NAME` in a gate: the metric's value in the `--baseline` run.
    fn baseline_metric(
        &mut self,
        expr: &Expr,
        scope: Scope,
        ctx: &mut ExprCtx<'_>,
    ) -> Option<Option<(Op, Type)>> {
        let (root, name) = name_dot_name(expr)?;
        let metrics = &self.spec.metrics;
        if root != "baseline" || metrics.iter().any(|m| m.name.text == "baseline") {
            return None;
        }
        if scope != Scope::Gate {
            self.error_at(ctx, expr.span, "`baseline` is only known to gates")
                .help = Some(
                "compare against the baseline in a gate, e.g. `chr >= baseline.chr - 0.02`".into(),
            );
            return Some(None);
        }
        if let Some(index) = metrics.iter().position(|m| &m.name.text == name) {
            let ty = self.metric_types.get(index).cloned().unwrap_or(Type::Float);
            return Some(Some((Op::Baseline(index), ty)));
        }
        let help = match did_you_mean(name, metrics.iter().map(|m| m.name.text.as_str())) {
            Some(s) => format!("did you mean `baseline.{s}`?"),
            None => "`baseline.NAME` names a metric of this spec".to_string(),
        };
        self.error_at(ctx, expr.span, format!("the spec has no metric `{name}`"))
            .help = Some(help);
        Some(None)
    }

    /// `gold.answer_json.claim` (or, in a key, `answer_json.claim`) as a static path.
    fn dataset_path(&mut self, expr: &Expr, scope: Scope) -> Option<Op> {
        let mut segments = Vec::new();
        let mut cursor = expr;
        loop {
            match &cursor.kind {
                ExprKind::Member(base, name) => {
                    segments.push(name.clone());
                    cursor = base;
                }
                ExprKind::Index(base, index) => match &index.kind {
                    ExprKind::String(name) => {
                        segments.push(name.clone());
                        cursor = base;
                    }
                    _ => return None,
                },
                ExprKind::Name(root) => {
                    segments.reverse();
                    return match scope {
                        Scope::Record(dataset) => {
                            segments.insert(0, root.clone());
                            Some(Op::Path {
                                dataset,
                                path: segments,
                            })
                        }
                        Scope::Item { .. } => {
                            let dataset = self
                                .spec
                                .datasets
                                .iter()
                                .position(|d| &d.name.text == root)?;
                            Some(Op::Path {
                                dataset,
                                path: segments,
                            })
                        }
                        _ => None,
                    };
                }
                _ => return None,
            }
        }
    }

    fn name(
        &mut self,
        name: &str,
        span: Span,
        scope: Scope,
        ctx: &mut ExprCtx<'_>,
    ) -> Option<(Op, Type)> {
        let spec = self.spec;
        if let Scope::Record(dataset) = scope {
            return Some((
                Op::Path {
                    dataset,
                    path: vec![name.to_string()],
                },
                Type::Any,
            ));
        }
        if let (Some(k), "k", Scope::Metric | Scope::Item { in_aggregate: true }) =
            (self.cutoff, name, scope)
        {
            return Some((Op::Const(Value::Number(f64::from(k))), Type::Int));
        }
        if let Some(param) = self.params.iter().find(|p| p.name == name) {
            let ty = match param.ty {
                ParamType::Number => Type::Float,
                ParamType::Integer => Type::Int,
                ParamType::String => Type::Str,
                ParamType::Bool => Type::Bool,
                ParamType::List => Type::list_of(Type::Any),
            };
            return Some((Op::Const(param.value.clone()), ty));
        }
        let mut candidates: Vec<&str> = self.params.iter().map(|p| p.name.as_str()).collect();
        match scope {
            Scope::Item { .. } => {
                if let Some(dataset) = spec.datasets.iter().position(|d| d.name.text == name) {
                    return Some((
                        Op::Path {
                            dataset,
                            path: Vec::new(),
                        },
                        Type::Any,
                    ));
                }
                if let Some(index) = self.derived_names.iter().position(|n| n == name) {
                    // Inside a metric's aggregate this is not a dependency between metrics.
                    if scope
                        == (Scope::Item {
                            in_aggregate: false,
                        })
                    {
                        ctx.deps.push(index);
                    }
                    let ty = self.derived_type_hint(index);
                    return Some((Op::Derived(index), ty));
                }
                candidates.extend(spec.datasets.iter().map(|d| d.name.text.as_str()));
                candidates.extend(self.derived_names.iter().map(String::as_str));
            }
            Scope::Metric | Scope::Gate => {
                if let Some(index) = spec.metrics.iter().position(|m| m.name.text == name) {
                    if scope == Scope::Metric {
                        ctx.deps.push(index);
                    }
                    let ty = self.metric_types.get(index).cloned().unwrap_or(Type::Float);
                    return Some((Op::Metric(index), ty));
                }
                candidates.extend(spec.metrics.iter().map(|m| m.name.text.as_str()));
            }
            Scope::Params | Scope::Record(_) => {}
        }
        let is_item_name = spec.datasets.iter().any(|d| d.name.text == name)
            || self.derived_names.iter().any(|n| n == name);
        let is_metric = spec.metrics.iter().any(|m| m.name.text == name);
        let help = match scope {
            Scope::Metric | Scope::Gate if is_item_name && scope == Scope::Metric => {
                format!("`{name}` is a per-item value; aggregate it, e.g. `count({name})` or `ratio({name})`")
            }
            Scope::Gate if is_item_name => format!("`{name}` is a per-item value; gates see metrics and params"),
            Scope::Item { .. } if is_metric => format!("`{name}` is a metric; per-item expressions see datasets, fields, matchers and params"),
            Scope::Params => "a severity may only use params".to_string(),
            _ => match did_you_mean(name, candidates.iter().copied()) {
                Some(suggestion) => format!("did you mean `{suggestion}`?"),
                None if candidates.is_empty() => "nothing is defined here yet".to_string(),
                None => format!("defined here: {}", candidates.join(", ")),
            },
        };
        let what = match scope {
            Scope::Item { .. } => "not a dataset, field, matcher or param",
            Scope::Metric | Scope::Gate => "not a metric or param",
            _ => "not a param",
        };
        self.error_at(ctx, span, format!("unknown name `{name}`"))
            .label = Some(what.into());
        self.errors.last_mut().expect("just pushed").help = Some(help);
        None
    }

    /// The declared type of a derived value, when it can be known without ordering:
    /// matchers have fixed types; fields are checked where they are used.
    fn derived_type_hint(&self, index: usize) -> Type {
        let fields = self.spec.fields.len();
        if index >= fields + self.spec.matchers.len() {
            return Type::Str; // the label
        }
        if index >= fields {
            if let Some(kind) = matchers::kind(&self.spec.matchers[index - fields].kind.text) {
                return (kind.returns)();
            }
        }
        Type::Any
    }

    #[allow(clippy::too_many_arguments)]
    fn binary_type(
        &mut self,
        op: BinaryOp,
        l: &Type,
        r: &Type,
        expr: &Expr,
        left: &Expr,
        right: &Expr,
        ctx: &mut ExprCtx<'_>,
    ) -> Option<Type> {
        let numeric = |t: &Type| Type::Float.accepts(t);
        let ty = match op {
            BinaryOp::And | BinaryOp::Or => {
                for (t, side) in [(l, left), (r, right)] {
                    if !Type::Bool.accepts(t) {
                        self.error_at(
                            ctx,
                            side.span,
                            format!("`{}` needs bools, found {t}", op.symbol()),
                        );
                        return None;
                    }
                }
                Type::Bool
            }
            BinaryOp::Eq | BinaryOp::Ne => Type::Bool,
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
                let comparable =
                    (numeric(l) && numeric(r)) || (Type::Str.accepts(l) && Type::Str.accepts(r));
                if !comparable {
                    self.error_at(
                        ctx,
                        expr.span,
                        format!("cannot compare {l} with {r} using `{}`", op.symbol()),
                    );
                    return None;
                }
                Type::Bool
            }
            BinaryOp::In | BinaryOp::NotIn => {
                let ok = match r {
                    Type::Str => Type::Str.accepts(l),
                    Type::List(_) | Type::Any | Type::Null => true,
                    _ => false,
                };
                if !ok {
                    self.error_at(
                        ctx,
                        right.span,
                        format!(
                            "`{}` needs a list (or a string) on the right, found {r}",
                            op.symbol()
                        ),
                    );
                    return None;
                }
                Type::Bool
            }
            BinaryOp::Coalesce => l.join(r),
            BinaryOp::Add => match (l, r) {
                (Type::Int, Type::Int) => Type::Int,
                (Type::Str, Type::Str) => Type::Str,
                (Type::List(a), Type::List(b)) => Type::list_of(a.join(b)),
                (Type::Any | Type::Null, _) | (_, Type::Any | Type::Null) => Type::Any,
                (a, b) if numeric(a) && numeric(b) => Type::Float,
                _ => {
                    self.error_at(ctx, expr.span, format!("cannot add {l} and {r}"));
                    return None;
                }
            },
            BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem => {
                for (t, side) in [(l, left), (r, right)] {
                    if !numeric(t) {
                        self.error_at(
                            ctx,
                            side.span,
                            format!("`{}` needs numbers, found {t}", op.symbol()),
                        );
                        return None;
                    }
                }
                if op != BinaryOp::Div && *l == Type::Int && *r == Type::Int {
                    Type::Int
                } else {
                    Type::Float
                }
            }
        };
        Some(ty)
    }

    #[allow(clippy::too_many_arguments)]
    fn call(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        filter: Option<&Expr>,
        expr: &Expr,
        scope: Scope,
        ctx: &mut ExprCtx<'_>,
    ) -> Option<(Op, Type)> {
        if AGGREGATES.contains(&name) {
            return self.aggregate(name, name_span, args, filter, expr, scope, ctx);
        }
        if name == RECORDS && filter.is_none() {
            return self.dataset_records(args, expr, scope, ctx);
        }
        if let Some((_, stat)) = RunStat::ALL.iter().find(|(n, _)| *n == name) {
            if filter.is_none() {
                return self.run_stat(name, *stat, args, expr, scope, ctx);
            }
        }
        if let Some(filter) = filter {
            self.error_at(
                ctx,
                filter.span,
                format!("`where` only filters aggregates, and `{name}` is not one"),
            );
            return None;
        }
        let lowered: Vec<Option<(Op, Type)>> =
            args.iter().map(|a| self.lower(a, scope, ctx)).collect();
        if name == builtins::IF {
            if args.len() != 3 {
                self.error_at(
                    ctx,
                    expr.span,
                    format!(
                        "`if` takes 3 arguments (condition, then, else), found {}",
                        args.len()
                    ),
                );
                return None;
            }
            let mut lowered: Vec<(Op, Type)> = lowered.into_iter().collect::<Option<_>>()?;
            if !Type::Bool.accepts(&lowered[0].1) {
                self.error_at(
                    ctx,
                    args[0].span,
                    format!(
                        "the condition of `if` must be a bool, found {}",
                        lowered[0].1
                    ),
                );
                return None;
            }
            let (otherwise, else_ty) = lowered.pop().expect("3 args");
            let (then, then_ty) = lowered.pop().expect("3 args");
            let (condition, _) = lowered.pop().expect("3 args");
            return Some((
                Op::If(Box::new(condition), Box::new(then), Box::new(otherwise)),
                then_ty.join(&else_ty),
            ));
        }
        let Some(builtin) = builtins::lookup(name) else {
            let names = builtins::BUILTINS
                .iter()
                .map(|b| b.name)
                .chain(AGGREGATES.iter().copied())
                .chain(RunStat::ALL.iter().map(|(n, _)| *n))
                .chain([RECORDS])
                .chain([builtins::IF]);
            let d = self.error_at(ctx, name_span, format!("unknown function `{name}`"));
            d.help = Some(match did_you_mean(name, names) {
                Some(s) => format!("did you mean `{s}`?"),
                None => "see grammar/README.md for the built-in functions".into(),
            });
            return None;
        };
        let lowered: Vec<(Op, Type)> = lowered.into_iter().collect::<Option<_>>()?;
        self.check_builtin_args(builtin, args, &lowered, expr, ctx)?;
        let types: Vec<Type> = lowered.iter().map(|(_, t)| t.clone()).collect();
        let ty = builtin.return_type(&types);
        Some((
            Op::Call(builtin, lowered.into_iter().map(|(op, _)| op).collect()),
            ty,
        ))
    }

    fn check_builtin_args(
        &mut self,
        builtin: &Builtin,
        args: &[Expr],
        lowered: &[(Op, Type)],
        expr: &Expr,
        ctx: &mut ExprCtx<'_>,
    ) -> Option<()> {
        let max = builtin.params.len();
        let min = max - builtin.optional;
        if args.len() < min || args.len() > max {
            let expected = if min == max {
                format!("{max}")
            } else {
                format!("{min} to {max}")
            };
            let d = self.error_at(
                ctx,
                expr.span,
                format!(
                    "`{}` takes {expected} argument{}, found {}",
                    builtin.name,
                    if max == 1 { "" } else { "s" },
                    args.len()
                ),
            );
            d.help = Some(format!("example: {}", builtin.example));
            return None;
        }
        let mut ok = true;
        for (i, ((_, ty), param)) in lowered.iter().zip(builtin.params).enumerate() {
            if !param.accepts(ty) {
                let d = self.error_at(
                    ctx,
                    args[i].span,
                    format!(
                        "argument {} of `{}` must be {}, found {ty}",
                        i + 1,
                        builtin.name,
                        param.describe()
                    ),
                );
                d.help = Some(format!("example: {}", builtin.example));
                ok = false;
            }
        }
        ok.then_some(())
    }

    /// `run_mean(precision)`: a per-run metric summarised over the runs.
    fn run_stat(
        &mut self,
        name: &str,
        stat: RunStat,
        args: &[Expr],
        expr: &Expr,
        scope: Scope,
        ctx: &mut ExprCtx<'_>,
    ) -> Option<(Op, Type)> {
        if !matches!(scope, Scope::Metric | Scope::Gate) {
            self.error_at(
                ctx,
                expr.span,
                format!("`{name}` is only allowed in metrics and gates"),
            )
            .help = Some("it summarises a metric over the runs".into());
            return None;
        }
        let metric = match args {
            [arg @ Expr {
                kind: ExprKind::Name(_),
                ..
            }] => match self.lower(arg, scope, ctx)? {
                (Op::Metric(m), _) => Some(m),
                _ => None,
            },
            _ => None,
        };
        let Some(metric) = metric else {
            self.error_at(
                ctx,
                expr.span,
                format!("`{name}` takes the name of a metric"),
            )
            .help = Some(format!("example: {name}(precision)"));
            return None;
        };
        Some((Op::RunStat(stat, metric), Type::Float))
    }

    fn dataset_records(
        &mut self,
        args: &[Expr],
        expr: &Expr,
        scope: Scope,
        ctx: &mut ExprCtx<'_>,
    ) -> Option<(Op, Type)> {
        let dataset = match args {
            [Expr {
                kind: ExprKind::Name(name),
                ..
            }] => self.spec.datasets.iter().position(|d| &d.name.text == name),
            _ => None,
        };
        match (dataset, scope) {
            (Some(dataset), Scope::Metric) => Some((Op::DatasetRecords(dataset), Type::Int)),
            (Some(_), _) => {
                self.error_at(
                    ctx,
                    expr.span,
                    "`records(dataset)` is only allowed in metrics",
                );
                None
            }
            (None, _) => {
                let names: Vec<&str> = self
                    .spec
                    .datasets
                    .iter()
                    .map(|d| d.name.text.as_str())
                    .collect();
                let d = self.error_at(ctx, expr.span, "`records` takes the name of a dataset");
                d.help = Some(format!("datasets: {}", names.join(", ")));
                None
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn aggregate(
        &mut self,
        name: &str,
        name_span: Span,
        args: &[Expr],
        filter: Option<&Expr>,
        expr: &Expr,
        scope: Scope,
        ctx: &mut ExprCtx<'_>,
    ) -> Option<(Op, Type)> {
        match scope {
            Scope::Metric => {}
            // A gate may aggregate too (`p95(latency_ms) <= 1200`), but not across runs.
            Scope::Gate if name != "stability" => {}
            Scope::Item { in_aggregate: true } => {
                self.error_at(
                    ctx,
                    name_span,
                    format!("aggregate `{name}` cannot be nested inside another aggregate"),
                );
                return None;
            }
            _ => {
                let d = self.error_at(
                    ctx,
                    name_span,
                    format!("aggregate `{name}` is only allowed in metrics"),
                );
                d.help = Some(match scope {
                    Scope::Gate => {
                        "define a metric with the aggregate and gate on the metric".into()
                    }
                    _ => {
                        "per-item fields see one item at a time; move the aggregate into `metrics:`"
                            .into()
                    }
                });
                return None;
            }
        }
        let item = Scope::Item { in_aggregate: true };
        let (function, arity) = match name {
            "count" => (AggregateFn::Count, 0..=1),
            "sum" => (AggregateFn::Sum, 1..=1),
            "mean" => (AggregateFn::Mean, 1..=1),
            "min" => (AggregateFn::Min, 1..=1),
            "max" => (AggregateFn::Max, 1..=1),
            "ratio" => (AggregateFn::Ratio, 1..=1),
            "p50" => (AggregateFn::Percentile(50.0), 1..=1),
            "p95" => (AggregateFn::Percentile(95.0), 1..=1),
            "p99" => (AggregateFn::Percentile(99.0), 1..=1),
            "kappa" => (AggregateFn::Kappa, 2..=2),
            "agreement" => (AggregateFn::Agreement, 2..=2),
            "stability" => (AggregateFn::Stability, 1..=1),
            _ => (AggregateFn::Percentile(f64::NAN), 2..=2),
        };
        if !arity.contains(&args.len()) {
            let example = match function {
                AggregateFn::Count => "count(shipped) or count()",
                AggregateFn::Ratio => "ratio(correct where shipped)",
                AggregateFn::Percentile(q) if q.is_nan() => "percentile(trace.latency_ms, 90)",
                AggregateFn::Kappa | AggregateFn::Agreement => {
                    "kappa(scholar.verdict, auditor.verdict)"
                }
                AggregateFn::Stability => "stability(label)",
                _ => "mean(trace.latency_ms where shipped)",
            };
            let d = self.error_at(
                ctx,
                expr.span,
                format!(
                    "`{name}` takes {} argument{}, found {}",
                    arity.end(),
                    if *arity.end() == 1 { "" } else { "s" },
                    args.len()
                ),
            );
            d.help = Some(format!("example: {example}"));
            return None;
        }
        let function = match function {
            AggregateFn::Percentile(q) if q.is_nan() => match args[1].kind {
                ExprKind::Number(q) if (0.0..=100.0).contains(&q) => AggregateFn::Percentile(q),
                _ => {
                    self.error_at(
                        ctx,
                        args[1].span,
                        "the percentile must be a number from 0 to 100",
                    );
                    return None;
                }
            },
            f => f,
        };
        let arg = match function {
            AggregateFn::Kappa | AggregateFn::Agreement => {
                let labels: Vec<Option<(Op, Type)>> =
                    args.iter().map(|a| self.lower(a, item, ctx)).collect();
                Some(
                    labels
                        .into_iter()
                        .collect::<Option<Vec<_>>>()
                        .map(|labels| {
                            let ops = labels.into_iter().map(|(op, _)| op).collect();
                            (Op::List(ops), Type::Any)
                        }),
                )
            }
            _ => args.first().map(|arg| self.lower(arg, item, ctx)),
        };
        let filter_op = filter.map(|f| self.lower(f, item, ctx));
        let arg = match arg {
            Some(a) => Some(a?),
            None => None,
        };
        let filter_op = match filter_op {
            Some(f) => Some(f?),
            None => None,
        };
        if let (Some((_, ty)), Some(f)) = (&filter_op, filter) {
            if !Type::Bool.accepts(ty) {
                self.error_at(ctx, f.span, format!("`where` needs a bool, found {ty}"));
                return None;
            }
        }
        let wants_bool = matches!(function, AggregateFn::Count | AggregateFn::Ratio);
        let takes_any = matches!(
            function,
            AggregateFn::Kappa | AggregateFn::Agreement | AggregateFn::Stability
        );
        let ty = match (&arg, wants_bool) {
            _ if takes_any => Type::Any,
            (Some((_, ty)), true) if !Type::Bool.accepts(ty) => {
                let d = self.error_at(
                    ctx,
                    args[0].span,
                    format!("`{name}` counts items where its argument is true, but it is {ty}"),
                );
                d.help = Some(format!("write a condition, e.g. `{name}(x > 0)`"));
                return None;
            }
            (Some((_, ty)), false) if !Type::Float.accepts(ty) => {
                self.error_at(
                    ctx,
                    args[0].span,
                    format!("`{name}` needs a number, found {ty}"),
                );
                return None;
            }
            (Some((_, ty)), false) => ty.clone(),
            _ => Type::Int,
        };
        let result_ty = match function {
            AggregateFn::Count => Type::Int,
            AggregateFn::Sum | AggregateFn::Min | AggregateFn::Max => {
                if ty == Type::Int {
                    Type::Int
                } else {
                    Type::Float
                }
            }
            AggregateFn::Mean
            | AggregateFn::Ratio
            | AggregateFn::Percentile(_)
            | AggregateFn::Kappa
            | AggregateFn::Agreement
            | AggregateFn::Stability => Type::Float,
        };
        let text = &ctx.text.text[expr.span.start..expr.span.end];
        let subject = text
            .find('(')
            .map_or(text, |open| {
                text[open + 1..].strip_suffix(')').unwrap_or(text)
            })
            .trim()
            .to_string();
        self.aggregates.push(Aggregate {
            function,
            arg: arg.map(|(op, _)| op),
            filter: filter_op.map(|(op, _)| op),
            subject,
            text: text.to_string(),
            at: ctx.text.location(expr.span.start, expr.span.end),
        });
        Some((Op::Aggregate(self.aggregates.len() - 1), result_ty))
    }

    /// A topological order of `deps` (declaration order among independent entries),
    /// or `None` after reporting each cycle.
    fn order_by_dependencies(
        &mut self,
        names: &[String],
        deps: &[Vec<usize>],
        what: &str,
        locate: impl Fn(&Self, usize) -> Location,
    ) -> Option<Vec<usize>> {
        let n = names.len();
        let mut state = vec![0u8; n]; // 0 new, 1 on the stack, 2 done
        let mut order = Vec::with_capacity(n);
        let mut reported = vec![false; n];
        let mut ok = true;
        fn visit(
            i: usize,
            deps: &[Vec<usize>],
            state: &mut [u8],
            order: &mut Vec<usize>,
            stack: &mut Vec<usize>,
            cycles: &mut Vec<Vec<usize>>,
        ) {
            state[i] = 1;
            stack.push(i);
            for &d in &deps[i] {
                match state[d] {
                    0 => visit(d, deps, state, order, stack, cycles),
                    1 => {
                        let start = stack.iter().position(|&s| s == d).expect("on the stack");
                        cycles.push(stack[start..].to_vec());
                    }
                    _ => {}
                }
            }
            stack.pop();
            state[i] = 2;
            order.push(i);
        }
        let mut cycles = Vec::new();
        for i in 0..n {
            if state[i] == 0 {
                visit(
                    i,
                    deps,
                    &mut state,
                    &mut order,
                    &mut Vec::new(),
                    &mut cycles,
                );
            }
        }
        for cycle in cycles {
            if cycle.iter().any(|&i| reported[i]) {
                continue;
            }
            cycle.iter().for_each(|&i| reported[i] = true);
            let mut path: Vec<&str> = cycle.iter().map(|&i| names[i].as_str()).collect();
            path.push(&names[cycle[0]]);
            let message = if cycle.len() == 1 {
                format!("{what} `{}` depends on itself", names[cycle[0]])
            } else {
                format!(
                    "{what}s depend on each other in a cycle: {}",
                    path.join(" → ")
                )
            };
            let location = locate(self, cycle[0]);
            self.errors.push(
                Diagnostic::error(message)
                    .at(location)
                    .help("break the cycle by computing one of them from the inputs directly"),
            );
            ok = false;
        }
        ok.then_some(order)
    }
}

fn for_each_op(
    derived: &mut [Derived],
    aggregates: &mut [Aggregate],
    metrics: &mut [MetricPlan],
    gates: &mut [GatePlan],
    offenders: Option<&mut OffendersPlan>,
    f: &mut impl FnMut(&mut Op),
) {
    if let Some(offenders) = offenders {
        offenders.when.walk_mut(f);
    }
    for d in derived {
        d.op.walk_mut(f);
    }
    for a in aggregates {
        if let Some(op) = &mut a.arg {
            op.walk_mut(f);
        }
        if let Some(op) = &mut a.filter {
            op.walk_mut(f);
        }
    }
    for m in metrics {
        m.op.walk_mut(f);
    }
    for g in gates {
        for op in g.ops_mut() {
            op.walk_mut(f);
        }
    }
}

/// `root.name`: the two names, or `None` for any other expression.
fn name_dot_name(expr: &Expr) -> Option<(&String, &String)> {
    let ExprKind::Member(base, name) = &expr.kind else {
        return None;
    };
    let ExprKind::Name(root) = &base.kind else {
        return None;
    };
    Some((root, name))
}

/// `inverse(order)[old] = new`.
fn inverse(order: &[usize]) -> Vec<usize> {
    let mut inverse = vec![0; order.len()];
    for (new, &old) in order.iter().enumerate() {
        inverse[old] = new;
    }
    inverse
}

fn describe_option(value: &OptionValue) -> String {
    match value {
        OptionValue::Bool(b) => b.to_string(),
        OptionValue::Count(n) => n.to_string(),
        OptionValue::Text(t) => format!("{t:?}"),
        OptionValue::Regex(r) => format!("/{}/", r.as_str()),
    }
}

fn syntax_help(text: &str) -> String {
    if text.contains("&&") || text.contains("||") {
        "write `and` / `or` instead of `&&` / `||`".into()
    } else if text.contains(" = ") {
        "compare with `==`".into()
    } else {
        "see grammar/README.md for the expression syntax".into()
    }
}
