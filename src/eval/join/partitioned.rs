//! The partitioned join (a grace hash join), for items that would not fit in
//! the memory budget (`--max-memory`). Both datasets are read once and every
//! record's projected fields are written to a temporary file of its key's
//! partition (`data::spill`), so that all the records of a key land in one
//! partition, in file order, each item with its number. Each partition is
//! then joined as the index join joins all the items (`index`): its items
//! read into memory, their repeated keys settled by the policy, its records
//! of the other dataset streamed past them, and every item's winning score
//! kept (an item without a record is scored alone there too). The items are
//! finally read back from their partitions in item order (each chunk's files
//! merged by number) and folded with those scores. Every number and file is
//! byte for byte what the table join gives; errors are kept as state and the
//! first by place reported, as the other joins do.
//!
//! Memory holds one partition's items and a few bytes per item; disk holds
//! the projected records once.

use std::fs::File;
use std::hash::BuildHasher;
use std::io::{BufReader, BufWriter, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::base::diagnostic::Diagnostic;
use crate::base::parallel::map_in_parallel;
use crate::base::value::Key;
use crate::data::spill::{RecordReader, RecordWriter};
use crate::data::{read_chunked_per_thread, validate, Flow, ReadStats};
use crate::eval::error::EvalError;
use crate::eval::join::duplicates::{on_repeat, Repeat, Role};
use crate::eval::join::index::{
    finish_run, merge_parts, show_again, too_large, Fold, Folded, Kept, Streamer, Winner,
};
use crate::eval::join::item_index::ItemIndex;
use crate::eval::join::items::Held;
use crate::eval::join::keys::{duplicate_error, key_of, stop_line, FastMap};
use crate::eval::join::Pass;
use crate::eval::outcome::DatasetOutcome;
use crate::eval::physical::Bucket;
use crate::eval::score::saved::Layout;
use crate::eval::score::Roles;
use crate::eval::state::errors::ErrorPlace;
use crate::eval::state::item_lines::LineLimit;
use crate::eval::state::RunState;
use crate::ir::{DatasetId, Record};
use crate::plan::{DatasetPlan, Plan};
use crate::spec::Join;

/// Bytes of memory the index join holds per byte of the items' file: the
/// items' records as values, their index and their scores. Measured on the
/// realistic profile at 1M and 10M items (about 3); rounded up.
const MEMORY_PER_ITEM_BYTE: u64 = 4;

/// More partitions than this cost more in open files than they save.
const MAX_PARTITIONS: u64 = 64;

/// How many partitions the items need to fit `budget` bytes, when they do not
/// fit whole: one partition's items take at most half of it, the other half is
/// for the scores kept and the reading.
pub(in crate::eval) fn partitions_needed(items_bytes: u64, budget: u64) -> Option<usize> {
    let needed = items_bytes.saturating_mul(MEMORY_PER_ITEM_BYTE);
    if needed <= budget {
        return None;
    }
    let per_partition = (budget / 2).max(1);
    Some(needed.div_ceil(per_partition).clamp(2, MAX_PARTITIONS) as usize)
}

/// The partition of a key: the same for every run and machine.
fn partition_of(key: &Key, partitions: usize) -> usize {
    let hash = foldhash::fast::FixedState::with_seed(0x9e37_79b9).hash_one(key);
    ((u128::from(hash) * partitions as u128) >> 64) as usize
}

/// The temporary files of one chunk of a dataset as read: one per partition,
/// and for the items one more, of the records without a key (scored alone).
struct Writers {
    partitions: usize,
    bucket: Option<Bucket>,
    paths: Vec<PathBuf>,
    files: Vec<BufWriter<File>>,
    writer: RecordWriter,
    /// Records read, keyed or not (an item's number within the chunk).
    records: u32,
    keyless: usize,
    /// More records than a chunk numbers.
    too_many: bool,
    failed: Option<Diagnostic>,
}

/// Where the partition files go, and how many partitions there are.
struct Spill {
    dir: tempfile::TempDir,
    partitions: usize,
    files: AtomicUsize,
    /// The keys this evaluation covers; records of others are not written.
    bucket: Option<Bucket>,
}

impl Spill {
    fn writers(&self, name: &str, keyless_file: bool) -> Writers {
        let chunk = self.files.fetch_add(1, Ordering::Relaxed);
        let mut writers = Writers {
            partitions: self.partitions,
            bucket: self.bucket,
            paths: Vec::with_capacity(self.partitions),
            files: Vec::with_capacity(self.partitions),
            writer: RecordWriter::default(),
            records: 0,
            keyless: 0,
            too_many: false,
            failed: None,
        };
        for p in 0..self.partitions + usize::from(keyless_file) {
            let path = self.dir.path().join(format!("{name}-{chunk}-{p}.bin"));
            match File::create(&path) {
                Ok(file) => writers.files.push(BufWriter::with_capacity(64 << 10, file)),
                Err(e) => {
                    writers.failed = Some(spill_failed(&path, &e));
                    break;
                }
            }
            writers.paths.push(path);
        }
        writers
    }
}

fn spill_failed(path: &Path, error: &std::io::Error) -> Diagnostic {
    Diagnostic::of(&EvalError::SpillFailed {
        path: path.display().to_string(),
        error: error.to_string(),
    })
}

impl Writers {
    /// Writes a keyed record to its key's partition, an item without a key to
    /// the file of those; counts it either way.
    fn record(
        &mut self,
        plan: &Plan,
        (id, dataset): (DatasetId, &DatasetPlan),
        record: Record,
    ) -> Flow {
        validate(dataset, id, &record, &plan.locations)?;
        let key = key_of(dataset, id, &record, &plan.locations)?;
        let number = self.records;
        let Some(next) = self.records.checked_add(1).filter(|&n| n < u32::MAX) else {
            self.too_many = true;
            return Ok(ControlFlow::Break(()));
        };
        self.records = next;
        if self.failed.is_some() {
            return Ok(ControlFlow::Break(()));
        }
        if self.bucket.is_some_and(|b| !b.covers(key.as_ref())) {
            return Ok(ControlFlow::Continue(()));
        }
        let p = match key {
            Some(key) => partition_of(&key, self.partitions),
            None => {
                self.keyless += 1;
                if self.files.len() == self.partitions {
                    return Ok(ControlFlow::Continue(()));
                }
                self.partitions
            }
        };
        if let Err(e) = self.writer.write(&mut self.files[p], number, &record) {
            self.failed = Some(spill_failed(&self.paths[p], &e));
            return Ok(ControlFlow::Break(()));
        }
        Ok(ControlFlow::Continue(()))
    }

    fn finish(&mut self, plan: &Plan) -> Result<(), Diagnostic> {
        if let Some(failed) = self.failed.take() {
            return Err(failed);
        }
        if self.too_many {
            return Err(too_large("records in one chunk of a dataset", plan));
        }
        for (file, path) in self.files.iter_mut().zip(&self.paths) {
            file.flush().map_err(|e| spill_failed(path, &e))?;
        }
        self.files.clear();
        Ok(())
    }
}

/// A dataset read into partition files: each chunk's files, what was read,
/// and the error its read stopped at (the first in file order).
struct Partitioned {
    chunks: Vec<Writers>,
    read: ReadStats,
    stop: Option<Diagnostic>,
}

/// Reads `dataset` (at `id`) into partition files, in chunks of `threads`.
fn partition(
    spill: &Spill,
    plan: &Plan,
    (id, dataset): (DatasetId, &DatasetPlan),
    threads: usize,
) -> Result<Partitioned, Diagnostic> {
    let items = id == plan.items_dataset;
    let name = if items { "items" } else { "joined" };
    // A chunk's writers keep a file per partition open, with its buffer, until
    // the read ends: one chunk per thread.
    let (chunks, read) = read_chunked_per_thread(
        dataset,
        threads,
        || spill.writers(name, items),
        |writers, record| writers.record(plan, (id, dataset), record),
    )?;
    let mut partitioned = Partitioned {
        chunks: Vec::with_capacity(chunks.len()),
        read,
        stop: None,
    };
    for mut chunk in chunks {
        chunk.state.finish(plan)?;
        // Chunks come in file order: the first stop is the first in the file.
        if partitioned.stop.is_none() {
            partitioned.stop = chunk.stop;
        }
        partitioned.chunks.push(chunk.state);
    }
    Ok(partitioned)
}

/// The records of one partition file, read through a buffer of `capacity` bytes.
struct PartitionFile<'a> {
    path: &'a Path,
    records: RecordReader<BufReader<File>>,
}

