//! Command-line arguments, parsed by clap into typed commands.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::eval::JoinChoice;
use crate::spec::ReportFormat;

#[derive(Debug, Parser)]
#[command(
    name = "evalspec",
    version,
    about = "Declarative YAML eval specs compiled into deterministic quality gates for RAG pipelines"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// How errors and warnings are written to stderr: human (with the line
    /// and a caret) or json (one object a line: level, code, message, file,
    /// line, column, key_path, help, note, label).
    #[arg(long = "message-format", value_name = "FORMAT", default_value = "human", global = true, value_parser = ["human", "json"])]
    pub message_format: String,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compile a spec and print its evaluation plan, without reading any data.
    Check(CheckArgs),
    /// Score the datasets, print a summary and write the reports into DIR
    /// (report.json, and those the spec's `reports:` and --format ask for).
    /// Exit status: 0 all `fail` gates passed, 1 a `fail` gate failed, 2 nothing could be scored.
    Run(RunArgs),
    /// Compare two runs (report.json files or run folders): metric changes, gate
    /// flips, label transitions, items added or removed, and spec changes.
    /// Exit status: 0, or 1 with --fail-on-regression when the new run regressed.
    Diff(DiffArgs),
    /// Pin the spec, every file it extends, its templates and its `frozen: true`
    /// datasets by SHA-256 in SPEC.lock; re-freezing a changed spec needs a new
    /// version and --reason, and is added to the lock's history.
    Freeze(FreezeArgs),
    /// Check a frozen spec's files against its lock, without scoring.
    /// Exit status: 0 they match, 2 drift (or no lock).
    Verify(CheckArgs),
    /// Print every metric and gate of a spec in words, resolved through `extends`
    /// and params.
    Explain(CheckArgs),
    /// Write a working spec with sample gold and trace files into DIR.
    Init(InitArgs),
    /// Print the JSON Schema of the spec format (for editors and CI).
    Schema,
    /// Print a shell completion script (bash, zsh, fish, powershell or elvish).
    Completions(crate::commands::shell::CompletionsArgs),
    /// Print the man page (roff), or write one page per command into --dir.
    Man(crate::commands::shell::ManArgs),
}

#[derive(Debug, Args)]
pub struct FreezeArgs {
    /// The spec file (YAML).
    pub spec: PathBuf,
    /// Who signed off and why; kept in the lock's history (required to re-freeze).
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The folder to write into (created if missing); existing files are kept.
    #[arg(default_value = ".")]
    pub dir: PathBuf,
}

#[derive(Debug, Args)]
pub struct OverrideArgs {
    /// Override a param: `--param k=10` (checked against the param's declared type).
    #[arg(long = "param", value_name = "NAME=VALUE", value_parser = name_value)]
    pub params: Vec<(String, String)>,
    /// Read a dataset from another file: `--dataset trace=runs/trace.jsonl`.
    #[arg(long = "dataset", value_name = "NAME=PATH", value_parser = name_value)]
    pub datasets: Vec<(String, String)>,
    /// Also write this report (repeatable): json, markdown, junit, html, summary, items.
    #[arg(long = "format", value_name = "FORMAT", value_parser = report_format)]
    pub formats: Vec<ReportFormat>,
    /// A prior run (its report.json or --out folder) that gates compare against
    /// (`baseline.NAME`, `max_drop`, `min_gain`, …).
    #[arg(long, value_name = "PATH")]
    pub baseline: Option<PathBuf>,
    /// The level of metric intervals and paired tests against the baseline,
    /// between 0 and 1 (default: the spec's `confidence:`, else 0.95).
    #[arg(long, value_name = "LEVEL", value_parser = probability)]
    pub confidence: Option<f64>,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The earlier run: a report.json or the folder holding it.
    pub old: PathBuf,
    /// The later run.
    pub new: PathBuf,
    /// Output: text (coloured on a terminal), md (for a PR comment) or json.
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = ["text", "md", "json"])]
    pub format: String,
    /// Exit 1 when a gate went from pass to fail or a metric moved in its bad
    /// direction by more than its tolerance.
    #[arg(long)]
    pub fail_on_regression: bool,
    /// With --fail-on-regression, count a metric's regression only when a paired
    /// test on the items both runs share finds it significant at this level
    /// (one-sided); also the level changes are marked `significant` at (default 0.05).
    #[arg(long, value_name = "LEVEL", value_parser = probability)]
    pub significance: Option<f64>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The spec file (YAML).
    pub spec: PathBuf,
    #[command(flatten)]
    pub overrides: OverrideArgs,
    #[command(flatten)]
    pub physical: PhysicalArgs,
}

