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
pub mod init;
pub mod lock;
pub mod matchers;
pub mod params;
pub mod plan;
pub mod ranking;
pub mod report;
pub mod schema;
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
        Command::Freeze(args) => freeze(&args),
        Command::Verify(args) => verify(&args),
        Command::Explain(args) => explain(&args),
        Command::Init(args) => init::init(&args.dir),
        Command::Schema => {
            print(schema::SCHEMA);
            exit::PASS
        }
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
    let mut plan = match compile(&args.spec, &overrides(&args.overrides)) {
        Ok(plan) => plan,
        Err(diagnostics) => return fail(&diagnostics),
    };
    // Standard input and FIFOs are read once, here, into files the readers share.
    let _spooled = match data::spool(&mut plan) {
        Ok(spooled) => spooled,
        Err(d) => return fail(&[d]),
    };
    match lock::verify(&plan) {
        Ok(None) => {}
        Ok(Some((stamp, drift))) => {
            if !drift.is_empty() {
                let mut diagnostics = drift_diagnostics(&plan, &stamp, &drift);
                if !args.allow_drift {
                    if let Some(last) = diagnostics.last_mut() {
                        last.help = Some(
                            "bump the spec's version and `evalspec freeze --reason …` it, restore the frozen files, or pass --allow-drift".into(),
                        );
                    }
                    return fail(&diagnostics);
                }
                for d in &mut diagnostics {
                    d.level = diagnostic::Level::Warning;
                }
                let _ = std::io::stderr().write_all(render_all(&diagnostics).as_bytes());
            }
            plan.lock = Some(stamp);
        }
        Err(d) => return fail(&[d]),
    }
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

/// One diagnostic per drifted file, with its diff or first differing line.
fn drift_diagnostics(
    plan: &plan::Plan,
    stamp: &lock::LockStamp,
    drift: &[lock::Drift],
) -> Vec<Diagnostic> {
    let dataset = |name: &str| {
        let d = plan.datasets.iter().find(|d| d.name == name)?;
        Some((d.display_path.clone(), std::fs::read(&d.path).ok()?))
    };
    drift
        .iter()
        .map(|d| d.diagnostic(&stamp.path, dataset))
        .collect()
}

fn freeze(args: &cli::FreezeArgs) -> i32 {
    let plan = match compile(&args.spec, &Overrides::default()) {
        Ok(plan) => plan,
        Err(diagnostics) => return fail(&diagnostics),
    };
    match lock::freeze(&plan, args.reason.as_deref()) {
        Ok(lock::Frozen::UpToDate(path)) => {
            print(&format!(
                "{} {} is frozen and unchanged: {} is up to date\n",
                plan.spec_name,
                plan.spec_version,
                path.display()
            ));
            exit::PASS
        }
        Ok(lock::Frozen::Written { path, lock }) => {
            print(&format!(
                "froze {} {}: {} file(s), {} dataset(s) pinned in {} (sha256 {}, freeze {} of its history)\n",
                lock.name,
                lock.version,
                lock.pins.files.len(),
                lock.pins.datasets.len(),
                path.display(),
                &lock.sha256[..12],
                lock.history.len()
            ));
            exit::PASS
        }
        Err(d) => fail(&[d]),
    }
}

fn verify(args: &cli::CheckArgs) -> i32 {
    let plan = match compile(&args.spec, &overrides(&args.overrides)) {
        Ok(plan) => plan,
        Err(diagnostics) => return fail(&diagnostics),
    };
    match lock::verify(&plan) {
        Ok(None) => fail(&[Diagnostic::error(format!(
            "spec `{}` is not frozen: there is no {}",
            args.spec.display(),
            lock::lock_path(&args.spec).display()
        ))
        .help(format!("run `evalspec freeze {}`", args.spec.display()))]),
        Ok(Some((stamp, drift))) if drift.is_empty() => {
            print(&format!(
                "{} {} matches its lock {} (sha256 {})\n",
                plan.spec_name,
                plan.spec_version,
                stamp.path,
                &stamp.sha256[..12.min(stamp.sha256.len())]
            ));
            exit::PASS
        }
        Ok(Some((stamp, drift))) => fail(&drift_diagnostics(&plan, &stamp, &drift)),
        Err(d) => fail(&[d]),
    }
}

fn explain(args: &cli::CheckArgs) -> i32 {
    match compile(&args.spec, &overrides(&args.overrides)) {
        Ok(plan) => {
            print(&plan::explain(&plan));
            exit::PASS
        }
        Err(diagnostics) => fail(&diagnostics),
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