impl<'a> PartitionFile<'a> {
    fn open(path: &'a Path, capacity: usize) -> Result<Self, Diagnostic> {
        let file = File::open(path).map_err(|e| spill_failed(path, &e))?;
        Ok(PartitionFile {
            path,
            records: RecordReader::new(BufReader::with_capacity(capacity, file)),
        })
    }

    /// The next record and its number; `None` at the end.
    fn next(&mut self, slots: usize) -> Result<Option<(u32, Record)>, Diagnostic> {
        (self.records.next(slots)).map_err(|e| spill_failed(self.path, &e))
    }

    /// Deletes the file, read for the last time (its disk is given back now,
    /// not when the whole folder is).
    fn remove(self) -> Result<(), Diagnostic> {
        let path = self.path;
        drop(self);
        std::fs::remove_file(path).map_err(|e| spill_failed(path, &e))
    }
}

/// Reads back one partition file, handing each record and its number to
/// `each`; deletes it after when it is read for the last time.
fn read_back(
    path: &Path,
    slots: usize,
    last: bool,
    mut each: impl FnMut(u32, Record) -> Result<(), Diagnostic>,
) -> Result<(), Diagnostic> {
    let mut file = PartitionFile::open(path, 256 << 10)?;
    while let Some((number, record)) = file.next(slots)? {
        each(number, record)?;
    }
    if last {
        file.remove()?;
    }
    Ok(())
}

