//! Expressions: parse an expression's text, resolve its names in a scope,
//! check its types, and lower it to a declared op. Reads [`Names`] (and, in
//! gates, the metrics' types); adds the op, its type, and the declarations it
//! depends on. Calls are resolved in `calls`, aggregates in `aggregates`.

use std::sync::Arc;

use crate::base::diagnostic::{Diagnostic, Location};
use crate::base::suggest::did_you_mean;
use crate::base::types::Type;
use crate::base::value::Value;
use crate::ir::Op;
use crate::library::matchers;
use crate::plan::compile::declared::{
    DatasetPath, Declared, DeclaredDataset, DeclaredDerived, DeclaredMetric,
};
use crate::plan::compile::names::Names;
use crate::plan::Aggregate;
use crate::spec::{ExprText, ParamType};
use crate::syntax::{self, BinaryOp, Expr, ExprKind, Span, UnaryOp};

/// The name under which the `labels:` rules put each item's label.
pub const LABEL: &str = "label";

/// An op as the compiler builds it.
pub type DeclaredOp = Op<Declared>;

/// What an expression may see.
#[derive(Clone, Copy)]
pub enum Scope<'a> {
    /// A dataset's key or checks: bare names are the record's own fields.
    Record(DeclaredDataset),
    /// Per-item fields and matchers, and aggregate arguments. `cutoff`: inside
    /// a metric expanded from `ks`, the value `k` names.
    Item {
        in_aggregate: bool,
        cutoff: Option<u32>,
    },
    Metric {
        cutoff: Option<u32>,
    },
    /// Gates see the metrics, whose types are known by then.
    Gate {
        metric_types: &'a [Type],
    },
    /// Only params: severities.
    Params,
}

impl Scope<'_> {
    pub const ITEM: Scope<'static> = Scope::Item {
        in_aggregate: false,
        cutoff: None,
    };

    fn is_gate(self) -> bool {
        matches!(self, Scope::Gate { .. })
    }

    fn is_metric(self) -> bool {
        matches!(self, Scope::Metric { .. })
    }

    /// A metric's type as this scope knows it: in gates, its checked type; while
    /// the metrics themselves are compiled, a number.
    fn metric_type(self, metric: DeclaredMetric) -> Type {
        match self {
            Scope::Gate { metric_types } => {
                metric_types.get(metric.0).cloned().unwrap_or(Type::Float)
            }
            _ => Type::Float,
        }
    }
}

/// One expression, lowered.
pub struct Lowered {
    pub op: DeclaredOp,
    pub ty: Type,
    /// The declarations it depends on: fields and matchers in an item scope,
    /// metrics in a metric scope (by declaration position).
    pub deps: Vec<usize>,
}

/// The expression being lowered, and what it was found to depend on.
pub struct ExprCtx<'t> {
    pub text: &'t ExprText,
    pub deps: Vec<usize>,
}

/// Lowers expressions against the spec's names, collecting errors and the
/// aggregates the expressions fold.
pub struct Lowering<'a> {
    pub names: &'a Names<'a>,
    pub(super) errors: Vec<Diagnostic>,
    pub(super) aggregates: Vec<Aggregate<Declared>>,
}

impl<'a> Lowering<'a> {
    pub fn new(names: &'a Names<'a>, errors: Vec<Diagnostic>) -> Self {
        Lowering {
            names,
            errors,
            aggregates: Vec::new(),
        }
    }

    /// The aggregates found, and every error so far.
    pub fn finish(self) -> (Vec<Aggregate<Declared>>, Vec<Diagnostic>) {
        (self.aggregates, self.errors)
    }

    pub fn error(&mut self, diagnostic: Diagnostic) {
        self.errors.push(diagnostic);
    }

    /// Parses and lowers one expression.
    pub fn compile_expr(&mut self, text: &ExprText, scope: Scope<'_>) -> Option<Lowered> {
        let expr = self.parse_expr(text)?;
        let mut ctx = ExprCtx {
            text,
            deps: Vec::new(),
        };
        let (op, ty) = self.lower(&expr, scope, &mut ctx)?;
        Some(Lowered {
            op,
            ty,
            deps: ctx.deps,
        })
    }

