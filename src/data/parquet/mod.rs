//! Parquet datasets, read through arrow-rs. Columns become fields: numbers (integers,
//! floats, decimals) numbers, strings (and binary holding UTF-8) strings, booleans
//! bools, lists lists, structs and maps objects, nulls null. Only the columns the
//! plan reads are decoded, down to the leaves of a struct it reads fields of.
//!
//! The rows are split into one contiguous range per thread (at row-group bounds when
//! there are enough row groups, else inside them); each thread decodes its range
//! and hands its records, in file order, to its own chunk state, which the caller
//! merges in file order: the outcome does not depend on the thread count. A record's
//! `line` is its 1-based position in the file. An error names the file, the row
//! group and the row inside it (both 0-based, as pyarrow counts them).

use std::fs::File;
use std::ops::ControlFlow;
use std::ops::Range;
use std::sync::Arc;

use arrow_schema::{DataType as ArrowType, Field, FieldRef, Schema, SchemaRef};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder, RowSelection,
    RowSelector,
};
use parquet::arrow::ProjectionMask;
use parquet::basic::Encoding;
use parquet::file::metadata::ParquetMetaData;

use crate::base::diagnostic::{Diagnostic, Location};
use crate::data::chunks::min_chunk_bytes;
use crate::data::columns::{self, Target};
use crate::data::file::{hash_file, open_error};
use crate::data::reader::Flow;
use crate::data::reader::{Chunk, ReadStats};
use crate::ir::Record;
use crate::plan::{DatasetPlan, ProjectedField};

/// Rows decoded at a time.
const BATCH_ROWS: usize = 8192;

/// Reads the file's rows in up to `threads` ranges, each into a state made by `make`.
pub fn read<S: Send>(
    dataset: &DatasetPlan,
    threads: usize,
    make: &(impl Fn() -> S + Sync),
    sink: &(impl Fn(&mut S, Record) -> Flow + Sync),
) -> Result<(Vec<Chunk<S>>, ReadStats), Diagnostic> {
    let file = File::open(&dataset.path).map_err(|e| open_error(dataset, &e))?;
    let size = file.metadata().map_err(|e| open_error(dataset, &e))?.len();
    // The Arrow schema a writer may embed is not needed (the Parquet schema says the
    // same) and not trusted: arrow-rs panics on some damaged ones.
    let options = ArrowReaderOptions::new().with_skip_arrow_metadata(true);
    let metadata = guarded(|| ArrowReaderMetadata::load(&file, options).map_err(|e| e.to_string()))
        .and_then(|result| result)
        .map_err(|e| {
            Diagnostic::error("not_parquet", format!(
                "{}: `{}` is not a readable Parquet file: {e}",
                dataset.name, dataset.display_path
            ))
            .help("a Parquet file ends with its footer and the bytes `PAR1`: is it truncated, or in another format?")
        })?;
    let metadata = dictionary_hints(metadata.schema(), metadata.metadata())
        .and_then(|schema| {
            let options = ArrowReaderOptions::new().with_schema(schema);
            ArrowReaderMetadata::try_new(metadata.metadata().clone(), options).ok()
        })
        .unwrap_or(metadata);
    let columns = Columns::new(dataset, &metadata)?;
    let groups = RowGroups::of(&metadata);
    let chunks = threads
        .clamp(1, 64)
        .min(
            usize::try_from(size / min_chunk_bytes())
                .unwrap_or(1)
                .max(1),
        )
        .min(usize::try_from(groups.total).unwrap_or(usize::MAX).max(1));
    let ranges = groups.split(chunks);
    let (results, sha256) = std::thread::scope(|scope| {
        let hasher = scope.spawn(|| hash_file(dataset));
        let handles: Vec<_> = ranges
            .iter()
            .map(|range| {
                let (metadata, columns, groups) = (&metadata, &columns, &groups);
                scope.spawn(move || {
                    let mut state = make();
                    let read = || {
                        read_range(
                            dataset,
                            metadata,
                            columns,
                            groups,
                            range.clone(),
                            &mut state,
                            sink,
                        )
                    };
                    let result = guarded(read).unwrap_or_else(|message| {
                        let (group, _) = groups.locate(range.start);
                        Ok((
                            0,
                            Some(Diagnostic::error("parquet_reader_failed", format!(
                                "{}: the Parquet reader failed on `{}` (rows from row group {group}): {message}",
                                dataset.name, dataset.display_path
                            ))
                            .help("the file is damaged")),
                        ))
                    });
                    (state, result)
                })
            })
            .collect();
        let results: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().expect("Parquet readers do not panic"))
            .collect();
        (results, hasher.join().expect("hashing does not panic"))
    });
    let mut stats = ReadStats {
        records: 0,
        sha256: sha256?,
        bytes: size,
        seen: None,
    };
    let mut out = Vec::with_capacity(results.len());
    for (state, result) in results {
        let (records, stop) = result?;
        stats.records += records;
        out.push(Chunk { state, stop });
    }
    Ok((out, stats))
}

