//! Checking a record against its dataset's schema rules (the data contract).

use crate::base::diagnostic::{Diagnostic, Location};
use crate::base::value::{Value, ValueError};
use crate::ir::evaluate_on_record;
use crate::ir::{DatasetId, Record};
use crate::plan::{DatasetPlan, FieldPath, Rule};
use crate::spec::DataType;

/// The value at a projected path of a record.
pub fn read_path(record: &Record, path: &FieldPath) -> Result<Value, ValueError> {
    let mut value = record.slots[path.slot.index()].clone();
    for name in &path.rest {
        value = value.field(name)?;
    }
    Ok(value)
}

/// Checks every schema rule, then every check, then the run's name; the first
/// violation becomes a located error. `dataset_id` is the dataset's place in the
/// plan (checks read its slots).
pub fn validate(
    dataset: &DatasetPlan,
    dataset_id: DatasetId,
    record: &Record,
) -> Result<(), Diagnostic> {
    let at = || Location::in_data(&dataset.display_path, record.line as usize, None);
    for rule in &dataset.rules {
        let problem = match read_path(record, &rule.path) {
            Err(error) => Some((rule.field.clone(), error.to_string())),
            Ok(value) => match &rule.each {
                None => check(rule, &value).map(|p| (rule.field.clone(), p)),
                Some(each) => check_each(rule, each, &value),
            },
        };
        if let Some((field, problem)) = problem {
            return Err(
                Diagnostic::error(format!("{}: field `{field}` {problem}", dataset.name))
                    .at(at())
                    .help(format!(
                        "fix the record, or the rule in `datasets.{}.schema`",
                        dataset.name
                    )),
            );
        }
    }
    for check in &dataset.checks {
        let text = || check.text.clone();
        match evaluate_on_record(&check.op, dataset_id, record) {
            Ok(Value::Bool(true)) => {}
            Ok(_) => return Err(failed(dataset, &check.message, &text(), at())),
            Err(error) => return Err(unevaluated(dataset, &text(), &error.to_string(), at())),
        }
    }
    // Every record of a run named from its records repeats the run's name.
    if let (Some(check), Some(name)) = (&dataset.run_name, &dataset.expected_run_name) {
        let text = || format!("{} == {}", check.text, name.preview());
        match evaluate_on_record(&check.op, dataset_id, record) {
            Ok(value) if value == *name => {}
            Ok(_) => {
                let message = format!(
                    "this record's `{}` differs from the run's first record ({})",
                    check.text,
                    name.preview()
                );
                return Err(failed(dataset, &message, &text(), at()));
            }
            Err(error) => return Err(unevaluated(dataset, &text(), &error.to_string(), at())),
        }
    }
    Ok(())
}

fn failed(dataset: &DatasetPlan, message: &str, check: &str, at: Location) -> Diagnostic {
    Diagnostic::error(format!("{}: {message}", dataset.name))
        .at(at)
        .help(format!("the record fails the check `{check}`"))
}

fn unevaluated(dataset: &DatasetPlan, check: &str, message: &str, at: Location) -> Diagnostic {
    Diagnostic::error(format!(
        "{}: cannot evaluate the check `{check}`: {message}",
        dataset.name
    ))
    .at(at)
}

/// A `list[].field` rule: the list itself is checked by its own rule; each element's
/// field here, naming the element that fails (`gold[1].start_page`).
fn check_each(rule: &Rule, each: &[String], list: &Value) -> Option<(String, String)> {
    let Value::List(items) = list else {
        return None;
    };
    let base = rule.field.split("[]").next().unwrap_or(&rule.field);
    for (i, item) in items.iter().enumerate() {
        let mut value = item.clone();
        for name in each {
            value = match value.field(name) {
                Ok(v) => v,
                Err(error) => return Some((format!("{base}[{i}]"), error.to_string())),
            };
        }
        if let Some(problem) = check(rule, &value) {
            let field = if each.is_empty() {
                format!("{base}[{i}]")
            } else {
                format!("{base}[{i}].{}", each.join("."))
            };
            return Some((field, problem));
        }
    }
    None
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
    if let (Some(min), Value::Number(n)) = (rule.min, value) {
        if *n < min {
            return Some(format!(
                "must be at least {}, found {}",
                crate::base::value::format_number(min),
                value.preview()
            ));
        }
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
                slot: crate::ir::SlotId::new(0),
                rest: vec![],
            },
            each: None,
            ty,
            optional,
            nonempty,
            min: None,
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
