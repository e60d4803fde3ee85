//! The physical plan: how a plan runs here, decided once, before any record is
//! read, from the plan, the resources given and the sizes of its input files.
//! It names the join (see `join`), how many partitions a partitioned join
//! cuts the records into, the threads and the memory budget, and the order the
//! datasets are read in. `evalspec check` and `explain` print it; `--join`
//! overrides the choice of join.

use std::fmt::Write as _;
use std::hash::BuildHasher;

use crate::base::diagnostic::Diagnostic;
use crate::base::value::Key;
use crate::eval::error::EvalError;
use crate::eval::join::partitioned::partitions_needed;
use crate::ir::DatasetId;
use crate::plan::{DatasetPlan, Plan};

/// Which join `--join` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JoinChoice {
    /// The physical plan decides (see [`PhysicalPlan::decide`]).
    #[default]
    Auto,
    Table,
    Index,
    Partitioned,
}

impl JoinChoice {
    pub const ALL: [(&'static str, JoinChoice); 4] = [
        ("auto", JoinChoice::Auto),
        ("table", JoinChoice::Table),
        ("index", JoinChoice::Index),
        ("partitioned", JoinChoice::Partitioned),
    ];

    pub fn keyword(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, choice)| *choice == self)
            .map_or("auto", |(name, _)| name)
    }

    /// The join named `text`, or an error listing the joins.
    pub fn parse(text: &str) -> Result<JoinChoice, String> {
        (Self::ALL.iter())
            .find(|(name, _)| *name == text)
            .map(|(_, choice)| *choice)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|(n, _)| *n).collect();
                format!("unknown join `{text}`; joins: {}", names.join(", "))
            })
    }
}

/// What an evaluation may use.
#[derive(Debug, Clone, Copy)]
pub struct Resources {
    /// Threads per dataset read.
    pub threads: usize,
    /// Bytes of memory the join should stay within (`--max-memory`): past it,
    /// the datasets are partitioned to temporary files. `None`: no budget.
    pub max_memory: Option<u64>,
    /// The join asked for.
    pub join: JoinChoice,
}

impl Resources {
    pub fn threads(threads: usize) -> Self {
        Resources {
            threads,
            max_memory: None,
            join: JoinChoice::Auto,
        }
    }

    /// What `evalspec run` uses on this machine unless told: `threads`
    /// default to the number of cores, `max_memory` to half of the machine's
    /// memory (so that a join too large for it is partitioned to disk rather
    /// than swapped or killed).
    pub fn of_machine(threads: Option<usize>, max_memory: Option<u64>, join: JoinChoice) -> Self {
        Resources {
            threads: threads
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from)),
            max_memory: max_memory.or_else(half_the_memory),
            join,
        }
    }
}

/// Half of the machine's memory (`MemTotal` in /proc/meminfo); None where
/// unknown.
fn half_the_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024 / 2)
}

/// How the items meet the records of the other datasets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinStrategy {
    /// Every looked-up dataset a keyed table in memory, the items streamed.
    Table,
    /// The items in memory by key, the one other dataset streamed past them.
    Index,
    /// Both datasets written by key to this many partitions on disk, each
    /// joined as the index join does.
    Partitioned { partitions: usize },
}

/// One of `of` buckets of keys. An evaluation given one covers only the items
/// and records whose keys fall in it (items and records without a key: the
/// first bucket), so that the states of every bucket merge into the state of
/// the whole: how partitions delivered by someone else (a Spark shuffle by
/// bucket) are evaluated. A key's bucket is the same on every machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bucket {
    pub index: u32,
    pub of: u32,
}

impl Bucket {
    /// The bucket of `key` among `of` (`of` at least 1).
    pub fn of_key(key: Option<&Key>, of: u32) -> u32 {
        let Some(key) = key else { return 0 };
        let hash = foldhash::fast::FixedState::with_seed(0xe7a1_5bec).hash_one(key);
        ((u128::from(hash) * u128::from(of.max(1))) >> 64) as u32
    }

    /// Whether a record with `key` belongs to this bucket.
    pub fn covers(&self, key: Option<&Key>) -> bool {
        Bucket::of_key(key, self.of) == self.index
    }
}

