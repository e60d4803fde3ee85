//! The pest parser for `grammar/expr.pest`. This is the only module that sees pest's
//! `Rule` and `Pair`; everything else works on [`Expr`].

use pest::error::{ErrorVariant, InputLocation};
use pest::iterators::Pair;
use pest::Parser as _;

use super::ast::*;

#[derive(pest_derive::Parser)]
#[grammar = "../grammar/expr.pest"]
struct ExprParser;

/// A syntax error at a byte span of the expression text.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntaxError {
    pub message: String,
    pub span: Span,
}

pub fn parse(text: &str) -> Result<Expr, SyntaxError> {
    if text.trim().is_empty() {
        return Err(SyntaxError {
            message: "the expression is empty".into(),
            span: Span { start: 0, end: 0 },
        });
    }
    check_nesting(text)?;
    let mut pairs =
        ExprParser::parse(Rule::expression, text).map_err(|error| syntax_error(text, &error))?;
    let expression = pairs
        .next()
        .expect("the `expression` rule always yields one pair");
    let expr = expression
        .into_inner()
        .next()
        .expect("`expression` holds one `expr`");
    build(expr).map(|built| built.expr)
}

/// Brackets an expression may nest: the parser recurses once per level, so deeper
/// nesting is refused before parsing rather than risking the stack.
pub const MAX_NESTING: usize = 64;

/// How deep an expression's tree may be (a chain of 300 `and`s is 300 deep).
/// Everything after parsing recurses over the tree, so it is bounded here.
pub const MAX_DEPTH: usize = 256;

/// Refuses brackets (outside string literals) nested deeper than [`MAX_NESTING`].
fn check_nesting(text: &str) -> Result<(), SyntaxError> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (at, c) in text.char_indices() {
        match (quote, c) {
            (Some(_), _) if escaped => escaped = false,
            (Some(_), '\\') => escaped = true,
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(' | '[') => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(SyntaxError {
                        message: format!("brackets are nested more than {MAX_NESTING} levels deep"),
                        span: Span {
                            start: at,
                            end: at + 1,
                        },
                    });
                }
            }
            (None, ')' | ']') => depth = depth.saturating_sub(1),
            (None, _) => {}
        }
    }
    Ok(())
}

fn syntax_error(text: &str, error: &pest::error::Error<Rule>) -> SyntaxError {
    let (start, end) = match error.location {
        InputLocation::Pos(p) => (p, p),
        InputLocation::Span((s, e)) => (s, e),
    };
    let found = text[start..]
        .chars()
        .next()
        .map_or_else(|| "end of the expression".to_string(), |c| format!("`{c}`"));
    let message = match &error.variant {
        ErrorVariant::ParsingError { positives, .. } => {
            let mut expected: Vec<&str> = positives.iter().filter_map(|r| describe(*r)).collect();
            expected.sort_unstable();
            expected.dedup();
            if expected.is_empty() {
                format!("unexpected {found}")
            } else {
                format!("unexpected {found}; expected {}", join_or(&expected))
            }
        }
        ErrorVariant::CustomError { message } => message.clone(),
    };
    SyntaxError {
        message,
        span: Span { start, end },
    }
}

fn describe(rule: Rule) -> Option<&'static str> {
    Some(match rule {
        Rule::expr
        | Rule::or_expr
        | Rule::and_expr
        | Rule::not_expr
        | Rule::comparison
        | Rule::coalesce
        | Rule::additive
        | Rule::multiplicative
        | Rule::unary
        | Rule::postfix => "an expression",
        Rule::ident | Rule::name | Rule::call => "a name",
        Rule::number => "a number",
        Rule::string => "a string",
        Rule::or_op | Rule::and_op => "`and` or `or`",
        Rule::cmp_op | Rule::in_op | Rule::not_in => "a comparison",
        Rule::coalesce_op => "`??`",
        Rule::add_op | Rule::mul_op => "an operator",
        Rule::member => "`.`",
        Rule::index => "`[`",
        Rule::where_clause | Rule::kw_where => "`where`",
        Rule::EOI => "the end of the expression",
        _ => return None,
    })
}

