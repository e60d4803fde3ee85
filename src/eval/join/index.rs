//! The index join: score as you stream. When the items dataset is joined to a
//! single other dataset (a gold set and its traces), the items are read into
//! memory first, by key (`item_index`), and the other dataset is streamed
//! past them in parallel chunks (*parts*): each record scores the items of its
//! key at once and is dropped, and only the score is kept (`score::saved`), a
//! later record of a key replacing an earlier one's as the duplicates policy
//! says. The parts are merged in file order into each item's winning score,
//! and the items are folded in item order with their winners, so that every
//! number and file is byte for byte what the table join gives. Memory holds
//! the items and a few bytes per item, never the streamed records.
//!
//! Errors are kept as they are met: a part that cannot read a record stops
//! there, a score that fails is kept as the item's failure, a repeated key
//! under `duplicates: error` is found from the keys' lines; the first of
//! them by place are what is reported. The values shown of the first
//! offenders are kept for a bounded number of scores per part; should a part
//! have dropped one that turns out to be listed (later records replaced the
//! scores it kept), the few items concerned are scored again from their
//! records, read once more (`show_again`).
//!
//! The partitioned join (`partitioned`) joins each of its partitions with the
//! same parts, merge and fold.

use std::ops::ControlFlow;

use crate::base::diagnostic::Diagnostic;
use crate::base::parallel::map_in_parallel;
use crate::base::value::{Key, Value};
use crate::data::{count_ahead, read_chunked, read_chunked_ahead, Flow, ReadStats};
use crate::eval::error::EvalError;
use crate::eval::join::duplicates::{on_repeat, Repeat, Role};
use crate::eval::join::item_index::{ItemIndex, SeenIds};
use crate::eval::join::items::{resolve, Held, ItemKeys, Read};
use crate::eval::join::keys::{duplicate_error, key_of, stop_line, FastMap};
use crate::eval::join::{item_failure, Pass};
use crate::eval::outcome::DatasetOutcome;
use crate::eval::physical::Bucket;
use crate::eval::score::saved::{Layout, Rank, Saved, ScoreArena, Shown};
use crate::eval::score::{Roles, Scorer};
use crate::eval::state::errors::{ErrorLog, ErrorPlace};
use crate::eval::state::item_lines::{LineLimit, LineSpool};
use crate::eval::state::RunState;
use crate::ir::{DatasetId, Record};
use crate::plan::{DatasetPlan, Plan};
use crate::spec::Join;

