//! Every file a run needs besides the spec itself, found and read in one place
//! before the spec is compiled: the files each dataset is read from (its `path`,
//! its runs, or `--dataset`), the reports to write and the templates they render
//! with, and the prior report a baseline compares against.
//!
//! What cannot be found is kept as located diagnostics beside what was found;
//! the compiler reports them among the spec's own errors, in declaration order,
//! so a user sees every problem at once. After this, nothing before evaluation
//! touches the file system.

pub mod datasets;
pub mod error;
pub mod prior_items;
pub mod prior_report;
pub mod reports;
pub mod run_files;
pub mod streams;
pub mod templates;

use std::path::PathBuf;

use crate::base::diagnostic::Diagnostic;
use crate::spec::{ReportFormat, Spec};

pub use datasets::{DatasetFiles, RunFile};
pub use prior_report::PriorReport;
pub use reports::{ReportFiles, ReportPlan, ReportPlanKind};
pub use templates::Templates;

/// What the command line changes about a spec.
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    /// `--param NAME=VALUE`, as typed.
    pub params: Vec<(String, String)>,
    /// `--dataset NAME=PATH`.
    pub datasets: Vec<(String, PathBuf)>,
    /// `--format`: reports written besides the spec's own.
    pub formats: Vec<ReportFormat>,
    /// `--baseline`: the prior report gates compare against.
    pub baseline: Option<PathBuf>,
    /// `--confidence`: the level of intervals and paired tests.
    pub confidence: Option<f64>,
    /// Datasets a library caller gives as tables in memory: read from no file.
    pub tables: Vec<String>,
}

/// The files found for a spec, each with what could not be found.
#[derive(Debug)]
pub struct Inputs {
    /// `--dataset NAME=…` naming no dataset of the spec.
    pub unknown_datasets: Vec<Diagnostic>,
    /// Per dataset of the spec, in declaration order.
    pub datasets: Vec<DatasetFiles>,
    pub reports: ReportFiles,
    /// `--baseline`, read.
    pub baseline: Option<Result<PriorReport, Diagnostic>>,
    /// `--confidence`, carried to the plan (it outranks the spec's `confidence:`).
    pub confidence: Option<f64>,
}

/// Finds and reads every input of `spec`. The templates are returned apart: the
/// plan holds only data, and the reports render through them after evaluation.
pub fn gather(spec: &Spec, overrides: &Overrides) -> (Inputs, Templates) {
    let (reports, templates) = reports::resolve(spec, &overrides.formats);
    let mut unknown_datasets = datasets::unknown_overrides(spec, &overrides.datasets);
    unknown_datasets.extend(datasets::unknown_tables(spec, &overrides.tables));
    unknown_datasets.extend(streams::check_overrides(
        overrides
            .datasets
            .iter()
            .map(|(n, p)| (n.as_str(), p.as_path())),
    ));
    let inputs = Inputs {
        unknown_datasets,
        datasets: spec
            .datasets
            .iter()
            .map(|decl| match overrides.tables.contains(&decl.name.text) {
                true => datasets::table(decl),
                false => datasets::files(decl, &overrides.datasets),
            })
            .collect(),
        reports,
        baseline: overrides.baseline.as_deref().map(PriorReport::load),
        confidence: overrides.confidence,
    };
    (inputs, templates)
}

/// Reads every dataset that is a stream (standard input, a FIFO) once, into a
/// temporary copy the readers can split and re-read; the copies live as long as
/// the returned value. Only `run` reads data, so only `run` does this.
pub fn spool_streams(inputs: &mut Inputs, spec: &Spec) -> Result<streams::Spooled, Diagnostic> {
    let names: Vec<&str> = spec.datasets.iter().map(|d| d.name.text.as_str()).collect();
    streams::spool(&mut inputs.datasets, &names)
}