fn join_or(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

fn span_of(pair: &Pair<'_, Rule>) -> Span {
    let s = pair.as_span();
    Span {
        start: s.start(),
        end: s.end(),
    }
}

/// An expression built from the parse, with its depth (a leaf is 1).
struct Built {
    expr: Expr,
    depth: usize,
}

impl Built {
    fn leaf(kind: ExprKind, span: Span) -> Result<Built, SyntaxError> {
        Ok(Built {
            expr: Expr { kind, span },
            depth: 1,
        })
    }

    /// A node over children of depth `below`; refused past [`MAX_DEPTH`], so that
    /// nothing after parsing (type checking, evaluation, dropping) recurses deeper.
    fn node(kind: ExprKind, span: Span, below: usize) -> Result<Built, SyntaxError> {
        if below >= MAX_DEPTH {
            return Err(SyntaxError {
                message: format!("the expression is nested more than {MAX_DEPTH} levels deep"),
                span,
            });
        }
        Ok(Built {
            expr: Expr { kind, span },
            depth: below + 1,
        })
    }
}

fn build(pair: Pair<'_, Rule>) -> Result<Built, SyntaxError> {
    let span = span_of(&pair);
    match pair.as_rule() {
        Rule::expr => build(pair.into_inner().next().expect("expr wraps or_expr")),
        Rule::or_expr | Rule::and_expr | Rule::coalesce | Rule::additive | Rule::multiplicative => {
            let right_assoc = pair.as_rule() == Rule::coalesce;
            let mut inner = pair.into_inner();
            let first = build(inner.next().expect("a binary rule has an operand"))?;
            let mut operands = vec![first];
            let mut ops = Vec::new();
            while let Some(op) = inner.next() {
                ops.push(binary_op(op.as_str()));
                operands.push(build(
                    inner.next().expect("an operator is followed by an operand"),
                )?);
            }
            if right_assoc {
                fold_right(operands, ops)
            } else {
                fold_left(operands, ops)
            }
        }
        Rule::comparison => {
            let mut inner = pair.into_inner();
            let left = build(inner.next().expect("comparison has a left operand"))?;
            match inner.next() {
                None => Ok(left),
                Some(op) => {
                    let right = build(inner.next().expect("comparison has a right operand"))?;
                    binary(binary_op(op.as_str()), left, right, span)
                }
            }
        }
        Rule::not_expr | Rule::unary => {
            let mut inner: Vec<Pair<'_, Rule>> = pair.into_inner().collect();
            let mut built = build(inner.pop().expect("a prefix rule has an operand"))?;
            for pair in inner.into_iter().rev() {
                let op = if pair.as_rule() == Rule::not_op {
                    UnaryOp::Not
                } else {
                    UnaryOp::Neg
                };
                let span = Span {
                    start: pair.as_span().start(),
                    end: built.expr.span.end,
                };
                let kind = ExprKind::Unary(op, Box::new(built.expr));
                built = Built::node(kind, span, built.depth)?;
            }
            Ok(built)
        }
        Rule::postfix => {
            let mut inner = pair.into_inner();
            let mut built = build(inner.next().expect("postfix has a primary"))?;
            for suffix in inner {
                let span = Span {
                    start: built.expr.span.start,
                    end: suffix.as_span().end(),
                };
                built = match suffix.as_rule() {
                    Rule::member => {
                        let name = suffix
                            .into_inner()
                            .next()
                            .expect("member has a name")
                            .as_str()
                            .to_string();
                        let kind = ExprKind::Member(Box::new(built.expr), name);
                        Built::node(kind, span, built.depth)?
                    }
                    _ => {
                        let index =
                            build(suffix.into_inner().next().expect("index has an expression"))?;
                        let below = built.depth.max(index.depth);
                        let kind = ExprKind::Index(Box::new(built.expr), Box::new(index.expr));
                        Built::node(kind, span, below)?
                    }
                };
            }
            Ok(built)
        }
        Rule::call => {
            let mut inner = pair.into_inner();
            let name_pair = inner.next().expect("call has a name");
            let name_span = span_of(&name_pair);
            let name = name_pair.as_str().to_string();
            let mut args = Vec::new();
            let mut filter = None;
            let mut below = 0;
            for arg in inner.next().expect("call has arguments").into_inner() {
                if arg.as_rule() == Rule::where_clause {
                    let condition = arg.into_inner().nth(1).expect("where has a condition");
                    let built = build(condition)?;
                    below = below.max(built.depth);
                    filter = Some(Box::new(built.expr));
                } else {
                    let built = build(arg)?;
                    below = below.max(built.depth);
                    args.push(built.expr);
                }
            }
            let kind = ExprKind::Call {
                name,
                name_span,
                args,
                filter,
            };
            Built::node(kind, span, below)
        }
        Rule::list => {
            let mut items = Vec::new();
            let mut below = 0;
            for item in pair.into_inner() {
                let built = build(item)?;
                below = below.max(built.depth);
                items.push(built.expr);
            }
            Built::node(ExprKind::List(items), span, below)
        }
        Rule::name => Built::leaf(ExprKind::Name(pair.as_str().to_string()), span),
        Rule::null => Built::leaf(ExprKind::Null, span),
        Rule::boolean => Built::leaf(ExprKind::Bool(pair.as_str() == "true"), span),
        Rule::number => {
            let n: f64 = pair.as_str().parse().map_err(|_| SyntaxError {
                message: "invalid number".into(),
                span,
            })?;
            if !n.is_finite() {
                return Err(SyntaxError {
                    message: "number is too large".into(),
                    span,
                });
            }
            Built::leaf(ExprKind::Number(n), span)
        }
        Rule::string => {
            let inner = pair.into_inner().next().expect("string has an inner part");
            Built::leaf(ExprKind::String(unescape(inner.as_str(), span)?), span)
        }
        rule => unreachable!("rule {rule:?} is not an expression"),
    }
}

fn binary_op(text: &str) -> BinaryOp {
    match text.split_whitespace().collect::<Vec<_>>().as_slice() {
        ["or"] => BinaryOp::Or,
        ["and"] => BinaryOp::And,
        ["=="] => BinaryOp::Eq,
        ["!="] => BinaryOp::Ne,
        ["<"] => BinaryOp::Lt,
        ["<="] => BinaryOp::Le,
        [">"] => BinaryOp::Gt,
        [">="] => BinaryOp::Ge,
        ["in"] => BinaryOp::In,
        ["not", "in"] => BinaryOp::NotIn,
        ["??"] => BinaryOp::Coalesce,
        ["+"] => BinaryOp::Add,
        ["-"] => BinaryOp::Sub,
        ["*"] => BinaryOp::Mul,
        ["/"] => BinaryOp::Div,
        ["%"] => BinaryOp::Rem,
        other => unreachable!("operator {other:?} is not in the grammar"),
    }
}

fn binary(op: BinaryOp, left: Built, right: Built, span: Span) -> Result<Built, SyntaxError> {
    let below = left.depth.max(right.depth);
    let kind = ExprKind::Binary(op, Box::new(left.expr), Box::new(right.expr));
    Built::node(kind, span, below)
}

fn fold_left(operands: Vec<Built>, ops: Vec<BinaryOp>) -> Result<Built, SyntaxError> {
    let mut operands = operands.into_iter();
    let mut left = operands.next().expect("at least one operand");
    for (op, right) in ops.into_iter().zip(operands) {
        let span = Span {
            start: left.expr.span.start,
            end: right.expr.span.end,
        };
        left = binary(op, left, right, span)?;
    }
    Ok(left)
}

fn fold_right(mut operands: Vec<Built>, mut ops: Vec<BinaryOp>) -> Result<Built, SyntaxError> {
    let mut right = operands.pop().expect("at least one operand");
    while let (Some(left), Some(op)) = (operands.pop(), ops.pop()) {
        let span = Span {
            start: left.expr.span.start,
            end: right.expr.span.end,
        };
        right = binary(op, left, right, span)?;
    }
    Ok(right)
}

fn unescape(raw: &str, span: Span) -> Result<String, SyntaxError> {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('u') => {
                let hex: String = chars.by_ref().skip(1).take_while(|&c| c != '}').collect();
                let c = u32::from_str_radix(&hex, 16)
                    .ok()
                    .and_then(char::from_u32)
                    .ok_or_else(|| SyntaxError {
                        message: format!("`\\u{{{hex}}}` is not a Unicode scalar value"),
                        span,
                    })?;
                out.push(c);
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(text: &str) -> String {
        parse(text).unwrap().to_string()
    }

    #[test]
    fn precedence_follows_the_table() {
        assert_eq!(canon("a or b and not c"), "(a or (b and (not c)))");
        assert_eq!(canon("not a == b"), "(not (a == b))");
        assert_eq!(canon("a ?? b + 1 >= 2"), "((a ?? (b + 1)) >= 2)");
        assert_eq!(canon("a ?? b ?? c"), "(a ?? (b ?? c))");
        assert_eq!(canon("1 - 2 - 3 * -x"), "((1 - 2) - (3 * (-x)))");
        assert_eq!(canon("x not in [1, 'a']"), "(x not in [1, \"a\"])");
    }

    #[test]
    fn calls_paths_and_where() {
        assert_eq!(canon("ratio(ok where shipped)"), "ratio(ok where shipped)");
        assert_eq!(canon("count()"), "count()");
        assert_eq!(
            canon("trace.answer_json['claim'].x"),
            "trace.answer_json[\"claim\"].x"
        );
        assert_eq!(
            canon("notes + android + order"),
            "((notes + android) + order)"
        );
    }

    #[test]
    fn spans_cover_the_source_text() {
        let e = parse("  len(xs) >= 2").unwrap();
        assert_eq!(e.span, Span { start: 2, end: 14 });
        let ExprKind::Binary(_, left, _) = e.kind else {
            panic!()
        };
        let ExprKind::Call { name_span, .. } = left.kind else {
            panic!()
        };
        assert_eq!(name_span, Span { start: 2, end: 5 });
    }

    #[test]
    fn errors_say_what_was_expected_where() {
        let err = parse("precision >= ").unwrap_err();
        assert_eq!(err.span.start, 13);
        assert!(
            err.message.starts_with("unexpected end of the expression"),
            "{}",
            err.message
        );
        assert!(parse("a == b == c").is_err());
        assert_eq!(
            parse("'a\\u{e9}'").unwrap().kind,
            ExprKind::String("aé".into())
        );
    }
}
