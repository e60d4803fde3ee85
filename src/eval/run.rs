//! One pass of a plan over its datasets (one run). Looked-up datasets are read into keyed
//! tables (projected fields only); the items dataset is then streamed, each item
//! evaluated and folded into the aggregates as it is read. Both are read in
//! parallel chunks and merged in file order, so that the outcome (numbers, counts,
//! and which errors are reported) does not depend on the number of threads.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::Arc;

use crate::base::diagnostic::{Diagnostic, Location};
use crate::base::value::{Key, Value};
use crate::data::{read_chunked, validate, Chunk, ReadStats};
use crate::eval::aggregate::Accumulator;
use crate::ir::{evaluate, evaluate_on_record, Frame};
use crate::ir::{DatasetId, Record};
use crate::library::aggregates::AggregateFn;
use crate::plan::{DatasetPlan, Plan};
use crate::spec::{Duplicates, Join};

/// Join tables hash millions of keys; foldhash is several times faster than SipHash,
/// and a fixed seed keeps runs reproducible (no output depends on table order).
type FastMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;

/// Item-evaluation errors to show before giving up.
const MAX_ITEM_ERRORS: usize = 10;

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
}

/// An item that `offenders.when` picked.
pub type OffenderRow = ItemRow;

impl ItemRow {
    /// The order reports list items in: by key (numbers, then strings in natural
    /// order, then no key), then run (natural order of names), then line.
    pub fn report_order(a: &ItemRow, b: &ItemRow) -> std::cmp::Ordering {
        fn run(row: &ItemRow) -> &str {
            row.run.as_deref().unwrap_or("")
        }
        crate::base::natural::key_order(a.key.as_ref(), b.key.as_ref())
            .then_with(|| crate::base::natural::natural_cmp(run(a), run(b)))
            .then(a.line.cmp(&b.line))
    }
}

/// One pass over the datasets of one run: every item evaluated and folded into
/// the accumulators, which the caller finishes.
pub(crate) struct Pass {
    pub datasets: Vec<DatasetOutcome>,
    pub items: usize,
    pub accumulators: Vec<Accumulator>,
    /// `records(d)`: a looked-up dataset's table size (one per key); the items read.
    pub dataset_records: Vec<Value>,
    pub label_counts: Vec<usize>,
    pub rows: Vec<ItemRow>,
    pub offenders: Vec<OffenderRow>,
}

/// Reads the items dataset `items` (the plan's, or one run's file of it) against
/// the looked-up tables, with up to `threads` threads.
pub(crate) fn pass(
    plan: &Plan,
    items: &DatasetPlan,
    lookups: &[(&Lookup, &DatasetOutcome)],
    threads: usize,
) -> Result<Pass, Vec<Diagnostic>> {
    let mut outcomes: Vec<DatasetOutcome> = lookups
        .iter()
        .map(|(_, outcome)| (*outcome).clone())
        .chain([DatasetOutcome::default()])
        .collect();
    let tables: Vec<&Lookup> = lookups.iter().map(|(table, _)| *table).collect();
    let streamed = stream_items(plan, items, &tables, threads, &mut outcomes)?;
    for (outcome, matched) in outcomes.iter_mut().zip(&streamed.matched) {
        outcome.unmatched = matched.iter().filter(|m| !**m).count();
    }
    let dataset_records: Vec<Value> = tables
        .iter()
        .map(|l| l.records.len())
        .chain([outcomes[plan.items_dataset.index()].read.records])
        .map(|n| Value::Number(n as f64))
        .collect();
    Ok(Pass {
        datasets: outcomes,
        items: streamed.count,
        accumulators: streamed.accumulators,
        dataset_records,
        label_counts: streamed.label_counts,
        rows: streamed.rows,
        offenders: streamed.offenders,
    })
}

