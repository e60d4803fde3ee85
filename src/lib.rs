//! evalspec: YAML eval specs → type-checked expressions → an evaluation plan →
//! exact metrics and gates over RAG gold sets and traces.
//!
//! The pipeline, one module per stage: [`spec`] (YAML → declarations), [`syntax`]
//! (expression text → AST), [`plan`] (names → slots, types checked, projection),
//! [`data`] (records read and validated), [`eval`] (items, aggregates, metrics,
//! gates), [`report`] (report.json, items.jsonl, templated reports, the
//! summary); [`diff`] compares two runs.

#![forbid(unsafe_code)]

pub mod builtins;
pub mod cli;
pub mod data;
pub mod diagnostic;
pub mod diff;
pub mod eval;
pub mod matchers;
pub mod params;
pub mod plan;
pub mod ranking;
pub mod report;
pub mod source;
pub mod spans;
pub mod spec;
pub mod suggest;
pub mod syntax;
pub mod types;
pub mod value;

use std::io::Write;
use std::path::PathBuf;

use clap::Parser;

use crate::cli::{Cli, Command};
use crate::diagnostic::{render_all, Diagnostic};
use crate::plan::compile::Overrides;

/// Exit statuses: the exit code is the gate.
pub mod exit {
    pub const PASS: i32 = 0;
    pub const GATE_FAILED: i32 = 1;
    pub const ERROR: i32 = 2;
}

/// Runs the command line and returns the exit status.
pub fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => {
            let code = if error.use_stderr() {
                exit::ERROR
            } else {
                exit::PASS
            };
            let _ = error.print();
            return code;
        }
    };
    match cli.command {
        Command::Check(args) => check(&args),
        Command::Run(args) => run_spec(&args),
        Command::Diff(args) => diff_runs(&args),
    }
}

fn overrides(args: &cli::Overrides) -> Overrides {
    Overrides {
        params: args.params.clone(),
        datasets: args
            .datasets
            .iter()
            .map(|(n, p)| (n.clone(), PathBuf::from(p)))
            .collect(),
        formats: args.formats.clone(),
        baseline: args.baseline.clone(),
    }
}

fn compile(
    spec_path: &std::path::Path,
    overrides: &Overrides,
) -> Result<plan::Plan, Vec<Diagnostic>> {
    let spec = spec::load(spec_path)?;
    plan::compile(&spec, overrides)
}

fn fail(diagnostics: &[Diagnostic]) -> i32 {
    let _ = std::io::stderr().write_all(render_all(diagnostics).as_bytes());
    exit::ERROR
}

fn check(args: &cli::CheckArgs) -> i32 {
    match compile(&args.spec, &overrides(&args.overrides)) {
        Ok(plan) => {
            print(&plan.to_string());
            exit::PASS
        }
        Err(diagnostics) => fail(&diagnostics),
    }
}

fn run_spec(args: &cli::RunArgs) -> i32 {
    let plan = match compile(&args.spec, &overrides(&args.overrides)) {
        Ok(plan) => plan,
        Err(diagnostics) => return fail(&diagnostics),
    };
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    let outcome = match eval::run(&plan, threads) {
        Ok(outcome) => outcome,
        Err(diagnostics) => return fail(&diagnostics),
    };
    let mut stderr = String::new();
    for warning in &outcome.warnings {
        stderr.push_str(&warning.render());
    }
    let _ = std::io::stderr().write_all(stderr.as_bytes());
    let written = match report::write_reports(&plan, &outcome, &args.out) {
        Ok(written) => written,
        Err(diagnostic) => return fail(&[diagnostic]),
    };
    if !args.quiet {
        print(&report::summary(&plan, &outcome));
        let files: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
        print(&format!("reports: {}\n", files.join(", ")));
    }
    if outcome.pass() {
        exit::PASS
    } else {
        exit::GATE_FAILED
    }
}

fn diff_runs(args: &cli::DiffArgs) -> i32 {
    let load = |path: &std::path::Path| diff::Run::load(path);
    let (old, new) = match (load(&args.old), load(&args.new)) {
        (Ok(old), Ok(new)) => (old, new),
        (old, new) => {
            let errors: Vec<Diagnostic> = [old.err(), new.err()].into_iter().flatten().collect();
            return fail(&errors);
        }
    };
    let comparison = diff::compare(&old, &new);
    let text = match args.format.as_str() {
        "md" => diff::markdown(&comparison),
        "json" => diff::json(&comparison),
        _ => {
            use std::io::IsTerminal;
            // Colour on a terminal, unless NO_COLOR (no-color.org) is set.
            let colour = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            diff::text(&comparison, colour)
        }
    };
    print(&text);
    if args.fail_on_regression && comparison.regressed() {
        exit::GATE_FAILED
    } else {
        exit::PASS
    }
}

/// Prints to stdout; a closed pipe (`| head`) is not an error.
fn print(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
}