/// The index join of one run whose items are `datasets[1]` and whose other
/// dataset is `datasets[0]` (as this run reads them).
pub(in crate::eval) fn index_join<'p>(
    plan: &'p Plan,
    roles: &'p Roles,
    datasets: [&DatasetPlan; 2],
    (threads, bucket): (usize, Option<Bucket>),
    limit: LineLimit,
) -> Result<Pass<'p>, Vec<Diagnostic>> {
    let [joined, items_dataset] = datasets;
    let items = read_items(plan, items_dataset, threads, bucket)?;
    // The index is built on one thread: the other counts the streamed file's
    // lines meanwhile, so that each of its chunks starts at once.
    let (index, ahead) = std::thread::scope(|scope| {
        let ahead = scope.spawn(|| count_ahead(joined, threads));
        let index = ItemIndex::of(&items.held, Vec::new());
        (index, ahead.join().unwrap_or(None))
    });
    let index = index.ok_or_else(|| vec![too_large("items in memory", plan)])?;
    let mut items_errors = items.errors;
    if on_repeat(items_dataset.duplicates, Role::Items) == Repeat::Error {
        if let Some((first, again)) = index.first_repeat() {
            let (first, again) = (index.item(first), index.item(again));
            let key = again.key.as_ref().expect("a repeat has a key");
            let (line, first_line) = (again.record.line, first.record.line);
            let error = duplicate_error(items_dataset, key, first_line, line);
            let rank = plan.items_dataset.index();
            items_errors.stop(ErrorPlace::reader(rank, line as usize), error);
        }
    }
    let layout = Layout::of(plan);
    // Lines of items.jsonl are ordered by item number when that is report order.
    let lines_by_number = plan.keep_items && index.in_report_order();
    let streamer = Streamer {
        plan,
        roles,
        datasets,
        index: &index,
        layout: &layout,
        limit,
        lines_by_number,
        bucket,
    };
    let (parts, read) = read_chunked_ahead(
        joined,
        threads,
        ahead,
        || streamer.part(),
        |part, record| streamer.record(part, record),
    )
    .map_err(|d| vec![d])?;
    let parts: Vec<Part<'_>> = (parts.into_iter())
        .map(|chunk| streamer.finish(chunk.state, chunk.stop))
        .collect();
    let mut outcome = DatasetOutcome {
        read,
        ..DatasetOutcome::default()
    };
    let mut winners = vec![Winner::NONE; index.len()];
    let merged = match merge_parts(&streamer, parts, 0, &mut outcome, &mut winners) {
        Ok(Ok(merged)) => merged,
        Ok(Err(stop)) => return Ok(Pass::stopped(plan, roles, limit, 0, stop)),
        Err(fatal) => return Err(vec![fatal]),
    };
    let kept: Vec<Kept> = merged.kept;

    // Every item folded in item order with its winner: stretches of items on
    // the run's threads, their states merged in order.
    let fold = Fold {
        plan,
        roles,
        datasets,
        kept: &kept,
        layout: &layout,
        limit,
        lines_by_number,
    };
    let stretches = stretches(items.held.len(), threads);
    let folded: Vec<Folding<'p>> = map_in_parallel(threads, stretches.len(), |s| {
        let (start, end) = stretches[s];
        let mut folding = fold.start();
        let stretch = items.held[start..end].iter().zip(&winners[start..end]);
        for (n, (held, &winner)) in (start..).zip(stretch) {
            fold.item(&mut folding, held, n as u32, winner);
        }
        folding
    });
    let mut states = Vec::with_capacity(folded.len());
    let mut total = Folded::default();
    for folding in folded {
        states.push(folding.state);
        total.add(folding.folded);
    }
    outcome.missing = total.missing;
    outcome.skipped_items = total.skipped;
    let mut run = RunState::merge_in_order(states, threads);
    run.errors.merge(items_errors);
    let unshown = (total.unshown.iter())
        .filter_map(|&n| {
            let held = index.item(n);
            Some((held.key.clone()?, held.record.line))
        })
        .collect();
    show_again(&fold, unshown, &mut run)?;
    finish_run(&mut run, kept)?;
    let items_outcome = DatasetOutcome {
        read: items.read,
        keyless: items.keyless,
        duplicates: items.duplicates,
        ..DatasetOutcome::default()
    };
    let pass = Pass::of(plan, vec![outcome, items_outcome], &[merged.keys], run);
    // The items' records and the streamed side's scores are freed while the
    // run goes on to its intervals and reports, or left to the exit of a
    // process that ends with the run.
    drop(index);
    crate::base::deferred::drop_at_exit((items.held, winners));
    Ok(pass)
}

/// The items of a run, read into memory in file order.
struct ItemsRead {
    held: Vec<Held>,
    read: ReadStats,
    keyless: usize,
    duplicates: usize,
    /// What reading them stopped at: a record that cannot be read, a key
    /// repeated under `duplicates: error`.
    errors: ErrorLog,
}

/// Reads the items dataset into memory, on `threads` threads, its repeated
/// keys settled by the policy.
fn read_items(
    plan: &Plan,
    dataset: &DatasetPlan,
    threads: usize,
    bucket: Option<Bucket>,
) -> Result<ItemsRead, Vec<Diagnostic>> {
    let (chunks, read) = read_chunked(
        dataset,
        threads,
        || ItemKeys::new(dataset, true, bucket),
        |keys, record| match keys.read(plan, dataset, record)? {
            Read::Now(..) | Read::Held | Read::Skipped => Ok(ControlFlow::Continue(())),
        },
    )
    .map_err(|d| vec![d])?;
    let rank = plan.items_dataset.index();
    let mut errors = ErrorLog::default();
    let (mut keyless, mut duplicates) = (0, 0);
    let mut keys = Vec::with_capacity(chunks.len());
    for chunk in chunks {
        if let Some(stop) = chunk.stop {
            errors.stop(ErrorPlace::reader(rank, stop_line(&stop)), stop);
        }
        keyless += chunk.state.keyless;
        duplicates += chunk.state.duplicates;
        keys.push(chunk.state);
    }
    let (held, more) = resolve(dataset, keys);
    Ok(ItemsRead {
        held,
        read,
        keyless,
        duplicates: duplicates + more,
        errors,
    })
}

