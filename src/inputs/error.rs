//! Every error finding a spec's inputs reports, as data; their words are written
//! here and nowhere else. A site builds an [`InputError`] and places it
//! (`Diagnostic::of(&kind).at(location)`).

use crate::base::diagnostic::{Kind, Words};
use crate::base::suggest::suggestion_or;

#[derive(Debug)]
pub enum InputError {
    // ---- datasets ----
    UnknownDatasetOverride {
        name: String,
        datasets: Vec<String>,
    },
    /// A table given for a dataset the spec does not declare.
    UnknownTable {
        name: String,
        datasets: Vec<String>,
    },
    /// A table given for a dataset read as runs (a file per run).
    TableForRuns {
        dataset: String,
    },
    DatasetIsDevice {
        dataset: String,
        path: String,
    },
    DatasetNoPath {
        dataset: String,
    },
    RunFiles {
        dataset: String,
        problem: RunFilesProblem,
    },
    // ---- reports and templates ----
    TemplateNotFound {
        path: String,
        looked_for: String,
    },
    /// A template path that leads out of the spec's folder (`..`, an absolute
    /// path, a symbolic link), or to something that is not a file.
    TemplateOutside {
        path: String,
        folder: String,
    },
    TemplateNameTwice {
        name: String,
        first_dir: String,
        second_dir: String,
    },
    ReportFileTwice {
        file: String,
    },
    ReportOutsideOut {
        file: String,
    },
    /// A template rendered more than the largest report allowed.
    TemplateTooLarge {
        name: String,
        limit: usize,
    },
    /// A template that does not load, parse or render: minijinja's account of it.
    Template {
        file: String,
        kind: String,
        detail: Option<String>,
        /// The errors beneath it, outermost first.
        causes: Vec<String>,
    },
}

impl InputError {
    /// Said under a template that ran out of fuel.
    pub fn template_fuel_note(fuel: u64) -> String {
        format!(
            "a report may take {fuel} units of template work (an instruction, or 64 bytes \
             of text built); this template loops too long or builds too much"
        )
    }
}

/// Why the files of a dataset's runs could not be listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunFilesProblem {
    NoFile { pattern: String },
    BadGlob { pattern: String, error: String },
    Unreadable { path: String, error: String },
    UnreadableFolder { folder: String, error: String },
    Missing { pattern: String },
}

impl RunFilesProblem {
    fn code(&self) -> &'static str {
        match self {
            RunFilesProblem::NoFile { .. } => "runs_match_no_file",
            RunFilesProblem::BadGlob { .. } => "bad_runs_glob",
            RunFilesProblem::Unreadable { .. } => "cannot_read_run_file",
            RunFilesProblem::UnreadableFolder { .. } => "cannot_read_runs_folder",
            RunFilesProblem::Missing { .. } => "runs_path_missing",
        }
    }

    fn text(&self) -> String {
        match self {
            RunFilesProblem::NoFile { pattern } => format!("`{pattern}` names no file"),
            RunFilesProblem::BadGlob { pattern, error } => {
                format!("`{pattern}` is not a valid glob: {error}")
            }
            RunFilesProblem::Unreadable { path, error } => format!("cannot read `{path}`: {error}"),
            RunFilesProblem::UnreadableFolder { folder, error } => {
                format!("cannot read folder `{folder}`: {error}")
            }
            RunFilesProblem::Missing { pattern } => format!("`{pattern}` does not exist"),
        }
    }
}

/// Why the template loader refused a name: the detail of minijinja's error.
#[derive(Debug)]
pub enum TemplateLoadProblem {
    Outside { name: String },
    Unreadable { name: String, error: String },
}

impl TemplateLoadProblem {
    pub fn text(&self) -> String {
        match self {
            TemplateLoadProblem::Outside { name } => {
                format!("`{name}` is outside the spec's template folders")
            }
            TemplateLoadProblem::Unreadable { name, error } => {
                format!("cannot read template `{name}`: {error}")
            }
        }
    }
}