fn key_of(
    dataset: &DatasetPlan,
    dataset_id: DatasetId,
    record: &Record,
) -> Result<Option<Key>, Diagnostic> {
    let value = evaluate_on_record(&dataset.key, dataset_id, record).and_then(|v| Key::of(&v));
    value.map_err(|message| {
        Diagnostic::error(format!(
            "{}: cannot compute the key `{}`: {message}",
            dataset.name, dataset.key_text
        ))
        .at(Location::in_data(
            &dataset.display_path,
            record.line as usize,
            None,
        ))
        .help("a key must be a string or a number")
    })
}

fn duplicate_error(dataset: &DatasetPlan, key: &Key, first: u32, again: u32) -> Diagnostic {
    Diagnostic::error(format!(
        "{}: duplicate key `{key}` (first on line {first})",
        dataset.name
    ))
    .at(Location::in_data(
        &dataset.display_path,
        again as usize,
        None,
    ))
    .help(format!(
        "keys must be unique; or set `duplicates: first` or `last` on dataset `{}` to keep one",
        dataset.name
    ))
}

fn stop_line(diagnostic: &Diagnostic) -> usize {
    diagnostic.location.as_ref().map_or(usize::MAX, |l| l.line)
}

// ---- looked-up datasets ---------------------------------------------------------

/// A keyed table: one record per key, in first-occurrence order.
#[derive(Default)]
pub(crate) struct Lookup {
    records: Vec<Record>,
    keys: Vec<Key>,
    index: FastMap<Key, usize>,
    keyless: usize,
    duplicates: usize,
}

impl Lookup {
    /// Adds a record under the duplicates policy; `error` stops at a repeated key.
    fn add(&mut self, dataset: &DatasetPlan, key: Key, record: Record) -> Result<(), Diagnostic> {
        match self.index.entry(key) {
            Entry::Vacant(slot) => {
                self.keys.push(slot.key().clone());
                slot.insert(self.records.len());
                self.records.push(record);
            }
            Entry::Occupied(slot) => {
                self.duplicates += 1;
                let existing = &mut self.records[*slot.get()];
                match dataset.duplicates {
                    Duplicates::Error => {
                        return Err(duplicate_error(
                            dataset,
                            slot.key(),
                            existing.line,
                            record.line,
                        ))
                    }
                    Duplicates::First | Duplicates::Keep => {}
                    Duplicates::Last => *existing = record,
                }
            }
        }
        Ok(())
    }
}

/// Reads a looked-up dataset (`dataset_id` in the plan) into its keyed table.
pub(crate) fn load_lookup(
    dataset: &DatasetPlan,
    dataset_id: DatasetId,
    threads: usize,
    outcome: &mut DatasetOutcome,
) -> Result<Lookup, Diagnostic> {
    let (chunks, read) = read_chunked(dataset, threads, Lookup::default, |table, record| {
        validate(dataset, dataset_id, &record)?;
        match key_of(dataset, dataset_id, &record)? {
            Some(key) => table.add(dataset, key, record),
            None => {
                table.keyless += 1;
                Ok(())
            }
        }
    })?;
    let mut chunks = chunks.into_iter();
    let Chunk {
        state: mut table,
        stop,
    } = chunks.next().expect("at least one chunk");
    if let Some(stop) = stop {
        return Err(stop);
    }
    for Chunk { state: part, stop } in chunks {
        // The first repeated key across chunks, if it comes before this chunk's own stop.
        if dataset.duplicates == Duplicates::Error {
            let repeated = part
                .keys
                .iter()
                .zip(&part.records)
                .filter_map(|(key, record)| {
                    table
                        .index
                        .get(key)
                        .map(|&i| (key, table.records[i].line, record.line))
                })
                .min_by_key(|&(_, _, line)| line);
            if let Some((key, first, again)) = repeated {
                if stop
                    .as_ref()
                    .is_none_or(|s| (again as usize) < stop_line(s))
                {
                    return Err(duplicate_error(dataset, key, first, again));
                }
            }
        }
        if let Some(stop) = stop {
            return Err(stop);
        }
        table.keyless += part.keyless;
        table.duplicates += part.duplicates;
        for (key, record) in part.keys.into_iter().zip(part.records) {
            table.add(dataset, key, record)?;
        }
    }
    outcome.read = read;
    outcome.keyless = table.keyless;
    outcome.duplicates = table.duplicates;
    // The key list only served the merge; the index keeps the keys.
    table.keys = Vec::new();
    Ok(table)
}

