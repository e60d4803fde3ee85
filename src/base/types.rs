//! Static types of expressions. Record fields are `Any` (checked when read, or by a
//! dataset's schema); everything else is known before any data is read.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Type {
    /// Unknown until run time (a record field); checked where it is used.
    Any,
    Null,
    Bool,
    /// A whole number. Counts are integers, and print without a fraction.
    Int,
    Float,
    Str,
    List(Box<Type>),
    Object,
}

impl Type {
    pub fn list_of(element: Type) -> Type {
        Type::List(Box::new(element))
    }

    /// Whether a value of type `actual` may be passed where `self` is expected.
    /// `Any` and `Null` pass everywhere statically: nulls are checked at run time.
    pub fn accepts(&self, actual: &Type) -> bool {
        match (self, actual) {
            (Type::Any, _) | (_, Type::Any) | (_, Type::Null) => true,
            (Type::Float, Type::Int) => true,
            (Type::List(expected), Type::List(actual)) => expected.accepts(actual),
            (expected, actual) => expected == actual,
        }
    }

    pub fn is_numeric(&self) -> bool {
        matches!(self, Type::Int | Type::Float)
    }

    /// The type of a value that is either `self` or `other` (`??`, `if`, list items).
    pub fn join(&self, other: &Type) -> Type {
        match (self, other) {
            (a, b) if a == b => a.clone(),
            (Type::Null, t) | (t, Type::Null) => t.clone(),
            (Type::Int, Type::Float) | (Type::Float, Type::Int) => Type::Float,
            (Type::List(a), Type::List(b)) => Type::list_of(a.join(b)),
            _ => Type::Any,
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Any => f.write_str("any"),
            Type::Null => f.write_str("null"),
            Type::Bool => f.write_str("bool"),
            Type::Int => f.write_str("integer"),
            Type::Float => f.write_str("number"),
            Type::Str => f.write_str("string"),
            Type::List(element) if **element == Type::Any => f.write_str("list"),
            Type::List(element) => write!(f, "list<{element}>"),
            Type::Object => f.write_str("object"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_widen_to_numbers_not_back() {
        assert!(Type::Float.accepts(&Type::Int));
        assert!(!Type::Int.accepts(&Type::Float));
        assert!(Type::list_of(Type::Any).accepts(&Type::list_of(Type::Str)));
        assert_eq!(Type::Int.join(&Type::Null), Type::Int);
        assert_eq!(Type::Str.join(&Type::Int), Type::Any);
    }
}

/// `integer` → `an integer`, `list[string]` → `a list[string]`: a type or kind
/// named in a sentence.
pub fn with_article(name: impl fmt::Display) -> String {
    let name = name.to_string();
    let article = match name.chars().next() {
        Some('a' | 'e' | 'i' | 'o' | 'u') => "an",
        _ => "a",
    };
    format!("{article} {name}")
}

#[cfg(test)]
mod article_tests {
    use super::*;

    #[test]
    fn an_before_a_vowel() {
        assert_eq!(with_article("integer"), "an integer");
        assert_eq!(with_article(Type::Any), "an any");
        assert_eq!(with_article("list"), "a list");
        assert_eq!(with_article("object"), "an object");
    }
}
