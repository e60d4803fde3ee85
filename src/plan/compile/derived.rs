//! Phase 2: per-item values. Reads [`Names`]; lowers every field, matcher and the
//! `labels:` rules (one derived value, the label), and orders them by their
//! dependencies. Adds the derived values in that order with the position each
//! declaration went to; then `offenders:`, which reads them.

use std::sync::Arc;

use crate::base::diagnostic::Diagnostic;
use crate::base::suggest::did_you_mean;
use crate::base::types::Type;
use crate::base::value::Value;
use crate::ir::Op;
use crate::library::matchers::{self, Matcher, OptionDefault, OptionKind, OptionValue};
use crate::plan::compile::declared::{Declared, DeclaredDerived};
use crate::plan::compile::expr::{Lowering, Scope, LABEL};
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
            lowering.error(
                Diagnostic::error(format!(
                    "the condition of label `{}` must be true or false, found {}",
                    rule.label.text, lowered.ty
                ))
                .at(rule.expr.whole())
                .help("e.g. `answerable and not refused and hit`"),
            );
            continue;
        }
        deps.extend(lowered.deps);
        rules.push((lowered.op, rule.label.text.clone()));
    }
    if rules.len() != spec.labels.len() {
        return None;
    }
    let op =
        rules
            .into_iter()
            .rev()
            .fold(Op::Const(Value::Null), |otherwise, (condition, label)| {
                Op::If(
                    Box::new(condition),
                    Box::new(Op::Const(Value::from(label.as_str()))),
                    Box::new(otherwise),
                )
            });
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
    let mut errors = Vec::new();
    for name in &decl.show {
        match derived.iter().position(|n| *n == name.text) {
            Some(index) => show.push((name.text.clone(), DeclaredDerived(index))),
            None => {
                let mut d = Diagnostic::error(format!(
                    "`offenders.show` names `{}`, which is not a field or matcher",
                    name.text
                ))
                .at(name.location());
                if let Some(s) = did_you_mean(&name.text, derived.iter().map(String::as_str)) {
                    d = d.help(format!("did you mean `{s}`?"));
                }
                errors.push(d);
            }
        }
    }
    errors.into_iter().for_each(|d| lowering.error(d));
    let when = compiled?;
    if !Type::Bool.accepts(&when.ty) {
        lowering.error(
            Diagnostic::error(format!(
                "`offenders.when` must be true or false, found {}",
                when.ty
            ))
            .at(decl.when.whole())
            .help("e.g. `label != \"OK\"`"),
        );
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
        let d = Diagnostic::error(format!("unknown matcher kind `{}`", decl.kind.text))
            .at(decl.kind.location());
        lowering.error(
            match did_you_mean(&decl.kind.text, matchers::KIND_NAMES.iter().copied()) {
                Some(s) => d.help(format!("did you mean `{s}`?")),
                None => d.help(format!("kinds: {}", matchers::KIND_NAMES.join(", "))),
            },
        );
        return None;
    };
    let arg = |name: &str| decl.args.iter().find(|a| a.name.text == name);
    let mut ok = true;
    let mut inputs = Vec::new();
    let mut deps = Vec::new();
    let mut texts = Vec::new();
    for (input, param) in kind.inputs {
        let Some(given) = arg(input) else {
            lowering.error(
                Diagnostic::error(format!(
                    "matcher `{}` ({}) needs the input `{input}`",
                    decl.name.text, kind.name
                ))
                .at(decl.name.location())
                .help(format!("add `{input}: <expression>`")),
            );
            ok = false;
            continue;
        };
        let Some(expr) = &given.expr else {
            lowering.error(
                Diagnostic::error(format!(
                    "input `{input}` must be an expression, found {}",
                    given.type_name
                ))
                .at(given.name.location()),
            );
            ok = false;
            continue;
        };
        match lowering.compile_expr(expr, Scope::ITEM) {
            Some(lowered) => {
                if !param.accepts(&lowered.ty) {
                    lowering.error(
                        Diagnostic::error(format!(
                            "input `{input}` of a {} matcher must be {}, found {}",
                            kind.name,
                            param.describe(),
                            lowered.ty
                        ))
                        .at(expr.whole()),
                    );
                    ok = false;
                }
                texts.push(format!("{input}: {}", expr.text));
                inputs.push(lowered.op);
                deps.extend(lowered.deps);
            }
            None => ok = false,
        }
    }
    let mut options = Vec::new();
    for option in kind.options {
        let given = arg(option.name);
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
                lowering.error(
                    Diagnostic::error(format!(
                        "matcher `{}` ({}) needs the option `{}`",
                        decl.name.text, kind.name, option.name
                    ))
                    .at(decl.name.location()),
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
    for MatcherArg { name, .. } in &decl.args {
        if !known.contains(&name.text.as_str()) {
            let d = Diagnostic::error(format!(
                "a {} matcher has no key `{}`",
                kind.name, name.text
            ))
            .at(name.location());
            lowering.error(match did_you_mean(&name.text, known.iter().copied()) {
                Some(s) => d.help(format!("did you mean `{s}`?")),
                None => d.help(format!("keys: kind, {}", known.join(", "))),
            });
            ok = false;
        }
    }
    if !ok {
        return None;
    }
    match Matcher::build(kind, &options) {
        Ok(matcher) => Some(WithDeps {
            derived: Derived {
                name: decl.name.text.clone(),
                kind: DerivedKind::Matcher,
                op: Op::Matcher(Arc::new(matcher), inputs),
                ty: (kind.returns)(),
                text: format!("{}({})", kind.name, texts.join(", ")),
                at: decl.name.location(),
            },
            deps,
        }),
        Err(message) => {
            lowering.error(
                Diagnostic::error(format!("matcher `{}`: {message}", decl.name.text))
                    .at(decl.name.location()),
            );
            None
        }
    }
}

fn option_value(
    lowering: &mut Lowering<'_>,
    option: &str,
    kind: OptionKind,
    given: &MatcherArg,
) -> Option<OptionValue> {
    let value = match (kind, &given.constant) {
        (OptionKind::Bool, Constant::Bool(b)) => Ok(OptionValue::Bool(*b)),
        (OptionKind::Count, Constant::Int(n)) if *n >= 0 => Ok(OptionValue::Count(*n as usize)),
        (OptionKind::Text, Constant::Str(s)) => Ok(OptionValue::Text(s.clone())),
        (OptionKind::Choice(choices), Constant::Str(s)) if choices.contains(&s.as_str()) => {
            Ok(OptionValue::Text(s.clone()))
        }
        (OptionKind::Choice(choices), _) => {
            Err(format!("`{option}` must be one of: {}", choices.join(", ")))
        }
        (OptionKind::Regex, Constant::Str(s)) => regex::Regex::new(s)
            .map(OptionValue::Regex)
            .map_err(|e| format!("`{option}` is not a valid regex: {e}")),
        (OptionKind::Bool, _) => Err(format!("`{option}` must be true or false")),
        (OptionKind::Count, _) => Err(format!("`{option}` must be a whole number ≥ 0")),
        (OptionKind::Text | OptionKind::Regex, _) => Err(format!("`{option}` must be a string")),
    };
    value
        .map_err(|message| {
            lowering.error(
                Diagnostic::error(format!("{message}, found {}", given.type_name))
                    .at(given.at.clone()),
            );
        })
        .ok()
}

fn describe_option(value: &OptionValue) -> String {
    match value {
        OptionValue::Bool(b) => b.to_string(),
        OptionValue::Count(n) => n.to_string(),
        OptionValue::Text(t) => format!("{t:?}"),
        OptionValue::Regex(r) => format!("/{}/", r.as_str()),
    }
}
