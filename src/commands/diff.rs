//! `evalspec diff OLD NEW`: what moved between two runs, and why.

use crate::base::diagnostic::Diagnostic;
use crate::commands::{cli, exit, fail, print};
use crate::diff as compare;

pub fn diff(args: &cli::DiffArgs) -> i32 {
    // The two sides are read at once: at 1M items each is seconds of parsing.
    let (old, new) = std::thread::scope(|scope| {
        let old = scope.spawn(|| compare::Side::load(&args.old));
        let new = compare::Side::load(&args.new);
        let old = old.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        (old, new)
    });
    let (old, new) = match (old, new) {
        (Ok(old), Ok(new)) => (old, new),
        (old, new) => {
            let errors: Vec<Diagnostic> = [old.err(), new.err()].into_iter().flatten().collect();
            return fail(&errors);
        }
    };
    let comparison = compare::compare(&old, &new, args.significance);
    let text = match args.format.as_str() {
        "md" => compare::markdown(&comparison),
        "json" => compare::json(&comparison),
        _ => {
            use std::io::IsTerminal;
            // Colour on a terminal, unless NO_COLOR (no-color.org) is set.
            let colour = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            compare::text(&comparison, colour)
        }
    };
    print(&text);
    if args.fail_on_regression && comparison.regressed() {
        exit::GATE_FAILED
    } else {
        exit::PASS
    }
}