/// How a run uses this machine; `check` and `explain` show what they decide.
#[derive(Debug, Args, Clone, Copy)]
pub struct PhysicalArgs {
    /// Threads for reading large files (default: the number of cores). Results are
    /// the same for any number.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(usize))]
    pub threads: Option<usize>,
    /// Keep the join within about this much memory (e.g. 2G, 512M; powers of 1024;
    /// default: half the machine's memory): past it, both datasets are partitioned
    /// by key to temporary files (under TMPDIR) and joined one partition at a time.
    /// Results are the same.
    #[arg(long, value_name = "SIZE", value_parser = memory_size)]
    pub max_memory: Option<u64>,
    /// How the items meet the other dataset: auto (decided from the files' sizes
    /// and the memory budget), table (the other datasets in memory), index (the
    /// items in memory, the other dataset streamed) or partitioned (both by key
    /// to temporary files). Results are the same.
    #[arg(long, value_name = "JOIN", default_value = "auto", value_parser = join_choice)]
    pub join: JoinChoice,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The spec file (YAML).
    pub spec: PathBuf,
    #[command(flatten)]
    pub overrides: OverrideArgs,
    /// Folder for the reports (created if missing).
    #[arg(long, value_name = "DIR", default_value = "evalspec-out")]
    pub out: PathBuf,
    /// Print only warnings and errors.
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub physical: PhysicalArgs,
    /// Run a frozen spec whose files no longer match its lock; the reports say so.
    #[arg(long)]
    pub allow_drift: bool,
}

/// A size in bytes: a number, optionally with K, M, G or T (powers of 1024,
/// `B` or `iB` after them allowed), as `sort -S` reads one.
fn memory_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let lower = trimmed.to_ascii_lowercase();
    let digits = lower.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &lower[digits.len()..];
    let scale: u64 = match unit.trim_end_matches("ib").trim_end_matches('b') {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        _ => {
            return Err(format!(
                "`{trimmed}`: the unit must be K, M, G or T (e.g. 2G, 512M)"
            ))
        }
    };
    let number: f64 = (digits.trim().parse().ok())
        .filter(|n: &f64| n.is_finite() && *n > 0.0)
        .ok_or_else(|| format!("`{trimmed}` is not a size above 0 (e.g. 2G, 512M, 1000000)"))?;
    Ok((number * scale as f64).ceil() as u64)
}

fn join_choice(text: &str) -> Result<JoinChoice, String> {
    JoinChoice::parse(text)
}

fn report_format(text: &str) -> Result<ReportFormat, String> {
    ReportFormat::parse(text)
}

/// A level or significance: a number strictly between 0 and 1.
pub(crate) fn probability(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(p) if p > 0.0 && p < 1.0 => Ok(p),
        _ => Err(format!(
            "expected a number between 0 and 1 (exclusive), found `{text}`"
        )),
    }
}

fn name_value(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_string(), value.to_string()))
        }
        _ => Err(format!("expected NAME=VALUE, found `{text}`")),
    }
}

#[cfg(test)]
mod tests {
    use super::memory_size;

    #[test]
    fn memory_sizes_read_as_sort_reads_them() {
        assert_eq!(memory_size("2G"), Ok(2 << 30));
        assert_eq!(memory_size("2GiB"), Ok(2 << 30));
        assert_eq!(memory_size("512mb"), Ok(512 << 20));
        assert_eq!(memory_size("1.5K"), Ok(1536));
        assert_eq!(memory_size("1000000"), Ok(1_000_000));
        assert_eq!(memory_size("1"), Ok(1));
        for bad in ["", "0", "-1G", "2X", "G", "nan", "two"] {
            assert!(memory_size(bad).is_err(), "{bad:?}");
        }
        let error = memory_size("2Q").unwrap_err();
        assert!(error.contains("K, M, G or T"), "{error}");
    }
}
