//! Every error writing a run's reports reports, as data; their words are written
//! here and nowhere else.

use crate::base::diagnostic::{Kind, Words};

#[derive(Debug)]
pub enum ReportError {
    /// `--out` names something that is not a folder.
    OutNotAFolder {
        out: String,
    },
    /// A report would replace a file the run reads.
    ReportIsInput {
        file: String,
        input: String,
        role: &'static str,
    },
    /// A report path that, through a symbolic link, lands outside `--out`.
    ReportLeavesOut {
        file: String,
        resolved: String,
    },
    CannotLockOut {
        out: String,
        error: String,
    },
    CannotWrite {
        path: String,
        error: String,
    },
    /// A report given the name of the file that holds the run's item values.
    ReportIsItemValues {
        file: String,
    },
}

impl Kind for ReportError {
    fn code(&self) -> &'static str {
        match self {
            ReportError::OutNotAFolder { .. } => "out_not_a_folder",
            ReportError::ReportIsInput { .. } => "report_overwrites_input",
            ReportError::ReportLeavesOut { .. } => "report_outside_out",
            ReportError::CannotLockOut { .. } => "cannot_lock_out",
            ReportError::CannotWrite { .. } => "cannot_write_report",
            ReportError::ReportIsItemValues { .. } => "report_is_item_values",
        }
    }

    fn describe(&self) -> Words {
        match self {
            ReportError::OutNotAFolder { out } => {
                Words::new(format!("the output folder `{out}` is a file, or inside one"))
                    .help("give --out a folder (it is created when missing)")
            }
            ReportError::ReportIsInput { file, input, role } => Words::new(format!(
                "the report `{file}` would overwrite `{input}`, the {role} this run reads"
            ))
            .help("write the reports to another folder (--out) or give the report another `path`"),
            ReportError::ReportLeavesOut { file, resolved } => Words::new(format!(
                "the report `{file}` would be written to `{resolved}`, outside the output folder"
            ))
            .help("a symbolic link in the output folder points elsewhere: remove it or choose another --out"),
            ReportError::CannotLockOut { out, error } => Words::new(format!(
                "cannot lock the output folder `{out}`: {error}"
            ))
            .help("check that the --out folder is readable"),
            ReportError::ReportIsItemValues { file } => Words::new(format!(
                "the report `{file}` would take the place of item-values.jsonl, which every run writes beside report.json"
            ))
            .help("give the report another `path`"),
            ReportError::CannotWrite { path, error } => {
                Words::new(format!("cannot write `{path}`: {error}"))
                    .help("check that the --out folder is writable; no report was replaced")
            }
        }
    }
}