/// How a plan runs here.
#[derive(Debug, Clone)]
pub struct PhysicalPlan {
    pub join: JoinStrategy,
    /// The keys this evaluation covers; `None`: all.
    pub bucket: Option<Bucket>,
    pub threads: usize,
    pub max_memory: Option<u64>,
    /// The datasets in the order they are read (in each run).
    pub reading_order: Vec<DatasetId>,
    /// Why this join, in words.
    pub reason: String,
    /// What a run says on standard error about it: a memory budget the join
    /// cannot keep.
    pub note: Option<String>,
}

/// The most threads a run uses, whatever `--threads` asks for.
pub const MAX_THREADS: usize = 256;

impl PhysicalPlan {
    /// Decides how `plan` runs with `resources`. A join that cannot run this
    /// plan, asked for by `--join`, is an error saying why.
    pub fn decide(plan: &Plan, resources: Resources) -> Result<PhysicalPlan, Diagnostic> {
        // Results are the same for any number: past MAX_THREADS, more only
        // costs (400k items, `--threads 100000`: 400,107 threads started).
        let threads = resources.threads.clamp(1, MAX_THREADS);
        let table = |reason: String| PhysicalPlan {
            join: JoinStrategy::Table,
            bucket: None,
            threads,
            max_memory: resources.max_memory,
            reading_order: (0..plan.datasets.len()).map(DatasetId::new).collect(),
            reason,
            note: None,
        };
        let streamed = |join: JoinStrategy, reason: String| PhysicalPlan {
            join,
            bucket: None,
            threads,
            max_memory: resources.max_memory,
            // The items are read first, the other dataset streamed past them.
            reading_order: vec![plan.items_dataset, DatasetId::new(0)],
            reason,
            note: None,
        };
        let unsupported = match plan.items_dataset.index() {
            0 => Some("its items join no other dataset"),
            1 => None,
            _ => Some("its items join more than one dataset"),
        };
        let sizes = Sizes::of(plan);
        let budget_partitions = resources
            .max_memory
            .and_then(|budget| partitions_needed(sizes.items?, budget));
        match resources.join {
            JoinChoice::Table => Ok(table("--join table".into())),
            JoinChoice::Index | JoinChoice::Partitioned if unsupported.is_some() => {
                let kind = EvalError::JoinNotPossible {
                    join: resources.join.keyword(),
                    reason: unsupported.unwrap_or_default(),
                };
                Err(Diagnostic::of(&kind))
            }
            JoinChoice::Index => Ok(streamed(JoinStrategy::Index, "--join index".into())),
            JoinChoice::Partitioned => {
                let partitions = budget_partitions.unwrap_or(2);
                let join = JoinStrategy::Partitioned { partitions };
                Ok(streamed(join, "--join partitioned".into()))
            }
            JoinChoice::Auto => Ok(match (unsupported, budget_partitions, sizes) {
                (Some(reason), partitions, _) => PhysicalPlan {
                    note: partitions
                        .map(|_| format!("--max-memory: the join is kept in memory, as {reason}")),
                    ..table(match plan.items_dataset.index() {
                        0 => reason.to_string(),
                        _ => format!("{reason}, which only the table join does"),
                    })
                },
                (None, Some(partitions), _) => streamed(
                    JoinStrategy::Partitioned { partitions },
                    format!(
                        "the items would not fit in {} of memory whole",
                        size_text(resources.max_memory.unwrap_or(0))
                    ),
                ),
                (
                    None,
                    None,
                    Sizes {
                        items: Some(items),
                        joined: Some(joined),
                    },
                ) if items <= joined => streamed(
                    JoinStrategy::Index,
                    "the items' file is no larger than the other's: it is kept in memory".into(),
                ),
                (
                    None,
                    None,
                    Sizes {
                        items: Some(_),
                        joined: Some(_),
                    },
                ) => table(
                    "the items' file is larger than the other's: that one is kept in memory".into(),
                ),
                (None, None, _) => table("the files' sizes are unknown".into()),
            }),
        }
    }