/// The items' numbering across the chunks they were read in: each chunk's
/// first item's number, and how many items there are.
struct Numbering {
    chunk_starts: Vec<u32>,
    total: u32,
}

impl Numbering {
    fn of(item_files: &[Writers], plan: &Plan) -> Result<Self, Diagnostic> {
        let mut numbering = Numbering {
            chunk_starts: Vec::with_capacity(item_files.len()),
            total: 0,
        };
        for writers in item_files {
            numbering.chunk_starts.push(numbering.total);
            numbering.total = (numbering.total)
                .checked_add(writers.records)
                .filter(|&n| n < u32::MAX)
                .ok_or_else(|| too_large("items", plan))?;
        }
        Ok(numbering)
    }
}

/// What joining the partitions one by one keeps.
struct Joined {
    /// Every item's winning score (by number).
    winners: Vec<Winner>,
    /// Under `duplicates: last`, the line of the record that replaced an
    /// item's (by the item's number): reports name the last record's line.
    replaced_lines: FastMap<u32, u32>,
    kept: Vec<Kept>,
    outcome: DatasetOutcome,
    /// Items dropped as repeats of an earlier key.
    item_duplicates: usize,
    table_size: usize,
    /// The first error of the joined dataset, and of the items' keys.
    joined_error: Option<Diagnostic>,
    item_repeat: Option<Diagnostic>,
}

impl Joined {
    fn joined_error(&mut self, error: Diagnostic) {
        let earlier = |e: &Diagnostic| stop_line(e) <= stop_line(&error);
        if !self.joined_error.as_ref().is_some_and(earlier) {
            self.joined_error = Some(error);
        }
    }
}

