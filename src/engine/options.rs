//! What a caller changes about a spec before it is compiled: params, the files
//! or tables its datasets are read from, extra reports, a baseline, the
//! confidence level, and where progress goes.

use std::path::PathBuf;

use crate::base::events::EventSink;
use crate::base::table::Table;
use crate::inputs::Overrides;
use crate::spec::ReportFormat;

/// A spec's overrides, built up call by call.
#[derive(Debug, Default, Clone)]
pub struct Options {
    pub(super) overrides: Overrides,
    pub(super) tables: Vec<(String, Table)>,
    pub(super) events: Option<EventSink>,
    pub(super) allow_drift: bool,
}

impl Options {
    pub fn new() -> Self {
        Options::default()
    }

    /// The changes to the spec's declarations (for the command line's and
    /// the Python package's `check`, which compile without a lock's check).
    #[doc(hidden)]
    pub fn overrides(&self) -> &Overrides {
        &self.overrides
    }

    /// The options of the command line's overrides.
    pub(crate) fn of_overrides(overrides: Overrides) -> Self {
        Options {
            overrides,
            ..Options::default()
        }
    }

    /// Sets param `name` to `value`, written as on the command line
    /// (checked against the param's declared type).
    pub fn param(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.overrides.params.push((name.into(), value.into()));
        self
    }

    /// Reads dataset `name` from `path` instead of the spec's.
    pub fn dataset(mut self, name: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        self.overrides.datasets.push((name.into(), path.into()));
        self
    }

    /// Reads dataset `name` from `table`, in memory, instead of a file (its
    /// rows are numbered from 1 in errors and reports: `<name>:ROW`).
    pub fn table(mut self, name: impl Into<String>, table: Table) -> Self {
        let name = name.into();
        self.overrides.tables.push(name.clone());
        self.tables.push((name, table));
        self
    }

    /// Also writes this report.
    pub fn format(mut self, format: ReportFormat) -> Self {
        self.overrides.formats.push(format);
        self
    }

    /// Compares against the prior run at `path` (a report.json, or its folder).
    pub fn baseline(mut self, path: impl Into<PathBuf>) -> Self {
        self.overrides.baseline = Some(path.into());
        self
    }

    /// The level of intervals and paired tests, between 0 and 1.
    pub fn confidence(mut self, level: f64) -> Self {
        self.overrides.confidence = Some(level);
        self
    }

    /// Where long reads report their progress.
    pub fn events(mut self, sink: EventSink) -> Self {
        self.events = Some(sink);
        self
    }

    /// Evaluates a frozen spec whose files no longer match its lock (the
    /// reports say so) instead of refusing.
    pub fn allow_drift(mut self, allow: bool) -> Self {
        self.allow_drift = allow;
        self
    }
}