// ---- items ----------------------------------------------------------------------

/// What one chunk of items contributes.
struct ItemChunk<'p> {
    plan: &'p Plan,
    /// The items dataset as read in this run.
    dataset: &'p DatasetPlan,
    accumulators: Vec<Accumulator>,
    derived: Vec<Value>,
    count: usize,
    /// Evaluation errors, with the item's line for ordering.
    errors: Vec<(usize, Diagnostic)>,
    /// Per lookup: which records an item matched, and how many items missed it.
    matched: Vec<Vec<bool>>,
    missing: Vec<usize>,
    skipped: Vec<usize>,
    keyless: usize,
    /// `duplicates: error`: each key's first line in this chunk, to find repeats
    /// within it (a stop) and across chunks (when merging).
    seen: FastMap<Key, u32>,
    /// `duplicates: first`/`last` need every earlier key: one chunk only.
    first_lines: FastMap<Key, (u32, usize)>,
    buffered: Vec<(Option<Key>, Record)>,
    duplicates: usize,
    label_counts: Vec<usize>,
    rows: Vec<ItemRow>,
    offenders: Vec<OffenderRow>,
}

impl<'p> ItemChunk<'p> {
    fn new(plan: &'p Plan, dataset: &'p DatasetPlan, lookups: &[&Lookup]) -> Self {
        Self {
            plan,
            dataset,
            accumulators: plan
                .aggregates
                .iter()
                .map(|a| Accumulator::new(a.function))
                .collect(),
            derived: vec![Value::Null; plan.derived.len()],
            count: 0,
            errors: Vec::new(),
            matched: lookups
                .iter()
                .map(|l| vec![false; l.records.len()])
                .collect(),
            missing: vec![0; lookups.len()],
            skipped: vec![0; lookups.len()],
            keyless: 0,
            seen: FastMap::default(),
            first_lines: FastMap::default(),
            buffered: Vec::new(),
            duplicates: 0,
            label_counts: vec![0; plan.labels.len()],
            rows: Vec::new(),
            offenders: Vec::new(),
        }
    }

    /// Reads one record of the items dataset.
    fn record(&mut self, lookups: &[&Lookup], record: Record) -> Result<(), Diagnostic> {
        let dataset = self.dataset;
        validate(dataset, self.plan.items_dataset, &record)?;
        let key = key_of(dataset, self.plan.items_dataset, &record)?;
        match &key {
            None => self.keyless += 1,
            Some(key) => match dataset.duplicates {
                Duplicates::Keep => {}
                Duplicates::Error => match self.seen.entry(key.clone()) {
                    Entry::Vacant(slot) => {
                        slot.insert(record.line);
                    }
                    Entry::Occupied(slot) => {
                        return Err(duplicate_error(dataset, key, *slot.get(), record.line))
                    }
                },
                Duplicates::First | Duplicates::Last => match self.first_lines.entry(key.clone()) {
                    Entry::Vacant(slot) => {
                        slot.insert((record.line, self.buffered.len()));
                    }
                    Entry::Occupied(slot) => {
                        self.duplicates += 1;
                        if dataset.duplicates == Duplicates::Last {
                            self.buffered[slot.get().1].1 = record;
                        }
                        return Ok(());
                    }
                },
            },
        }
        if dataset.duplicates == Duplicates::Last {
            self.buffered.push((key, record));
            return Ok(());
        }
        self.item(lookups, key.as_ref(), &record);
        if self.errors.len() >= MAX_ITEM_ERRORS {
            return Err(Diagnostic::error("too many errors"));
        }
        Ok(())
    }