/// The join of one run whose items are `datasets[1]` and other dataset
/// `datasets[0]`, both partitioned to temporary files under `partitions`;
/// see the module's comment.
pub(in crate::eval) fn partitioned_join<'p>(
    plan: &'p Plan,
    roles: &'p Roles,
    datasets: [&DatasetPlan; 2],
    (threads, bucket): (usize, Option<Bucket>),
    partitions: usize,
    limit: LineLimit,
) -> Result<Pass<'p>, Vec<Diagnostic>> {
    let dir = tempfile::Builder::new()
        .prefix("evalspec-spill-")
        .tempdir()
        .map_err(|e| vec![spill_failed(&std::env::temp_dir(), &e)])?;
    let spill = Spill {
        dir,
        partitions,
        files: AtomicUsize::new(0),
        bucket,
    };
    let [joined_dataset, items_dataset] = datasets;
    let items = (plan.items_dataset, items_dataset);
    let item_files = partition(&spill, plan, items, threads).map_err(|e| vec![e])?;
    let joined_files = partition(&spill, plan, (DatasetId::new(0), joined_dataset), threads)
        .map_err(|e| vec![e])?;
    let numbering = Numbering::of(&item_files.chunks, plan).map_err(|e| vec![e])?;
    let mut joined = Joined {
        winners: vec![Winner::NONE; numbering.total as usize],
        replaced_lines: FastMap::default(),
        kept: Vec::new(),
        outcome: DatasetOutcome {
            read: joined_files.read.clone(),
            keyless: joined_files.chunks.iter().map(|w| w.keyless).sum(),
            ..DatasetOutcome::default()
        },
        item_duplicates: 0,
        table_size: 0,
        joined_error: None,
        item_repeat: None,
    };
    // A record of the joined dataset that cannot be read is its first error,
    // unless a repeated key comes before it (found only by joining).
    let repeats_matter = on_repeat(joined_dataset.duplicates, Role::LookedUp) == Repeat::Error;
    if let Some(stop) = joined_files.stop.clone() {
        if !repeats_matter {
            return Ok(Pass::stopped(plan, roles, limit, 0, stop));
        }
        joined.joined_error(stop);
    }
    let layout = Layout::of(plan);
    let join = PartitionJoin {
        plan,
        roles,
        datasets,
        layout: &layout,
        limit,
    };
    // The items without a key are a partition of their own, joined to nothing.
    for p in 0..=partitions {
        let item_paths = item_files.chunks.iter().filter_map(|w| w.paths.get(p));
        let items = (item_paths.map(PathBuf::as_path))
            .zip(numbering.chunk_starts.iter().copied())
            .collect();
        let joined_paths = match p < partitions {
            true => joined_files
                .chunks
                .iter()
                .map(|w| w.paths[p].as_path())
                .collect(),
            false => Vec::new(),
        };
        join.partition(items, joined_paths, &mut joined)?;
    }
    if let Some(error) = joined.joined_error {
        return Ok(Pass::stopped(plan, roles, limit, 0, error));
    }
    let mut run = refold(&join, threads, &numbering, &item_files.chunks, &joined)?;
    let rank = plan.items_dataset.index();
    if let Some(stop) = item_files.stop {
        run.errors
            .stop(ErrorPlace::reader(rank, stop_line(&stop)), stop);
    }
    if let Some(repeat) = joined.item_repeat {
        run.errors
            .stop(ErrorPlace::reader(rank, stop_line(&repeat)), repeat);
    }
    finish_run(&mut run, joined.kept)?;
    let items_outcome = DatasetOutcome {
        read: item_files.read,
        keyless: item_files.chunks.iter().map(|w| w.keyless).sum(),
        duplicates: joined.item_duplicates,
        ..DatasetOutcome::default()
    };
    let outcomes = vec![joined.outcome, items_outcome];
    let pass = Pass::of(plan, outcomes, &[joined.table_size], run);
    drop(spill);
    Ok(pass)
}

