//! Phase 2: per-item values. Reads [`Names`]; lowers every field, matcher and the
//! `labels:` rules (one derived value, the label), and orders them by their
//! dependencies. Adds the derived values in that order with the position each
//! declaration went to; then `offenders:`, which reads them.

use std::sync::Arc;

use crate::base::types::Type;
use crate::base::value::Value;
use crate::ir::Op;
use crate::library::matchers::{
    self, Matcher, MatcherKind, OptionDefault, OptionKind, OptionValue,
};
use crate::plan::compile::declared::{Declared, DeclaredDerived};
use crate::plan::compile::error::CompileError as E;
use crate::plan::compile::expr::{DeclaredOp, Lowering, Scope, LABEL};
use crate::plan::compile::order::{self, Ordered};
use crate::plan::{Derived, DerivedKind, OffendersPlan};
use crate::spec::{Constant, MatcherArg, MatcherDecl};

/// One derived value and the declarations it depends on.
struct WithDeps {
    derived: Derived<Declared>,
    deps: Vec<usize>,
}

/// Fields, matchers and the label, in dependency order. Empty when any failed.
pub fn compile(lowering: &mut Lowering<'_>) -> Ordered<Derived<Declared>> {
    let spec = lowering.names.spec;
    let mut decls: Vec<Option<WithDeps>> = Vec::new();
    for field in &spec.fields {
        let decl = lowering
            .compile_expr(&field.expr, Scope::ITEM)
            .map(|lowered| WithDeps {
                derived: Derived {
                    name: field.name.text.clone(),
                    kind: DerivedKind::Field,
                    op: lowered.op,
                    ty: lowered.ty,
                    text: field.expr.text.clone(),
                    at: field.name.location(),
                },
                deps: lowered.deps,
            });
        decls.push(decl);
    }
    // Fields read fields as `any` (they are lowered before their order is
    // known); what comes after them sees each field's type.
    lowering.field_types = decls
        .iter()
        .map(|d| d.as_ref().map_or(Type::Any, |d| d.derived.ty.clone()))
        .collect();
    for matcher in &spec.matchers {
        decls.push(self::matcher(lowering, matcher));
    }
    if !spec.labels.is_empty() {
        decls.push(labels(lowering));
    }
    let deps: Vec<Vec<usize>> = decls
        .iter()
        .map(|d| d.as_ref().map_or_else(Vec::new, |d| d.deps.clone()))
        .collect();
    let locate = |index: usize| {
        let fields = spec.fields.len();
        let matchers = spec.matchers.len();
        if index < fields {
            spec.fields[index].name.location()
        } else if index < fields + matchers {
            spec.matchers[index - fields].name.location()
        } else {
            spec.labels[0].label.location()
        }
    };
    let order = order::by_dependencies(
        &lowering.names.derived,
        &deps,
        "field",
        locate,
        &mut lowering.errors,
    );
    let decls: Option<Vec<Derived<Declared>>> =
        decls.into_iter().map(|d| d.map(|d| d.derived)).collect();
    match (order, decls) {
        (Some(order), Some(decls)) => Ordered::new(decls, &order),
        _ => Ordered::default(),
    }
}

/// The `labels:` rules as one derived value: the first label whose condition
/// holds, else null.
fn labels(lowering: &mut Lowering<'_>) -> Option<WithDeps> {
    let spec = lowering.names.spec;
    let mut rules = Vec::new();
    let mut deps = Vec::new();
    for rule in &spec.labels {
        let Some(lowered) = lowering.compile_expr(&rule.expr, Scope::ITEM) else {
            continue;
        };
        if !Type::Bool.accepts(&lowered.ty) {
            let kind = E::LabelNotBool {
                label: rule.label.text.clone(),
                found: lowered.ty,
            };
            lowering.report(kind, rule.expr.whole());
            continue;
        }
        deps.extend(lowered.deps);
        // A condition that is not a bool at run time fails as the rule's condition.
        let at = lowering.locate(rule.expr.whole());
        rules.push((lowered.op, rule.label.text.clone(), at));
    }
    if rules.len() != spec.labels.len() {
        return None;
    }
    let op = rules.into_iter().rev().fold(
        Op::Const(Value::Null),
        |otherwise, (condition, label, at)| {
            Op::If(
                Box::new(condition),
                Box::new(Op::Const(Value::from(label.as_str()))),
                Box::new(otherwise),
                at,
            )
        },
    );
    let text = spec
        .labels
        .iter()
        .map(|r| format!("{}: {}", r.label.text, r.expr.text))
        .collect::<Vec<_>>()
        .join("; ");
    Some(WithDeps {
        derived: Derived {
            name: LABEL.to_string(),
            kind: DerivedKind::Label,
            op,
            ty: Type::Str,
            text,
            at: spec.labels[0].label.location(),
        },
        deps,
    })
}

