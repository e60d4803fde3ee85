//! Param values: checked against their declared type, from YAML or `--param NAME=VALUE`.

use crate::base::value::Value;
use crate::spec::ParamType;

/// Checks (and, for integers, validates wholeness of) a param value.
pub fn check_type(ty: ParamType, value: Value) -> Result<Value, String> {
    if let (Value::Number(n), ParamType::Integer) = (&value, ty) {
        if n.abs() > MAX_EXACT_INTEGER {
            // In digits, as written (not `1e+20`); past 1e21 the digits are noise.
            let shown = match n.abs() < 1e21 && n.fract() == 0.0 {
                true => format!("{n:.0}"),
                false => value.preview(),
            };
            return Err(format!("expected {OUT_OF_RANGE}, found {shown}"));
        }
    }
    let ok = match (&value, ty) {
        (Value::Number(_), ParamType::Number) | (Value::Bool(_), ParamType::Bool) => true,
        (Value::String(_), ParamType::String) | (Value::List(_), ParamType::List) => true,
        (Value::Number(n), ParamType::Integer) => n.fract() == 0.0,
        _ => false,
    };
    if ok {
        Ok(value)
    } else {
        Err(format!(
            "expected {}, found {} {}",
            describe(ty),
            value.type_name(),
            value.preview()
        ))
    }
}

/// The largest integer a param holds exactly (2^53): beyond it, integers
/// collapse into their neighbours, so an integer param refuses them.
pub const MAX_EXACT_INTEGER: f64 = 9_007_199_254_740_992.0;

const OUT_OF_RANGE: &str = "an integer from -2^53 to 2^53 (larger ones are not exact)";

fn describe(ty: ParamType) -> &'static str {
    match ty {
        ParamType::Number => "a number",
        ParamType::Integer => "an integer",
        ParamType::String => "a string",
        ParamType::Bool => "true or false",
        ParamType::List => "a list",
    }
}

/// Reads a command-line value for a param of type `ty`. Lists are JSON arrays
/// (`[1, 2]`, `["a", "b"]`) or comma-separated strings (`a,b`).
pub fn parse_cli(ty: ParamType, text: &str) -> Result<Value, String> {
    let value = match ty {
        // Whole digits are read exactly, so that 2^53 + 1 is refused rather than rounded.
        ParamType::Integer => match text.trim().parse::<i64>() {
            Ok(n) if n.unsigned_abs() <= 1 << 53 => Value::Number(n as f64),
            Ok(_) => return Err(format!("expected {OUT_OF_RANGE}, found `{text}`")),
            Err(_) => text
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|n| n.is_finite())
                .map(Value::Number)
                .ok_or_else(|| format!("expected {}, found `{text}`", describe(ty)))?,
        },
        ParamType::Number => text
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|n| n.is_finite())
            .map(Value::Number)
            .ok_or_else(|| format!("expected {}, found `{text}`", describe(ty)))?,
        ParamType::Bool => match text.trim() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => return Err(format!("expected true or false, found `{text}`")),
        },
        ParamType::String => Value::from(text),
        ParamType::List if text.trim_start().starts_with('[') => {
            let json: serde_json::Value =
                serde_json::from_str(text).map_err(|e| format!("expected a JSON list: {e}"))?;
            crate::base::value::json_to_value(&json)
        }
        ParamType::List => Value::list(
            text.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(Value::from)
                .collect(),
        ),
    };
    check_type(ty, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_beyond_two_to_the_53_are_refused() {
        assert!(parse_cli(ParamType::Integer, "99999999999999999999999").is_err());
        assert!(parse_cli(ParamType::Integer, "9007199254740993").is_err());
        assert_eq!(
            parse_cli(ParamType::Integer, "-9007199254740992").unwrap(),
            Value::Number(-9_007_199_254_740_992.0)
        );
        assert!(check_type(ParamType::Integer, Value::Number(1e23)).is_err());
        assert!(check_type(ParamType::Integer, Value::Number(1e20))
            .unwrap_err()
            .ends_with("found 100000000000000000000"));
    }

    #[test]
    fn cli_values_are_typed() {
        assert_eq!(
            parse_cli(ParamType::Integer, "7").unwrap(),
            Value::Number(7.0)
        );
        assert!(parse_cli(ParamType::Integer, "2.5")
            .unwrap_err()
            .starts_with("expected an integer"));
        assert!(parse_cli(ParamType::Bool, "yes").is_err());
        assert_eq!(
            parse_cli(ParamType::List, "a, b").unwrap(),
            Value::list(vec!["a".into(), "b".into()])
        );
        assert_eq!(
            parse_cli(ParamType::List, "[1, 2]").unwrap(),
            Value::list(vec![1.0.into(), 2.0.into()])
        );
    }
}