    /// Parses one expression, reporting a syntax error at its place in the spec.
    pub fn parse_expr(&mut self, text: &ExprText) -> Option<Expr> {
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

    pub(super) fn error_at(
        &mut self,
        ctx: &ExprCtx<'_>,
        span: Span,
        message: impl Into<String>,
    ) -> &mut Diagnostic {
        let location: Location = ctx.text.location(span.start, span.end);
        self.errors.push(Diagnostic::error(message).at(location));
        self.errors.last_mut().expect("just pushed")
    }

    pub fn lower(
        &mut self,
        expr: &Expr,
        scope: Scope<'_>,
        ctx: &mut ExprCtx<'_>,
    ) -> Option<(DeclaredOp, Type)> {
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
                let lowered: Vec<Option<(DeclaredOp, Type)>> = items
                    .iter()
                    .map(|item| self.lower(item, scope, ctx))
                    .collect();
                let lowered: Vec<(DeclaredOp, Type)> =
                    lowered.into_iter().collect::<Option<_>>()?;
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
            ExprKind::Member(base, name) => {
                if let Some(result) = self.dotted(expr, scope, ctx) {
                    return result;
                }
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
                if let Some(result) = self.dotted(expr, scope, ctx) {
                    return result;
                }
                let base = self.lower(base, scope, ctx);
                let index = self.lower(index, scope, ctx);
                let ((base_op, base_ty), (index_op, index_ty)) = (base?, index?);
                let element = match &base_ty {
                    Type::List(element) if Type::Int.accepts(&index_ty) => (**element).clone(),
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
                let ty = self.binary_type(*op, (&lty, &rty), expr, (left, right), ctx)?;
                Some((Op::Binary(*op, Box::new(lop), Box::new(rop)), ty))
            }
            ExprKind::Call {
                name,
                name_span,
                args,
                filter,
            } => self.call(
                calls::Call {
                    name,
                    name_span: *name_span,
                    args,
                    filter: filter.as_deref(),
                    expr,
                },
                scope,
                ctx,
            ),
        }
    }

    /// `params.NAME`, `baseline.NAME` or a dataset path such as `gold.answer_json.claim`;
    /// `None` for any other member or index expression.
    fn dotted(
        &mut self,
        expr: &Expr,
        scope: Scope<'_>,
        ctx: &mut ExprCtx<'_>,
    ) -> Option<Option<(DeclaredOp, Type)>> {
        if let Some(result) = self.explicit_param(expr, scope, ctx) {
            return Some(result);
        }
        if let Some(result) = self.baseline_metric(expr, scope, ctx) {
            return Some(result);
        }
        self.dataset_path(expr, scope)
            .map(|op| Some((op, Type::Any)))
    }

    /// `params.NAME`: a param, named explicitly (the only way to reach one from a
    /// dataset's key or checks, where bare names are the record's fields). `None`
    /// when `params` is a dataset of the spec.
    fn explicit_param(
        &mut self,
        expr: &Expr,
        scope: Scope<'_>,
        ctx: &mut ExprCtx<'_>,
    ) -> Option<Option<(DeclaredOp, Type)>> {
        let (root, name) = name_dot_name(expr)?;
        let shadowed = matches!(scope, Scope::Item { .. })
            && self
                .names
                .spec
                .datasets
                .iter()
                .any(|d| d.name.text == "params");
        if root != "params" || shadowed {
            return None;
        }
        if self.names.params.iter().any(|p| &p.name == name) {
            return Some(self.name(name, expr.span, Scope::Params, ctx));
        }
        let names: Vec<&str> = self.names.params.iter().map(|p| p.name.as_str()).collect();
        let help = match did_you_mean(name, names.iter().copied()) {
            Some(s) => format!("did you mean `params.{s}`?"),
            None => format!("params: {}", names.join(", ")),
        };
        self.error_at(ctx, expr.span, format!("the spec has no param `{name}`"))
            .help = Some(help);
        Some(None)
    }

    /// `baseline.NAME` in a gate: the metric's value in the `--baseline` report.
    fn baseline_metric(
        &mut self,
        expr: &Expr,
        scope: Scope<'_>,
        ctx: &mut ExprCtx<'_>,
    ) -> Option<Option<(DeclaredOp, Type)>> {
        let (root, name) = name_dot_name(expr)?;
        let metrics = &self.names.spec.metrics;
        if root != "baseline" || metrics.iter().any(|m| m.name.text == "baseline") {
            return None;
        }
        if !scope.is_gate() {
            self.error_at(ctx, expr.span, "`baseline` is only known to gates")
                .help = Some(
                "compare against the baseline in a gate, e.g. `chr >= baseline.chr - 0.02`".into(),
            );
            return Some(None);
        }
        if let Some(index) = metrics.iter().position(|m| &m.name.text == name) {
            let metric = DeclaredMetric(index);
            return Some(Some((Op::Baseline(metric), scope.metric_type(metric))));
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
    fn dataset_path(&mut self, expr: &Expr, scope: Scope<'_>) -> Option<DeclaredOp> {
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
                    let dataset = match scope {
                        Scope::Record(dataset) => {
                            segments.insert(0, root.clone());
                            dataset
                        }
                        Scope::Item { .. } => DeclaredDataset(self.dataset_index(root)?),
                        _ => return None,
                    };
                    return Some(Op::Input(DatasetPath {
                        dataset,
                        path: segments,
                    }));
                }
                _ => return None,
            }
        }
    }

