//! evalspec: YAML eval specs → type-checked expressions → an evaluation plan →
//! exact metrics and gates over RAG gold sets and traces.
//!
//! # The library
//!
//! [`Spec`] compiles a spec (with [`Options`]: params, datasets from other
//! files or from Arrow [`Table`]s in memory, a baseline), decides how it runs
//! ([`Resources`] in, a [`PhysicalPlan`] out) and evaluates it into an
//! [`Evaluation`]: whether it passed, its gates and metrics as typed values,
//! its reports' bytes. For a distributed run, each machine evaluates one
//! [`Bucket`] of the keys into a [`PartialState`], sent as bytes and merged
//! into the same outcome (see [`engine`]). Diagnostics are [`Diagnostic`]s,
//! with their place; progress goes to an [`EventSink`]. [`run`] is the
//! command line, a consumer of the same API.
//!
//! # The layers
//!
//! The other modules are the layers the engine is built of, listed here
//! from the bottom up; each imports only the layers above it in this list
//! (`tests/layers.rs` enforces it, and ARCHITECTURE.md says what each owns):
//! `base` (values, types, sources, diagnostics) → `report_model`
//! (report.json and items.jsonl as serde types) → `syntax` (expression text
//! → AST) → `library` (the callables) → `ir` (ops and their interpreter) →
//! `spec` (YAML → declarations) → `inputs` (every other file a run needs) →
//! `plan` (declarations → a checked, linked plan; pure) → `stats`
//! (accumulators, intervals, paired tests, the bootstrap) → `lock` (frozen
//! specs) → `data` (records read and validated) → `eval` (joins, the run's
//! state, metrics, gates) → `report` (report.json, items.jsonl, templated
//! reports) → `diff` (two reports compared) → `engine` (the library) →
//! `commands` (one file per subcommand). They are public for evalspec's own
//! tests, benchmarks, fuzz targets and Python bindings, hidden from the
//! documentation, and no stable API: use what is exported at the root.

#![forbid(unsafe_code)]

#[doc(hidden)]
pub mod base;
#[doc(hidden)]
pub mod commands;
#[doc(hidden)]
pub mod data;
#[doc(hidden)]
pub mod diff;
pub mod engine;
#[doc(hidden)]
pub mod eval;
#[doc(hidden)]
pub mod inputs;
#[doc(hidden)]
pub mod ir;
#[doc(hidden)]
pub mod library;
#[doc(hidden)]
pub mod lock;
#[doc(hidden)]
pub mod plan;
#[doc(hidden)]
pub mod report;
#[doc(hidden)]
pub mod report_model;
#[doc(hidden)]
pub mod spec;
#[doc(hidden)]
pub mod stats;
#[doc(hidden)]
pub mod syntax;

pub use base::diagnostic::{Diagnostic, Level, Location};
pub use base::events::{Event, EventSink};
pub use base::table::Table;
pub use base::value::Value;
pub use engine::{Evaluation, GateResult, Options, PartialState, Spec};
pub use eval::{Bucket, JoinChoice, JoinStrategy, PhysicalPlan, Resources};
pub use spec::ReportFormat;

/// The README's Rust examples, compiled and run by `cargo test` as doc-tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

pub use commands::exit;

use clap::Parser;

use crate::commands::cli::Cli;

/// The stack the command runs on. Expressions are bounded in depth
/// (`syntax::MAX_NESTING`, `syntax::MAX_DEPTH`) so that no input can exhaust it;
/// this leaves room for those bounds in an unoptimised build. Only what is used
/// is ever committed.
const STACK_BYTES: usize = 64 << 20;

/// Runs the command line and returns the exit status.
pub fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    let outcome = on_command_stack(move || run_here(args));
    match outcome {
        Ok(Ok(code)) => code,
        // A panic has printed its message; it is still not a pass.
        Ok(Err(_)) => exit::ERROR,
        Err(error) => {
            eprintln!("error: cannot start evalspec: {error}");
            exit::ERROR
        }
    }
}

/// Runs `f` on a thread with the command's stack, and waits for it: the outer
/// error is a thread that could not start, the inner one a panic. Whatever calls
/// the library below [`run`] (the fuzz targets call the parser directly) needs
/// this room too: an unoptimised parser spends ~150 KB a bracket level, so 64
/// levels overflow a main thread's 8 MiB.
pub fn on_command_stack<R: Send>(
    f: impl FnOnce() -> R + Send,
) -> std::io::Result<std::thread::Result<R>> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("evalspec".into())
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, f)
            .map(|handle| handle.join())
    })
}

fn run_here(args: Vec<std::ffi::OsString>) -> i32 {
    match Cli::try_parse_from(args) {
        Ok(cli) => commands::dispatch(cli.command, &cli.message_format),
        Err(error) => {
            let code = if error.use_stderr() {
                exit::ERROR
            } else {
                exit::PASS
            };
            let _ = error.print();
            code
        }
    }
}