    fn item(&mut self, lookups: &[&Lookup], key: Option<&Key>, record: &Record) {
        let plan = self.plan;
        let found: Vec<Option<usize>> = lookups
            .iter()
            .map(|l| key.and_then(|k| l.index.get(k)).copied())
            .collect();
        let mut skip = false;
        for (index, position) in found.iter().enumerate() {
            match position {
                Some(position) => self.matched[index][*position] = true,
                None => {
                    self.missing[index] += 1;
                    if plan.datasets[index].join == Join::Inner {
                        self.skipped[index] += 1;
                        skip = true;
                    }
                }
            }
        }
        if skip {
            return;
        }
        let mut records: Vec<Option<&Record>> = found
            .iter()
            .zip(lookups)
            .map(|(p, l)| p.map(|p| &l.records[p]))
            .collect();
        records.push(Some(record));
        self.count += 1;
        if let Err(error) = self.evaluate(&records, key, record.line) {
            let (at, message) = *error;
            let sources: Vec<String> = plan
                .datasets
                .iter()
                .zip(&records)
                .filter_map(|(d, r)| r.map(|r| format!("{}:{}", d.display_path, r.line)))
                .collect();
            let item = key.map_or_else(|| "(no key)".to_string(), |k| format!("`{k}`"));
            let diagnostic =
                Diagnostic::error(format!("item {item} ({}): {message}", sources.join(", ")))
                    .at(at)
                    .help("fix the data, or guard the expression (`??`, `if`, `is_list`, …)");
            self.errors.push((record.line as usize, diagnostic));
        }
    }

    fn evaluate(
        &mut self,
        records: &[Option<&Record>],
        key: Option<&Key>,
        line: u32,
    ) -> Result<(), Box<(Location, String)>> {
        let plan = self.plan;
        for (i, derived) in plan.derived.iter().enumerate() {
            let frame = Frame {
                records,
                derived: &self.derived,
                ..Frame::default()
            };
            let value = evaluate(&derived.op, &frame).map_err(|e| {
                Box::new((derived.at.clone(), format!("in `{}`: {e}", derived.name)))
            })?;
            self.derived[i] = value;
        }
        let frame = Frame {
            records,
            derived: &self.derived,
            ..Frame::default()
        };
        for (aggregate, accumulator) in plan.aggregates.iter().zip(&mut self.accumulators) {
            let fail = |e: String| {
                Box::new((
                    aggregate.at.clone(),
                    format!("in `{}`: {e}", aggregate.text),
                ))
            };
            if let Some(filter) = &aggregate.filter {
                match evaluate(filter, &frame).map_err(fail)? {
                    Value::Bool(true) => {}
                    Value::Bool(false) | Value::Null => continue,
                    other => {
                        return Err(fail(format!(
                            "`where` needs a bool, found {} {}",
                            other.type_name(),
                            other.preview()
                        )))
                    }
                }
            }
            let value = match &aggregate.arg {
                Some(arg) => Some(evaluate(arg, &frame).map_err(fail)?),
                None => None,
            };
            if aggregate.function == AggregateFn::Stability {
                accumulator.track(key, value.unwrap_or(Value::Null));
                continue;
            }
            accumulator.add(value).map_err(fail)?;
        }
        let offender = match &plan.offenders {
            Some(offenders) => {
                let picked = evaluate(&offenders.when, &frame).map_err(|e| {
                    Box::new((
                        offenders.at.clone(),
                        format!("in `offenders.when` (`{}`): {e}", offenders.text),
                    ))
                })?;
                picked == Value::Bool(true)
            }
            None => false,
        };
        self.keep(offender, key, line);
        Ok(())
    }

