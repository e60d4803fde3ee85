//! A grace hash join, for when the items would not fit in the memory budget
//! (`--max-memory`). Both datasets are read once and every keyed record's
//! projected fields are written to a temporary file of its key's partition
//! (`data::spill`), so that all the records of a key land in one partition, in
//! file order. Each partition's items are then read into memory and its other
//! records streamed past them exactly as the streamed join does (`streamed`),
//! keeping only each item's winning score; the items' records are finally
//! read back from their partitions in item order (each chunk's files merged by
//! item number) and folded with those scores. Every number and file is byte for
//! byte what the in-memory join gives; whatever would be reported (a malformed
//! record, a repeated key under `duplicates: error`, an item that does not
//! evaluate) makes it fall back, like the streamed join, to the ordinary pass,
//! which reports it.
//!
//! Memory holds one partition's items and a few bytes per item; disk holds the
//! projected records once.

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
use crate::data::{read_chunked_per_thread, validate, Chunk, Flow};
use crate::eval::error::EvalError;
use crate::eval::item::ItemChunk;
use crate::eval::item_index::ItemIndex;
use crate::eval::item_lines::LineLimit;
use crate::eval::keys::key_of;
use crate::eval::outcome::DatasetOutcome;
use crate::eval::pass::Pass;
use crate::eval::score::saved::{Layout, Saved};
use crate::eval::score::Roles;
use crate::eval::streamed::{
    merge_parts, pass_of_folded, Fallback, Folded, Folding, Kept, Part, Streamed,
};
use crate::ir::{DatasetId, Record};
use crate::plan::Plan;
use crate::spec::Duplicates;

/// Bytes of memory the streamed join holds per byte of the items' file: the
/// items' records as values, their index and their scores. Measured on the
/// realistic profile at 1M and 10M items (about 3); rounded up.
const MEMORY_PER_ITEM_BYTE: u64 = 4;

/// More partitions than this cost more in open files than they save.
const MAX_PARTITIONS: u64 = 64;

/// How many partitions the items need to fit `budget` bytes, when they do not
/// fit whole: one partition's items take at most half of it, the other half is
/// for the scores kept and the reading.
pub(super) fn partitions_needed(items_bytes: u64, budget: u64) -> Option<usize> {
    let needed = items_bytes.saturating_mul(MEMORY_PER_ITEM_BYTE);
    if needed <= budget {
        return None;
    }
    let per_partition = (budget / 2).max(1);
    Some(needed.div_ceil(per_partition).clamp(2, MAX_PARTITIONS) as usize)
}

/// Why a plan's join cannot be partitioned, if it cannot.
pub(super) fn cannot_partition(plan: &Plan) -> Option<&'static str> {
    if plan.has_runs() {
        Some("it reads runs")
    } else if plan.items_dataset.index() != 1 {
        Some("its items join more than one dataset")
    } else if matches!(
        plan.datasets[1].duplicates,
        Duplicates::First | Duplicates::Last
    ) {
        Some("its items keep the first or last of repeated keys")
    } else if !std::fs::metadata(&plan.datasets[1].path).is_ok_and(|m| m.is_file()) {
        Some("its items are not a file that can be read twice")
    } else {
        None
    }
}

/// The partition of a key: the same for every run and machine.
fn partition_of(key: &Key, partitions: usize) -> usize {
    let hash = foldhash::fast::FixedState::with_seed(0x9e37_79b9).hash_one(key);
    ((u128::from(hash) * partitions as u128) >> 64) as usize
}

/// Why the pass did not finish: the ordinary pass can say it, or writing the
/// temporary files failed.
pub(super) enum Unfinished {
    Fallback,
    Failed(Diagnostic),
}

impl From<Fallback> for Unfinished {
    fn from(_: Fallback) -> Self {
        Unfinished::Fallback
    }
}

/// The temporary files of one chunk of a dataset as read: one per partition,
/// and for the items one more, of the records without a key (folded like the
/// others, joined to nothing).
struct Writers {
    partitions: usize,
    paths: Vec<PathBuf>,
    files: Vec<BufWriter<File>>,
    writer: RecordWriter,
    /// Records read, keyed or not (an item's number within the chunk).
    records: u32,
    keyless: usize,
    failed: Option<Diagnostic>,
}

