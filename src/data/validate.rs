//! Checking a record against its dataset's schema rules (the data contract).

use crate::data::Record;
use crate::diagnostic::{Diagnostic, Location};
use crate::plan::{DatasetPlan, FieldPath, Rule};
use crate::spec::DataType;
use crate::value::Value;

/// The value at a projected path of a record.
pub fn read_path(record: &Record, path: &FieldPath) -> Result<Value, String> {
    let mut value = record.slots[path.slot].clone();
    for name in &path.rest {
        value = value.field(name)?;
    }
    Ok(value)
}

/// Checks every rule; the first violation becomes a located error.
pub fn validate(dataset: &DatasetPlan, record: &Record) -> Result<(), Diagnostic> {
    for rule in &dataset.rules {
        let problem = match read_path(record, &rule.path) {
            Err(message) => Some(message),
            Ok(value) => check(rule, &value),
        };
        if let Some(problem) = problem {
            return Err(Diagnostic::error(format!(
                "{}: field `{}` {problem}",
                dataset.name, rule.field
            ))
            .at(Location::in_data(
                &dataset.display_path,
                record.line as usize,
                None,
            ))
            .help(format!(
                "fix the record, or the rule in `datasets.{}.schema`",
                dataset.name
            )));
        }
    }
    Ok(())
}

fn check(rule: &Rule, value: &Value) -> Option<String> {
    if value.is_null() {
        return (!rule.optional)
            .then(|| "is missing or null, but the schema requires it".to_string());
    }
    if !matches_type(&rule.ty, value) {
        return Some(format!(
            "must be {}, found {} {}",
            describe(&rule.ty),
            value.type_name(),
            value.preview()
        ));
    }
    let empty = match value {
        Value::String(s) => s.is_empty(),
        Value::List(items) => items.is_empty(),
        _ => false,
    };
    (rule.nonempty && empty).then(|| "must not be empty".to_string())
}

fn matches_type(ty: &DataType, value: &Value) -> bool {
    match (ty, value) {
        (DataType::Any, _) => true,
        (DataType::String, Value::String(_))
        | (DataType::Bool, Value::Bool(_))
        | (DataType::Number, Value::Number(_)) => true,
        (DataType::Integer, Value::Number(n)) => n.fract() == 0.0,
        (DataType::Object, Value::Object(_)) => true,
        (DataType::List(None), Value::List(_)) => true,
        (DataType::List(Some(element)), Value::List(items)) => {
            items.iter().all(|item| matches_type(element, item))
        }
        _ => false,
    }
}

fn describe(ty: &DataType) -> String {
    match ty {
        DataType::List(Some(element)) => format!("a list of {element} values"),
        DataType::Integer => "an integer".into(),
        DataType::Any => "any value".into(),
        DataType::Object => "an object".into(),
        other => format!("a {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(ty: DataType, optional: bool, nonempty: bool) -> Rule {
        Rule {
            field: "f".into(),
            path: FieldPath {
                slot: 0,
                rest: vec![],
            },
            ty,
            optional,
            nonempty,
        }
    }

    #[test]
    fn rules_check_presence_type_and_emptiness() {
        let string = rule(DataType::String, false, true);
        assert_eq!(
            check(&string, &Value::Null).unwrap(),
            "is missing or null, but the schema requires it"
        );
        assert_eq!(
            check(&string, &Value::from("")).unwrap(),
            "must not be empty"
        );
        assert_eq!(
            check(&string, &Value::Bool(true)).unwrap(),
            "must be a string, found bool true"
        );
        assert!(check(&rule(DataType::Bool, true, false), &Value::Null).is_none());
        let list = rule(
            DataType::List(Some(Box::new(DataType::String))),
            true,
            false,
        );
        assert!(check(&list, &Value::list(vec!["a".into()])).is_none());
        assert_eq!(
            check(&list, &Value::list(vec![1.0.into()])).unwrap(),
            "must be a list of string values, found list [1]"
        );
    }
}
