//! Number built-ins: reading a number, `abs`, Python's `round`, `least`/`greatest`.

use crate::base::value::Value;
use crate::library::error::RuntimeErrorKind;

use super::number;

pub(super) fn to_num(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(match a[0] {
        Value::Null => Value::Null,
        Value::Number(_) | Value::BigInt(_) => a[0].clone(),
        Value::Bool(b) => Value::Number(f64::from(u8::from(*b))),
        // "nan", "inf" and "1e999" are no number a metric can use.
        Value::String(s) => (s.trim().parse::<f64>().ok())
            .filter(|n| n.is_finite())
            .map(Value::Number)
            .ok_or_else(|| RuntimeErrorKind::NumCannotRead {
                found: a[0].clone(),
            })?,
        other => {
            return Err(RuntimeErrorKind::NumCannotConvert {
                found: other.clone(),
            })
        }
    })
}

pub(super) fn abs(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(number(a[0]).map_or(Value::Null, |n| Value::Number(n.abs())))
}

pub(super) fn round(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    // Past ±1100 digits every f64 rounds to itself (or to zero): the same answer.
    let digits = a
        .get(1)
        .and_then(|v| number(v))
        .unwrap_or(0.0)
        .clamp(-1100.0, 1100.0) as i32;
    Ok(number(a[0]).map_or(Value::Null, |n| Value::Number(round_half_even(n, digits))))
}

/// Python's `round(x, digits)`: the exact binary value rounded half to even.
/// Rust's fixed-precision formatting rounds exactly that way, so it does the work.
pub fn round_half_even(x: f64, digits: i32) -> f64 {
    if !x.is_finite() {
        return x;
    }
    if digits < -308 {
        // 10^309 overflows, and every finite f64 is below half of it: Python gives ±0.
        return x * 0.0;
    }
    if digits < 0 {
        let scale = 10f64.powi(-digits);
        return round_half_even(x / scale, 0) * scale;
    }
    format!("{:.*}", digits as usize, x).parse().unwrap_or(x)
}

pub(super) fn least(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(extreme(a, f64::min))
}

pub(super) fn greatest(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(extreme(a, f64::max))
}

/// `least`/`greatest` of every argument; null when any is null (as SQL's
/// `LEAST` is not: a missing value must not hide behind the others).
pub(super) fn extreme(a: &[&Value], pick: fn(f64, f64) -> f64) -> Value {
    a.iter()
        .map(|v| number(v))
        .try_fold(None, |best: Option<f64>, x| {
            x.map(|x| Some(best.map_or(x, |b| pick(b, x))))
        })
        .flatten()
        .map_or(Value::Null, Value::Number)
}