    pub(super) fn dataset_index(&self, name: &str) -> Option<usize> {
        self.names
            .spec
            .datasets
            .iter()
            .position(|d| d.name.text == name)
    }

    fn name(
        &mut self,
        name: &str,
        span: Span,
        scope: Scope<'_>,
        ctx: &mut ExprCtx<'_>,
    ) -> Option<(DeclaredOp, Type)> {
        let spec = self.names.spec;
        if let Scope::Record(dataset) = scope {
            let path = vec![name.to_string()];
            return Some((Op::Input(DatasetPath { dataset, path }), Type::Any));
        }
        if let (
            "k",
            Scope::Metric { cutoff: Some(k) }
            | Scope::Item {
                in_aggregate: true,
                cutoff: Some(k),
            },
        ) = (name, scope)
        {
            return Some((Op::Const(Value::Number(f64::from(k))), Type::Int));
        }
        if let Some(param) = self.names.params.iter().find(|p| p.name == name) {
            let ty = match param.ty {
                ParamType::Number => Type::Float,
                ParamType::Integer => Type::Int,
                ParamType::String => Type::Str,
                ParamType::Bool => Type::Bool,
                ParamType::List => Type::list_of(Type::Any),
            };
            return Some((Op::Const(param.value.clone()), ty));
        }
        let derived = &self.names.derived;
        let mut candidates: Vec<&str> = self.names.params.iter().map(|p| p.name.as_str()).collect();
        match scope {
            Scope::Item { in_aggregate, .. } => {
                if let Some(dataset) = self.dataset_index(name) {
                    let path = Vec::new();
                    let dataset = DeclaredDataset(dataset);
                    return Some((Op::Input(DatasetPath { dataset, path }), Type::Any));
                }
                if let Some(index) = derived.iter().position(|n| n == name) {
                    // Inside a metric's aggregate this is not a dependency between metrics.
                    if !in_aggregate {
                        ctx.deps.push(index);
                    }
                    let ty = self.derived_type_hint(index);
                    return Some((Op::Derived(DeclaredDerived(index)), ty));
                }
                candidates.extend(spec.datasets.iter().map(|d| d.name.text.as_str()));
                candidates.extend(derived.iter().map(String::as_str));
            }
            Scope::Metric { .. } | Scope::Gate { .. } => {
                if let Some(index) = spec.metrics.iter().position(|m| m.name.text == name) {
                    if scope.is_metric() {
                        ctx.deps.push(index);
                    }
                    let metric = DeclaredMetric(index);
                    return Some((Op::Metric(metric), scope.metric_type(metric)));
                }
                candidates.extend(spec.metrics.iter().map(|m| m.name.text.as_str()));
            }
            Scope::Params | Scope::Record(_) => {}
        }
        let is_item_name =
            spec.datasets.iter().any(|d| d.name.text == name) || derived.iter().any(|n| n == name);
        let is_metric = spec.metrics.iter().any(|m| m.name.text == name);
        let help = match scope {
            Scope::Metric { .. } if is_item_name => {
                format!("`{name}` is a per-item value; aggregate it, e.g. `count({name})` or `ratio({name})`")
            }
            Scope::Gate { .. } if is_item_name => format!("`{name}` is a per-item value; gates see metrics and params"),
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
            Scope::Metric { .. } | Scope::Gate { .. } => "not a metric or param",
            _ => "not a param",
        };
        let d = self.error_at(ctx, span, format!("unknown name `{name}`"));
        d.label = Some(what.into());
        d.help = Some(help);
        None
    }

    /// The declared type of a derived value, when it can be known without ordering:
    /// matchers have fixed types; fields are checked where they are used.
    fn derived_type_hint(&self, index: usize) -> Type {
        let spec = self.names.spec;
        let fields = spec.fields.len();
        if index >= fields + spec.matchers.len() {
            return Type::Str; // the label
        }
        if index >= fields {
            if let Some(kind) = matchers::kind(&spec.matchers[index - fields].kind.text) {
                return (kind.returns)();
            }
        }
        Type::Any
    }

    fn binary_type(
        &mut self,
        op: BinaryOp,
        (l, r): (&Type, &Type),
        expr: &Expr,
        (left, right): (&Expr, &Expr),
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
}

use crate::plan::compile::calls;

/// `root.name`: the two names, or `None` for any other expression.
pub(super) fn name_dot_name(expr: &Expr) -> Option<(&String, &String)> {
    let ExprKind::Member(base, name) = &expr.kind else {
        return None;
    };
    let ExprKind::Name(root) = &base.kind else {
        return None;
    };
    Some((root, name))
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