    /// What the reports keep of an evaluated item: its label's count, its row,
    /// and whether it is an offender.
    fn keep(&mut self, offender: bool, key: Option<&Key>, line: u32) {
        let plan = self.plan;
        let label = plan
            .label_slot
            .and_then(|slot| match &self.derived[slot.index()] {
                Value::String(label) => Some(label.clone()),
                _ => None,
            });
        if let Some(label) = &label {
            if let Some(i) = plan.labels.iter().position(|l| **l == **label) {
                self.label_counts[i] += 1;
            }
        }
        if let (Some(offenders), true) = (&plan.offenders, offender) {
            self.offenders.push(ItemRow {
                line,
                key: key.cloned(),
                run: None,
                label: label.clone(),
                values: offenders
                    .show
                    .iter()
                    .map(|(_, slot)| self.derived[slot.index()].clone())
                    .collect(),
            });
            // Bounded: keep only the first `limit` in key order.
            if self.offenders.len() >= 2 * offenders.limit.max(8) {
                self.offenders.sort_by(ItemRow::report_order);
                self.offenders.truncate(offenders.limit);
            }
        }
        if plan.keep_items {
            self.rows.push(ItemRow {
                line,
                key: key.cloned(),
                run: None,
                label,
                values: plan
                    .item_columns
                    .iter()
                    .map(|c| self.derived[c.slot.index()].clone())
                    .collect(),
            });
        }
    }
}

/// The items' contribution, merged over chunks.
struct Items {
    accumulators: Vec<Accumulator>,
    count: usize,
    matched: Vec<Vec<bool>>,
    label_counts: Vec<usize>,
    rows: Vec<ItemRow>,
    offenders: Vec<OffenderRow>,
}

fn stream_items(
    plan: &Plan,
    dataset: &DatasetPlan,
    lookups: &[&Lookup],
    threads: usize,
    outcomes: &mut [DatasetOutcome],
) -> Result<Items, Vec<Diagnostic>> {
    // `first` and `last` need to see every earlier key before scoring an item.
    let threads = match dataset.duplicates {
        Duplicates::Keep | Duplicates::Error => threads,
        Duplicates::First | Duplicates::Last => 1,
    };
    let (chunks, read) = read_chunked(
        dataset,
        threads,
        || ItemChunk::new(plan, dataset, lookups),
        |chunk, record| chunk.record(lookups, record),
    )
    .map_err(|d| vec![d])?;
    let mut chunks: Vec<Chunk<ItemChunk<'_>>> = chunks;
    // `duplicates: last` scores the buffered items now, at their first positions.
    for chunk in &mut chunks {
        let buffered = std::mem::take(&mut chunk.state.buffered);
        for (key, record) in &buffered {
            chunk.state.item(lookups, key.as_ref(), record);
        }
    }
    let first_duplicate = (dataset.duplicates == Duplicates::Error)
        .then(|| first_duplicate(dataset, &chunks))
        .flatten();
    // Report what a single reader would have: errors in line order, up to the first
    // stop (a bad record, a repeated key, or the error limit).
    let mut errors: Vec<Diagnostic> = Vec::new();
    let duplicate_line = first_duplicate.as_ref().map_or(usize::MAX, stop_line);
    'chunks: for chunk in &mut chunks {
        let stop = chunk.state.errors.len() < MAX_ITEM_ERRORS;
        for (line, error) in chunk.state.errors.drain(..) {
            if line > duplicate_line {
                break 'chunks;
            }
            errors.push(error);
            if errors.len() == MAX_ITEM_ERRORS {
                errors.push(Diagnostic::error(format!(
                    "stopped after {MAX_ITEM_ERRORS} items could not be evaluated"
                )));
                return Err(errors);
            }
        }
        if let (Some(data_error), true) = (chunk.stop.take(), stop) {
            if stop_line(&data_error) < duplicate_line {
                errors.push(data_error);
                return Err(errors);
            }
            break;
        }
    }
    if let Some(duplicate) = first_duplicate {
        errors.push(duplicate);
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut chunks = chunks.into_iter().map(|c| c.state);
    let mut total = chunks.next().expect("at least one chunk");
    for part in chunks {
        for (a, b) in total.accumulators.iter_mut().zip(part.accumulators) {
            a.merge(b);
        }
        total.count += part.count;
        total.keyless += part.keyless;
        for (a, b) in total.label_counts.iter_mut().zip(&part.label_counts) {
            *a += b;
        }
        total.rows.extend(part.rows);
        total.offenders.extend(part.offenders);
        for (a, b) in total.matched.iter_mut().zip(part.matched) {
            a.iter_mut().zip(b).for_each(|(x, y)| *x |= y);
        }
        for i in 0..lookups.len() {
            total.missing[i] += part.missing[i];
            total.skipped[i] += part.skipped[i];
        }
    }
    for (i, outcome) in outcomes.iter_mut().enumerate().take(lookups.len()) {
        outcome.missing = total.missing[i];
        outcome.skipped_items = total.skipped[i];
    }
    let items = &mut outcomes[plan.items_dataset.index()];
    items.read = read;
    items.keyless = total.keyless;
    items.duplicates = total.duplicates;
    let mut offenders = total.offenders;
    offenders.sort_by(ItemRow::report_order);
    offenders.truncate(plan.offenders.as_ref().map_or(0, |o| o.limit));
    Ok(Items {
        accumulators: total.accumulators,
        count: total.count,
        matched: total.matched,
        label_counts: total.label_counts,
        rows: total.rows,
        offenders,
    })
}

