//! A table in memory given as a dataset instead of a file: Arrow record
//! batches that a library caller hands over (a pyarrow Table, a pandas or
//! polars DataFrame through the Arrow C stream interface). The batches are
//! shared, not copied: reading a table converts only the columns the plan
//! reads, row by row, as a Parquet file's are.

use std::sync::Arc;

use arrow_array::{Array, RecordBatch};
use arrow_schema::SchemaRef;

/// Record batches of one schema, in row order.
#[derive(Clone)]
pub struct Table {
    schema: SchemaRef,
    batches: Arc<[RecordBatch]>,
    /// Each batch's first row.
    starts: Arc<[u64]>,
    rows: u64,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Table({} rows, {} batches)",
            self.rows,
            self.batches.len()
        )
    }
}

impl Table {
    /// The table of `batches`, each of `schema` (a batch of another schema is
    /// refused, with its number).
    pub fn new(schema: SchemaRef, batches: Vec<RecordBatch>) -> Result<Table, String> {
        let mut starts = Vec::with_capacity(batches.len());
        let mut rows = 0u64;
        for (i, batch) in batches.iter().enumerate() {
            if batch.schema().fields() != schema.fields() {
                return Err(format!(
                    "record batch {i} has another schema than the table's: {:?}",
                    batch.schema().fields()
                ));
            }
            starts.push(rows);
            rows += batch.num_rows() as u64;
        }
        Ok(Table {
            schema,
            batches: batches.into(),
            starts: starts.into(),
            rows,
        })
    }

    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    pub fn batches(&self) -> &[RecordBatch] {
        &self.batches
    }

    /// Each batch's first row.
    pub fn starts(&self) -> &[u64] {
        &self.starts
    }

    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The memory its batches hold: what a join planning its memory counts
    /// as the dataset's size.
    pub fn bytes(&self) -> u64 {
        let batch_bytes = |b: &RecordBatch| -> u64 {
            (b.columns().iter())
                .map(|c| c.get_array_memory_size() as u64)
                .sum()
        };
        self.batches.iter().map(batch_bytes).sum()
    }
}
