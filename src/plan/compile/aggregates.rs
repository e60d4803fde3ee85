//! Aggregates: a call to a row of the aggregate table, checked and added to the
//! plan's list of aggregates. Reads the scope it is written in (only metrics, and
//! gates for per-run aggregates, may fold items); adds an [`Aggregate`] and the
//! op that reads its result.

use crate::base::types::Type;
use crate::ir::{AggregateId, Op};
use crate::library::aggregates::{AggregateDef, AggregateFn, Gives, Takes};
use crate::plan::compile::calls::Call;
use crate::plan::compile::error::CompileError as E;
use crate::plan::compile::expr::{DeclaredOp, ExprCtx, Lowering, Scope};
use crate::plan::Aggregate;
use crate::syntax::{Expr, ExprKind, Span};

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
        let cutoff = match item_scope(def, scope) {
            Ok(cutoff) => cutoff,
            Err(kind) => {
                self.error_at(ctx, name_span, kind);
                return None;
            }
        };
        let item = Scope::Item {
            in_aggregate: true,
            cutoff,
        };
        let (min, max) = def.arity;
        if args.len() < min || args.len() > max {
            let kind = E::AggregateArity {
                name: name.to_string(),
                max,
                found: args.len(),
                example: def.example,
            };
            self.error_at(ctx, expr.span, kind);
            return None;
        }
        let function = match (def.function, def.takes) {
            (Some(function), _) => function,
            // `percentile(x, q)` and `ece(c, ok, bins)`: a literal, fixed when the spec compiles.
            (None, Takes::CalibrationAndBins) => match args[2].kind {
                ExprKind::Number(b) if b.fract() == 0.0 && (1.0..=MAX_BINS).contains(&b) => {
                    AggregateFn::Ece(b as u32)
                }
                _ => {
                    let kind = E::EceBins {
                        max: MAX_BINS as u32,
                    };
                    self.error_at(ctx, args[2].span, kind);
                    return None;
                }
            },
            (None, _) => match args[1].kind {
                ExprKind::Number(q) if (0.0..=100.0).contains(&q) => AggregateFn::Percentile(q),
                _ => {
                    self.error_at(ctx, args[1].span, E::PercentileLevel);
                    return None;
                }
            },
        };
        // The arguments each item feeds: both labels, a confidence and whether the
        // item is correct (as a list), or the first argument.
        let fed_args = match def.takes {
            Takes::TwoLabels | Takes::Calibration => args,
            Takes::CalibrationAndBins => &args[..2],
            _ => &args[..args.len().min(1)],
        };
        let lowered: Vec<Option<(DeclaredOp, Type)>> =
            fed_args.iter().map(|a| self.lower(a, item, ctx)).collect();
        let arg = match def.takes {
            Takes::TwoLabels | Takes::Calibration | Takes::CalibrationAndBins => {
                let lowered = lowered.into_iter().collect::<Option<Vec<_>>>();
                if let Some(lowered) = &lowered {
                    if !self.check_pair(def, fed_args, lowered, ctx) {
                        return None;
                    }
                }
                Some(lowered.map(|pair| {
                    let ops = pair.into_iter().map(|(op, _)| op).collect();
                    (Op::List(ops), Type::Any)
                }))
            }
            _ => lowered.into_iter().next(),
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
                let kind = E::WhereNotBool { found: ty.clone() };
                self.error_at(ctx, f.span, kind);
                return None;
            }
        }
        let result_ty = match result_type(def, arg.as_ref().map(|(_, ty)| ty)) {
            Ok(ty) => ty,
            Err(kind) => {
                self.error_at(ctx, args[0].span, kind);
                return None;
            }
        };
        let text = &ctx.text.text[expr.span.start..expr.span.end];
        let subject = text
            .find('(')
            .map_or(text, |open| {
                text[open + 1..].strip_suffix(')').unwrap_or(text)
            })
            .trim()
            .to_string();
        // Where what the accumulator is fed is written (a bad value fails there).
        let fed = match (fed_args.first(), fed_args.last()) {
            (Some(first), Some(last)) => Some(Span {
                start: first.span.start,
                end: last.span.end,
            }),
            _ => None,
        };
        let arg_at = fed.map(|span| self.at(ctx, span));
        let filter_at = filter.map(|f| self.at(ctx, f.span));
        let id = AggregateId::new(self.aggregates.len());
        self.aggregates.push(Aggregate {
            function,
            arg: arg.map(|(op, _)| op),
            filter: filter_op.map(|(op, _)| op),
            subject,
            text: text.to_string(),
            at: ctx.text.location(expr.span.start, expr.span.end),
            arg_at,
            filter_at,
        });
        Some((Op::Aggregate(id), result_ty))
    }
}

