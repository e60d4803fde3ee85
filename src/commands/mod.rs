//! The command line: one file per subcommand. Each parses nothing itself (clap
//! did, in [`cli`]); it calls the layers below and turns their results into
//! output and an exit status.

mod check;
pub mod cli;
mod diff;
pub mod error;
pub mod exit;
mod explain;
pub use explain::explain_text;
mod freeze;
pub mod init;
mod run;
pub mod shell;
mod verify;

use std::io::Write;
use std::path::PathBuf;

use crate::base::diagnostic::{render_all, Diagnostic};
use crate::inputs::{self, Overrides, Templates};
use crate::plan;
use crate::spec;
use cli::Command;

/// Leaves unprinted the panics of the Parquet decoder on a damaged file, which
/// the reader reports as errors; every other panic goes to the hook there was.
/// The command line's choice, made once for the process.
pub fn quiet_decoder_panics() {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !crate::data::parquet::panicking_in_decoder() {
                previous(info);
            }
        }));
    });
}

/// Runs one parsed command line and returns its exit status.
pub fn dispatch(command: Command, message_format: &str) -> i32 {
    quiet_decoder_panics();
    JSON_MESSAGES.with(|json| json.set(message_format == "json"));
    let code = match command {
        Command::Check(args) => check::check(&args),
        Command::Run(args) => run::run(&args),
        Command::Diff(args) => diff::diff(&args),
        Command::Freeze(args) => freeze::freeze(&args),
        Command::Verify(args) => verify::verify(&args),
        Command::Explain(args) => explain::explain(&args),
        Command::Init(args) => init::init(&args.dir),
        Command::Completions(args) => shell::completions(&args),
        Command::Man(args) => shell::man(&args),
        Command::Schema => {
            print(spec::json_schema::SCHEMA);
            exit::PASS
        }
    };
    // Output that could not be written is not a result a pipeline can trust.
    match STDOUT_FAILED
        .lock()
        .ok()
        .and_then(|mut failed| failed.take())
    {
        Some(error) => {
            let _ = writeln!(std::io::stderr(), "error: cannot write the output: {error}");
            exit::ERROR
        }
        None => code,
    }
}

/// The command line's changes to the spec, as the engine takes them.
pub fn options(args: &cli::OverrideArgs) -> crate::engine::Options {
    crate::engine::Options::of_overrides(overrides(args))
}

/// The command line's changes to the spec.
pub fn overrides(args: &cli::OverrideArgs) -> Overrides {
    Overrides {
        params: args.params.clone(),
        datasets: args
            .datasets
            .iter()
            .map(|(n, p)| (n.clone(), PathBuf::from(p)))
            .collect(),
        formats: args.formats.clone(),
        baseline: args.baseline.clone(),
        confidence: args.confidence,
        tables: Vec::new(),
    }
}

/// Loads the spec, finds its inputs and compiles it: everything before data is
/// read. The templates are what the reports will render with.
pub fn compile(
    spec_path: &std::path::Path,
    overrides: &Overrides,
) -> Result<(plan::Plan, Templates), Vec<Diagnostic>> {
    let spec = spec::load(spec_path)?;
    let (inputs, templates) = inputs::gather(&spec, overrides);
    let plan = plan::compile(&spec, &overrides.params, inputs)?;
    Ok((plan, templates))
}

/// Writes errors that end the command, and exits 2.
pub fn fail(diagnostics: &[Diagnostic]) -> i32 {
    let _ = std::io::stderr().write_all(render(diagnostics, render_all).as_bytes());
    exit::ERROR
}

/// As [`fail`], for a command that scores nothing: its closing line says what
/// did not happen instead (`1 error; nothing was frozen`).
pub fn fail_then(consequence: &str, diagnostics: &[Diagnostic]) -> i32 {
    let text = match json_messages() {
        true => crate::base::diagnostic::render_json(diagnostics),
        false => crate::base::diagnostic::render_all_then(diagnostics, consequence),
    };
    let _ = std::io::stderr().write_all(text.as_bytes());
    exit::ERROR
}

/// How diagnostics are written: `human` or `json` (`--message-format`), set
/// once by [`dispatch`] for the command it runs.
pub(crate) fn json_messages() -> bool {
    JSON_MESSAGES.with(std::cell::Cell::get)
}

thread_local! {
    /// `--message-format json`, for the command running on this thread.
    static JSON_MESSAGES: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// `diagnostics` as the command line writes them: `human` renders them with
/// `human` (its closing line says what follows from them), `json` as one
/// object a line.
pub fn render(diagnostics: &[Diagnostic], human: fn(&[Diagnostic]) -> String) -> String {
    match json_messages() {
        true => crate::base::diagnostic::render_json(diagnostics),
        false => human(diagnostics),
    }
}

/// The first error writing to stdout, if any: the command then exits 2.
static STDOUT_FAILED: std::sync::Mutex<Option<std::io::Error>> = std::sync::Mutex::new(None);

/// Prints to stdout. A closed pipe (`| head`) is not an error; any other failure
/// (a full disk, `/dev/full`) makes the command exit 2 once it is done.
pub fn print(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let written = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
    if let Err(error) = written {
        if error.kind() != std::io::ErrorKind::BrokenPipe {
            if let Ok(mut failed) = STDOUT_FAILED.lock() {
                failed.get_or_insert(error);
            }
        }
    }
}

/// How `plan` runs here, from `--threads`, `--max-memory` and `--join`
/// (the machine's defaults: [`crate::eval::Resources::of_machine`]).
pub fn physical_plan(
    plan: &plan::Plan,
    args: &cli::PhysicalArgs,
) -> Result<crate::eval::PhysicalPlan, Diagnostic> {
    let resources = crate::eval::Resources::of_machine(args.threads, args.max_memory, args.join);
    crate::eval::PhysicalPlan::decide(plan, resources)
}