/// `n` items cut into at most `threads` stretches of consecutive items (one,
/// empty, for none): a stretch's start and end.
fn stretches(n: usize, threads: usize) -> Vec<(usize, usize)> {
    if n == 0 {
        return vec![(0, 0)];
    }
    let size = n.div_ceil(threads.max(1));
    (0..n)
        .step_by(size)
        .map(|s| (s, (s + size).min(n)))
        .collect()
}

/// An error for a join that outgrew what it numbers with 32 bits.
pub(in crate::eval) fn too_large(what: &'static str, _plan: &Plan) -> Diagnostic {
    Diagnostic::of(&EvalError::JoinTooLarge { what })
}

/// Each item's winning score among the parts: the part (its place among all
/// parts) and where in its arena; or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::eval) struct Winner {
    part: u32,
    saved: Saved,
}

impl Winner {
    /// No record of the item's key: scored alone, or skipped (`join: inner`).
    pub(in crate::eval) const NONE: Winner = Winner {
        part: u32::MAX,
        saved: Saved::NONE,
    };
    /// Skipped: no record of its key, and the join is `inner`.
    pub(in crate::eval) const SKIPPED: Winner = Winner {
        part: u32::MAX - 1,
        saved: Saved::NONE,
    };
    /// Dropped: a repeat of an earlier item's key (`duplicates: first/last`).
    pub(in crate::eval) const DROPPED: Winner = Winner {
        part: u32::MAX - 2,
        saved: Saved::NONE,
    };

    /// The score `saved` of the part numbered `part` among all parts.
    pub(in crate::eval) fn of(part: u32, saved: Saved) -> Winner {
        debug_assert!(part < u32::MAX - 2);
        Winner { part, saved }
    }

    fn part(self) -> Option<u32> {
        (self.part < u32::MAX - 2).then_some(self.part)
    }
}

/// What scoring the streamed dataset's records against the items in memory
/// needs.
pub(in crate::eval) struct Streamer<'a, 'p> {
    pub(in crate::eval) plan: &'p Plan,
    pub(in crate::eval) roles: &'p Roles,
    /// The streamed dataset and the items dataset, as this run reads them.
    pub(in crate::eval) datasets: [&'a DatasetPlan; 2],
    pub(in crate::eval) index: &'a ItemIndex<'a>,
    pub(in crate::eval) layout: &'a Layout,
    pub(in crate::eval) limit: LineLimit,
    /// The items are in report order: lines are ordered by item number.
    pub(in crate::eval) lines_by_number: bool,
    /// The keys this evaluation covers; records of others are skipped.
    pub(in crate::eval) bucket: Option<Bucket>,
}

/// One chunk of the streamed dataset: its records' scores and what it saw of
/// keys.
pub(in crate::eval) struct Part<'p> {
    scorer: Scorer<'p>,
    arena: ScoreArena,
    shown: Shown,
    /// Per item key id, a bit: seen in this part. A bit, not the line: a
    /// part's bits of a million keys stay in a core's cache; lines are kept
    /// only where `duplicates: error` needs them (`first_lines`).
    seen: SeenIds,
    /// Keys no item has, with the line each was first read on.
    unmatched: FastMap<Key, u32>,
    /// `duplicates: error`: each matched key id and the line it was first
    /// read on in this part, in the order read.
    first_lines: Vec<(u32, u32)>,
    keyless: usize,
    duplicates: usize,
    /// Items scored, in the order scored (a later score of an item replaces
    /// an earlier one under `duplicates: last`).
    scored: Vec<(u32, Saved)>,
    /// The scores that failed, each as its error.
    failures: Vec<Diagnostic>,
    /// Each score's line of items.jsonl (when the plan keeps items), in the
    /// order scored; the lines of scores that lost are dropped when merged.
    lines: LineSpool,
    /// Keyed records not yet looked up ([`Streamer::look_up`]).
    pending: Vec<(Key, Record)>,
    /// What stopped the part: a record that could not be read, or a key
    /// repeated within the part under `duplicates: error`, and its line.
    stop: Option<(usize, Diagnostic)>,
    /// The scores outgrew what the arena numbers.
    too_large: bool,
}