thread_local! {
    /// This thread is inside [`guarded`]: a panic is reported as an error.
    static GUARDED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether a panic on this thread is the Parquet decoder's on a damaged file,
/// which [`guarded`] reports as an error: a panic hook that the program
/// installs (the command line does, `commands::quiet_decoder_panics`) need
/// not print it. The library sets no hook of its own.
pub fn panicking_in_decoder() -> bool {
    GUARDED.with(std::cell::Cell::get)
}

/// Runs `f`, turning a panic (of the Parquet decoder, on a damaged file) into its
/// message: bad input is an error (exit 2), not a crash.
fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    GUARDED.with(|g| g.set(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(false));
    result.map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_string())
    })
}

/// The row groups' first rows and sizes.
struct RowGroups {
    starts: Vec<u64>,
    total: u64,
}

impl RowGroups {
    fn of(metadata: &ArrowReaderMetadata) -> RowGroups {
        let mut starts = Vec::new();
        let mut total = 0u64;
        for group in metadata.metadata().row_groups() {
            starts.push(total);
            total += u64::try_from(group.num_rows()).unwrap_or(0);
        }
        RowGroups { starts, total }
    }

    /// The row group of a row, and the row's index inside it.
    fn locate(&self, row: u64) -> (usize, u64) {
        let group = self.starts.partition_point(|&s| s <= row).saturating_sub(1);
        (group, row - self.starts.get(group).copied().unwrap_or(0))
    }

    fn end(&self, group: usize) -> u64 {
        self.starts.get(group + 1).copied().unwrap_or(self.total)
    }

    /// `chunks` contiguous row ranges, cut at row-group bounds when there are at least
    /// as many row groups as chunks.
    fn split(&self, chunks: usize) -> Vec<Range<u64>> {
        let mut bounds = vec![0u64];
        for i in 1..chunks as u64 {
            let mut bound = self.total * i / chunks as u64;
            if self.starts.len() >= chunks {
                let (group, offset) = self.locate(bound);
                bound = if offset * 2 < self.end(group) - self.starts[group] {
                    self.starts[group]
                } else {
                    self.end(group)
                };
            }
            if bound > *bounds.last().unwrap_or(&0) && bound < self.total {
                bounds.push(bound);
            }
        }
        bounds.push(self.total);
        bounds.windows(2).map(|w| w[0]..w[1]).collect()
    }
}

/// Which columns the plan reads, and the leaves to decode for them.
struct Columns<'a> {
    mask: ProjectionMask,
    uses: Vec<(&'a str, Target<'a>)>,
    whole: Option<usize>,
    slot_count: usize,
}

impl<'a> Columns<'a> {
    fn new(dataset: &'a DatasetPlan, metadata: &ArrowReaderMetadata) -> Result<Self, Diagnostic> {
        let (mut columns, prefixes) = Columns::of_schema(dataset, metadata.schema(), "")?;
        if columns.whole.is_none() {
            let parquet = metadata.parquet_schema();
            let leaves = (0..parquet.num_columns()).filter(|&i| {
                let column = parquet.column(i);
                let parts = column.path().parts();
                prefixes
                    .iter()
                    .any(|p| p.len() <= parts.len() && p.iter().zip(parts).all(|(a, b)| a == b))
            });
            columns.mask = ProjectionMask::leaves(parquet, leaves);
        }
        Ok(columns)
    }

