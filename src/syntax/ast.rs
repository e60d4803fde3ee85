//! The expression AST. Every node carries the byte span of its text inside the
//! expression string, which the spec maps back to a file position.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    List(Vec<Expr>),
    Name(String),
    /// `base.name`
    Member(Box<Expr>, String),
    /// `base[index]`
    Index(Box<Expr>, Box<Expr>),
    Unary(UnaryOp, Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `name(args where filter)`; only aggregates accept `where`.
    Call {
        name: String,
        name_span: Span,
        args: Vec<Expr>,
        filter: Option<Box<Expr>>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    Not,
    Neg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    NotIn,
    Coalesce,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

impl BinaryOp {
    /// `==`, `!=`, `<`, `<=`, `>`, `>=`, `in`, `not in`: they read their
    /// operands and give a bool (or null).
    pub fn compares(self) -> bool {
        use BinaryOp as B;
        matches!(
            self,
            B::Eq | B::Ne | B::Lt | B::Le | B::Gt | B::Ge | B::In | B::NotIn
        )
    }

    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Or => "or",
            BinaryOp::And => "and",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::In => "in",
            BinaryOp::NotIn => "not in",
            BinaryOp::Coalesce => "??",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Eq
                | BinaryOp::Ne
                | BinaryOp::Lt
                | BinaryOp::Le
                | BinaryOp::Gt
                | BinaryOp::Ge
                | BinaryOp::In
                | BinaryOp::NotIn
        )
    }
}

/// Prints the expression back in canonical form (fully parenthesised binary
/// operations), used by `check` and in parser tests.
impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ExprKind::Null => f.write_str("null"),
            ExprKind::Bool(b) => write!(f, "{b}"),
            ExprKind::Number(n) => f.write_str(&crate::base::value::format_number(*n)),
            ExprKind::String(s) => write!(f, "{}", serde_json::Value::from(s.as_str())),
            ExprKind::List(items) => {
                f.write_str("[")?;
                write_list(f, items)?;
                f.write_str("]")
            }
            ExprKind::Name(name) => f.write_str(name),
            ExprKind::Member(base, name) => write!(f, "{base}.{name}"),
            ExprKind::Index(base, index) => write!(f, "{base}[{index}]"),
            ExprKind::Unary(UnaryOp::Not, operand) => write!(f, "(not {operand})"),
            ExprKind::Unary(UnaryOp::Neg, operand) => write!(f, "(-{operand})"),
            ExprKind::Binary(op, l, r) => write!(f, "({l} {} {r})", op.symbol()),
            ExprKind::Call {
                name, args, filter, ..
            } => {
                write!(f, "{name}(")?;
                write_list(f, args)?;
                if let Some(filter) = filter {
                    if !args.is_empty() {
                        f.write_str(" ")?;
                    }
                    write!(f, "where {filter}")?;
                }
                f.write_str(")")
            }
        }
    }
}

fn write_list(f: &mut fmt::Formatter<'_>, items: &[Expr]) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{item}")?;
    }
    Ok(())
}