impl Part<'_> {
    /// The items scored, by number in the index, in the order scored.
    pub(in crate::eval) fn scored(&self) -> &[(u32, Saved)] {
        &self.scored
    }

    /// What the fold reads of a part whose every score won.
    pub(in crate::eval) fn into_kept(self) -> Kept {
        Kept {
            arena: self.arena,
            shown: self.shown,
            failures: self.failures,
            lines: self.lines,
        }
    }

    /// The part stops at `line`, unless it stopped before.
    fn stop_at(&mut self, line: usize, error: Diagnostic) {
        if self.stop.as_ref().is_none_or(|(l, _)| line < *l) {
            self.stop = Some((line, error));
        }
    }
}

impl<'a, 'p> Streamer<'a, 'p> {
    const ID: DatasetId = DatasetId::new(0);

    pub(in crate::eval) fn part(&self) -> Part<'p> {
        Part {
            scorer: Scorer::new(self.plan, self.roles),
            arena: ScoreArena::default(),
            shown: Shown::new(self.plan),
            seen: SeenIds::new(self.index.key_count()),
            unmatched: FastMap::default(),
            first_lines: Vec::new(),
            keyless: 0,
            duplicates: 0,
            scored: Vec::new(),
            failures: Vec::new(),
            lines: self.spool(),
            pending: Vec::with_capacity(Self::LOOKED_UP_TOGETHER),
            stop: None,
            too_large: false,
        }
    }

    fn spool(&self) -> LineSpool {
        let mut lines = LineSpool::new(self.limit);
        if self.lines_by_number {
            lines.order_by_ordinal();
        }
        lines
    }

    fn repeat(&self) -> Repeat {
        on_repeat(self.datasets[0].duplicates, Role::LookedUp)
    }

    /// Records whose keys are looked up one after another before any is
    /// scored. At a million items a lookup is a few cache misses (the table,
    /// the key, its text); looked up in a row, with no scoring between, the
    /// processor overlaps them.
    const LOOKED_UP_TOGETHER: usize = 16;

    /// One record of the streamed dataset: checked and keyed now, and its
    /// key's items scored with the records pending (see [`Part::pending`]).
    pub(in crate::eval) fn record(&self, part: &mut Part<'p>, record: Record) -> Flow {
        let (plan, dataset) = (self.plan, self.datasets[0]);
        crate::data::validate(dataset, Self::ID, &record, &plan.locations)?;
        let key = key_of(dataset, Self::ID, &record, &plan.locations)?;
        if self.bucket.is_some_and(|b| !b.covers(key.as_ref())) {
            return Ok(ControlFlow::Continue(()));
        }
        let Some(key) = key else {
            part.keyless += 1;
            return Ok(ControlFlow::Continue(()));
        };
        part.pending.push((key, record));
        if part.pending.len() < Self::LOOKED_UP_TOGETHER {
            return Ok(ControlFlow::Continue(()));
        }
        Ok(self.look_up(part))
    }

    /// The part once its records are all read (`stop`: the error that ended
    /// its read, if one did): the records still pending scored.
    pub(in crate::eval) fn finish(&self, mut part: Part<'p>, stop: Option<Diagnostic>) -> Part<'p> {
        if let Some(stop) = stop {
            part.stop_at(stop_line(&stop), stop);
        }
        let _ = self.look_up(&mut part);
        part.lines.seal();
        part
    }

    /// Looks the pending records' keys up, then scores each record's items in
    /// record order.
    fn look_up(&self, part: &mut Part<'p>) -> ControlFlow<()> {
        let mut ids = [None; Self::LOOKED_UP_TOGETHER];
        for (id, (key, _)) in ids.iter_mut().zip(&part.pending) {
            *id = self.index.id_of(key);
        }
        // Taken out while scoring, which borrows the part; put back for reuse.
        let mut pending = std::mem::take(&mut part.pending);
        let flow = (pending.drain(..).zip(ids))
            .try_for_each(|((key, record), id)| self.score(part, key, id, &record));
        part.pending = pending;
        flow
    }

    /// Scores the items of the record's key, whose id among the items' keys is `id`.
    fn score(
        &self,
        part: &mut Part<'p>,
        key: Key,
        id: Option<u32>,
        record: &Record,
    ) -> ControlFlow<()> {
        let repeat = self.repeat();
        // Whether this part saw the key before, and on which line.
        let repeated = match id {
            Some(id) => {
                let seen = part.seen.insert(id);
                if !seen && repeat == Repeat::Error {
                    part.first_lines.push((id, record.line));
                }
                seen
            }
            None => match part.unmatched.entry(key) {
                std::collections::hash_map::Entry::Occupied(first) => {
                    if repeat == Repeat::Error {
                        let error = duplicate_error(
                            self.datasets[0],
                            first.key(),
                            *first.get(),
                            record.line,
                        );
                        part.stop_at(record.line as usize, error);
                        return ControlFlow::Break(());
                    }
                    true
                }
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(record.line);
                    false
                }
            },
        };
        if repeated {
            match repeat {
                Repeat::Error => {
                    let id = id.expect("unmatched keys stop above");
                    let first = (part.first_lines.iter())
                        .find(|(seen, _)| *seen == id)
                        .map_or(0, |&(_, line)| line);
                    let key = self.index.item(self.index.items_of(id).next().unwrap_or(0));
                    let key = key.key.as_ref().expect("a key id is a key's");
                    let error = duplicate_error(self.datasets[0], key, first, record.line);
                    part.stop_at(record.line as usize, error);
                    return ControlFlow::Break(());
                }
                Repeat::Earlier | Repeat::Both => {
                    part.duplicates += 1;
                    return ControlFlow::Continue(());
                }
                // Scored again: the merge keeps the later score.
                Repeat::Later => part.duplicates += 1,
            }
        }
        let Some(id) = id else {
            return ControlFlow::Continue(());
        };
        for item in self.index.items_of(id) {
            if self.score_item(part, item, Some(record)).is_break() {
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    }
}

impl<'p> Streamer<'_, 'p> {
    /// Scores item `item` (its number in the index) with `record` of the
    /// streamed dataset (`None`: the item alone) into `part`; breaks when the
    /// part's arena is full.
    pub(in crate::eval) fn score_item(
        &self,
        part: &mut Part<'p>,
        item: u32,
        record: Option<&Record>,
    ) -> ControlFlow<()> {
        let held = self.index.item(item);
        let records = [record, Some(&held.record)];
        let saved = match part.scorer.score(&records) {
            Ok(()) => {
                let score = &part.scorer.score;
                match part.arena.save(self.layout, self.roles, score) {
                    Some(saved) => saved,
                    None => {
                        part.too_large = true;
                        return ControlFlow::Break(());
                    }
                }
            }
            Err(failure) => {
                let key = held.key.as_ref();
                let error = item_failure(self.plan, &self.datasets, key, &records, failure);
                let Some(saved) = Saved::failed(part.failures.len()) else {
                    part.too_large = true;
                    return ControlFlow::Break(());
                };
                part.failures.push(error);
                saved
            }
        };
        part.scored.push((item, saved));
        if saved.is_failed() {
            return ControlFlow::Continue(());
        }
        if self.plan.keep_items {
            // Its place in the file, not its number among these items: a
            // bucket's items are some of the file's.
            let (plan, score) = (self.plan, &part.scorer.score);
            let body = |out: &mut String| score.push_item_body(plan, out);
            (part.lines).push(held.key.clone(), held.record.line, held.place, body);
        }
        let rank = || self.index.rank(item);
        (part.shown).score(self.layout, rank, &part.scorer.score);
        ControlFlow::Continue(())
    }
}

