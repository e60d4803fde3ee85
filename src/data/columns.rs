//! Datasets made of named columns (CSV, TSV, Parquet): which columns the plan reads,
//! the type the dataset's schema gives each, and how a row's column values fill a
//! record's slots. A column the plan reads must be in the file unless the schema
//! declares it optional (`name: type?`); that is checked before any row is read.

use std::sync::Arc;

use crate::base::diagnostic::{Diagnostic, Location};
use crate::base::value::Value;
use crate::plan::{DatasetPlan, ProjectedField};
use crate::spec::DataType;

/// Where a column's value goes.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// Read whole into a slot.
    Slot(usize),
    /// Fields of it are read: it must hold an object (or null).
    Nested(&'a [(String, ProjectedField)]),
}

/// A top-level field the plan reads.
#[derive(Debug, Clone)]
pub struct Wanted<'a> {
    pub name: &'a str,
    pub target: Target<'a>,
    /// What the schema says the column holds (text when it says nothing).
    pub ty: DataType,
    /// Declared optional: the column may be absent from the file.
    pub optional: bool,
}

/// The top-level fields the plan reads, in projection order; empty when the plan
/// reads whole records (every column is then read).
pub fn wanted(dataset: &DatasetPlan) -> Vec<Wanted<'_>> {
    dataset
        .projection
        .fields
        .iter()
        .map(|(name, field)| {
            let (ty, optional) = column_type(dataset, name);
            let (target, ty) = match field {
                ProjectedField::Slot(slot) => (Target::Slot(slot.index()), ty),
                // Fields of an undeclared column are read: it holds an object.
                ProjectedField::Nested(inner) => (
                    Target::Nested(inner),
                    if ty == DataType::String {
                        DataType::Object
                    } else {
                        ty
                    },
                ),
            };
            Wanted {
                name,
                target,
                ty,
                optional,
            }
        })
        .collect()
}

/// The type the schema gives column `name` and whether it may be absent. A rule on
/// the column itself decides; rules only on its elements (`gold[].page`) make it a
/// list, rules only on its fields (`verdicts.scholar`) an object; without a rule a
/// column holds text. `any` reads as text.
pub fn column_type(dataset: &DatasetPlan, name: &str) -> (DataType, bool) {
    if let Some(rule) = dataset
        .rules
        .iter()
        .find(|r| r.each.is_none() && r.field == name)
    {
        let ty = match &rule.ty {
            DataType::Any => DataType::String,
            other => other.clone(),
        };
        return (ty, rule.optional);
    }
    let inner = |suffix: &str| {
        dataset.rules.iter().any(|r| {
            r.field
                .strip_prefix(name)
                .is_some_and(|rest| rest.starts_with(suffix))
        })
    };
    let ty = if inner("[]") {
        DataType::List(None)
    } else if inner(".") {
        DataType::Object
    } else {
        DataType::String
    };
    (ty, false)
}

/// The error for columns the plan reads that the file lacks; `at` the header.
pub fn missing(
    dataset: &DatasetPlan,
    at: Option<Location>,
    missing: &[&str],
    present: &[String],
) -> Diagnostic {
    let names: Vec<String> = missing.iter().map(|n| format!("`{n}`")).collect();
    let (what, verb) = if names.len() == 1 {
        ("column", "is")
    } else {
        ("columns", "are")
    };
    let mut help = String::new();
    for name in missing {
        if let Some(suggestion) =
            crate::base::suggest::did_you_mean(name, present.iter().map(String::as_str))
        {
            help.push_str(&format!("is `{suggestion}` meant to be `{name}`? "));
        }
    }
    let (ty, _) = column_type(dataset, missing[0]);
    help.push_str(&format!(
        "the file has: {}; a column that may be absent is declared optional in `datasets.{}.schema` (e.g. `{}: {ty}?`)",
        if present.is_empty() {
            "no columns".to_string()
        } else {
            present
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        },
        dataset.name,
        missing[0]
    ));
    let mut d = Diagnostic::error(
        "missing_columns",
        format!(
            "{}: {what} {} {verb} missing from `{}`, but the spec reads {}",
            dataset.name,
            names.join(", "),
            dataset.display_path,
            if names.len() == 1 { "it" } else { "them" }
        ),
    )
    .help(help);
    if let Some(at) = at {
        d = d.at(at);
    }
    d
}

/// Puts a column's value where the plan reads it: a slot, or the slots of the fields
/// read from it (it must then be an object or null).
pub fn place(
    name: &str,
    target: Target<'_>,
    value: Value,
    slots: &mut [Value],
) -> Result<(), String> {
    match target {
        Target::Slot(slot) => slots[slot] = value,
        Target::Nested(fields) => match &value {
            Value::Null => {}
            Value::Object(_) => fill(fields, &value, slots),
            other => {
                let reads: Vec<String> = fields
                    .iter()
                    .map(|(n, _)| format!("`{name}.{n}`"))
                    .collect();
                return Err(format!(
                    "column `{name}` must hold an object (the spec reads {}), found {} {}",
                    reads.join(", "),
                    other.type_name(),
                    other.preview()
                ));
            }
        },
    }
    Ok(())
}

/// Copies the projected fields of an object into their slots.
pub fn fill(fields: &[(String, ProjectedField)], object: &Value, slots: &mut [Value]) {
    for (name, field) in fields {
        let value = object.field(name).unwrap_or_default();
        match field {
            ProjectedField::Slot(slot) => slots[slot.index()] = value,
            ProjectedField::Nested(inner) => fill(inner, &value, slots),
        }
    }
}

/// A whole record from its columns, in file order.
pub fn object(fields: Vec<(Arc<str>, Value)>) -> Value {
    Value::Object(Arc::from(fields))
}
