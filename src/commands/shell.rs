//! Shell completions and man pages, generated from the same clap definition as the
//! parser ([`crate::commands::cli::Cli`]), so they cannot drift from the flags.
//!
//! `clap_complete` and `clap_mangen` are clap's own generators: they walk the
//! `clap::Command` tree, so every subcommand, flag and value list is covered.

use std::path::PathBuf;

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use crate::base::diagnostic::Diagnostic;
use crate::commands::cli::Cli;
use crate::commands::error::CommandError;
use crate::commands::{exit, fail, print};

/// The name the scripts complete and the man page documents.
const BIN: &str = "evalspec";

#[derive(Debug, Args)]
#[command(after_help = "Install, for example:
  evalspec completions bash > ~/.local/share/bash-completion/completions/evalspec
  evalspec completions zsh > \"${fpath[1]}/_evalspec\"
  evalspec completions fish > ~/.config/fish/completions/evalspec.fish
  evalspec completions powershell >> $PROFILE")]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write evalspec.1 and one page per command (evalspec-run.1, …) into DIR
    /// (created if missing) instead of printing evalspec.1.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// The completion script for `shell`, as bytes.
pub fn completion_script(shell: Shell) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), BIN, &mut out);
    out
}

/// The man pages: `evalspec.1`, which lists every command, then one page per
/// command (`evalspec-run.1`, …) with its arguments and flags, as (file name, roff).
pub fn man_pages() -> Vec<(String, Vec<u8>)> {
    // `help` gets no page: `evalspec help run` is `evalspec run --help`.
    let mut command = Cli::command().disable_help_subcommand(true);
    command.build();
    let source = format!("{BIN} {}", env!("CARGO_PKG_VERSION"));
    let page = |command: clap::Command| {
        let man = clap_mangen::Man::new(command).source(source.clone());
        let mut roff = Vec::new();
        // Writing into a Vec cannot fail.
        let _ = man.render(&mut roff);
        (man.get_filename(), roff)
    };
    let mut pages = vec![page(command.clone())];
    pages.extend(
        command
            .get_subcommands()
            .filter(|sub| !sub.is_hide_set())
            .map(|sub| page(sub.clone())),
    );
    pages
}

pub fn completions(args: &CompletionsArgs) -> i32 {
    write_stdout(&completion_script(args.shell))
}

pub fn man(args: &ManArgs) -> i32 {
    let mut pages = man_pages();
    let Some(dir) = &args.dir else {
        return write_stdout(&pages.swap_remove(0).1);
    };
    let written = std::fs::create_dir_all(dir).and_then(|()| {
        pages
            .iter()
            .try_for_each(|(name, roff)| std::fs::write(dir.join(name), roff))
    });
    match written {
        Ok(()) => exit::PASS,
        Err(error) => fail(&[Diagnostic::of(&CommandError::ManCannotWrite {
            dir: dir.display().to_string(),
            error: error.to_string(),
        })]),
    }
}

/// Prints generated text (completion scripts and roff are UTF-8).
fn write_stdout(bytes: &[u8]) -> i32 {
    print(&String::from_utf8_lossy(bytes));
    exit::PASS
}
