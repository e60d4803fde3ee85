//! Score as you stream. When the items dataset is joined to a single other
//! dataset (a gold set and its traces), the items are read into memory first and
//! the other dataset is streamed past them in parallel chunks: each record scores
//! the items of its key at once and is dropped, and only the score is kept
//! (`scored`), a later record of a key replacing an earlier one's under
//! `duplicates: last`. The scores are folded in item order at the end, so every
//! number and file is byte for byte what the ordinary pass (`pass`), which keeps
//! the joined dataset as a table, gives. Memory holds the items and a few bytes
//! per item, never the streamed records.
//!
//! Only a clean run is done this way. Anything the ordinary pass would report (a
//! malformed record, a repeated key under `duplicates: error`, an item that does
//! not evaluate) gives [`Fallback`], and the caller runs the ordinary pass, which
//! reports it exactly as always, in line order; so do the two things this pass
//! cannot do itself: list an offender whose shown values it did not keep
//! (`scored::Shown`), and hold scores past 32-bit offsets.

use std::ops::ControlFlow;
use std::sync::Mutex;

use crate::base::parallel::map_in_parallel;
use crate::base::value::Key;
use crate::data::{
    count_ahead, read_chunked, read_chunked_ahead, validate, Chunk, Flow, ReadStats,
};
use crate::eval::item::ItemChunk;
use crate::eval::item_index::{ItemIndex, SeenIds};
use crate::eval::item_lines::{LineLimit, LineSpool};
use crate::eval::keys::{key_of, FastMap};
use crate::eval::outcome::DatasetOutcome;
use crate::eval::outcome::ItemRow;
use crate::eval::pass::{merge_items, Pass};
use crate::eval::score::saved::{Layout, Rank, Saved, ScoreArena, Shown};
use crate::eval::score::{Roles, Scorer};
use crate::eval::state::RunState;
use crate::ir::{DatasetId, Record};
use crate::plan::{DatasetPlan, Plan};
use crate::spec::{Duplicates, Join};

/// The streamed pass cannot say what the ordinary pass would: run that instead.
pub(super) struct Fallback;

/// How the items are joined: `EVALSPEC_JOIN` set to `table` keeps the other
/// dataset as a table (the ordinary pass), `stream` streams it whenever the
/// plan allows and says on standard error when it falls back; unset, the
/// smaller file is kept in memory. For tests and benchmarks that compare the two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum JoinMode {
    Auto,
    Table,
    Stream,
}

impl JoinMode {
    pub(super) fn from_env() -> Self {
        match std::env::var("EVALSPEC_JOIN").as_deref() {
            Ok("table") => JoinMode::Table,
            Ok("stream") => JoinMode::Stream,
            _ => JoinMode::Auto,
        }
    }
}

/// Whether to stream: `plan` joins its items to exactly one other dataset, read
/// once, and (unless `mode` says) the items' file is no larger than the other's.
pub(super) fn applies(plan: &Plan, mode: JoinMode) -> bool {
    if plan.has_runs() || plan.items_dataset.index() != 1 || mode == JoinMode::Table {
        return false;
    }
    let size = |d: &DatasetPlan| std::fs::metadata(&d.path).map(|m| m.len()).ok();
    match (size(&plan.datasets[1]), size(&plan.datasets[0])) {
        _ if mode == JoinMode::Stream => true,
        (Some(items), Some(streamed)) => items <= streamed,
        _ => false,
    }
}

/// One chunk of the streamed dataset: its records' scores and what it saw of keys.
pub(super) struct Part<'p> {
    scorer: Scorer<'p>,
    arena: ScoreArena,
    shown: Shown,
    /// Per item key id, a bit: seen in this chunk. A bit, not the line: a
    /// repeat the pass cannot take falls back to the ordinary pass, which
    /// finds the lines itself; and a chunk's bits of a million keys stay in
    /// a core's cache (their lines took 4 MB a chunk).
    seen: SeenIds,
    /// Keys no item has.
    unmatched: FastMap<Key, ()>,
    keyless: usize,
    duplicates: usize,
    /// Items scored, in the order scored (a later score of an item replaces an earlier one).
    scored: Vec<(u32, Saved)>,
    /// An item did not evaluate, or the scores outgrew the arena.
    failed: bool,
    /// Each score's line of items.jsonl (when the plan keeps items), in the
    /// order scored; the lines of scores that lost are dropped when merged.
    lines: LineSpool,
    /// Keyed records not yet looked up ([`Streamed::look_up`]).
    pending: Vec<(Key, Record)>,
}

