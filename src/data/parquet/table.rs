//! Records from a table in memory (`base::table::Table`): the Arrow record
//! batches a library caller hands over instead of a file. Its columns are
//! found and converted as a Parquet file's are (`Columns`, `Converters`); its
//! rows are read in up to `threads` ranges, each into its own chunk state,
//! merged in row order by the caller, so the outcome does not depend on the
//! thread count. A record's `line` is its row number, from 1.

use std::ops::ControlFlow;

use crate::base::diagnostic::{Diagnostic, Location};
use crate::base::parallel::map_in_parallel;
use crate::base::table::Table;
use crate::data::reader::{Chunk, Flow, ReadStats};
use crate::ir::Record;
use crate::plan::DatasetPlan;

use super::convert::{Context, Converters};
use super::Columns;

/// Rows a thread takes at the least: fewer are read on one.
const MIN_ROWS_PER_THREAD: u64 = 16_384;

/// Reads `table` as `dataset`'s records, on up to `threads` threads.
pub fn read<S: Send>(
    dataset: &DatasetPlan,
    table: &Table,
    threads: usize,
    make: &(impl Fn() -> S + Sync),
    sink: &(impl Fn(&mut S, Record) -> Flow + Sync),
) -> Result<(Vec<Chunk<S>>, ReadStats), Diagnostic> {
    let what = format!("the table given for `{}`", dataset.name);
    let (columns, _) = Columns::of_schema(dataset, table.schema(), &what)?;
    let rows = table.rows();
    let chunks = (threads.max(1) as u64).min(rows.div_ceil(MIN_ROWS_PER_THREAD).max(1)) as usize;
    let size = rows.div_ceil(chunks as u64);
    let ranges: Vec<(u64, u64)> = (0..chunks as u64)
        .map(|c| (c * size, ((c + 1) * size).min(rows)))
        .collect();
    let results = map_in_parallel(threads, ranges.len(), |r| {
        let mut state = make();
        let result = read_rows(dataset, table, &columns, ranges[r], &mut state, sink);
        (state, result)
    });
    let mut out = Vec::with_capacity(results.len());
    let mut stats = ReadStats {
        records: 0,
        // A table has no file: nothing to pin or to compare with a lock.
        sha256: String::new(),
        bytes: table.bytes(),
        seen: None,
    };
    for (state, result) in results {
        let (records, stop) = result?;
        stats.records += records;
        out.push(Chunk { state, stop });
    }
    Ok((out, stats))
}

/// Converts rows `start..end` of the table into records for `sink`; returns the
/// records read and the error that stopped the range.
fn read_rows<S>(
    dataset: &DatasetPlan,
    table: &Table,
    columns: &Columns<'_>,
    (start, end): (u64, u64),
    state: &mut S,
    sink: &(impl Fn(&mut S, Record) -> Flow + Sync),
) -> Result<(usize, Option<Diagnostic>), Diagnostic> {
    let mut cx = Context::default();
    let mut records = 0usize;
    let at = |row: u64| {
        let line = usize::try_from(row + 1).unwrap_or(usize::MAX);
        Location::in_data(&dataset.display_path, line, None)
    };
    let first = table
        .starts()
        .partition_point(|&s| s <= start)
        .saturating_sub(1);
    for (b, batch) in table.batches().iter().enumerate().skip(first) {
        let batch_start = table.starts()[b];
        if batch_start >= end {
            break;
        }
        let converters = Converters::new(columns, batch);
        let from = start.saturating_sub(batch_start) as usize;
        let to = (end - batch_start).min(batch.num_rows() as u64) as usize;
        for i in from..to {
            let row = batch_start + i as u64;
            let record = converters
                .record(columns, i, row, &mut cx)
                .map_err(|message| {
                    Diagnostic::error("invalid_record", format!("{}: {message}", dataset.name))
                        .at(at(row))
                });
            records += 1;
            match record.and_then(|record| sink(state, record)) {
                Ok(ControlFlow::Continue(())) => {}
                Ok(ControlFlow::Break(())) => return Ok((records, None)),
                Err(d) => return Ok((records, Some(d))),
            }
        }
    }
    Ok((records, None))
}
