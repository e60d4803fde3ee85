//! Phase 5: datasets. Reads [`Names`] and the files found for each dataset
//! ([`Inputs`]); lowers each dataset's key, `run_name` and record checks (bare
//! names are the record's own fields) and binds its schema rules. Adds each
//! dataset, as declared, not yet projected.

use std::path::PathBuf;

use crate::base::diagnostic::Location;
use crate::base::types::Type;
use crate::inputs::{Inputs, RunFile};
use crate::ir::ExprAt;
use crate::plan::compile::declared::{Declared, DeclaredDataset};
use crate::plan::compile::error::CompileError as E;
use crate::plan::compile::expr::{DeclaredOp, Lowering, Scope};
use crate::plan::Check;
use crate::spec::{self, CsvOptions, DataType, Duplicates, Format, Join, RunName};

/// A dataset as compiled, before its projection is known.
#[derive(Debug)]
pub struct DatasetDraft {
    pub declared: DeclaredDataset,
    pub name: String,
    pub format: Format,
    pub csv: CsvOptions,
    pub path: PathBuf,
    pub display_path: String,
    pub key: DeclaredOp,
    pub key_text: String,
    pub key_at: ExprAt,
    pub duplicates: Duplicates,
    pub join: Join,
    pub rules: Vec<RuleDraft>,
    pub checks: Vec<Check<Declared>>,
    pub declared_at: Location,
    pub frozen: bool,
    pub allow_empty: bool,
    pub runs: Vec<RunFile>,
    pub run_name: Option<Check<Declared>>,
}

/// A schema rule, by the path it checks from the record's root.
#[derive(Debug)]
pub struct RuleDraft {
    pub field: String,
    pub path: Vec<String>,
    pub each: Option<Vec<String>>,
    pub ty: DataType,
    pub optional: bool,
    pub nonempty: bool,
    pub min: Option<f64>,
    pub max: Option<f64>,
}

pub fn compile(lowering: &mut Lowering<'_>, inputs: &Inputs) -> Vec<DatasetDraft> {
    let spec = lowering.names.spec;
    inputs
        .unknown_datasets
        .iter()
        .for_each(|d| lowering.pass_on(d.clone()));
    let mut out = Vec::new();
    for (index, (decl, files)) in spec.datasets.iter().zip(&inputs.datasets).enumerate() {
        let is_items = decl.name.text == spec.items.text;
        if decl.duplicates == spec::Duplicates::Keep && !is_items {
            let kind = E::KeepOnLookup {
                dataset: decl.name.text.clone(),
            };
            lowering.report(kind, decl.name.location());
        }
        if decl.allow_empty && !is_items {
            let kind = E::AllowEmptyOnLookup {
                dataset: decl.name.text.clone(),
            };
            lowering.report(kind, decl.name.location());
        }
        files
            .errors
            .iter()
            .for_each(|d| lowering.pass_on(d.clone()));
        let dataset = DeclaredDataset(index);
        let record = Scope::Record(dataset);
        let Some(key) = lowering.compile_expr(&decl.key, record) else {
            continue;
        };
        let key_at = lowering.locate(decl.key.whole());
        let run_name = match decl.runs.as_ref().map(|r| &r.name) {
            Some(RunName::Expr(expr)) => {
                let Some(lowered) = lowering.compile_expr(expr, record) else {
                    continue;
                };
                Some(Check {
                    op: lowered.op,
                    text: expr.text.clone(),
                    message: format!("every record of a run must have the same `{}`", expr.text),
                })
            }
            _ => None,
        };
        let Some(path) = files.path.clone() else {
            continue;
        };
        let rules = decl
            .schema
            .iter()
            .map(|rule| RuleDraft {
                field: match &rule.each {
                    Some(each) if each.is_empty() => format!("{}[]", rule.path.join(".")),
                    Some(each) => format!("{}[].{}", rule.path.join("."), each.join(".")),
                    None => rule.path.join("."),
                },
                path: rule.path.clone(),
                each: rule.each.clone(),
                ty: rule.ty.clone(),
                optional: rule.optional,
                nonempty: rule.nonempty,
                min: rule.min,
                max: rule.max,
            })
            .collect();
        let checks = decl
            .checks
            .iter()
            .filter_map(|check| {
                let lowered = lowering.compile_expr(&check.expr, record)?;
                if !Type::Bool.accepts(&lowered.ty) {
                    let kind = E::CheckNotBool { found: lowered.ty };
                    lowering.report(kind, check.expr.whole());
                    return None;
                }
                Some(Check {
                    op: lowered.op,
                    text: check.expr.text.clone(),
                    message: check.message.clone(),
                })
            })
            .collect();
        out.push(DatasetDraft {
            declared: dataset,
            name: decl.name.text.clone(),
            format: files.format.unwrap_or(decl.format),
            csv: decl.csv.clone(),
            path,
            display_path: files.display_path.clone(),
            key: key.op,
            key_text: decl.key.text.clone(),
            key_at,
            duplicates: decl.duplicates,
            join: decl.join,
            rules,
            checks,
            declared_at: decl.name.location(),
            frozen: decl.frozen,
            allow_empty: decl.allow_empty,
            runs: files.runs.clone(),
            run_name,
        });
    }
    out
}