/// What the merge of the parts keeps: each part's scores (by its place among
/// all parts) and how many distinct keys the parts saw.
pub(in crate::eval) struct Merged {
    pub(in crate::eval) kept: Vec<Kept>,
    pub(in crate::eval) keys: usize,
}

/// The parts of the streamed dataset (or of one partition of it), in file
/// order, merged into what one reader would have kept of each key: counts go
/// to `outcome`, and each item scored gets its winning score in `winners`
/// (by item number), its part named by its place among all parts, from
/// `first_part`. The streamed dataset is looked up, so it is read first by
/// a single reader: its first error (a record that cannot be read, a key
/// repeated under `duplicates: error`) is the run's only one (`Ok(Err)`).
/// `Err`: the parts outgrew what they number.
pub(in crate::eval) fn merge_parts(
    streamer: &Streamer<'_, '_>,
    parts: Vec<Part<'_>>,
    first_part: usize,
    outcome: &mut DatasetOutcome,
    winners: &mut [Winner],
) -> Result<Result<Merged, Diagnostic>, Diagnostic> {
    let (dataset, index) = (streamer.datasets[0], streamer.index);
    if let Some(error) = first_error(streamer, &parts) {
        return Ok(Err(error));
    }
    if parts.iter().any(|p| p.too_large) {
        return Err(too_large("scores in one part of the join", streamer.plan));
    }
    let mut seen = SeenIds::new(index.key_count());
    let mut unmatched: FastMap<&Key, ()> = FastMap::default();
    let later = on_repeat(dataset.duplicates, Role::LookedUp) == Repeat::Later;
    for (p, part) in parts.iter().enumerate() {
        outcome.keyless += part.keyless;
        outcome.duplicates += part.duplicates;
        let mut repeats = seen.add_all(&part.seen);
        for key in part.unmatched.keys() {
            repeats += usize::from(unmatched.insert(key, ()).is_some());
        }
        outcome.duplicates += repeats;
        let p = u32::try_from(first_part + p)
            .map_err(|_| too_large("parts of the join", streamer.plan))?;
        for &(item, saved) in &part.scored {
            let winner = &mut winners[index.number(item) as usize];
            if later || winner.part().is_none() {
                *winner = Winner::of(p, saved);
            }
        }
    }
    outcome.unmatched += unmatched.len();
    let keys = seen.len() + unmatched.len();
    drop(unmatched);
    // Each part's lines of items.jsonl: only those of winning scores are kept.
    let mut kept = Vec::with_capacity(parts.len());
    for (p, mut part) in (first_part..).zip(parts) {
        if part.lines.pushed() > 0 {
            let won = |&(item, saved): &(u32, Saved)| {
                let winner = winners[index.number(item) as usize];
                winner.part == p as u32 && winner.saved == saved
            };
            // Failed scores pushed no line.
            let keep = (part.scored.iter())
                .filter(|(_, saved)| !saved.is_failed())
                .map(won)
                .collect();
            part.lines.keep_only(keep);
        }
        kept.push(Kept {
            arena: part.arena,
            shown: part.shown,
            failures: part.failures,
            lines: part.lines,
        });
    }
    Ok(Ok(Merged { kept, keys }))
}