/// What scoring the streamed dataset's records against the items in memory needs.
pub(super) struct Streamed<'a, 'p> {
    pub(super) plan: &'p Plan,
    pub(super) roles: &'p Roles,
    pub(super) dataset: &'p DatasetPlan,
    pub(super) index: &'a ItemIndex<'a>,
    pub(super) layout: &'a Layout,
    pub(super) limit: LineLimit,
    /// The items are in report order: lines are ordered by item number.
    pub(super) lines_by_number: bool,
}

impl<'a, 'p> Streamed<'a, 'p> {
    const ID: DatasetId = DatasetId::new(0);

    pub(super) fn part(&self) -> Part<'p> {
        Part {
            scorer: Scorer::new(self.plan, self.roles),
            arena: ScoreArena::default(),
            shown: Shown::new(self.plan),
            seen: SeenIds::new(self.index.key_count()),
            unmatched: FastMap::default(),
            keyless: 0,
            duplicates: 0,
            scored: Vec::new(),
            failed: false,
            lines: self.spool(),
            pending: Vec::with_capacity(Self::LOOKED_UP_TOGETHER),
        }
    }

    fn spool(&self) -> LineSpool {
        let mut lines = LineSpool::new(self.limit);
        if self.lines_by_number {
            lines.order_by_ordinal();
        }
        lines
    }

    /// Records whose keys are looked up one after another before any is
    /// scored. At a million items a lookup is a few cache misses (the table,
    /// the key, its text); looked up in a row, with no scoring between, the
    /// processor overlaps them.
    const LOOKED_UP_TOGETHER: usize = 16;

    /// One record of the streamed dataset: checked and keyed now, and its
    /// key's items scored with the records pending (see [`Part::pending`]).
    pub(super) fn record(&self, part: &mut Part<'p>, record: Record) -> Flow {
        let (plan, dataset) = (self.plan, self.dataset);
        validate(dataset, Self::ID, &record, &plan.locations)?;
        let Some(key) = key_of(dataset, Self::ID, &record, &plan.locations)? else {
            part.keyless += 1;
            return Ok(ControlFlow::Continue(()));
        };
        part.pending.push((key, record));
        if part.pending.len() < Self::LOOKED_UP_TOGETHER {
            return Ok(ControlFlow::Continue(()));
        }
        Ok(self.look_up(part))
    }

    /// Scores the records still pending once the part's records are all in;
    /// false if the part failed.
    pub(super) fn finish(&self, part: &mut Part<'p>) -> bool {
        self.look_up(part).is_continue() && !part.failed
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
        // Whether this chunk saw the key before.
        let repeated = match id {
            Some(id) => part.seen.insert(id),
            None => part.unmatched.insert(key, ()).is_some(),
        };
        if repeated {
            part.duplicates += 1;
            match self.dataset.duplicates {
                // The ordinary pass reports it, with both lines.
                Duplicates::Error => {
                    part.failed = true;
                    return ControlFlow::Break(());
                }
                Duplicates::First | Duplicates::Keep => return ControlFlow::Continue(()),
                // Scored again: the merge keeps the later score.
                Duplicates::Last => {}
            }
        }
        let Some(id) = id else {
            return ControlFlow::Continue(());
        };
        for item in self.index.items_of(id) {
            let records = [Some(record), Some(&self.index.item(item).1)];
            if part.scorer.score(&records).is_err() {
                part.failed = true;
                return ControlFlow::Break(());
            }
            let Some(saved) = part.arena.save(self.layout, self.roles, &part.scorer.score) else {
                part.failed = true;
                return ControlFlow::Break(());
            };
            part.scored.push((item, saved));
            if self.plan.keep_items {
                let (key, record) = self.index.item(item);
                let number = u64::from(self.index.number(item));
                let (plan, score) = (self.plan, &part.scorer.score);
                let body = |out: &mut String| score.push_item_body(plan, out);
                (part.lines).push(key.clone(), record.line, number, body);
            }
            let rank = || self.index.rank(item);
            (part.shown).score(self.layout, rank, &part.scorer.score);
        }
        ControlFlow::Continue(())
    }
}