/// What joining each partition needs.
struct PartitionJoin<'a, 'p> {
    plan: &'p Plan,
    roles: &'p Roles,
    datasets: [&'a DatasetPlan; 2],
    layout: &'a Layout,
    limit: LineLimit,
}

impl<'a, 'p> PartitionJoin<'a, 'p> {
    /// Joins one partition: its items (the file of each chunk, with the
    /// chunk's first item's number) read into memory, its records of the
    /// joined dataset (the file of each chunk) streamed past them, one thread
    /// per file; then each item without a record scored alone.
    fn partition(
        &self,
        item_files: Vec<(&Path, u32)>,
        joined_files: Vec<&Path>,
        joined: &mut Joined,
    ) -> Result<(), Vec<Diagnostic>> {
        let plan = self.plan;
        let [joined_dataset, items_dataset] = self.datasets;
        // Each chunk's file of items read back on a thread of its own, as the
        // joined files are below: read on one, they left the other core idle
        // for a third of the partitioned run of 10M items.
        let slots = items_dataset.projection.slot_count;
        let read = map_in_parallel(item_files.len(), item_files.len(), |f| {
            let (path, start) = item_files[f];
            let mut items = Vec::new();
            read_back(path, slots, false, |number, record| {
                let key = key_of(items_dataset, plan.items_dataset, &record, &plan.locations)?;
                let place = u64::from(start + number);
                items.push(Held { key, record, place });
                Ok(())
            })?;
            Ok::<_, Diagnostic>(items)
        });
        let mut all: Vec<Held> = Vec::new();
        for file in read {
            all.extend(file.map_err(|e| vec![e])?);
        }
        let items = self.settle_repeats(all, joined);
        let numbers: Vec<u32> = items.iter().map(|held| held.place as u32).collect();
        let index = ItemIndex::of(&items, numbers).ok_or_else(|| vec![too_large("items", plan)])?;
        let streamer = Streamer {
            plan,
            roles: self.roles,
            datasets: self.datasets,
            index: &index,
            layout: self.layout,
            limit: self.limit,
            // A partition's items are some of the items, numbered among all.
            lines_by_number: false,
            // Only the bucket's records were written to the partitions.
            bucket: None,
        };
        let slots = joined_dataset.projection.slot_count;
        let parts = map_in_parallel(joined_files.len(), joined_files.len(), |f| {
            let mut part = streamer.part();
            let mut stop = None;
            read_back(joined_files[f], slots, true, |_, record| {
                if stop.is_none() {
                    match streamer.record(&mut part, record) {
                        Ok(ControlFlow::Continue(())) => {}
                        Ok(ControlFlow::Break(())) => stop = Some(None),
                        Err(error) => stop = Some(Some(error)),
                    }
                }
                Ok(())
            })?;
            Ok::<_, Diagnostic>(streamer.finish(part, stop.flatten()))
        });
        let parts = parts.into_iter().collect::<Result<Vec<_>, _>>();
        let parts = parts.map_err(|e| vec![e])?;
        let first_part = joined.kept.len();
        let mut outcome = DatasetOutcome::default();
        match merge_parts(
            &streamer,
            parts,
            first_part,
            &mut outcome,
            &mut joined.winners,
        ) {
            Ok(Ok(merged)) => {
                joined.table_size += merged.keys;
                joined.kept.extend(merged.kept);
            }
            Ok(Err(error)) => joined.joined_error(error),
            Err(fatal) => return Err(vec![fatal]),
        }
        joined.outcome.duplicates += outcome.duplicates;
        joined.outcome.unmatched += outcome.unmatched;
        joined.outcome.keyless += outcome.keyless;
        // Items without a record: scored alone, or skipped by an inner join.
        let mut alone = streamer.part();
        for item in 0..index.len() as u32 {
            let winner = &mut joined.winners[index.number(item) as usize];
            if *winner != Winner::NONE {
                continue;
            }
            joined.outcome.missing += 1;
            if joined_dataset.join == Join::Inner {
                joined.outcome.skipped_items += 1;
                *winner = Winner::SKIPPED;
                continue;
            }
            if streamer.score_item(&mut alone, item, None).is_break() {
                return Err(vec![too_large("scores in one part of the join", plan)]);
            }
        }
        let part = u32::try_from(joined.kept.len())
            .map_err(|_| vec![too_large("parts of the join", plan)])?;
        for &(item, saved) in alone.scored() {
            joined.winners[index.number(item) as usize] = Winner::of(part, saved);
        }
        joined.kept.push(alone.into_kept());
        // The partition's items are freed before the next one's are read (so
        // that one partition's are in memory at a time), half of them on a
        // thread of their own: on one, freeing them was a tenth of a
        // partition's time with the other core idle.
        drop(index);
        let mut items = items;
        let half = items.split_off(items.len() / 2);
        std::thread::scope(|scope| {
            let apart = std::thread::Builder::new().spawn_scoped(scope, move || drop(half));
            drop(items);
            // Had no thread started, the half was dropped with the error.
            drop(apart);
        });
        Ok(())
    }