    /// The columns the plan reads of a table with Arrow schema `schema`, and
    /// the leaf paths to decode for them; `what` names the table in errors
    /// (empty: the dataset's file).
    fn of_schema(
        dataset: &'a DatasetPlan,
        schema: &Schema,
        what: &str,
    ) -> Result<(Self, Vec<Vec<String>>), Diagnostic> {
        let source = match what {
            "" => format!("`{}`", dataset.display_path),
            what => what.to_string(),
        };
        let unreadable = |path: &str, ty: &ArrowType| {
            Diagnostic::error("parquet_column_type", format!(
                "{}: column `{path}` of {source} has type {ty}, which evalspec does not read",
                dataset.name
            ))
            .help("write it as a string or a number (numbers, strings, bools, lists, structs and maps are read)")
        };
        // Two columns of one name: which one the spec means is not known (CSV
        // refuses the same), so neither is read.
        let named_twice = |name: &str| {
            let mut at = (schema.fields().iter().enumerate()).filter(|(_, f)| f.name() == name);
            match (at.next(), at.next()) {
                (Some((first, _)), Some((again, _))) => Err(Diagnostic::error(
                    "parquet_column_named_twice",
                    format!(
                        "{}: column `{name}` of {source} is named twice (columns {} and {})",
                        dataset.name,
                        first + 1,
                        again + 1
                    ),
                )
                .help("rename one of them")),
                _ => Ok(()),
            }
        };
        if let Some(slot) = dataset.projection.whole {
            for field in schema.fields() {
                named_twice(field.name())?;
                if let Some(ty) = unsupported(field.data_type()) {
                    return Err(unreadable(field.name(), ty));
                }
            }
            let columns = Columns {
                mask: ProjectionMask::all(),
                uses: Vec::new(),
                whole: Some(slot.index()),
                slot_count: dataset.projection.slot_count,
            };
            return Ok((columns, Vec::new()));
        }
        let mut prefixes: Vec<Vec<String>> = Vec::new();
        let mut uses = Vec::new();
        let mut missing = Vec::new();
        for wanted in columns::wanted(dataset) {
            let Some(field) = schema.fields().iter().find(|f| f.name() == wanted.name) else {
                // A table in memory (records, a DataFrame) has a column for each
                // field some record has: one that none has is absent from every
                // record, as it would be from each line of a JSONL file.
                if !wanted.optional && dataset.table.is_none() {
                    missing.push(wanted.name);
                }
                continue;
            };
            named_twice(wanted.name)?;
            let target = match wanted.target {
                Target::Slot(_) => None,
                Target::Nested(fields) => Some(fields),
            };
            let mut paths = Vec::new();
            decode(&[wanted.name], field, target, &mut paths).map_err(|(path, ty)| {
                match ty {
                    Ok(ty) => unreadable(&path, ty),
                    Err(ty) => Diagnostic::error("parquet_not_struct", format!(
                        "{}: column `{path}` of {source} must be a struct (the spec reads fields of it), found {ty}",
                        dataset.name
                    ))
                    .help("fix the file, or the fields the spec reads"),
                }
            })?;
            prefixes.extend(
                paths
                    .into_iter()
                    .map(|p| p.into_iter().map(str::to_string).collect()),
            );
            uses.push((wanted.name, wanted.target));
        }
        if !missing.is_empty() {
            let present: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
            return Err(columns::missing(dataset, None, &missing, &present));
        }
        let columns = Columns {
            mask: ProjectionMask::all(),
            uses,
            whole: None,
            slot_count: dataset.projection.slot_count,
        };
        Ok((columns, prefixes))
    }
}

