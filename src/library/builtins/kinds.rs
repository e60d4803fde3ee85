//! Tests of a value's kind and truthiness (Python's).

use crate::base::value::Value;
use crate::library::error::RuntimeErrorKind;

pub(super) fn is_list(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::Bool(matches!(a[0], Value::List(_))))
}

pub(super) fn is_string(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::Bool(matches!(a[0], Value::String(_))))
}

pub(super) fn is_number(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::Bool(matches!(
        a[0],
        Value::Number(_) | Value::BigInt(_)
    )))
}

pub(super) fn is_bool(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::Bool(matches!(a[0], Value::Bool(_))))
}

pub(super) fn is_null(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::Bool(a[0].is_null()))
}

pub(super) fn truthy(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::Bool(a[0].truthy()))
}

pub(super) fn truthy_or(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(if a[0].truthy() {
        a[0].clone()
    } else {
        a[1].clone()
    })
}