/// The pass, with the looked-up dataset streamed; see the module's comment.
pub(super) fn streamed_pass<'p>(
    plan: &'p Plan,
    roles: &'p Roles,
    threads: usize,
    limit: LineLimit,
) -> Result<Pass<'p>, Fallback> {
    let (dataset, items_dataset) = (&plan.datasets[0], &plan.datasets[1]);
    // `first` and `last` need to see every earlier key: one chunk (as `pass`).
    let item_threads = match items_dataset.duplicates {
        Duplicates::Keep | Duplicates::Error => threads,
        Duplicates::First | Duplicates::Last => 1,
    };
    let make = || {
        let mut chunk = ItemChunk::new(plan, roles, items_dataset, &[], limit);
        chunk.defer = true;
        chunk
    };
    let (mut chunks, items_read) =
        read_chunked(items_dataset, item_threads, make, |chunk, record| {
            chunk.record(&[], record)
        })
        .map_err(|_| Fallback)?;
    if chunks.iter().any(|c| c.stop.is_some()) {
        return Err(Fallback);
    }
    let buffered: Vec<Vec<(Option<Key>, Record)>> = (chunks.iter_mut())
        .map(|c| std::mem::take(&mut c.state.buffered))
        .collect();
    // The index is built on one thread: the other counts the streamed file's
    // lines meanwhile, so that each of its chunks starts at once.
    let (index, ahead) = std::thread::scope(|scope| {
        let ahead = scope.spawn(|| count_ahead(dataset, threads));
        let index = ItemIndex::of(&buffered, Vec::new());
        (index, ahead.join().expect("counting does not panic"))
    });
    let index = index?;
    // A repeat under `error` is reported by the table, with its lines.
    if items_dataset.duplicates == Duplicates::Error && index.repeats_a_key() {
        return Err(Fallback);
    }
    // Items fold in item order with their numbers as ordinals (`Folding`), as
    // the parts number the items they score.
    let lines_by_number = plan.keep_items && index.in_report_order();
    if lines_by_number {
        chunks
            .iter_mut()
            .for_each(|c| c.state.run.lines.spool().order_by_ordinal());
    }
    let layout = Layout::of(plan);
    let streamed = Streamed {
        plan,
        roles,
        dataset,
        index: &index,
        layout: &layout,
        limit,
        lines_by_number,
    };
    let (parts, read) = read_chunked_ahead(
        dataset,
        threads,
        ahead,
        || streamed.part(),
        |part, record| streamed.record(part, record),
    )
    .map_err(|_| Fallback)?;
    if parts.iter().any(|p| p.stop.is_some()) {
        return Err(Fallback);
    }
    let mut parts: Vec<Part<'_>> = parts.into_iter().map(|p| p.state).collect();
    if !parts.iter_mut().all(|part| streamed.finish(part)) {
        return Err(Fallback);
    }
    let mut outcome = DatasetOutcome {
        read,
        ..DatasetOutcome::default()
    };
    let mut winners: Vec<Option<(u32, Saved)>> = vec![None; index.len()];
    let table_size = merge_parts(dataset, &index, &mut parts, 0, &mut outcome, &mut winners)?;
    let mut kept: Vec<Kept> = parts.into_iter().map(Part::kept).collect();

    // Every item folded in item order, into the chunk it was read in; the
    // chunks on threads of their own, as they were read.
    let folding = Folding {
        kept: &kept,
        layout: &layout,
        roles,
        join: dataset.join,
    };
    let mut starts = Vec::with_capacity(buffered.len());
    let mut start = 0;
    for items in &buffered {
        starts.push(start);
        start += items.len();
    }
    // On the run's threads, not one per chunk: a file is read in several
    // chunks per thread.
    let work: Vec<_> = (chunks.iter_mut().zip(&buffered).zip(starts))
        .map(|work| Mutex::new(Some(work)))
        .collect();
    let folded: Vec<Result<Folded, Fallback>> = map_in_parallel(threads, work.len(), |c| {
        let taken = work[c].lock().expect("never poisoned").take();
        let ((chunk, items), start) = taken.expect("each chunk folded once");
        let winners = &winners[start..start + items.len()];
        let mut folded = Folded::default();
        for (i, ((key, record), winner)) in items.iter().zip(winners).enumerate() {
            let number = (start + i) as u32;
            let item = (key.as_ref(), record, number, *winner);
            folding.fold(&mut chunk.state, item, &mut folded)?;
        }
        Ok(folded)
    });
    let folded = Folded::merge(folded, &mut outcome)?;
    let pass = pass_of_folded(
        plan, threads, chunks, folded, outcome, items_read, &mut kept, table_size,
    )?;
    // The items' records and the streamed side's scores are freed while the
    // run goes on to its intervals and reports, or left to the exit of a
    // process that ends with the run: a streamed pass is its spec's only one
    // (`applies`: a spec with runs, a pass per run, is never streamed).
    drop(index);
    crate::base::deferred::drop_at_exit((buffered, kept, winners));
    Ok(pass)
}