/// `offenders:`: which items reports list, and the per-item values they show.
pub fn offenders(lowering: &mut Lowering<'_>) -> Option<OffendersPlan<Declared>> {
    let decl = lowering.names.spec.offenders.as_ref()?;
    let compiled = lowering.compile_expr(&decl.when, Scope::ITEM);
    let derived = &lowering.names.derived;
    let mut show = Vec::new();
    for name in &decl.show {
        match lowering.names.derived(&name.text) {
            Some(index) => show.push((name.text.clone(), DeclaredDerived(index))),
            None => {
                let kind = E::UnknownOffenderShow {
                    name: name.text.clone(),
                    candidates: derived.clone(),
                };
                lowering.report(kind, name.location());
            }
        }
    }
    let when = compiled?;
    if !Type::Bool.accepts(&when.ty) {
        let kind = E::OffendersWhenNotBool { found: when.ty };
        lowering.report(kind, decl.when.whole());
        return None;
    }
    Some(OffendersPlan {
        when: when.op,
        text: decl.when.text.clone(),
        at: decl.when.whole(),
        show,
        limit: decl.limit,
    })
}

fn matcher(lowering: &mut Lowering<'_>, decl: &MatcherDecl) -> Option<WithDeps> {
    let Some(kind) = matchers::kind(&decl.kind.text) else {
        let kind = E::UnknownMatcherKind {
            kind: decl.kind.text.clone(),
            kinds: matchers::KIND_NAMES,
        };
        lowering.report(kind, decl.kind.location());
        return None;
    };
    let mut parts = MatcherParts::default();
    matcher_inputs(lowering, decl, kind, &mut parts);
    matcher_options(lowering, decl, kind, &mut parts);
    matcher_keys(lowering, decl, kind, &mut parts);
    let MatcherParts {
        inputs,
        deps,
        options,
        texts,
        ok,
    } = parts;
    if !ok {
        return None;
    }
    match Matcher::build(kind, &options) {
        Ok(matcher) => Some(WithDeps {
            derived: Derived {
                name: decl.name.text.clone(),
                kind: DerivedKind::Matcher,
                // The matcher fails (its inputs are checked) where it is declared.
                op: Op::Matcher(
                    Arc::new(matcher),
                    inputs,
                    lowering.locate(decl.name.location()),
                ),
                ty: (kind.returns)(),
                text: format!("{}({})", kind.name, texts.join(", ")),
                at: decl.name.location(),
            },
            deps,
        }),
        Err(message) => {
            let error = E::MatcherRejected {
                matcher: decl.name.text.clone(),
                message,
            };
            lowering.report(error, decl.name.location());
            None
        }
    }
}

/// A matcher as its declaration is compiled: inputs, options, and whether all is well.
struct MatcherParts {
    inputs: Vec<DeclaredOp>,
    deps: Vec<usize>,
    options: Vec<OptionValue>,
    /// `key: value` of each input and given option, for `check`.
    texts: Vec<String>,
    ok: bool,
}

impl Default for MatcherParts {
    fn default() -> Self {
        MatcherParts {
            inputs: Vec::new(),
            deps: Vec::new(),
            options: Vec::new(),
            texts: Vec::new(),
            ok: true,
        }
    }
}

fn find_arg<'d>(decl: &'d MatcherDecl, name: &str) -> Option<&'d MatcherArg> {
    decl.args.iter().find(|a| a.name.text == name)
}
/// Each input the kind needs: an expression of the type it takes.
fn matcher_inputs(
    lowering: &mut Lowering<'_>,
    decl: &MatcherDecl,
    kind: &'static MatcherKind,
    parts: &mut MatcherParts,
) {
    for (input, param) in kind.inputs {
        let Some(given) = find_arg(decl, input) else {
            let error = E::MissingMatcherInput {
                matcher: decl.name.text.clone(),
                kind: kind.name,
                input,
            };
            lowering.report(error, decl.name.location());
            parts.ok = false;
            continue;
        };
        let Some(expr) = &given.expr else {
            let error = E::MatcherInputNotExpression {
                input,
                found: given.type_name,
            };
            lowering.report(error, given.name.location());
            parts.ok = false;
            continue;
        };
        match lowering.compile_expr(expr, Scope::ITEM) {
            Some(lowered) => {
                if !param.accepts(&lowered.ty) {
                    let error = E::MatcherInputType {
                        input,
                        kind: kind.name,
                        expected: param.describe(),
                        found: lowered.ty.clone(),
                    };
                    lowering.report(error, expr.whole());
                    parts.ok = false;
                }
                parts.texts.push(format!("{input}: {}", expr.text));
                parts.inputs.push(lowered.op);
                parts.deps.extend(lowered.deps);
            }
            None => parts.ok = false,
        }
    }
}

