//! `evalspec run SPEC`: score the data, write the reports, and exit with the gate.

use std::io::{IsTerminal, Write};

use crate::base::diagnostic;
use crate::base::diagnostic::{render_all, render_unwritten};
use crate::base::events::{Event, EventSink};
use crate::commands::{cli, exit, fail, options, physical_plan, print, render};
use crate::engine::Spec;
use crate::report;

pub fn run(args: &cli::RunArgs) -> i32 {
    let mut options = options(&args.overrides).allow_drift(args.allow_drift);
    if std::io::stderr().is_terminal() {
        options = options.events(progress_line());
    }
    let spec = match Spec::compile(&args.spec, &options) {
        Ok(spec) => spec,
        Err(diagnostics) => return fail(&diagnostics),
    };
    // A frozen spec's drift, allowed: said before anything is read.
    let _ = std::io::stderr().write_all(render(spec.warnings(), render_all).as_bytes());
    let plan = spec.plan();
    // Checked before scoring: a report that would overwrite an input stops the run.
    let out = match report::OutputFolder::check(&args.out, plan) {
        Ok(out) => out,
        Err(d) => return fail(&[d]),
    };
    let physical = match physical_plan(plan, &args.physical) {
        Ok(physical) => physical,
        Err(d) => return fail(&[d]),
    };
    if let Some(note) = &physical.note {
        let line = match super::json_messages() {
            true => serde_json::json!({"level": "note", "message": note}).to_string(),
            false => format!("note: {note}"),
        };
        let _ = writeln!(std::io::stderr(), "{line}");
    }
    let evaluation = match spec.evaluate_with(&physical) {
        Ok(evaluation) => evaluation,
        Err(diagnostics) => return fail(&diagnostics),
    };
    let warnings = &evaluation.outcome().warnings;
    let stderr = render(warnings, |warnings| {
        warnings.iter().map(|w| w.render()).collect()
    });
    let _ = std::io::stderr().write_all(stderr.as_bytes());
    let written = match evaluation.write_reports_in(&out) {
        Ok(written) => written,
        Err(diagnostic) => {
            let written = render(&[diagnostic], render_unwritten);
            let _ = std::io::stderr().write_all(written.as_bytes());
            return exit::ERROR;
        }
    };
    if !args.quiet {
        // Names and reasons can carry data: control characters are shown, not sent.
        print(&diagnostic::escape_controls(&evaluation.summary()));
        let files: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
        print(&format!("reports: {}\n", files.join(", ")));
    }
    let outcome = evaluation.into_outcome();
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

/// A progress line on the terminal for long reads: records read, rate, share
/// read and time left; cleared when the read ends.
fn progress_line() -> EventSink {
    let started = std::time::Instant::now();
    EventSink::new(move |event| {
        let mut stderr = std::io::stderr();
        match event {
            Event::Reading {
                dataset,
                bytes,
                size,
                records,
            } => {
                let seconds = started.elapsed().as_secs_f64().max(1e-3);
                let rate = *bytes as f64 / seconds;
                let left = match rate > 0.0 {
                    true => size.saturating_sub(*bytes) as f64 / rate,
                    false => 0.0,
                };
                let share = 100.0 * *bytes as f64 / (*size).max(1) as f64;
                let _ = write!(
                    stderr,
                    "\r{dataset}: {records} records, {:.0} MB/s, {share:.0}%, ETA {left:.0}s   ",
                    rate / 1e6
                );
            }
            Event::Read { .. } => {
                let _ = write!(stderr, "\r{}\r", " ".repeat(72));
            }
        }
    })
}