/// The most bins `ece` takes: more than this would hold an item or two each.
const MAX_BINS: f64 = 10_000.0;

impl Lowering<'_> {
    /// The static types of a two-argument aggregate: labels may be anything; a
    /// calibration's confidence must be a number and its `correct` a bool.
    fn check_pair(
        &mut self,
        def: &AggregateDef,
        args: &[Expr],
        lowered: &[(DeclaredOp, Type)],
        ctx: &mut ExprCtx<'_>,
    ) -> bool {
        if def.takes == Takes::TwoLabels {
            return true;
        }
        let name = def.name.to_string();
        let (confidence, correct) = (&lowered[0].1, &lowered[1].1);
        let kind = if !Type::Float.accepts(confidence) {
            let found = confidence.clone();
            (args[0].span, E::AggregateNeedsNumber { name, found })
        } else if !Type::Bool.accepts(correct) {
            let found = correct.clone();
            (args[1].span, E::CorrectNotBool { name, found })
        } else {
            return true;
        };
        self.error_at(ctx, kind.0, kind.1);
        false
    }
}

/// The cutoff its items see (`k` in a metric expanded from `ks`), when an
/// aggregate may be written in `scope`: in metrics, and in gates unless it is
/// folded across runs.
fn item_scope(def: &AggregateDef, scope: Scope<'_>) -> Result<Option<u32>, E> {
    let name = def.name.to_string();
    match scope {
        Scope::Metric { cutoff } => Ok(cutoff),
        // A gate may aggregate too (`p95(latency_ms) <= 1200`), but not across runs.
        Scope::Gate { .. } if !def.across_runs => Ok(None),
        Scope::Item {
            in_aggregate: true, ..
        } => Err(E::NestedAggregate { name }),
        _ => Err(E::AggregateScope {
            name,
            in_gate: matches!(scope, Scope::Gate { .. }),
        }),
    }
}

/// What the aggregate gives, once its argument's type is checked against what the
/// row takes.
fn result_type(def: &AggregateDef, arg: Option<&Type>) -> Result<Type, E> {
    let name = || def.name.to_string();
    let ty = match (arg, def.takes) {
        (_, Takes::TwoLabels | Takes::Value | Takes::Calibration | Takes::CalibrationAndBins) => {
            Type::Any
        }
        (Some(ty), Takes::Condition) if !Type::Bool.accepts(ty) => {
            let found = ty.clone();
            return Err(E::CountsNeedCondition {
                name: name(),
                found,
            });
        }
        (Some(_), Takes::Condition) => Type::Bool,
        (Some(ty), _) if !Type::Float.accepts(ty) => {
            let found = ty.clone();
            return Err(E::AggregateNeedsNumber {
                name: name(),
                found,
            });
        }
        (Some(ty), _) => ty.clone(),
        (None, _) => Type::Int,
    };
    Ok(match def.gives {
        Gives::Int => Type::Int,
        Gives::LikeArgument if ty == Type::Int => Type::Int,
        Gives::LikeArgument | Gives::Number => Type::Float,
    })
}
