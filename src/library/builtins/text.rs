//! Text built-ins: case, trimming, searching, splitting and joining, and a value
//! as text (JSON's or Python's `str`). A string they build is at most [`MAX_TEXT`].

use crate::base::python::python_strip;
use crate::base::value::Value;
use crate::library::error::RuntimeErrorKind;

use super::{each, list, null_or, string};

pub(super) fn lower(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(null_or(a[0], |s| Value::from(s.to_lowercase().as_str())))
}

pub(super) fn upper(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(null_or(a[0], |s| Value::from(s.to_uppercase().as_str())))
}

pub(super) fn trim(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(match a[0] {
        Value::String(s) if python_strip(s).len() == s.len() => a[0].clone(),
        other => null_or(other, |s| Value::from(python_strip(s))),
    })
}

pub(super) fn contains(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::Bool(string(a[0]).contains(string(a[1]))))
}

pub(super) fn starts_with(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::Bool(string(a[0]).starts_with(string(a[1]))))
}

pub(super) fn ends_with(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::Bool(string(a[0]).ends_with(string(a[1]))))
}

pub(super) fn split(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    if a[0].is_null() {
        return Ok(Value::list(Vec::new()));
    }
    let separator = string(a[1]);
    if separator.is_empty() {
        return Err(RuntimeErrorKind::SplitEmptySeparator);
    }
    Ok(Value::list(
        string(a[0]).split(separator).map(Value::from).collect(),
    ))
}

pub(super) fn join(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    let parts: Result<Vec<&str>, RuntimeErrorKind> = list(a[0])
        .iter()
        .map(|v| match v {
            Value::String(s) => Ok(&**s),
            other => Err(RuntimeErrorKind::JoinNeedsStrings {
                found: other.clone(),
            }),
        })
        .collect();
    let (parts, separator) = (parts?, string(a[1]));
    let length = parts.iter().map(|p| p.len()).sum::<usize>()
        + separator
            .len()
            .saturating_mul(parts.len().saturating_sub(1));
    check_text("join", length)?;
    Ok(Value::from(parts.join(separator).as_str()))
}

pub(super) fn to_str(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    check_writable("str", a[0])?;
    Ok(match a[0] {
        Value::String(_) => a[0].clone(),
        other => Value::from(other.to_string().as_str()),
    })
}

pub(super) fn python_text(value: &Value) -> Value {
    match value {
        Value::String(_) => value.clone(),
        other => Value::from(crate::base::python::python_str(other).as_str()),
    }
}

pub(super) fn pystr(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    check_writable("pystr", a[0])?;
    Ok(python_text(a[0]))
}

pub(super) fn pystr_each(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    check_writable("pystr_each", a[0])?;
    Ok(each(a[0], python_text))
}

pub(super) fn trim_each(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(each(a[0], |v| match v {
        Value::String(s) => Value::from(python_strip(s)),
        other => other.clone(),
    }))
}

/// The longest string an expression builds (`+`, `join`, `str`, `pystr`), in bytes.
pub const MAX_TEXT: usize = 64 << 20;

/// An error unless text about `length` bytes long may be built by `function`.
pub fn check_text(function: &'static str, length: usize) -> Result<(), RuntimeErrorKind> {
    match length > MAX_TEXT {
        true => Err(RuntimeErrorKind::TextTooLong { function }),
        false => Ok(()),
    }
}

/// An error unless `value` may be written as text by `function`.
pub(super) fn check_writable(
    function: &'static str,
    value: &Value,
) -> Result<(), RuntimeErrorKind> {
    match crate::base::python::text_exceeds(value, MAX_TEXT) {
        true => Err(RuntimeErrorKind::TextTooLong { function }),
        false => Ok(()),
    }
}
