//! What evaluating a plan gives: per dataset what was read, every metric and
//! gate, and what reports list (items, offenders, runs, stability, agreement,
//! confusion).

use std::sync::Arc;

use crate::base::diagnostic::Diagnostic;
use crate::base::value::{Key, Value};
use crate::data::ReadStats;
use crate::eval::decide::gates::{GateOutcome, GateStatus};
use crate::eval::decide::run_stats::RunStats;
use crate::eval::state::item_lines::ItemLines;
use crate::eval::state::item_values::ValueTable;
use crate::eval::state::slices::SliceValueOutcome;
use crate::stats::aggregate::Confusion;

/// Items that flip listed per `stability` aggregate; the count covers them all.
pub const MAX_FLIPS: usize = 100;

#[derive(Debug)]
pub struct Outcome {
    /// Per dataset; with several runs, summed over the runs.
    pub datasets: Vec<DatasetOutcome>,
    /// Items evaluated (in all runs).
    pub items: usize,
    /// Metric values, in plan order; `empty` already applied. With several runs,
    /// per-run metrics are null here (each run has its own) and metrics across
    /// runs have their value.
    pub metrics: Vec<Value>,
    pub gates: Vec<GateOutcome>,
    pub warnings: Vec<Diagnostic>,
    /// Per label of `plan.labels`, how many items took it.
    pub label_counts: Vec<usize>,
    /// Every item's line of items.jsonl, when the plan keeps items.
    pub lines: ItemLines,
    /// The first `offenders.limit` offenders in key order.
    pub offenders: Vec<OffenderRow>,
    /// Per metric (plan order), its value in the baseline run.
    pub baseline: Vec<Value>,
    /// With several runs: each run, in run order. Empty for a spec without runs.
    pub runs: Vec<RunOutcome>,
    /// Per `stability` aggregate: the items compared and those that flip.
    pub stability: Vec<StabilityOutcome>,
    /// Per `kappa`/`agreement` subject (and run): its confusion table.
    pub agreements: Vec<AgreementOutcome>,
    /// Per `confusion(truth, predicted)` subject (and run): its table.
    pub confusions: Vec<AgreementOutcome>,
    /// Per slice (plan order): its values. Empty with several runs (each run has its own).
    pub slices: Vec<Vec<SliceValueOutcome>>,
    /// Per run (in run order; one for a spec without runs): each item's
    /// contribution to the metrics computed from items.
    pub item_values: Vec<ValueTable>,
    /// Intervals and changes against the baseline; empty with several runs
    /// (each run has its own).
    pub stats: RunStats,
}

impl Outcome {
    /// No `fail` gate failed.
    pub fn pass(&self) -> bool {
        !self.gates.iter().any(|g| g.status == GateStatus::Fail)
    }
}

/// One run of a spec with several.
#[derive(Debug)]
pub struct RunOutcome {
    pub name: Arc<str>,
    /// Per dataset read as runs: its name and this run's file.
    pub files: Vec<(String, String)>,
    pub datasets: Vec<DatasetOutcome>,
    pub items: usize,
    /// Every metric (plan order): this run's per-run values and the values across runs.
    pub metrics: Vec<Value>,
    /// Per gate (plan order): how it decided in this run.
    pub gates: Vec<GateOutcome>,
    /// Per metric (plan order): its value for this run in the baseline run.
    pub baseline: Vec<Value>,
    pub label_counts: Vec<usize>,
    /// Per slice (plan order): its values in this run.
    pub slices: Vec<Vec<SliceValueOutcome>>,
    pub stats: RunStats,
}

#[derive(Debug)]
pub struct StabilityOutcome {
    /// Index of the aggregate in `plan.aggregates`.
    pub aggregate: usize,
    /// Keyed items seen in any run.
    pub items: usize,
    /// Items with the same value in every run.
    pub stable: usize,
    /// The first `MAX_FLIPS` items that flip, in key order.
    pub flips: Vec<Flip>,
}

/// An item whose value is not the same in every run.
#[derive(Debug)]
pub struct Flip {
    pub key: Key,
    /// The item's value per run; `None` where the run has no such item.
    pub values: Vec<Option<Value>>,
}

