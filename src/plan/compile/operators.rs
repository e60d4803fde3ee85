//! Operators: the type of a unary or binary operation, from its operands' types.

use crate::base::types::Type;
use crate::plan::compile::expr::{ExprCtx, Lowering};
use crate::syntax::{BinaryOp, Expr};

impl Lowering<'_> {
    pub(super) fn binary_type(
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