/// Adds the leaf prefixes to decode for a field read whole (`fields` none) or
/// read into (`fields`: the ones read). A field read into must be a struct or a
/// map (or all null). Errors: the field's path, and its type when unreadable
/// (`Ok`) or when it cannot be read into (`Err`).
#[allow(clippy::type_complexity)]
fn decode<'f>(
    path: &[&'f str],
    field: &'f Field,
    fields: Option<&'f [(String, ProjectedField)]>,
    prefixes: &mut Vec<Vec<&'f str>>,
) -> Result<(), (String, Result<&'f ArrowType, &'f ArrowType>)> {
    let ty = field.data_type();
    match (fields, ty) {
        (_, ArrowType::Null) => {}
        (None, _) | (Some(_), ArrowType::Map(..)) => {
            if let Some(bad) = unsupported(ty) {
                return Err((path.join("."), Ok(bad)));
            }
            prefixes.push(path.to_vec());
        }
        (Some(fields), ArrowType::Struct(children)) => {
            for (name, projected) in fields {
                let Some(child) = children.iter().find(|c| c.name() == name) else {
                    continue;
                };
                let mut child_path = path.to_vec();
                child_path.push(child.name());
                let inner = match projected {
                    ProjectedField::Slot(_) => None,
                    ProjectedField::Nested(inner) => Some(inner.as_slice()),
                };
                decode(&child_path, child, inner, prefixes)?;
            }
        }
        (Some(_), _) => return Err((path.join("."), Err(ty))),
    }
    Ok(())
}

/// The schema with a string column directly inside a list (retrieved ids,
/// citations) read as a dictionary where the file keeps it as one: every row
/// group wrote that column's data pages dictionary-encoded. The reader then
/// hands the dictionary page on as it is, and each distinct string is converted
/// once per row group. A column whose writer fell back to plain pages (pyarrow
/// does past a 1 MiB dictionary: the ids of a large corpus), or whose pages'
/// encodings the file does not record, is read as plain strings: a dictionary
/// built from them hashes every value (1M items' traces with one thread:
/// 10.7 s, 7.7 s read plain).
/// `None` when no column is read as a dictionary.
fn dictionary_hints(schema: &Schema, parquet: &ParquetMetaData) -> Option<SchemaRef> {
    // Arrow's fields, depth first, have the file's leaf columns in order; a
    // schema that does not count as many leaves gets no hints.
    struct Hints<'a> {
        parquet: &'a ParquetMetaData,
        leaf: usize,
        changed: bool,
    }
    impl Hints<'_> {
        fn field(&mut self, f: &FieldRef, in_list: bool) -> FieldRef {
            let ty = self.hint(f.data_type(), in_list);
            Arc::new(f.as_ref().clone().with_data_type(ty))
        }

        fn hint(&mut self, ty: &ArrowType, in_list: bool) -> ArrowType {
            match ty {
                ArrowType::List(f) => ArrowType::List(self.field(f, true)),
                ArrowType::LargeList(f) => ArrowType::LargeList(self.field(f, true)),
                ArrowType::Struct(fields) => {
                    ArrowType::Struct(fields.iter().map(|f| self.field(f, false)).collect())
                }
                ArrowType::Map(f, sorted) => ArrowType::Map(self.field(f, false), *sorted),
                leaf => {
                    let column = self.leaf;
                    self.leaf += 1;
                    if *leaf == ArrowType::Utf8 && in_list && all_dictionary(self.parquet, column) {
                        self.changed = true;
                        return ArrowType::Dictionary(
                            Box::new(ArrowType::Int32),
                            Box::new(ArrowType::Utf8),
                        );
                    }
                    leaf.clone()
                }
            }
        }
    }
    let mut hints = Hints {
        parquet,
        leaf: 0,
        changed: false,
    };
    let fields: Vec<FieldRef> = schema
        .fields()
        .iter()
        .map(|f| hints.field(f, false))
        .collect();
    let columns = parquet.file_metadata().schema_descr().num_columns();
    (hints.changed && hints.leaf == columns)
        .then(|| Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())))
}

/// Whether every row group wrote leaf column `column`'s data pages with its
/// dictionary only.
fn all_dictionary(parquet: &ParquetMetaData, column: usize) -> bool {
    parquet.row_groups().iter().all(|group| {
        group.columns().get(column).is_some_and(|chunk| {
            chunk.dictionary_page_offset().is_some()
                && chunk.page_encoding_stats_mask().is_some_and(|mask| {
                    mask.is_only(Encoding::RLE_DICTIONARY)
                        || mask.is_only(Encoding::PLAIN_DICTIONARY)
                })
        })
    })
}

