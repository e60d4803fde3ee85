//! Calls: a called name resolved against the table of callables, its arguments
//! lowered and checked against the row's signature. Reads [`Names`] through the
//! lowering; adds the call's op and type. Aggregates are lowered in `aggregates`.

use crate::base::suggest::suggestion;
use crate::base::types::Type;
use crate::ir::Op;
use crate::library::builtins::Builtin;
use crate::library::callables::{self, Callable};
use crate::library::run_stats::RunStat;
use crate::plan::compile::declared::DeclaredDataset;
use crate::plan::compile::error::CompileError as E;
use crate::plan::compile::expr::{DeclaredOp, ExprCtx, Lowering, Scope};
use crate::syntax::{Expr, ExprKind, Span};

/// A call as written: `name(args where filter)`.
pub struct Call<'e> {
    pub name: &'e str,
    pub name_span: Span,
    pub args: &'e [Expr],
    pub filter: Option<&'e Expr>,
    /// The whole call.
    pub expr: &'e Expr,
}

impl Lowering<'_> {
    pub(super) fn call(
        &mut self,
        call: Call<'_>,
        scope: Scope<'_>,
        ctx: &mut ExprCtx<'_>,
    ) -> Option<(DeclaredOp, Type)> {
        let callable = callables::lookup(call.name);
        match callable {
            Some(Callable::Aggregate(def)) => return self.aggregate(def, &call, scope, ctx),
            Some(Callable::Records) if call.filter.is_none() => {
                return self.dataset_records(&call, scope, ctx)
            }
            Some(Callable::RunStat(stat)) if call.filter.is_none() => {
                return self.run_stat(stat, &call, scope, ctx)
            }
            _ => {}
        }
        let Call {
            name, args, expr, ..
        } = call;
        if let Some(filter) = call.filter {
            let kind = E::WhereOnNonAggregate {
                name: name.to_string(),
            };
            self.error_at(ctx, filter.span, kind);
            return None;
        }
        let lowered: Vec<Option<(DeclaredOp, Type)>> =
            args.iter().map(|a| self.lower(a, scope, ctx)).collect();
        let builtin = match callable {
            Some(Callable::If) => return self.if_call(args, lowered, expr, ctx),
            Some(Callable::Scalar(builtin)) => builtin,
            _ => {
                let kind = E::UnknownFunction {
                    name: name.to_string(),
                    suggestion: suggestion(name, callables::names()),
                };
                self.error_at(ctx, call.name_span, kind);
                return None;
            }
        };
        let lowered: Vec<(DeclaredOp, Type)> = lowered.into_iter().collect::<Option<_>>()?;
        self.check_builtin_args(builtin, args, &lowered, expr, ctx)?;
        let types: Vec<Type> = lowered.iter().map(|(_, t)| t.clone()).collect();
        let ty = builtin.return_type(&types);
        let at = self.at(ctx, expr.span);
        Some((
            Op::Call(builtin, lowered.into_iter().map(|(op, _)| op).collect(), at),
            ty,
        ))
    }

    /// `if(condition, then, else)`: its type is the join of both branches.
    fn if_call(
        &mut self,
        args: &[Expr],
        lowered: Vec<Option<(DeclaredOp, Type)>>,
        expr: &Expr,
        ctx: &mut ExprCtx<'_>,
    ) -> Option<(DeclaredOp, Type)> {
        if args.len() != 3 {
            self.error_at(ctx, expr.span, E::IfArity { found: args.len() });
            return None;
        }
        let mut lowered: Vec<(DeclaredOp, Type)> = lowered.into_iter().collect::<Option<_>>()?;
        if !Type::Bool.accepts(&lowered[0].1) {
            let kind = E::IfConditionNotBool {
                found: lowered[0].1.clone(),
            };
            self.error_at(ctx, args[0].span, kind);
            return None;
        }
        let (otherwise, else_ty) = lowered.pop()?;
        let (then, then_ty) = lowered.pop()?;
        let (condition, _) = lowered.pop()?;
        let at = self.at(ctx, expr.span);
        Some((
            Op::If(Box::new(condition), Box::new(then), Box::new(otherwise), at),
            then_ty.join(&else_ty),
        ))
    }

    fn check_builtin_args(
        &mut self,
        builtin: &Builtin,
        args: &[Expr],
        lowered: &[(DeclaredOp, Type)],
        expr: &Expr,
        ctx: &mut ExprCtx<'_>,
    ) -> Option<()> {
        let (min, max) = builtin.arity();
        if args.len() < min || max.is_some_and(|max| args.len() > max) {
            let kind = E::BuiltinArity {
                name: builtin.name,
                min,
                max,
                found: args.len(),
                example: builtin.example,
            };
            self.error_at(ctx, expr.span, kind);
            return None;
        }
        let mut ok = true;
        for (i, (_, ty)) in lowered.iter().enumerate() {
            let param = builtin.param(i);
            if !param.accepts(ty) {
                let kind = E::BuiltinArgType {
                    position: i + 1,
                    name: builtin.name,
                    expected: param.describe(),
                    found: ty.clone(),
                    example: builtin.example,
                };
                self.error_at(ctx, args[i].span, kind);
                ok = false;
            }
        }
        ok.then_some(())
    }

    /// `run_mean(precision)`: a per-run metric summarised over the runs.
    fn run_stat(
        &mut self,
        stat: RunStat,
        call: &Call<'_>,
        scope: Scope<'_>,
        ctx: &mut ExprCtx<'_>,
    ) -> Option<(DeclaredOp, Type)> {
        let name = call.name;
        if !matches!(scope, Scope::Metric { .. } | Scope::Gate { .. }) {
            let kind = E::RunStatScope {
                name: name.to_string(),
            };
            self.error_at(ctx, call.expr.span, kind);
            return None;
        }
        let metric = match call.args {
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
            let kind = E::RunStatNeedsMetric {
                name: name.to_string(),
            };
            self.error_at(ctx, call.expr.span, kind);
            return None;
        };
        Some((Op::RunStat(stat, metric), Type::Float))
    }

    /// `records(dataset)`: how many records a dataset kept.
    fn dataset_records(
        &mut self,
        call: &Call<'_>,
        scope: Scope<'_>,
        ctx: &mut ExprCtx<'_>,
    ) -> Option<(DeclaredOp, Type)> {
        let dataset = match call.args {
            [Expr {
                kind: ExprKind::Name(name),
                ..
            }] => self.dataset_index(name),
            _ => None,
        };
        match (dataset, scope) {
            (Some(dataset), Scope::Metric { .. }) => {
                Some((Op::DatasetRecords(DeclaredDataset(dataset)), Type::Int))
            }
            (Some(_), _) => {
                self.error_at(ctx, call.expr.span, E::RecordsOnlyInMetrics);
                None
            }
            (None, _) => {
                let datasets = self.names.spec.datasets.iter();
                let kind = E::RecordsNeedsDataset {
                    datasets: datasets.map(|d| d.name.text.clone()).collect(),
                };
                self.error_at(ctx, call.expr.span, kind);
                None
            }
        }
    }
}
