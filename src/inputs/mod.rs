//! Every file a run needs besides the spec and its datasets, found and read in
//! one place before anything is evaluated: the files of multi-run datasets, the
//! report templates, and the prior report a baseline compares against.

pub mod prior_report;
pub mod run_files;
pub mod templates;