/// The first type inside `ty` that is not read.
fn unsupported(ty: &ArrowType) -> Option<&ArrowType> {
    match ty {
        ArrowType::Null
        | ArrowType::Boolean
        | ArrowType::Int8
        | ArrowType::Int16
        | ArrowType::Int32
        | ArrowType::Int64
        | ArrowType::UInt8
        | ArrowType::UInt16
        | ArrowType::UInt32
        | ArrowType::UInt64
        | ArrowType::Float16
        | ArrowType::Float32
        | ArrowType::Float64
        | ArrowType::Decimal32(..)
        | ArrowType::Decimal64(..)
        | ArrowType::Decimal128(..)
        | ArrowType::Decimal256(..)
        | ArrowType::Utf8
        | ArrowType::LargeUtf8
        | ArrowType::Utf8View
        | ArrowType::Binary
        | ArrowType::LargeBinary
        | ArrowType::BinaryView => None,
        ArrowType::List(f) | ArrowType::LargeList(f) | ArrowType::FixedSizeList(f, _) => {
            unsupported(f.data_type())
        }
        ArrowType::Map(f, _) => unsupported(f.data_type()),
        ArrowType::Struct(fields) => fields.iter().find_map(|f| unsupported(f.data_type())),
        ArrowType::Dictionary(_, values) => unsupported(values),
        other => Some(other),
    }
}

/// Decodes rows `range` of the file into records for `sink`, one row group at a
/// time (so that an error names its row group); returns the records read and the
/// error that stopped the range.
#[allow(clippy::too_many_arguments)]
fn read_range<S>(
    dataset: &DatasetPlan,
    metadata: &ArrowReaderMetadata,
    columns: &Columns<'_>,
    groups: &RowGroups,
    range: Range<u64>,
    state: &mut S,
    sink: &(impl Fn(&mut S, Record) -> Flow + Sync),
) -> Result<(usize, Option<Diagnostic>), Diagnostic> {
    let mut records = 0usize;
    let mut cx = Context::default();
    let at = |row: u64| {
        Location::in_data(
            &dataset.display_path,
            usize::try_from(row + 1).unwrap_or(usize::MAX),
            None,
        )
    };
    let mut row = range.start;
    while row < range.end {
        let (group, skip) = groups.locate(row);
        let end = groups.end(group).min(range.end);
        let decode_error = |e: &dyn std::fmt::Display| {
            Diagnostic::error("parquet_cannot_decode", format!(
                "{}: cannot decode row group {group} of `{}`: {e}",
                dataset.name, dataset.display_path
            ))
            .at(at(groups.starts[group]))
            .help("the file is damaged, or compressed with a codec evalspec lacks (it reads snappy, zstd and uncompressed files)")
        };
        let file = File::open(&dataset.path).map_err(|e| open_error(dataset, &e))?;
        let mut builder =
            ParquetRecordBatchReaderBuilder::new_with_metadata(file, metadata.clone())
                .with_projection(columns.mask.clone())
                .with_batch_size(BATCH_ROWS)
                .with_row_groups(vec![group]);
        if skip > 0 || end < groups.end(group) {
            let rows = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
            builder = builder.with_row_selection(RowSelection::from(vec![
                RowSelector::skip(rows(skip)),
                RowSelector::select(rows(end - row)),
                RowSelector::skip(rows(groups.end(group) - end)),
            ]));
        }
        let reader = match builder.build() {
            Ok(reader) => reader,
            Err(e) => return Ok((records, Some(decode_error(&e)))),
        };
        for batch in reader {
            let batch = match batch {
                Ok(batch) => batch,
                Err(e) => return Ok((records, Some(decode_error(&e)))),
            };
            let converters = Converters::new(columns, &batch);
            for i in 0..batch.num_rows() {
                let record = converters
                    .record(columns, i, row, &mut cx)
                    .map_err(|message| {
                        let (group, index) = groups.locate(row);
                        Diagnostic::error("invalid_record", format!("{}: {message}", dataset.name))
                            .at(at(row))
                            .note(format!("row group {group}, row {index} (0-based)"))
                    });
                let this_row = row;
                row += 1;
                records += 1;
                let mut d = match record.and_then(|record| sink(state, record)) {
                    Ok(ControlFlow::Continue(())) => continue,
                    Ok(ControlFlow::Break(())) => return Ok((records, None)),
                    Err(d) => d,
                };
                {
                    // A record's error (a schema rule, a key) names the row's place.
                    let here = d.location.as_ref().is_some_and(|l| {
                        l.file == dataset.display_path && l.line as u64 == this_row + 1
                    });
                    if here && d.note.is_none() {
                        let (group, index) = groups.locate(this_row);
                        d = d.note(format!("row group {group}, row {index} (0-based)"));
                    }
                    return Ok((records, Some(d)));
                }
            }
        }
        if row != end {
            let message = format!("{} rows were expected, {} read", end - skip, row - skip);
            return Ok((records, Some(decode_error(&message))));
        }
    }
    Ok((records, None))
}