#[derive(Debug)]
pub struct AgreementOutcome {
    /// Index of the (first) aggregate of this subject in `plan.aggregates`.
    pub aggregate: usize,
    /// The run, with several.
    pub run: Option<Arc<str>>,
    pub confusion: Confusion,
}

#[derive(Debug, Default, Clone)]
pub struct DatasetOutcome {
    pub read: ReadStats,
    /// Records whose key was null (they join nothing).
    pub keyless: usize,
    /// Records dropped or replaced under the duplicates policy.
    pub duplicates: usize,
    /// Lookups: records that no item matched.
    pub unmatched: usize,
    /// Lookups: items that found no record here (scored with null, or skipped).
    pub missing: usize,
    /// Lookups joined `inner`: items skipped because they had no record here.
    pub skipped_items: usize,
}

impl DatasetOutcome {
    /// Adds what another bucket of the same run's keys saw of the dataset:
    /// its counts; the file read is the same (its stats kept if this bucket
    /// has none).
    pub(in crate::eval) fn merge(&mut self, other: DatasetOutcome) {
        if self.read.sha256.is_empty() && self.read.records == 0 {
            self.read = other.read;
        } else if let Some(seen) = &other.read.seen {
            self.read.saw(seen);
        }
        self.keyless += other.keyless;
        self.duplicates += other.duplicates;
        self.unmatched += other.unmatched;
        self.missing += other.missing;
        self.skipped_items += other.skipped_items;
    }

    pub(in crate::eval) fn encode(&self, w: &mut crate::base::codec::Writer) {
        w.usize(self.read.records);
        w.str(&self.read.sha256);
        w.u64(self.read.bytes);
        w.option(self.read.seen.as_deref(), |w, seen| {
            w.seq(seen.iter(), |w, b| w.u8(u8::from(*b)))
        });
        for n in [
            self.keyless,
            self.duplicates,
            self.unmatched,
            self.missing,
            self.skipped_items,
        ] {
            w.usize(n);
        }
    }

    pub(in crate::eval) fn decode(
        r: &mut crate::base::codec::Reader<'_>,
    ) -> crate::base::codec::Decoded<DatasetOutcome> {
        Ok(DatasetOutcome {
            read: ReadStats {
                records: r.usize()?,
                sha256: r.string()?,
                bytes: r.u64()?,
                seen: r.option(|r| r.seq(|r| Ok(r.u8()? != 0)))?,
            },
            keyless: r.usize()?,
            duplicates: r.usize()?,
            unmatched: r.usize()?,
            missing: r.usize()?,
            skipped_items: r.usize()?,
        })
    }
}

/// One scored item, kept for the reports that list items.
#[derive(Debug, Clone)]
pub struct ItemRow {
    /// Line (or record number) of the item in the items dataset.
    pub line: u32,
    pub key: Option<Key>,
    /// The run the item was scored in (with several runs).
    pub run: Option<Arc<str>>,
    pub label: Option<Arc<str>>,
    /// Values of `plan.item_columns` (or, for offenders, of `offenders.show`).
    pub values: Box<[Value]>,
    /// The item's place among the run's items: what orders two rows of one
    /// key on one line (elements of a JSON array).
    pub place: u64,
}

/// An item that `offenders.when` picked.
pub type OffenderRow = ItemRow;

/// The order reports list items in: by key (numbers, then strings in natural
/// order, then no key), then run (natural order of names), then line.
pub(super) fn report_order(
    (key, run, line): (Option<&Key>, Option<&str>, u32),
    (other_key, other_run, other_line): (Option<&Key>, Option<&str>, u32),
) -> std::cmp::Ordering {
    crate::base::natural::key_order(key, other_key)
        .then_with(|| crate::base::natural::natural_cmp(run.unwrap_or(""), other_run.unwrap_or("")))
        .then(line.cmp(&other_line))
}

impl ItemRow {
    /// The order reports list items in (see [`report_order`]).
    pub fn report_order(a: &ItemRow, b: &ItemRow) -> std::cmp::Ordering {
        report_order(
            (a.key.as_ref(), a.run.as_deref(), a.line),
            (b.key.as_ref(), b.run.as_deref(), b.line),
        )
        .then(a.place.cmp(&b.place))
    }
}
