//! Command-line arguments, parsed by clap into typed commands.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "evalspec",
    version,
    about = "Declarative YAML eval specs compiled into deterministic quality gates for RAG pipelines"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compile a spec and print its evaluation plan, without reading any data.
    Check(CheckArgs),
    /// Score the datasets, print a summary and write DIR/report.json.
    /// Exit status: 0 all `fail` gates passed, 1 a `fail` gate failed, 2 nothing could be scored.
    Run(RunArgs),
}

#[derive(Debug, Args)]
pub struct Overrides {
    /// Override a param: `--param k=10` (checked against the param's declared type).
    #[arg(long = "param", value_name = "NAME=VALUE", value_parser = name_value)]
    pub params: Vec<(String, String)>,
    /// Read a dataset from another file: `--dataset trace=runs/trace.jsonl`.
    #[arg(long = "dataset", value_name = "NAME=PATH", value_parser = name_value)]
    pub datasets: Vec<(String, String)>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The spec file (YAML).
    pub spec: PathBuf,
    #[command(flatten)]
    pub overrides: Overrides,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The spec file (YAML).
    pub spec: PathBuf,
    #[command(flatten)]
    pub overrides: Overrides,
    /// Folder for report.json (created if missing).
    #[arg(long, value_name = "DIR", default_value = "evalspec-out")]
    pub out: PathBuf,
    /// Print only warnings and errors.
    #[arg(long, short)]
    pub quiet: bool,
    /// Threads for reading large files (default: the number of cores). Results are
    /// the same for any number.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(usize))]
    pub threads: Option<usize>,
}

fn name_value(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_string(), value.to_string()))
        }
        _ => Err(format!("expected NAME=VALUE, found `{text}`")),
    }
}