/// Where the partition files go, and how many partitions there are.
struct Spill {
    dir: tempfile::TempDir,
    partitions: usize,
    files: AtomicUsize,
}

impl Spill {
    fn writers(&self, name: &str, keyless_file: bool) -> Writers {
        let chunk = self.files.fetch_add(1, Ordering::Relaxed);
        let mut writers = Writers {
            partitions: self.partitions,
            paths: Vec::with_capacity(self.partitions),
            files: Vec::with_capacity(self.partitions),
            writer: RecordWriter::default(),
            records: 0,
            keyless: 0,
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
    fn record(&mut self, dataset: DatasetId, plan: &Plan, record: Record) -> Flow {
        let plan_dataset = &plan.datasets[dataset.index()];
        validate(plan_dataset, dataset, &record, &plan.locations)?;
        let key = key_of(plan_dataset, dataset, &record, &plan.locations)?;
        let number = self.records;
        self.records += 1;
        if self.failed.is_some() {
            return Ok(ControlFlow::Break(()));
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

    fn finish(&mut self) -> Result<(), Diagnostic> {
        if let Some(failed) = self.failed.take() {
            return Err(failed);
        }
        for (file, path) in self.files.iter_mut().zip(&self.paths) {
            file.flush().map_err(|e| spill_failed(path, &e))?;
        }
        self.files.clear();
        Ok(())
    }
}

/// Reads `dataset` (at `id`) into partition files, in chunks of `threads`.
fn partition(
    spill: &Spill,
    plan: &Plan,
    id: DatasetId,
    threads: usize,
) -> Result<(Vec<Writers>, crate::data::ReadStats), Unfinished> {
    let dataset = &plan.datasets[id.index()];
    let name = if id == plan.items_dataset {
        "items"
    } else {
        "joined"
    };
    // A chunk's writers keep a file per partition open, with its buffer, until
    // the read ends: one chunk per thread.
    let items = id == plan.items_dataset;
    let (chunks, read) = read_chunked_per_thread(
        dataset,
        threads,
        || spill.writers(name, items),
        |writers, record| writers.record(id, plan, record),
    )
    .map_err(|_| Fallback)?;
    let mut all = Vec::with_capacity(chunks.len());
    for mut chunk in chunks {
        chunk.state.finish().map_err(Unfinished::Failed)?;
        if chunk.stop.is_some() {
            return Err(Unfinished::Fallback);
        }
        all.push(chunk.state);
    }
    Ok((all, read))
}

/// The records of one partition file, read through a buffer of `capacity` bytes.
struct PartitionFile<'a> {
    path: &'a Path,
    records: RecordReader<BufReader<File>>,
}

impl<'a> PartitionFile<'a> {
    fn open(path: &'a Path, capacity: usize) -> Result<Self, Unfinished> {
        let file = File::open(path).map_err(|e| Unfinished::Failed(spill_failed(path, &e)))?;
        Ok(PartitionFile {
            path,
            records: RecordReader::new(BufReader::with_capacity(capacity, file)),
        })
    }

    /// The next record and its number; `None` at the end.
    fn next(&mut self, slots: usize) -> Result<Option<(u32, Record)>, Unfinished> {
        (self.records.next(slots)).map_err(|e| Unfinished::Failed(spill_failed(self.path, &e)))
    }

    /// Deletes the file, read for the last time (its disk is given back now,
    /// not when the whole folder is).
    fn remove(self) -> Result<(), Unfinished> {
        let path = self.path;
        drop(self);
        std::fs::remove_file(path).map_err(|e| Unfinished::Failed(spill_failed(path, &e)))
    }
}

/// Reads back one partition file, handing each record and its number to
/// `each`; deletes it after when it is read for the last time.
fn read_back(
    path: &Path,
    slots: usize,
    last: bool,
    mut each: impl FnMut(u32, Record) -> Result<(), Unfinished>,
) -> Result<(), Unfinished> {
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
    fn of(item_files: &[Writers]) -> Result<Self, Fallback> {
        let mut numbering = Numbering {
            chunk_starts: Vec::with_capacity(item_files.len()),
            total: 0,
        };
        for writers in item_files {
            numbering.chunk_starts.push(numbering.total);
            numbering.total = (numbering.total)
                .checked_add(writers.records)
                .ok_or(Fallback)?;
        }
        Ok(numbering)
    }
}

/// What joining the partitions one by one keeps: the winning score of every
/// item (by number), the parts' scores, and what was seen of the joined dataset.
struct Joined {
    winners: Vec<Option<(u32, Saved)>>,
    kept: Vec<Kept>,
    outcome: DatasetOutcome,
    table_size: usize,
}

/// The pass, with both datasets partitioned to temporary files under
/// `partitions`; see the module's comment.
pub(super) fn spilled_pass<'p>(
    plan: &'p Plan,
    roles: &'p Roles,
    threads: usize,
    partitions: usize,
    limit: LineLimit,
) -> Result<Pass<'p>, Unfinished> {
    let dir = tempfile::Builder::new()
        .prefix("evalspec-spill-")
        .tempdir()
        .map_err(|e| Unfinished::Failed(spill_failed(&std::env::temp_dir(), &e)))?;
    let spill = Spill {
        dir,
        partitions,
        files: AtomicUsize::new(0),
    };
    let (item_files, items_read) = partition(&spill, plan, plan.items_dataset, threads)?;
    let (joined_files, read) = partition(&spill, plan, DatasetId::new(0), threads)?;
    let numbering = Numbering::of(&item_files)?;
    let layout = Layout::of(plan);
    let mut joined = Joined {
        winners: vec![None; numbering.total as usize],
        kept: Vec::new(),
        outcome: DatasetOutcome {
            read,
            keyless: joined_files.iter().map(|w| w.keyless).sum(),
            ..DatasetOutcome::default()
        },
        table_size: 0,
    };
    for p in 0..partitions {
        let item_paths = item_files.iter().map(|w| w.paths[p].as_path());
        let joined_paths = joined_files.iter().map(|w| w.paths[p].as_path());
        let items = (item_paths.zip(numbering.chunk_starts.iter().copied())).collect();
        let joined_paths = joined_paths.collect();
        join_partition(
            plan,
            roles,
            &layout,
            limit,
            items,
            joined_paths,
            &mut joined,
        )?;
    }
    let pass = refold(
        plan,
        roles,
        threads,
        limit,
        &layout,
        &numbering,
        &item_files,
        joined,
        items_read,
    );
    drop(spill);
    pass
}

/// Joins one partition: its items (the file of each chunk, with the chunk's
/// first item's number) read into memory, its records of the joined dataset
/// (the file of each chunk) streamed past them, one thread per file.
fn join_partition(
    plan: &Plan,
    roles: &Roles,
    layout: &Layout,
    limit: LineLimit,
    item_files: Vec<(&Path, u32)>,
    joined_files: Vec<&Path>,
    joined: &mut Joined,
) -> Result<(), Unfinished> {
    let (dataset, items_dataset) = (&plan.datasets[0], &plan.datasets[1]);
    // Each chunk's file of items read back on a thread of its own, as the
    // joined files are below: read on one, they left the other core idle for
    // a third of the partitioned run of 10M items.
    let slots = items_dataset.projection.slot_count;
    let read = map_in_parallel(item_files.len(), item_files.len(), |f| {
        let (path, start) = item_files[f];
        let (mut items, mut numbers) = (Vec::new(), Vec::new());
        read_back(path, slots, false, |number, record| {
            let key = key_of(items_dataset, plan.items_dataset, &record, &plan.locations)
                .map_err(|_| Fallback)?;
            numbers.push(start + number);
            items.push((key, record));
            Ok(())
        })?;
        Ok::<_, Unfinished>((items, numbers))
    });
    let (mut items, mut numbers) = (Vec::with_capacity(read.len()), Vec::new());
    for file in read {
        let (file_items, file_numbers) = file?;
        items.push(file_items);
        numbers.extend(file_numbers);
    }
    let index = ItemIndex::of(&items, numbers)?;
    if items_dataset.duplicates == Duplicates::Error && index.repeats_a_key() {
        return Err(Unfinished::Fallback);
    }
    let streamed = Streamed {
        plan,
        roles,
        dataset,
        index: &index,
        layout,
        limit,
        // A partition's items are some of the items, numbered among all.
        lines_by_number: false,
    };
    let slots = dataset.projection.slot_count;
    let parts: Vec<Result<Part<'_>, Unfinished>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (joined_files.into_iter())
            .map(|path| {
                let streamed = &streamed;
                scope.spawn(move || {
                    let mut part = streamed.part();
                    read_back(path, slots, true, |_, record| {
                        match streamed.record(&mut part, record) {
                            Ok(ControlFlow::Continue(())) => Ok(()),
                            _ => Err(Unfinished::Fallback),
                        }
                    })?;
                    if !streamed.finish(&mut part) {
                        return Err(Unfinished::Fallback);
                    }
                    Ok(part)
                })
            })
            .collect();
        (handles.into_iter())
            .map(|h| h.join().expect("joining a partition does not panic"))
            .collect()
    });
    let mut parts = parts.into_iter().collect::<Result<Vec<_>, _>>()?;
    let first_part = joined.kept.len();
    joined.table_size += merge_parts(
        dataset,
        &index,
        &mut parts,
        first_part,
        &mut joined.outcome,
        &mut joined.winners,
    )?;
    joined.kept.extend(parts.into_iter().map(Part::kept));
    // The partition's items are freed before the next one's are read (so
    // that one partition's are in memory at a time), each chunk's on a
    // thread of its own: on one, freeing them was a tenth of a partition's
    // time with the other core idle.
    drop(index);
    std::thread::scope(|scope| {
        for chunk in items {
            scope.spawn(move || drop(chunk));
        }
    });
    Ok(())
}

