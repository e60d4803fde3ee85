//! Operators: the type of a unary or binary operation, from its operands' types.

use crate::base::types::Type;
use crate::plan::compile::error::CompileError as E;
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
                        let kind = E::LogicNeedsBools {
                            op: op.symbol(),
                            found: t.clone(),
                        };
                        self.error_at(ctx, side.span, kind);
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
                    let kind = E::CannotCompare {
                        left: l.clone(),
                        right: r.clone(),
                        op: op.symbol(),
                    };
                    self.error_at(ctx, expr.span, kind);
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
                    let kind = E::InNeedsList {
                        op: op.symbol(),
                        found: r.clone(),
                    };
                    self.error_at(ctx, right.span, kind);
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
                    let kind = E::CannotAdd {
                        left: l.clone(),
                        right: r.clone(),
                    };
                    self.error_at(ctx, expr.span, kind);
                    return None;
                }
            },
            BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem => {
                for (t, side) in [(l, left), (r, right)] {
                    if !numeric(t) {
                        let kind = E::ArithmeticNeedsNumbers {
                            op: op.symbol(),
                            found: t.clone(),
                        };
                        self.error_at(ctx, side.span, kind);
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