mod convert;
pub mod table;

use convert::{Context, Converters};

#[cfg(test)]
mod tests {
    use super::*;

    fn groups(sizes: &[u64]) -> RowGroups {
        let mut starts = Vec::new();
        let mut total = 0;
        for size in sizes {
            starts.push(total);
            total += size;
        }
        RowGroups { starts, total }
    }

    #[test]
    fn ranges_follow_row_groups_when_there_are_enough() {
        assert_eq!(groups(&[10, 10, 10, 10]).split(2), [0..20, 20..40]);
        assert_eq!(groups(&[30, 5, 5]).split(2), [0..30, 30..40]);
        assert_eq!(groups(&[100]).split(3), [0..33, 33..66, 66..100]);
        assert_eq!(groups(&[100]).split(1), vec![Range { start: 0, end: 100 }]);
        assert_eq!(groups(&[]).split(2), vec![Range { start: 0, end: 0 }]);
    }

    /// Two list-of-strings columns: one whose few distinct strings keep to its
    /// dictionary, one of distinct ids whose writer falls back to plain pages.
    #[test]
    fn only_columns_kept_as_dictionaries_are_read_as_dictionaries() {
        use arrow_array::builder::{ListBuilder, StringBuilder};
        use arrow_array::{ArrayRef, RecordBatch};
        use parquet::arrow::ArrowWriter;
        use parquet::file::properties::WriterProperties;

        let (mut repeated, mut distinct) = (
            ListBuilder::new(StringBuilder::new()),
            ListBuilder::new(StringBuilder::new()),
        );
        for row in 0..4000 {
            repeated.values().append_value(format!("c{}", row % 3));
            repeated.append(true);
            distinct.values().append_value(format!("doc-{row:08}"));
            distinct.append(true);
        }
        let batch = RecordBatch::try_from_iter([
            ("repeated", Arc::new(repeated.finish()) as ArrayRef),
            ("distinct", Arc::new(distinct.finish()) as ArrayRef),
            (
                "qid",
                Arc::new(arrow_array::StringArray::from(vec!["q"; 4000])) as ArrayRef,
            ),
        ])
        .unwrap();
        // A dictionary page of at most 1 KiB: the distinct ids overflow it.
        let properties = WriterProperties::builder()
            .set_dictionary_page_size_limit(1024)
            .build();
        let file = tempfile::tempfile().unwrap();
        let mut writer =
            ArrowWriter::try_new(file.try_clone().unwrap(), batch.schema(), Some(properties))
                .unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        let options = ArrowReaderOptions::new().with_skip_arrow_metadata(true);
        let metadata = ArrowReaderMetadata::load(&file, options).unwrap();
        let hinted = dictionary_hints(metadata.schema(), metadata.metadata()).unwrap();
        let inner = |name: &str| match hinted.field_with_name(name).unwrap().data_type() {
            ArrowType::List(item) => item.data_type().clone(),
            other => other.clone(),
        };
        assert!(
            matches!(inner("repeated"), ArrowType::Dictionary(..)),
            "{hinted:?}"
        );
        assert_eq!(inner("distinct"), ArrowType::Utf8);
        assert_eq!(inner("qid"), ArrowType::Utf8, "not in a list");
    }

    #[test]
    fn rows_are_located_in_their_row_group() {
        let g = groups(&[10, 0, 5]);
        assert_eq!(g.locate(0), (0, 0));
        assert_eq!(g.locate(9), (0, 9));
        assert_eq!(g.locate(10), (2, 0));
        assert_eq!(g.locate(14), (2, 4));
    }
}