/// The items read back from their partitions in item order, each folded with
/// its winning score, into the pass: each chunk of the first reading wrote its
/// items, numbered in file order, to a file per partition (and one of those
/// without a key), so merging a chunk's files by number gives its items in
/// order; the chunks are folded on the run's threads. The items' file is not
/// read again: its records as projected are what was scored.
#[allow(clippy::too_many_arguments)]
fn refold<'p>(
    plan: &'p Plan,
    roles: &'p Roles,
    threads: usize,
    limit: LineLimit,
    layout: &Layout,
    numbering: &Numbering,
    item_files: &[Writers],
    joined: Joined,
    items_read: crate::data::ReadStats,
) -> Result<Pass<'p>, Unfinished> {
    let (dataset, items_dataset) = (&plan.datasets[0], &plan.datasets[1]);
    let folding = Folding {
        kept: &joined.kept,
        layout,
        roles,
        join: dataset.join,
    };
    let slots = items_dataset.projection.slot_count;
    let folded = map_in_parallel(threads, item_files.len(), |c| {
        let writers = &item_files[c];
        let mut state = ItemChunk::new(plan, roles, items_dataset, &[], limit);
        let mut folded = Folded::default();
        // A chunk's files are all open at once: smaller buffers than one
        // file read alone gets.
        let mut files = (writers.paths.iter())
            .map(|path| PartitionFile::open(path, 64 << 10))
            .collect::<Result<Vec<_>, _>>()?;
        let mut heads = (files.iter_mut())
            .map(|file| file.next(slots))
            .collect::<Result<Vec<_>, _>>()?;
        for n in 0..writers.records {
            // Item n is at the head of one file: each file's numbers rise.
            let f = (heads.iter())
                .position(|head| head.as_ref().is_some_and(|(number, _)| *number == n))
                .ok_or(Fallback)?;
            let (_, record) =
                std::mem::replace(&mut heads[f], files[f].next(slots)?).expect("found above");
            let key = key_of(items_dataset, plan.items_dataset, &record, &plan.locations)
                .map_err(|_| Fallback)?;
            state.keyless += usize::from(key.is_none());
            let number = numbering.chunk_starts[c] + n;
            let winner = joined.winners[number as usize];
            folding.fold(
                &mut state,
                (key.as_ref(), &record, number, winner),
                &mut folded,
            )?;
        }
        if heads.iter().any(Option::is_some) {
            return Err(Unfinished::Fallback);
        }
        files.into_iter().try_for_each(PartitionFile::remove)?;
        Ok((state, folded))
    });
    let (mut chunks, mut folds) = (Vec::with_capacity(folded.len()), Vec::new());
    for chunk in folded {
        let (state, folded) = chunk?;
        chunks.push(Chunk { state, stop: None });
        folds.push(Ok(folded));
    }
    let mut outcome = joined.outcome;
    let folded = Folded::merge(folds, &mut outcome)?;
    let mut kept = joined.kept;
    let table_size = joined.table_size;
    Ok(pass_of_folded(
        plan, threads, chunks, folded, outcome, items_read, &mut kept, table_size,
    )?)
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
