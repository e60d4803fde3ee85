//! Checking a record against its dataset's schema rules (the data contract).

use std::borrow::Cow;

use crate::base::diagnostic::{Diagnostic, Location};
use crate::base::value::{Value, ValueError};
use crate::data::error::{DataError, SchemaProblem};
use crate::ir::{evaluate_on_record, DatasetId, ExprLocations, Record};
use crate::plan::{DatasetPlan, FieldPath, Rule};
use crate::spec::DataType;

/// The value at a projected path of a record: the slot itself when the path
/// is a slot (no count of its references to raise and lower per record).
fn read_path<'r>(record: &'r Record, path: &FieldPath) -> Result<Cow<'r, Value>, ValueError> {
    let slot = &record.slots[path.slot.index()];
    let Some((first, rest)) = path.rest.split_first() else {
        return Ok(Cow::Borrowed(slot));
    };
    let mut value = slot.field(first)?;
    for name in rest {
        value = value.field(name)?;
    }
    Ok(Cow::Owned(value))
}

/// Checks every schema rule, then every check, then the run's name; the first
/// violation becomes a located error. `dataset_id` is the dataset's place in the
/// plan (checks read its slots); `locations` is the plan's table, which places a
/// check that fails to evaluate.
pub fn validate(
    dataset: &DatasetPlan,
    dataset_id: DatasetId,
    record: &Record,
    locations: &ExprLocations,
) -> Result<(), Diagnostic> {
    let at = || Location::in_data(&dataset.display_path, record.line as usize, None);
    let name = || dataset.name.clone();
    for rule in &dataset.rules {
        let problem = match read_path(record, &rule.path) {
            Err(error) => Some((rule.field.clone(), SchemaProblem::Unreadable(error))),
            Ok(value) => match &rule.each {
                None => check(rule, &value).map(|p| (rule.field.clone(), p)),
                Some(each) => check_each(rule, each, &value),
            },
        };
        if let Some((field, problem)) = problem {
            let kind = DataError::Schema {
                dataset: name(),
                field,
                problem,
            };
            return Err(Diagnostic::of(&kind).at(at()));
        }
    }
    for check in &dataset.checks {
        let kind = match evaluate_on_record(&check.op, dataset_id, record) {
            Ok(Value::Bool(true)) => continue,
            Ok(_) => DataError::CheckFailed {
                dataset: name(),
                message: check.message.clone(),
                check: check.text.clone(),
            },
            Err(error) => DataError::CheckNotEvaluated {
                dataset: name(),
                check: check.text.clone(),
                error,
            },
        };
        return Err(kind.report(locations).at(at()));
    }
    // Every record of a run named from its records repeats the run's name.
    if let (Some(check), Some(expected)) = (&dataset.run_name, &dataset.expected_run_name) {
        let kind = match evaluate_on_record(&check.op, dataset_id, record) {
            Ok(value) if value == *expected => return Ok(()),
            Ok(_) => DataError::RunNameDiffers {
                dataset: name(),
                run_name: check.text.clone(),
                expected: expected.clone(),
            },
            Err(error) => DataError::CheckNotEvaluated {
                dataset: name(),
                check: format!("{} == {}", check.text, expected.preview()),
                error,
            },
        };
        return Err(kind.report(locations).at(at()));
    }
    Ok(())
}

/// A `list[].field` rule: the list itself is checked by its own rule; each element's
/// field here, naming the element that fails (`gold[1].start_page`).
fn check_each(rule: &Rule, each: &[String], list: &Value) -> Option<(String, SchemaProblem)> {
    let Value::List(items) = list else {
        return None;
    };
    let base = rule.field.split("[]").next().unwrap_or(&rule.field);
    for (i, item) in items.iter().enumerate() {
        let mut value = item.clone();
        for name in each {
            value = match value.field(name) {
                Ok(v) => v,
                Err(error) => {
                    return Some((format!("{base}[{i}]"), SchemaProblem::Unreadable(error)))
                }
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

fn check(rule: &Rule, value: &Value) -> Option<SchemaProblem> {
    if value.is_null() {
        return (!rule.optional).then_some(SchemaProblem::Missing);
    }
    if !matches_type(&rule.ty, value) {
        return Some(SchemaProblem::WrongType {
            expected: rule.ty.clone(),
            found: value.clone(),
        });
    }
    if let (Some(min), Some(n)) = (rule.min, value.as_f64()) {
        if n < min {
            return Some(SchemaProblem::BelowMin {
                min,
                found: value.clone(),
            });
        }
    }
    if let (Some(max), Some(n)) = (rule.max, value.as_f64()) {
        if n > max {
            return Some(SchemaProblem::AboveMax {
                max,
                found: value.clone(),
            });
        }
    }
    let empty = match value {
        Value::String(s) => s.is_empty(),
        Value::List(items) => items.is_empty(),
        _ => false,
    };
    (rule.nonempty && empty).then_some(SchemaProblem::Empty)
}

fn matches_type(ty: &DataType, value: &Value) -> bool {
    match (ty, value) {
        (DataType::Any, _) => true,
        (DataType::String, Value::String(_))
        | (DataType::Bool, Value::Bool(_))
        | (DataType::Number, Value::Number(_) | Value::BigInt(_)) => true,
        (DataType::Integer, Value::Number(n)) => n.fract() == 0.0,
        (DataType::Integer, Value::BigInt(_)) => true,
        (DataType::Object, Value::Object(_)) => true,
        (DataType::List(None), Value::List(_)) => true,
        (DataType::List(Some(element)), Value::List(items)) => {
            items.iter().all(|item| matches_type(element, item))
        }
        _ => false,
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
            max: None,
        }
    }

    #[test]
    fn rules_check_presence_type_and_emptiness() {
        let string = rule(DataType::String, false, true);
        assert_eq!(
            check(&string, &Value::Null).unwrap().to_string(),
            "is missing or null, but the schema requires it"
        );
        assert_eq!(
            check(&string, &Value::from("")).unwrap().to_string(),
            "must not be empty"
        );
        assert_eq!(
            check(&string, &Value::Bool(true)).unwrap().to_string(),
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
            check(&list, &Value::list(vec![1.0.into()]))
                .unwrap()
                .to_string(),
            "must be a list of string values, found list [1]"
        );
    }

    #[test]
    fn numbers_are_bounded_by_min_and_max_inclusive() {
        let bounded = Rule {
            min: Some(0.0),
            max: Some(1.0),
            ..rule(DataType::Number, false, false)
        };
        for ok in [0.0, 0.5, 1.0] {
            assert!(check(&bounded, &Value::Number(ok)).is_none(), "{ok}");
        }
        assert_eq!(
            check(&bounded, &Value::Number(1.5)).unwrap().to_string(),
            "must be at most 1, found 1.5"
        );
        assert_eq!(
            check(&bounded, &Value::Number(-2.0)).unwrap().to_string(),
            "must be at least 0, found -2"
        );
    }
}