/// The pass from the items folded chunk by chunk with the streamed dataset's
/// scores (its outcome `outcome`, its parts' values `kept`, `table_size` keys
/// seen): the chunks merged in file order as the ordinary pass merges them,
/// and each item's line of items.jsonl completed from the parts.
#[allow(clippy::too_many_arguments)]
pub(super) fn pass_of_folded<'p>(
    plan: &'p Plan,
    threads: usize,
    chunks: Vec<Chunk<ItemChunk<'p, '_>>>,
    folded: Folded,
    outcome: DatasetOutcome,
    items_read: ReadStats,
    kept: &mut [Kept],
    table_size: usize,
) -> Result<Pass<'p>, Fallback> {
    let items_dataset = &plan.datasets[plan.items_dataset.index()];
    let mut outcomes = vec![outcome, DatasetOutcome::default()];
    let mut items = merge_items(
        plan,
        items_dataset,
        chunks,
        items_read,
        0,
        threads,
        &mut outcomes,
    )
    .map_err(|_| Fallback)?;
    items.run.lines_of(kept)?;
    if folded.lists_unshown(&items.run.offenders) {
        return Err(Fallback);
    }
    Ok(Pass::of(plan, outcomes, &[table_size], items.run))
}

/// The parts of the streamed dataset (or of one partition of it), in file
/// order, merged into what one reader would have kept of each key: counts go
/// to `outcome`, and each item scored gets its winning score in `winners`
/// (by item number), the part named by its place in `parts` from `first_part`.
/// Returns how many distinct keys the parts saw.
pub(super) fn merge_parts(
    dataset: &DatasetPlan,
    index: &ItemIndex<'_>,
    parts: &mut [Part<'_>],
    first_part: usize,
    outcome: &mut DatasetOutcome,
    winners: &mut [Option<(u32, Saved)>],
) -> Result<usize, Fallback> {
    let mut seen = SeenIds::new(index.key_count());
    let mut unmatched: FastMap<&Key, ()> = FastMap::default();
    for (p, part) in parts.iter().enumerate() {
        outcome.keyless += part.keyless;
        outcome.duplicates += part.duplicates;
        let mut repeats = seen.add_all(&part.seen);
        for key in part.unmatched.keys() {
            repeats += usize::from(unmatched.insert(key, ()).is_some());
        }
        if repeats > 0 && dataset.duplicates == Duplicates::Error {
            return Err(Fallback);
        }
        outcome.duplicates += repeats;
        let p = u32::try_from(first_part + p).map_err(|_| Fallback)?;
        for &(item, saved) in &part.scored {
            let winner = &mut winners[index.number(item) as usize];
            if dataset.duplicates == Duplicates::Last || winner.is_none() {
                *winner = Some((p, saved));
            }
        }
    }
    outcome.unmatched += unmatched.len();
    let keys = seen.len() + unmatched.len();
    // Each part's lines of items.jsonl: only those of winning scores are kept.
    for (p, part) in (first_part..).zip(parts.iter_mut()) {
        if part.lines.pushed() == 0 {
            continue;
        }
        let won = |&(item, saved): &(u32, Saved)| {
            winners[index.number(item) as usize] == Some((p as u32, saved))
        };
        let keep = part.scored.iter().map(won).collect();
        part.lines.keep_only(keep);
    }
    Ok(keys)
}

impl Part<'_> {
    /// What the fold reads of this part, once merged.
    pub(super) fn kept(self) -> Kept {
        let mut lines = self.lines;
        lines.seal();
        Kept {
            arena: self.arena,
            shown: self.shown,
            lines,
        }
    }
}

