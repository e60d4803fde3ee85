//! How a file is read in parallel: cut into a few chunks per thread (larger
//! first, where the ranges fall: `file.rs`), which a pool of threads takes in
//! file order, each chunk read into a state of its own with its true first
//! line, beside the file's hash.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::Mutex;

use crate::base::diagnostic::Diagnostic;
use crate::base::sha256::Sha256;
use crate::data::file::{count_lines, hash_file, LineBreaks};
use crate::data::progress::Progress;
use crate::plan::DatasetPlan;

/// Below this size a file is read by one thread: splitting would cost more than it
/// saves. A thread costs tens of microseconds, a 256 KiB chunk about a millisecond
/// of parsing, so even a 10k-item run splits (its wall time 0.14 -> 0.09 s against
/// 4 MiB). `EVALSPEC_MIN_CHUNK_BYTES` changes it, so that tests can split small files.
pub(super) fn min_chunk_bytes() -> u64 {
    std::env::var("EVALSPEC_MIN_CHUNK_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(256 << 10)
}

/// Whether a file is hashed on a thread of its own beside its reading: past
/// two chunks' size (a JSONL file on `--threads 1`, a JSON array, a CSV
/// file), where the hash would take a share of the reading thread's time (a
/// fifteenth of a JSONL read, a sixth of a CSV read fed row by row); below
/// it a thread costs more than it saves.
pub(super) fn hash_apart(size: u64) -> bool {
    size >= 2 * min_chunk_bytes()
}

/// Chunks per thread when a file is split: a thread that ends its chunk early
/// takes the next one left, so the threads end together. At 1M items two
/// threads with a chunk each ended up to a third of a second apart (one
/// shared its core with the hash).
pub(super) const CHUNKS_PER_THREAD: usize = 4;

/// How many chunks a file of `size` bytes is read in on `threads` threads,
/// `per_thread` each (one on a thread of its own: splitting would gain
/// nothing).
pub(super) fn chunk_count(threads: usize, per_thread: usize, size: u64) -> usize {
    let threads = threads.clamp(1, 64);
    let wanted = if threads == 1 {
        1
    } else {
        threads * per_thread.max(1)
    };
    wanted.min(
        usize::try_from(size / min_chunk_bytes())
            .unwrap_or(1)
            .max(1),
    )
}

/// Reads `ranges` of the file into states made by `make`, on up to `threads`
/// threads that take the ranges in file order, each the next one left; chunks
/// come back in file order with the file's SHA-256. Taken so, a thread that
/// runs slower (sharing its core with the hash, or on a busier core) reads
/// fewer ranges instead of holding up the end. Every record and error
/// carries its true line number: a range's thread first counts the lines of
/// the range before it and adds them to that range's first line, which the
/// thread reading it passes on (taken earlier, it is never waiting on a later
/// one); so the first range is read at once, the counting overlaps the
/// reading, and the last range is never counted. Or each range starts on its
/// line of `first_lines`, counted ahead.
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
pub(super) fn read_ranges<S: Send, R: Send>(
    dataset: &DatasetPlan,
    size: u64,
    ranges: &[Range<u64>],
    threads: usize,
    first_lines: Option<&[usize]>,
    breaks: LineBreaks,
    make: &(impl Fn() -> S + Sync),
    read_range: &(impl Fn(Range<u64>, usize, &mut S, Option<&mut Sha256>, &Progress) -> R + Sync),
) -> Result<(Vec<(S, R)>, String), Diagnostic> {
    let progress = Progress::default();
    // Range i's first line goes from its reader to range i + 1's; `None`
    // says that a count before it failed (that range's reader reports why).
    let (senders, receivers): (Vec<_>, Vec<_>) = (1..ranges.len())
        .map(|_| std::sync::mpsc::channel::<Option<usize>>())
        .unzip();
    let passes: Vec<_> = (senders.into_iter().map(Some).chain([None]))
        .zip(std::iter::once(None).chain(receivers.into_iter().map(Some)))
        .map(Mutex::new)
        .collect();
    // Several ranges leave the hash to a thread of its own, and so does one
    // range of a large file (`hash_apart`). One small range hashes as it reads.
    let apart = ranges.len() > 1 || hash_apart(size);
    let next_range = &AtomicUsize::new(0);
    let read_one = &|i: usize| {
        let (next, previous) = std::mem::take(&mut *passes[i].lock().expect("never poisoned"));
        let first_line = match (first_lines, previous) {
            (Some(first_lines), _) => Ok(first_lines[i]),
            (None, None) => Ok(0),
            (None, Some(previous)) => {
                let counted = count_lines(dataset, ranges[i - 1].clone(), breaks);
                match (counted, previous.recv()) {
                    (Ok(lines), Ok(Some(before))) => Ok(before + lines),
                    (Err(error), _) => Err(Some(error)),
                    (Ok(_), _) => Err(None),
                }
            }
        };
        if let Some(next) = next {
            // The next range's reader may have stopped waiting; nothing to tell then.
            let _ = next.send(first_line.as_ref().ok().copied());
        }
        let first_line = first_line?;
        let mut state = make();
        let range = ranges[i].clone();
        let inline = !apart && first_line == 0 && range.end == size;
        let mut hasher = inline.then(Sha256::new);
        let result = read_range(range, first_line, &mut state, hasher.as_mut(), &progress);
        Ok((state, result, hasher.map(Sha256::hex)))
    };
    let (results, parallel_sha) = std::thread::scope(|scope| {
        if Progress::wanted(dataset, size) {
            scope.spawn(|| progress.show(dataset, size));
        }
        let hasher = apart.then(|| scope.spawn(|| hash_file(dataset)));
        let work = move || {
            let mut read = Vec::new();
            loop {
                let i = next_range.fetch_add(1, AtomicOrdering::Relaxed);
                if i >= ranges.len() {
                    return read;
                }
                read.push((i, read_one(i)));
            }
        };
        // Threads the system cannot start (`ulimit -u`) are done without: the
        // others take their ranges, and with none this thread reads them all.
        let workers: Vec<_> = (0..threads.clamp(1, ranges.len().max(1)))
            .filter_map(|_| std::thread::Builder::new().spawn_scoped(scope, work).ok())
            .collect();
        let mut chunks: Vec<_> = workers
            .into_iter()
            .flat_map(|w| w.join().expect("chunk readers do not panic"))
            .collect();
        chunks.extend(work());
        chunks.sort_unstable_by_key(|&(i, _)| i);
        let sha = hasher.map(|h| h.join().expect("hashing does not panic"));
        progress.finish();
        (chunks, sha)
    });
    let mut out = Vec::with_capacity(results.len());
    let mut inline_sha = None;
    for (_, result) in results {
        match result {
            Ok((state, result, sha)) => {
                inline_sha = inline_sha.or(sha);
                out.push((state, result));
            }
            // The first failed count is the one to report; the ranges after it
            // only say that one failed before them.
            Err(Some(error)) => return Err(error),
            Err(None) => {}
        }
    }
    let sha256 = match (parallel_sha, inline_sha) {
        (Some(sha), _) => sha?,
        (None, Some(sha)) => sha,
        (None, None) => String::new(),
    };
    Ok((out, sha256))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_cut_into_chunks_per_thread_as_its_size_allows() {
        let chunk = min_chunk_bytes();
        assert_eq!(chunk_count(2, CHUNKS_PER_THREAD, 100 * chunk), 8);
        assert_eq!(
            chunk_count(2, 1, 100 * chunk),
            2,
            "a spill's: one per thread"
        );
        assert_eq!(chunk_count(1, CHUNKS_PER_THREAD, 100 * chunk), 1);
        assert_eq!(chunk_count(4, CHUNKS_PER_THREAD, 5 * chunk + 1), 5);
        assert_eq!(chunk_count(4, CHUNKS_PER_THREAD, chunk / 2), 1);
        assert_eq!(chunk_count(500, 1, 1000 * chunk), 64, "threads are capped");
    }
}