    /// The partition's items (every record of their keys, in number order)
    /// with repeated keys settled by the policy: a dropped item's winner is
    /// [`Winner::DROPPED`]; under `last` the last record replaces the first
    /// at the first one's number; under `error` the first repeat is noted.
    fn settle_repeats(&self, items: Vec<Held>, joined: &mut Joined) -> Vec<Held> {
        let dataset = self.datasets[1];
        let repeat = on_repeat(dataset.duplicates, Role::Items);
        if repeat == Repeat::Both {
            return items;
        }
        let mut at: FastMap<Key, usize> = FastMap::default();
        let mut kept: Vec<Held> = Vec::with_capacity(items.len());
        for held in items {
            let Some(key) = &held.key else {
                kept.push(held);
                continue;
            };
            let Some(&first) = at.get(key) else {
                at.insert(key.clone(), kept.len());
                kept.push(held);
                continue;
            };
            let earlier = &mut kept[first];
            match repeat {
                Repeat::Error => {
                    let line = held.record.line;
                    let error = duplicate_error(dataset, key, earlier.record.line, line);
                    let before = |e: &Diagnostic| stop_line(e) <= line as usize;
                    if !joined.item_repeat.as_ref().is_some_and(before) {
                        joined.item_repeat = Some(error);
                    }
                    kept.push(held);
                }
                Repeat::Later => {
                    joined.item_duplicates += 1;
                    joined.winners[held.place as usize] = Winner::DROPPED;
                    let number = earlier.place as u32;
                    joined.replaced_lines.insert(number, held.record.line);
                    earlier.record = held.record;
                }
                Repeat::Earlier | Repeat::Both => {
                    joined.item_duplicates += 1;
                    joined.winners[held.place as usize] = Winner::DROPPED;
                }
            }
        }
        kept
    }
}

/// The items read back from their partitions in item order, each folded with
/// its winning score: each chunk of the first reading wrote its items,
/// numbered in file order, to a file per partition (and one of those without
/// a key), so merging a chunk's files by number gives its items in order; the
/// chunks are folded on the run's threads. The items' file is not read again:
/// its records as projected are what was scored.
fn refold<'p>(
    join: &PartitionJoin<'_, 'p>,
    threads: usize,
    numbering: &Numbering,
    item_files: &[Writers],
    joined: &Joined,
) -> Result<RunState<'p>, Vec<Diagnostic>> {
    let plan = join.plan;
    let items_dataset = join.datasets[1];
    let fold = Fold {
        plan,
        roles: join.roles,
        datasets: join.datasets,
        kept: &joined.kept,
        layout: join.layout,
        limit: join.limit,
        lines_by_number: false,
    };
    let slots = items_dataset.projection.slot_count;
    let folded = map_in_parallel(threads, item_files.len(), |c| {
        let writers = &item_files[c];
        let mut folding = fold.start();
        // The keys and lines of offenders whose shown values were not kept.
        let mut unshown: Vec<(Key, u32)> = Vec::new();
        // A chunk's files are all open at once: smaller buffers than one
        // file read alone gets.
        let mut files = (writers.paths.iter())
            .map(|path| PartitionFile::open(path, 64 << 10))
            .collect::<Result<Vec<_>, _>>()?;
        let mut heads = (files.iter_mut())
            .map(|file| file.next(slots))
            .collect::<Result<Vec<_>, _>>()?;
        // Each file's numbers rise: the least head is the next item (a
        // bucket's items skip the numbers of other buckets' records).
        let least = |heads: &[Option<(u32, Record)>]| {
            (heads.iter().enumerate())
                .filter_map(|(f, head)| head.as_ref().map(|(n, _)| (*n, f)))
                .min()
        };
        let mut last: Option<u32> = None;
        while let Some((n, f)) = least(&heads) {
            if n >= writers.records || last.is_some_and(|last| n <= last) {
                return Err(lost_item(&writers.paths));
            }
            last = Some(n);
            let (_, mut record) =
                std::mem::replace(&mut heads[f], files[f].next(slots)?).expect("found above");
            let number = numbering.chunk_starts[c] + n;
            let winner = joined.winners[number as usize];
            if winner == Winner::DROPPED || winner == Winner::SKIPPED {
                continue;
            }
            let key = key_of(items_dataset, plan.items_dataset, &record, &plan.locations)?;
            if let Some(&line) = joined.replaced_lines.get(&number) {
                record.line = line;
            }
            let held = Held {
                key,
                record,
                place: u64::from(number),
            };
            let before = folding.folded.unshown.len();
            fold.item(&mut folding, &held, number, winner);
            if folding.folded.unshown.len() > before {
                folding.folded.unshown.clear();
                if let Some(key) = held.key {
                    unshown.push((key, held.record.line));
                }
            }
        }
        files.into_iter().try_for_each(PartitionFile::remove)?;
        Ok((folding.state, folding.folded, unshown))
    });
    let mut states = Vec::with_capacity(folded.len());
    let mut unshown = Vec::new();
    for folding in folded {
        let (state, folded, chunk_unshown) = folding.map_err(|e| vec![e])?;
        states.push(state);
        let Folded { .. } = folded;
        unshown.extend(chunk_unshown);
    }
    let mut run = RunState::merge_in_order(states, threads);
    show_again(&fold, unshown, &mut run)?;
    Ok(run)
}