/// The first key of a later chunk that an earlier chunk already had, in file order.
/// Repeats within a chunk stop that chunk, like any other bad record.
fn first_duplicate(dataset: &DatasetPlan, chunks: &[Chunk<ItemChunk<'_>>]) -> Option<Diagnostic> {
    for (k, chunk) in chunks.iter().enumerate().skip(1) {
        let earlier = |key: &Key| {
            chunks[..k]
                .iter()
                .find_map(|c| c.state.seen.get(key).copied())
        };
        let repeat = chunk
            .state
            .seen
            .iter()
            .filter_map(|(key, &line)| earlier(key).map(|first| (line, first, key)))
            .min_by_key(|&(line, _, _)| line);
        if let Some((line, first, key)) = repeat {
            return Some(duplicate_error(dataset, key, first, line));
        }
    }
    None
}

/// What a pass noticed about its datasets that does not stop it.
pub(crate) fn data_warnings(plan: &Plan, outcomes: &[DatasetOutcome]) -> Vec<Diagnostic> {
    let mut warnings = Vec::new();
    let items = &plan.datasets[plan.items_dataset.index()].name;
    for (dataset, outcome) in plan.datasets.iter().zip(outcomes) {
        let mut say = |text: String| warnings.push(Diagnostic::warning(text));
        if outcome.keyless > 0 {
            say(format!(
                "{}: {} record(s) have no key (`{}` is null) and join nothing",
                dataset.name, outcome.keyless, dataset.key_text
            ));
        }
        if outcome.unmatched > 0 {
            say(format!(
                "{}: {} record(s) match no {items} item",
                dataset.name, outcome.unmatched
            ));
        }
        if outcome.missing > 0 {
            let fate = match dataset.join {
                Join::Left => "scored with it missing",
                Join::Inner => "skipped",
            };
            say(format!(
                "{}: {} {items} item(s) have no record here ({fate})",
                dataset.name, outcome.missing
            ));
        }
        if outcome.duplicates > 0 && dataset.duplicates != Duplicates::Keep {
            say(format!(
                "{}: {} record(s) repeat an earlier key (kept the {} one)",
                dataset.name,
                outcome.duplicates,
                if dataset.duplicates == Duplicates::Last {
                    "last"
                } else {
                    "first"
                }
            ));
        }
    }
    warnings
}