    /// The plan in words, as `check` and `explain` print it.
    pub fn describe(&self, plan: &Plan) -> String {
        let name = |id: DatasetId| plan.datasets[id.index()].name.as_str();
        let items = name(plan.items_dataset);
        let mut out = String::from("\nhow it runs\n");
        let join = match self.join {
            JoinStrategy::Table => {
                let tables: Vec<String> = (0..plan.items_dataset.index())
                    .map(|d| format!("`{}`", plan.datasets[d].name))
                    .collect();
                match tables.is_empty() {
                    true => format!("the items `{items}` read on their own"),
                    false => format!(
                        "table join: {} kept in memory by key, the items `{items}` streamed past",
                        tables.join(", ")
                    ),
                }
            }
            JoinStrategy::Index => format!(
                "index join: the items `{items}` kept in memory by key, `{}` streamed past them",
                name(DatasetId::new(0))
            ),
            JoinStrategy::Partitioned { partitions } => format!(
                "partitioned join: `{items}` and `{}` written by key to {partitions} partitions \
                 on disk, each joined as the index join does",
                name(DatasetId::new(0))
            ),
        };
        let _ = writeln!(out, "  {join}");
        let _ = writeln!(out, "  why: {}", self.reason);
        let order: Vec<&str> = self.reading_order.iter().map(|&d| name(d)).collect();
        let _ = writeln!(out, "  reading order: {}", order.join(", "));
        let memory = self
            .max_memory
            .map_or_else(|| "no budget".to_string(), size_text);
        let _ = writeln!(out, "  threads: {}, memory: {memory}", self.threads);
        out
    }
}

/// The largest file of the items dataset and of the other dataset (over
/// every run's file), where they can be measured.
#[derive(Debug, Clone, Copy)]
struct Sizes {
    items: Option<u64>,
    joined: Option<u64>,
}

impl Sizes {
    fn of(plan: &Plan) -> Self {
        let size = |d: &DatasetPlan| -> Option<u64> {
            if let Some(table) = &d.table {
                return Some(table.bytes());
            }
            let paths: Vec<&std::path::Path> = match d.runs.is_empty() {
                true => vec![d.path.as_path()],
                false => d.runs.iter().map(|r| r.path.as_path()).collect(),
            };
            let sizes = paths
                .into_iter()
                .map(|p| std::fs::metadata(p).ok().map(|m| m.len()));
            sizes.collect::<Option<Vec<u64>>>()?.into_iter().max()
        };
        match plan.items_dataset.index() {
            1 => Sizes {
                items: size(&plan.datasets[1]),
                joined: size(&plan.datasets[0]),
            },
            _ => Sizes {
                items: size(&plan.datasets[plan.items_dataset.index()]),
                joined: None,
            },
        }
    }
}

/// Bytes as a budget is written: `512M`, `2G`, `1.5G`.
fn size_text(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")];
    for (unit, suffix) in UNITS {
        if bytes >= unit {
            let whole = bytes as f64 / unit as f64;
            return match bytes % unit {
                0 => format!("{}{suffix}", bytes / unit),
                _ => format!("{whole:.1}{suffix}"),
            };
        }
    }
    match bytes {
        1 => "1 byte".to_string(),
        _ => format!("{bytes} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_written_as_budgets_are() {
        assert_eq!(size_text(64 << 20), "64M");
        assert_eq!(size_text(3 << 29), "1.5G");
        assert_eq!(size_text(12), "12 bytes");
    }
}

#[cfg(test)]
mod bucket_tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn every_key_is_in_one_bucket_and_keys_spread() {
        let keys: Vec<Key> = (0..4000)
            .map(|i| Key::Str(Arc::from(format!("q{i}"))))
            .collect();
        let mut counts = [0usize; 4];
        for key in &keys {
            let covering: Vec<u32> = (0..4)
                .filter(|&index| Bucket { index, of: 4 }.covers(Some(key)))
                .collect();
            assert_eq!(covering.len(), 1, "{key:?}");
            counts[covering[0] as usize] += 1;
        }
        assert!(
            counts.iter().all(|&n| (800..1200).contains(&n)),
            "{counts:?}"
        );
        // Keyless items and records are the first bucket's; one bucket is all.
        assert!(Bucket { index: 0, of: 4 }.covers(None));
        assert!(keys
            .iter()
            .all(|k| Bucket { index: 0, of: 1 }.covers(Some(k))));
        // The same key, the same bucket, on any machine: pinned.
        let pinned: Vec<u32> = ["q1", "q42", "A0003"]
            .iter()
            .map(|k| Bucket::of_key(Some(&Key::Str(Arc::from(*k))), 16))
            .collect();
        assert_eq!(
            pinned,
            [15, 3, 12],
            "a key's bucket changed: states of other versions will not merge"
        );
    }
}