/// The first error of the streamed dataset in file order: the first part
/// with one has it (a part ends at its first), unless a key it reads was
/// read by an earlier part under `duplicates: error`, which may come first.
fn first_error(streamer: &Streamer<'_, '_>, parts: &[Part<'_>]) -> Option<Diagnostic> {
    let dataset = streamer.datasets[0];
    let error_policy = on_repeat(dataset.duplicates, Role::LookedUp) == Repeat::Error;
    let mut earlier_lines: Vec<u32> = Vec::new();
    let mut earlier_unmatched: FastMap<&Key, u32> = FastMap::default();
    if error_policy {
        earlier_lines = vec![0; streamer.index.key_count()];
    }
    for part in parts {
        let mut first: Option<(usize, Diagnostic)> = None;
        let mut consider = |line: usize, error: Diagnostic| {
            if first.as_ref().is_none_or(|(l, _)| line < *l) {
                first = Some((line, error));
            }
        };
        if error_policy {
            for &(id, line) in &part.first_lines {
                let before = earlier_lines[id as usize];
                if before != 0 {
                    let item = streamer.index.items_of(id).next().unwrap_or(0);
                    let key = streamer
                        .index
                        .item(item)
                        .key
                        .as_ref()
                        .expect("a key id is a key's");
                    consider(line as usize, duplicate_error(dataset, key, before, line));
                }
            }
            for (key, &line) in &part.unmatched {
                if let Some(&before) = earlier_unmatched.get(key) {
                    consider(line as usize, duplicate_error(dataset, key, before, line));
                }
            }
        }
        if let Some((line, stop)) = &part.stop {
            consider(*line, stop.clone());
        }
        if let Some((_, error)) = first {
            return Some(error);
        }
        if error_policy {
            for &(id, line) in &part.first_lines {
                earlier_lines[id as usize] = line;
            }
            for (key, &line) in &part.unmatched {
                earlier_unmatched.insert(key, line);
            }
        }
    }
    None
}

/// A part's scores, failures and offenders' shown values, kept until they
/// are folded.
pub(in crate::eval) struct Kept {
    arena: ScoreArena,
    shown: Shown,
    failures: Vec<Diagnostic>,
    lines: LineSpool,
}

/// What folding the items with their winners needs.
pub(in crate::eval) struct Fold<'a, 'p> {
    pub(in crate::eval) plan: &'p Plan,
    pub(in crate::eval) roles: &'p Roles,
    pub(in crate::eval) datasets: [&'a DatasetPlan; 2],
    pub(in crate::eval) kept: &'a [Kept],
    pub(in crate::eval) layout: &'a Layout,
    pub(in crate::eval) limit: LineLimit,
    pub(in crate::eval) lines_by_number: bool,
}

/// Items folded: items without a record, skipped ones (an inner join), and
/// offenders whose shown values were not kept (by number).
#[derive(Default)]
pub(in crate::eval) struct Folded {
    pub(in crate::eval) missing: usize,
    pub(in crate::eval) skipped: usize,
    pub(in crate::eval) unshown: Vec<u32>,
}

impl Folded {
    pub(in crate::eval) fn add(&mut self, other: Folded) {
        self.missing += other.missing;
        self.skipped += other.skipped;
        self.unshown.extend(other.unshown);
    }
}

/// A stretch of items being folded: its state, what it noted, and its
/// scorer (for the score restored, or for an item scored alone).
pub(in crate::eval) struct Folding<'p> {
    pub(in crate::eval) state: RunState<'p>,
    pub(in crate::eval) folded: Folded,
    scorer: Scorer<'p>,
}

impl<'p> Fold<'_, 'p> {
    pub(in crate::eval) fn start(&self) -> Folding<'p> {
        let mut state = RunState::new(self.plan, self.roles, self.limit);
        if self.lines_by_number {
            state.lines.spool().order_by_ordinal();
        }
        Folding {
            state,
            folded: Folded::default(),
            scorer: Scorer::new(self.plan, self.roles),
        }
    }

    /// Folds item `number` (`held`) with its winning score.
    pub(in crate::eval) fn item(
        &self,
        folding: &mut Folding<'p>,
        held: &Held,
        number: u32,
        winner: Winner,
    ) {
        let plan = self.plan;
        let (key, line) = (held.key.as_ref(), held.record.line);
        let items_rank = plan.items_dataset.index();
        let at = ErrorPlace::record(items_rank, line as usize, held.place);
        let Folding {
            state,
            folded,
            scorer,
        } = folding;
        let line_kept = match winner.part() {
            Some(p) => {
                let kept = &self.kept[p as usize];
                if let Some(failure) = winner.saved.failure() {
                    state.errors.failure(at, kept.failures[failure].clone());
                    return;
                }
                let score = &mut scorer.score;
                kept.arena
                    .restore(plan, (self.layout, self.roles), winner.saved, score);
                // An offender the state would not list needs no shown values.
                if score.offender && !state.offender_is_cut(key, line) {
                    let rank = Rank {
                        key: key.cloned(),
                        line,
                        item: number,
                    };
                    if !kept.shown.restore(self.layout, &rank, score) {
                        folded.unshown.push(number);
                    }
                }
                true
            }
            None => {
                folded.missing += 1;
                if self.datasets[0].join == Join::Inner {
                    folded.skipped += 1;
                    return;
                }
                let records = [None, Some(&held.record)];
                if let Err(failure) = scorer.score(&records) {
                    let error = item_failure(plan, &self.datasets, key, &records, failure);
                    state.errors.failure(at, error);
                    return;
                }
                false
            }
        };
        let ordinal = held.place;
        if let Err(failure) = state.fold(&scorer.score, key, line, ordinal, line_kept) {
            let records = [None, Some(&held.record)];
            let error = item_failure(plan, &self.datasets, key, &records, failure);
            state.errors.failure(at, error);
        }
    }
}

