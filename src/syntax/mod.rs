//! The expression language's syntax: text → [`Expr`] trees with byte spans.

mod ast;
mod parser;

pub use ast::*;
pub use parser::{parse, SyntaxError};

const KEYWORDS: &[&str] = &["and", "or", "not", "in", "where", "true", "false", "null"];

/// Whether `text` can be used as a name in specs and expressions.
pub fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !KEYWORDS.contains(&text)
}