/// A partition file that does not hold the items its chunk numbered: the
/// temporary files were changed while the run read them.
fn lost_item(paths: &[PathBuf]) -> Diagnostic {
    let path = paths.first().map(|p| p.as_path()).unwrap_or(Path::new(""));
    spill_failed(
        path,
        &std::io::Error::other("a partition file lost an item; were the temporary files changed?"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_that_fit_are_not_partitioned() {
        assert_eq!(partitions_needed(100, 400), None);
        assert_eq!(partitions_needed(100, 399), Some(3));
        // A gold set of 1.9 GB under 2 GiB: partitions of a quarter of the budget each.
        assert_eq!(partitions_needed(1_900_000_000, 2 << 30), Some(8));
        assert_eq!(partitions_needed(1 << 40, 1), Some(64));
    }

    #[test]
    fn partitions_spread_keys_and_are_stable() {
        let mut counts = [0usize; 8];
        for i in 0..8000 {
            let key = Key::Str(format!("q{i:06}").into());
            counts[partition_of(&key, 8)] += 1;
        }
        assert!(
            counts.iter().all(|&n| (800..1200).contains(&n)),
            "{counts:?}"
        );
        let key = Key::Str("q000042".into());
        assert_eq!(partition_of(&key, 8), partition_of(&key.clone(), 8));
    }
}
