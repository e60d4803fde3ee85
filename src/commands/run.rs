//! `evalspec run SPEC`: score the data, write the reports, and exit with the gate.

use std::io::Write;

use crate::base::diagnostic;
use crate::base::diagnostic::Diagnostic;
use crate::base::diagnostic::{render_all, render_unwritten};
use crate::commands::{cli, compile_to_read, exit, fail, overrides, physical_plan, print};
use crate::{eval, lock, plan, report};

pub fn run(args: &cli::RunArgs) -> i32 {
    let (plan, templates, _spooled) = match compile_to_read(&args.spec, &overrides(&args.overrides))
    {
        Ok(compiled) => compiled,
        Err(diagnostics) => return fail(&diagnostics),
    };
    // A frozen spec's lock, checked: stamped on the reports.
    let lock = match lock::verify(&plan) {
        Ok(None) => None,
        Ok(Some((stamp, drift))) => {
            if !drift.is_empty() {
                let stops_run = !args.allow_drift;
                let mut diagnostics = drift_diagnostics(&plan, &stamp, &drift, stops_run);
                if stops_run {
                    return fail(&diagnostics);
                }
                for d in &mut diagnostics {
                    d.level = diagnostic::Level::Warning;
                }
                let _ = std::io::stderr().write_all(render_all(&diagnostics).as_bytes());
            }
            Some(stamp)
        }
        Err(d) => return fail(&[d]),
    };
    // Checked before scoring: a report that would overwrite an input stops the run.
    let out = match report::OutputFolder::check(&args.out, &plan) {
        Ok(out) => out,
        Err(d) => return fail(&[d]),
    };
    let physical = match physical_plan(&plan, &args.physical) {
        Ok(physical) => physical,
        Err(d) => return fail(&[d]),
    };
    let threads = physical.threads;
    if let Some(note) = &physical.note {
        let _ = writeln!(std::io::stderr(), "note: {note}");
    }
    let outcome = match eval::evaluate(&plan, &physical) {
        Ok(outcome) => outcome,
        Err(diagnostics) => return fail(&diagnostics),
    };
    let mut stderr = String::new();
    for warning in &outcome.warnings {
        stderr.push_str(&warning.render());
    }
    let _ = std::io::stderr().write_all(stderr.as_bytes());
    let written =
        match report::write_reports(&plan, &outcome, lock.as_ref(), &templates, &out, threads) {
            Ok(written) => written,
            Err(diagnostic) => {
                let _ = std::io::stderr().write_all(render_unwritten(&[diagnostic]).as_bytes());
                return exit::ERROR;
            }
        };
    if !args.quiet {
        // Names and reasons can carry data: control characters are shown, not sent.
        print(&diagnostic::escape_controls(&report::summary(
            &plan,
            &outcome,
            lock.as_ref(),
        )));
        let files: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
        print(&format!("reports: {}\n", files.join(", ")));
    }
    let pass = outcome.pass();
    // Its item values hold a key per item: freeing them one by one was the
    // last 20 ms of a 1M-item run, on one core.
    crate::base::deferred::drop_at_exit(outcome);
    if pass {
        exit::PASS
    } else {
        exit::GATE_FAILED
    }
}

/// One diagnostic per drifted file, with its diff or first differing line; when
/// the drift `stops_run`, the last says how to go on.
pub fn drift_diagnostics(
    plan: &plan::Plan,
    stamp: &lock::LockStamp,
    drift: &[lock::Drift],
    stops_run: bool,
) -> Vec<Diagnostic> {
    let dataset = |name: &str| {
        let d = plan.datasets.iter().find(|d| d.name == name)?;
        Some((d.display_path.clone(), std::fs::read(&d.path).ok()?))
    };
    drift
        .iter()
        .enumerate()
        .map(|(i, d)| d.diagnostic(&stamp.path, dataset, stops_run && i + 1 == drift.len()))
        .collect()
}