/// Each option of the kind: as given, or its default.
fn matcher_options(
    lowering: &mut Lowering<'_>,
    decl: &MatcherDecl,
    kind: &'static MatcherKind,
    parts: &mut MatcherParts,
) {
    for option in kind.options {
        let given = find_arg(decl, option.name);
        let value = match (given, option.default) {
            (Some(given), _) => option_value(lowering, option.name, option.kind, given),
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
                let error = E::MissingMatcherOption {
                    matcher: decl.name.text.clone(),
                    kind: kind.name,
                    option: option.name,
                };
                lowering.report(error, decl.name.location());
                None
            }
        };
        match value {
            Some(value) => {
                if given.is_some() {
                    parts
                        .texts
                        .push(format!("{}: {}", option.name, describe_option(&value)));
                }
                parts.options.push(value);
            }
            None => parts.ok = false,
        }
    }
}

/// Keys the kind does not know.
fn matcher_keys(
    lowering: &mut Lowering<'_>,
    decl: &MatcherDecl,
    kind: &'static MatcherKind,
    parts: &mut MatcherParts,
) {
    let known: Vec<&'static str> = kind
        .inputs
        .iter()
        .map(|(n, _)| *n)
        .chain(kind.options.iter().map(|o| o.name))
        .collect();
    for MatcherArg { name, .. } in &decl.args {
        if !known.contains(&name.text.as_str()) {
            let error = E::UnknownMatcherKey {
                kind: kind.name,
                key: name.text.clone(),
                known: known.clone(),
            };
            lowering.report(error, name.location());
            parts.ok = false;
        }
    }
}

fn option_value(
    lowering: &mut Lowering<'_>,
    option: &str,
    kind: OptionKind,
    given: &MatcherArg,
) -> Option<OptionValue> {
    use crate::plan::compile::error::OptionProblem as P;
    let value = match (kind, &given.constant) {
        (OptionKind::Bool, Constant::Bool(b)) => Ok(OptionValue::Bool(*b)),
        (OptionKind::Count, Constant::Int(n)) if *n >= 0 => Ok(OptionValue::Count(*n as usize)),
        (OptionKind::Text, Constant::Str(s)) => Ok(OptionValue::Text(s.clone())),
        (OptionKind::Choice(choices), Constant::Str(s)) if choices.contains(&s.as_str()) => {
            Ok(OptionValue::Text(s.clone()))
        }
        (OptionKind::Choice(choices), _) => Err(P::NotOneOf { choices }),
        (OptionKind::Regex, Constant::Str(s)) => regex::Regex::new(s)
            .map(OptionValue::Regex)
            .map_err(|e| P::BadRegex {
                error: regex_problem(&e),
            }),
        (OptionKind::Bool, _) => Err(P::Wrong {
            expected: "true or false",
            found: given.type_name,
        }),
        (OptionKind::Count, _) => Err(P::Wrong {
            expected: "a whole number ≥ 0",
            found: given.type_name,
        }),
        (OptionKind::Text | OptionKind::Regex, _) => Err(P::Wrong {
            expected: "a string",
            found: given.type_name,
        }),
    };
    value
        .map_err(|problem| {
            let error = E::BadMatcherOption {
                option: option.to_string(),
                problem,
            };
            lowering.report(error, given.at.clone());
        })
        .ok()
}

/// The regex crate's account of a bad pattern is several lines (the pattern,
/// a caret, then `error: unclosed group`): its last line says what is wrong.
fn regex_problem(error: &regex::Error) -> String {
    let text = error.to_string();
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(&text);
    last.trim().trim_start_matches("error: ").to_string()
}

fn describe_option(value: &OptionValue) -> String {
    match value {
        OptionValue::Bool(b) => b.to_string(),
        OptionValue::Count(n) => n.to_string(),
        OptionValue::Text(t) => format!("{t:?}"),
        OptionValue::Regex(r) => format!("/{}/", r.as_str()),
    }
}