/// Adds the parts' lines of items.jsonl to the run's and reports what went
/// wrong: the errors met, in order, or a temporary file that failed.
pub(in crate::eval) fn finish_run(
    run: &mut RunState<'_>,
    kept: Vec<Kept>,
) -> Result<(), Vec<Diagnostic>> {
    for kept in kept {
        run.lines.add(kept.lines, 0);
    }
    if !run.errors.is_empty() {
        return Err(std::mem::take(&mut run.errors).into_diagnostics());
    }
    match run.lines.spill_error() {
        Some(error) => Err(vec![error]),
        None => Ok(()),
    }
}

/// The values shown of the offenders listed whose values no part kept
/// (`unshown`: their keys and lines): each such item scored again against
/// the winning record of its key, both datasets read once more for the few
/// records concerned. Rare: a part keeps the shown values of many more of
/// its first offenders than are listed, and loses one only when later
/// records replace most of the scores it kept.
pub(in crate::eval) fn show_again(
    fold: &Fold<'_, '_>,
    unshown: Vec<(Key, u32)>,
    run: &mut RunState<'_>,
) -> Result<(), Vec<Diagnostic>> {
    let listed: FastMap<(&Key, u32), ()> = (unshown.iter())
        .filter(|(key, line)| {
            let row = |row: &&crate::eval::outcome::ItemRow| row.line == *line;
            run.offenders
                .iter()
                .filter(row)
                .any(|r| r.key.as_ref() == Some(key))
        })
        .map(|(key, line)| ((key, *line), ()))
        .collect();
    if listed.is_empty() {
        return Ok(());
    }
    let plan = fold.plan;
    let [joined, items] = fold.datasets;
    let later = on_repeat(joined.duplicates, Role::LookedUp) == Repeat::Later;
    let keyed = |dataset: &DatasetPlan, id: DatasetId, record: &Record| {
        key_of(dataset, id, record, &plan.locations)
    };
    // The items' records, and the winning record of each of their keys.
    let item_records = read_wanted(items, |record| {
        let key = keyed(items, plan.items_dataset, &record)?;
        Ok(key
            .filter(|k| listed.contains_key(&(k, record.line)))
            .map(|k| (k, record)))
    })?;
    let wanted_keys: FastMap<&Key, ()> = listed.keys().map(|(key, _)| (*key, ())).collect();
    let mut winning: FastMap<Key, Record> = FastMap::default();
    for (key, record) in read_wanted(joined, |record| {
        let key = keyed(joined, DatasetId::new(0), &record)?;
        Ok(key
            .filter(|k| wanted_keys.contains_key(k))
            .map(|k| (k, record)))
    })? {
        if later || !winning.contains_key(&key) {
            winning.insert(key, record);
        }
    }
    let mut scorer = Scorer::new(plan, fold.roles);
    let shown = plan.offenders.as_ref().map(|o| &o.show);
    for (key, item) in item_records {
        let Some(record) = winning.get(&key) else {
            continue;
        };
        if scorer.score(&[Some(record), Some(&item)]).is_err() {
            continue;
        }
        let values: Box<[Value]> = (shown.into_iter().flatten())
            .map(|(_, slot)| scorer.score.derived[slot.index()].clone())
            .collect();
        for row in run.offenders.iter_mut() {
            if row.line == item.line && row.key.as_ref() == Some(&key) {
                row.values = values.clone();
            }
        }
    }
    Ok(())
}

/// The records of `dataset` that `wanted` picks (with their keys), in file
/// order.
fn read_wanted(
    dataset: &DatasetPlan,
    wanted: impl Fn(Record) -> Result<Option<(Key, Record)>, Diagnostic> + Sync,
) -> Result<Vec<(Key, Record)>, Vec<Diagnostic>> {
    let (chunks, _) = read_chunked(dataset, 1, Vec::new, |found, record| {
        if let Some(pair) = wanted(record)? {
            found.push(pair);
        }
        Ok(ControlFlow::Continue(()))
    })
    .map_err(|d| vec![d])?;
    Ok(chunks.into_iter().flat_map(|chunk| chunk.state).collect())
}
