//! Expressions: parse an expression's text, resolve its names in a scope,
//! check its types, and lower it to a declared op. Reads [`Names`] (and, in
//! gates, the metrics' types); adds the op, its type, and the declarations it
//! depends on. Calls are resolved in `calls`, aggregates in `aggregates`.

use std::sync::Arc;

use crate::base::diagnostic::{Diagnostic, Location};
use crate::base::types::Type;
use crate::base::value::Value;
use crate::ir::{ExprAt, ExprLocations, Op};
use crate::plan::compile::calls;
use crate::plan::compile::declared::{Declared, DeclaredDataset, DeclaredMetric};
use crate::plan::compile::error::CompileError;
use crate::plan::compile::names::Names;
use crate::plan::Aggregate;
use crate::spec::ExprText;
use crate::syntax::{self, Expr, ExprKind, Span, UnaryOp};

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

    pub(super) fn is_gate(self) -> bool {
        matches!(self, Scope::Gate { .. })
    }

    pub(super) fn is_metric(self) -> bool {
        matches!(self, Scope::Metric { .. })
    }

    /// A metric's type as this scope knows it: in gates, its checked type; while
    /// the metrics themselves are compiled, a number.
    pub(super) fn metric_type(self, metric: DeclaredMetric) -> Type {
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
    /// Where each expression an op can fail in is written, for runtime errors.
    pub(super) locations: ExprLocations,
    /// Each field's type once the fields are lowered (by declaration position),
    /// for the metrics and gates that read them.
    pub(super) field_types: Vec<Type>,
}

impl<'a> Lowering<'a> {
    pub fn new(names: &'a Names<'a>, errors: Vec<Diagnostic>) -> Self {
        Lowering {
            names,
            errors,
            aggregates: Vec::new(),
            locations: ExprLocations::default(),
            field_types: Vec::new(),
        }
    }

    /// The aggregates found, the locations of the expressions, and every error so far.
    pub fn finish(self) -> (Vec<Aggregate<Declared>>, ExprLocations, Vec<Diagnostic>) {
        (self.aggregates, self.locations, self.errors)
    }

    /// An id for `location`, which an op that can fail carries into the plan.
    pub(super) fn locate(&mut self, location: Location) -> ExprAt {
        self.locations.add(location)
    }

    /// An id for `span` of the expression being lowered.
    pub(super) fn at(&mut self, ctx: &ExprCtx<'_>, span: Span) -> ExprAt {
        self.locate(ctx.text.location(span.start, span.end))
    }

    /// Reports `kind` at `at`.
    pub fn report(&mut self, kind: CompileError, at: Location) {
        self.errors.push(Diagnostic::of(&kind).at(at));
    }

    /// Passes on a problem found before compiling (a file that was not found).
    pub fn pass_on(&mut self, diagnostic: Diagnostic) {
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
                let kind = CompileError::Syntax {
                    message: error.message,
                    text: text.text.clone(),
                };
                let end = error.span.end.max(error.span.start + 1);
                self.report(kind, text.location(error.span.start, end));
                None
            }
        }
    }

    /// Reports `kind` at `span` of the expression being lowered.
    pub(super) fn error_at(&mut self, ctx: &ExprCtx<'_>, span: Span, kind: CompileError) {
        self.report(kind, ctx.text.location(span.start, span.end));
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
                    let kind = CompileError::FieldOfNonObject {
                        field: name.clone(),
                        base: base_ty,
                    };
                    self.error_at(ctx, expr.span, kind);
                    return None;
                }
                let at = self.at(ctx, expr.span);
                Some((
                    Op::Field(Box::new(base_op), Arc::from(name.as_str()), at),
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
                        let kind = CompileError::BadIndex {
                            base: base_ty,
                            index: index_ty,
                        };
                        self.error_at(ctx, expr.span, kind);
                        return None;
                    }
                };
                let at = self.at(ctx, expr.span);
                Some((
                    Op::Index(Box::new(base_op), Box::new(index_op), at),
                    element,
                ))
            }
            ExprKind::Unary(op, operand) => {
                let (inner, ty) = self.lower(operand, scope, ctx)?;
                match op {
                    UnaryOp::Not if Type::Bool.accepts(&ty) => Some((
                        Op::Not(Box::new(inner), self.at(ctx, expr.span)),
                        Type::Bool,
                    )),
                    UnaryOp::Neg if Type::Float.accepts(&ty) => Some((
                        Op::Neg(Box::new(inner), self.at(ctx, expr.span)),
                        if ty == Type::Int {
                            Type::Int
                        } else {
                            Type::Float
                        },
                    )),
                    UnaryOp::Not => {
                        self.error_at(ctx, operand.span, CompileError::NotNeedsBool { found: ty });
                        None
                    }
                    UnaryOp::Neg => {
                        self.error_at(
                            ctx,
                            operand.span,
                            CompileError::NegNeedsNumber { found: ty },
                        );
                        None
                    }
                }
            }
            ExprKind::Binary(op, left, right) => {
                let l = self.lower(left, scope, ctx);
                let r = self.lower(right, scope, ctx);
                let ((lop, lty), (rop, rty)) = (l?, r?);
                let ty = self.binary_type(*op, (&lty, &rty), expr, (left, right), ctx)?;
                let at = self.at(ctx, expr.span);
                Some((Op::Binary(*op, Box::new(lop), Box::new(rop), at), ty))
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
}

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
