//! Aggregates: a call to a row of the aggregate table, checked and added to the
//! plan's list of aggregates. Reads the scope it is written in (only metrics, and
//! gates for per-run aggregates, may fold items); adds an [`Aggregate`] and the
//! op that reads its result.

use crate::base::types::Type;
use crate::ir::{AggregateId, Op};
use crate::library::aggregates::{AggregateDef, AggregateFn, Gives, Takes};
use crate::plan::compile::calls::Call;
use crate::plan::compile::expr::{DeclaredOp, ExprCtx, Lowering, Scope};
use crate::plan::Aggregate;
use crate::syntax::ExprKind;

impl Lowering<'_> {
    pub(super) fn aggregate(
        &mut self,
        def: &AggregateDef,
        call: &Call<'_>,
        scope: Scope<'_>,
        ctx: &mut ExprCtx<'_>,
    ) -> Option<(DeclaredOp, Type)> {
        let Call {
            name,
            name_span,
            args,
            filter,
            expr,
        } = *call;
        let cutoff = match scope {
            Scope::Metric { cutoff } => cutoff,
            // A gate may aggregate too (`p95(latency_ms) <= 1200`), but not across runs.
            Scope::Gate { .. } if !def.across_runs => None,
            Scope::Item {
                in_aggregate: true, ..
            } => {
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
                    Scope::Gate { .. } => {
                        "define a metric with the aggregate and gate on the metric".into()
                    }
                    _ => {
                        "per-item fields see one item at a time; move the aggregate into `metrics:`"
                            .into()
                    }
                });
                return None;
            }
        };
        let item = Scope::Item {
            in_aggregate: true,
            cutoff,
        };
        let (min, max) = def.arity;
        if args.len() < min || args.len() > max {
            let d = self.error_at(
                ctx,
                expr.span,
                format!(
                    "`{name}` takes {max} argument{}, found {}",
                    if max == 1 { "" } else { "s" },
                    args.len()
                ),
            );
            d.help = Some(format!("example: {}", def.example));
            return None;
        }
        let function = match def.function {
            Some(function) => function,
            // `percentile(x, q)`: the level is a literal, fixed when the spec compiles.
            None => match args[1].kind {
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
        };
        let arg = match def.takes {
            Takes::TwoLabels => {
                let labels: Vec<Option<(DeclaredOp, Type)>> =
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
        let ty = match (&arg, def.takes) {
            (_, Takes::TwoLabels | Takes::Value) => Type::Any,
            (Some((_, ty)), Takes::Condition) if !Type::Bool.accepts(ty) => {
                let d = self.error_at(
                    ctx,
                    args[0].span,
                    format!("`{name}` counts items where its argument is true, but it is {ty}"),
                );
                d.help = Some(format!("write a condition, e.g. `{name}(x > 0)`"));
                return None;
            }
            (Some(_), Takes::Condition) => Type::Bool,
            (Some((_, ty)), _) if !Type::Float.accepts(ty) => {
                self.error_at(
                    ctx,
                    args[0].span,
                    format!("`{name}` needs a number, found {ty}"),
                );
                return None;
            }
            (Some((_, ty)), _) => ty.clone(),
            (None, _) => Type::Int,
        };
        let result_ty = match def.gives {
            Gives::Int => Type::Int,
            Gives::LikeArgument if ty == Type::Int => Type::Int,
            Gives::LikeArgument | Gives::Number => Type::Float,
        };
        let text = &ctx.text.text[expr.span.start..expr.span.end];
        let subject = text
            .find('(')
            .map_or(text, |open| {
                text[open + 1..].strip_suffix(')').unwrap_or(text)
            })
            .trim()
            .to_string();
        let id = AggregateId::new(self.aggregates.len());
        self.aggregates.push(Aggregate {
            function,
            arg: arg.map(|(op, _)| op),
            filter: filter_op.map(|(op, _)| op),
            subject,
            text: text.to_string(),
            at: ctx.text.location(expr.span.start, expr.span.end),
        });
        Some((Op::Aggregate(id), result_ty))
    }
}