impl Kind for InputError {
    fn code(&self) -> &'static str {
        use InputError as E;
        match self {
            E::UnknownDatasetOverride { .. } => "unknown_dataset_override",
            E::UnknownTable { .. } => "unknown_table",
            E::TableForRuns { .. } => "table_for_runs",
            E::DatasetIsDevice { .. } => "dataset_is_device",
            E::DatasetNoPath { .. } => "dataset_no_path",
            E::RunFiles { problem, .. } => problem.code(),
            E::TemplateNotFound { .. } => "template_not_found",
            E::TemplateOutside { .. } => "template_outside_spec_folder",
            E::TemplateNameTwice { .. } => "template_name_twice",
            E::ReportFileTwice { .. } => "report_file_twice",
            E::ReportOutsideOut { .. } => "report_outside_out",
            E::TemplateTooLarge { .. } => "template_output_too_large",
            E::Template { .. } => "template",
        }
    }

    fn describe(&self) -> Words {
        use InputError as E;
        let report_path_help = "give each report its own `path`, relative to the --out folder";
        match self {
            E::UnknownDatasetOverride { name, datasets } => Words::new(format!(
                "`--dataset {name}=…`: the spec has no dataset `{name}`"
            ))
            .help(suggestion_or(
                name,
                datasets.iter().map(String::as_str),
                || format!("datasets: {}", datasets.join(", ")),
            )),
            E::UnknownTable { name, datasets } => Words::new(format!(
                "a table is given for `{name}`, but the spec has no dataset `{name}`"
            ))
            .help(suggestion_or(
                name,
                datasets.iter().map(String::as_str),
                || format!("datasets: {}", datasets.join(", ")),
            )),
            E::TableForRuns { dataset } => Words::new(format!(
                "dataset `{dataset}` is read as runs, a file per run; a table cannot stand for them"
            ))
            .help("give the table for a dataset read from one file, or remove `runs:` from the dataset"),
            E::DatasetIsDevice { dataset, path } => Words::new(format!(
                "dataset `{dataset}`: `{path}` is a device, not a data file"
            ))
            .help("give a file, a FIFO or `-` (standard input)"),
            E::DatasetNoPath { dataset } => Words::new(format!("dataset `{dataset}` has no path"))
                .help(format!(
                    "add `path:` to the dataset or pass `--dataset {dataset}=PATH`"
                )),
            E::RunFiles { dataset, problem } => {
                Words::new(format!("dataset `{dataset}`: {}", problem.text()))
                    .help("`runs` takes files, folders or glob patterns (e.g. `runs/seed-*.jsonl`), relative to the spec")
            }
            E::TemplateNotFound { path, looked_for } => Words::new(format!(
                "template `{path}` not found (looked for `{looked_for}`)"
            ))
            .help("template paths are relative to the spec file"),
            E::TemplateOutside { path, folder } => Words::new(format!(
                "template `{path}` is not a file inside the spec's folder `{folder}`"
            ))
            .help("a report renders templates from the spec's folder only (what else it could read might be a secret): move the template beside the spec"),
            E::TemplateNameTwice { name, first_dir, second_dir } => Words::new(format!(
                "two templates are named `{name}` (in `{first_dir}` and `{second_dir}`)"
            ))
            .help("rename one; templates load by file name from their folders"),
            E::ReportFileTwice { file } => {
                Words::new(format!("two reports are written to `{file}`")).help(report_path_help)
            }
            E::ReportOutsideOut { file } => {
                Words::new(format!("the report path `{file}` leaves the output folder"))
                    .help(report_path_help)
            }
            E::TemplateTooLarge { name, limit } => Words::new(format!(
                "the template `{name}` rendered more than {} MiB",
                limit >> 20
            ))
            .help("a report is at most that large: check the template's loops"),
            E::Template { file, kind, detail, causes } => {
                let mut message = match detail {
                    Some(detail) => format!("{kind}: {detail}"),
                    None => kind.clone(),
                };
                for cause in causes {
                    message.push_str(&format!(" ({cause})"));
                }
                Words::new(format!("template `{file}`: {message}"))
                    .help("templates see the report context described in templates/README.md")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use crate::inputs::{gather, Overrides};

    /// The codes of the errors finding the inputs of a spec whose `datasets:`
    /// and further sections are `rest` (YAML), with `files` written beside it.
    fn codes(rest: &str, files: &[(&str, &str)], overrides: &Overrides) -> Vec<&'static str> {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let path = dir.path().join("spec.yaml");
        std::fs::write(&path, format!("name: t\nversion: 1.0.0\n{rest}")).unwrap();
        let spec = crate::spec::load(&path).unwrap();
        let (inputs, _) = gather(&spec, overrides);
        let found = inputs.unknown_datasets.iter();
        let found = found.chain(inputs.datasets.iter().flat_map(|d| &d.errors));
        let found = found.chain(&inputs.reports.errors);
        found.map(|e| e.code).collect()
    }

    const GOLD: &str = "datasets:\n  gold: {path: g.jsonl, key: id}\n";

    #[test]
    fn errors_are_kinds_that_tests_can_match() {
        let none = Overrides::default();
        assert_eq!(codes(GOLD, &[], &none), Vec::<&str>::new());
        let runs = "datasets:\n  gold: {runs: seed-*.jsonl, key: id}\n";
        assert_eq!(codes(runs, &[], &none), ["runs_match_no_file"]);
        assert_eq!(
            codes(runs, &[("seed-1.jsonl", "")], &none),
            Vec::<&str>::new()
        );
        let no_path = "datasets:\n  gold: {key: id}\n";
        assert_eq!(codes(no_path, &[], &none), ["dataset_no_path"]);
        let typo = Overrides {
            datasets: vec![("gld".into(), PathBuf::from("x.jsonl"))],
            ..Overrides::default()
        };
        assert_eq!(codes(GOLD, &[], &typo), ["unknown_dataset_override"]);
    }

    #[test]
    fn report_and_template_errors_are_kinds() {
        let none = Overrides::default();
        let missing = format!("{GOLD}reports: [{{template: missing.md.j2}}]\n");
        assert_eq!(codes(&missing, &[], &none), ["template_not_found"]);
        let broken = format!("{GOLD}reports: [{{template: r.md.j2}}]\n");
        let template = [("r.md.j2", "{% if %}")];
        assert_eq!(codes(&broken, &template, &none), ["template"]);
        let twice = format!("{GOLD}reports: [junit, {{format: markdown, path: junit.xml}}]\n");
        assert_eq!(codes(&twice, &[], &none), ["report_file_twice"]);
        let outside = format!("{GOLD}reports: [{{format: junit, path: ../x.xml}}]\n");
        assert_eq!(codes(&outside, &[], &none), ["report_outside_out"]);
    }
}