/// A part's scores and offenders' shown values, kept until they are folded.
pub(super) struct Kept {
    arena: ScoreArena,
    shown: Shown,
    lines: LineSpool,
}

impl RunState<'_> {
    /// Adds the lines of items.jsonl that the parts `kept` scored (the items'
    /// chunks kept only those of items without a record).
    pub(super) fn lines_of(&mut self, kept: &mut [Kept]) -> Result<(), Fallback> {
        for kept in kept {
            self.lines.add(std::mem::take(&mut kept.lines), 0);
        }
        // The ordinary pass reports a temporary file that failed.
        match self.lines.spill_error() {
            Some(_) => Err(Fallback),
            None => Ok(()),
        }
    }
}

/// What folding the scores needs.
pub(super) struct Folding<'s> {
    pub(super) kept: &'s [Kept],
    pub(super) layout: &'s Layout,
    pub(super) roles: &'s Roles,
    pub(super) join: Join,
}

/// Items folded: items without a record, skipped ones (an inner join), and
/// offenders whose shown values were not kept (by line and key).
#[derive(Default)]
pub(super) struct Folded {
    missing: usize,
    skipped: usize,
    unshown: Vec<(u32, Option<Key>)>,
}

impl Folded {
    /// The chunks' folds together, their counts added to `outcome`.
    pub(super) fn merge(
        folded: impl IntoIterator<Item = Result<Folded, Fallback>>,
        outcome: &mut DatasetOutcome,
    ) -> Result<Folded, Fallback> {
        let mut total = Folded::default();
        for folded in folded {
            let folded = folded?;
            outcome.missing += folded.missing;
            outcome.skipped_items += folded.skipped;
            total.unshown.extend(folded.unshown);
        }
        Ok(total)
    }

    /// Whether the offenders listed include one whose shown values were dropped.
    pub(super) fn lists_unshown(&self, offenders: &[ItemRow]) -> bool {
        let unshown: FastMap<(u32, Option<&Key>), ()> = (self.unshown.iter())
            .map(|(line, key)| ((*line, key.as_ref()), ()))
            .collect();
        (offenders.iter()).any(|row| unshown.contains_key(&(row.line, row.key.as_ref())))
    }
}

/// An item to fold: its key, record, number, and winning score (if any).
pub(super) type ToFold<'r> = (Option<&'r Key>, &'r Record, u32, Option<(u32, Saved)>);

impl Folding<'_> {
    /// Folds one item, with its winning score, into `chunk`'s state.
    pub(super) fn fold(
        &self,
        chunk: &mut ItemChunk<'_, '_>,
        (key, record, number, winner): ToFold<'_>,
        folded: &mut Folded,
    ) -> Result<(), Fallback> {
        let plan = chunk.plan;
        let line_kept = match winner {
            Some((p, saved)) => {
                let kept = &self.kept[p as usize];
                let score = &mut chunk.scorer.score;
                kept.arena
                    .restore(plan, (self.layout, self.roles), saved, score);
                // An offender the chunk would not list needs no shown values.
                if score.offender && !chunk.run.offender_is_cut(key, record.line) {
                    let rank = Rank {
                        key: key.cloned(),
                        line: record.line,
                        item: number,
                    };
                    if !kept.shown.restore(self.layout, &rank, score) {
                        folded.unshown.push((record.line, key.cloned()));
                    }
                }
                true
            }
            None => {
                folded.missing += 1;
                if self.join == Join::Inner {
                    folded.skipped += 1;
                    return Ok(());
                }
                chunk
                    .scorer
                    .score(&[None, Some(record)])
                    .map_err(|_| Fallback)?;
                false
            }
        };
        let ordinal = u64::from(number);
        let score = &chunk.scorer.score;
        (chunk.run)
            .fold(score, key, record.line, ordinal, line_kept)
            .map_err(|_| Fallback)
    }
}
