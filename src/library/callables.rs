//! The one table of callables: every name an expression can call, with its kind
//! and signature. The type checker looks names up here, the evaluator runs what
//! a row points to, `explain` and the did-you-mean help read it, and
//! grammar/README.md documents it. Adding an aggregate is one row in
//! `aggregates.rs` plus its fold in `eval`; a scalar function, one row in
//! `builtins/mod.rs` plus its Rust function (in `builtins/text.rs`, `lists.rs`, …).

use crate::library::aggregates::{self, AggregateDef, AGGREGATES};
use crate::library::builtins::{self, Builtin, BUILTINS};
use crate::library::run_stats::RunStat;

/// What a name calls.
#[derive(Debug, Clone, Copy)]
pub enum Callable {
    /// A function of one item's values.
    Scalar(&'static Builtin),
    /// A fold over the items (accepts `where`).
    Aggregate(&'static AggregateDef),
    /// A per-run metric summarised over the runs.
    RunStat(RunStat),
    /// `records(dataset)`: how many records a dataset kept.
    Records,
    /// `if(condition, then, else)`, evaluated lazily.
    If,
}

/// The run statistics, by name.
pub const RUN_STATS: [(&str, RunStat); 4] = [
    ("run_min", RunStat::Min),
    ("run_max", RunStat::Max),
    ("run_mean", RunStat::Mean),
    ("run_std", RunStat::Std),
];

pub const RECORDS: &str = "records";
pub const IF: &str = "if";

pub fn lookup(name: &str) -> Option<Callable> {
    if let Some(builtin) = builtins::lookup(name) {
        return Some(Callable::Scalar(builtin));
    }
    if let Some(aggregate) = aggregates::lookup(name) {
        return Some(Callable::Aggregate(aggregate));
    }
    if let Some((_, stat)) = RUN_STATS.iter().find(|(n, _)| *n == name) {
        return Some(Callable::RunStat(*stat));
    }
    match name {
        RECORDS => Some(Callable::Records),
        IF => Some(Callable::If),
        _ => None,
    }
}

/// Every callable name, in table order (scalars, aggregates, run statistics,
/// `records`, `if`): what "did you mean" chooses from.
pub fn names() -> impl Iterator<Item = &'static str> {
    BUILTINS
        .iter()
        .map(|b| b.name)
        .chain(AGGREGATES.iter().map(|a| a.name))
        .chain(RUN_STATS.iter().map(|(n, _)| *n))
        .chain([RECORDS, IF])
}

/// Whether `name` folds items (and so accepts `where`).
pub fn is_aggregate(name: &str) -> bool {
    aggregates::lookup(name).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_looked_up_as_itself_and_no_name_twice() {
        let names: Vec<&str> = names().collect();
        for (i, name) in names.iter().enumerate() {
            assert!(lookup(name).is_some(), "{name}");
            assert!(!names[..i].contains(name), "{name} is in the table twice");
        }
        assert!(matches!(lookup("ratio"), Some(Callable::Aggregate(_))));
        assert!(matches!(
            lookup("run_std"),
            Some(Callable::RunStat(RunStat::Std))
        ));
        assert!(matches!(lookup("if"), Some(Callable::If)));
        assert!(lookup("nope").is_none());
    }
}
