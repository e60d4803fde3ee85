//! Progress of long reads: bytes and records read, reported to the dataset's
//! event sink (`base::events`) five times a second while a large file is
//! read; nothing when the dataset has no sink or the file is small.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::base::events::Event;
use crate::plan::DatasetPlan;

/// Files smaller than this finish before progress would help.
const MIN_BYTES: u64 = 64 << 20;

#[derive(Default)]
pub struct Progress {
    pub bytes: AtomicU64,
    pub records: AtomicU64,
    done: AtomicBool,
}

impl Progress {
    /// Whether reading `dataset`'s `size` bytes is worth reporting.
    pub fn wanted(dataset: &DatasetPlan, size: u64) -> bool {
        size >= MIN_BYTES && dataset.events.is_some()
    }

    /// Counts a batch of records read by one chunk.
    pub fn add(&self, bytes: u64, records: u64) {
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
        self.records.fetch_add(records, Ordering::Relaxed);
    }

    pub fn finish(&self) {
        self.done.store(true, Ordering::Relaxed);
    }

    /// Reports the read of `dataset` (`size` bytes) until [`Progress::finish`].
    pub fn show(&self, dataset: &DatasetPlan, size: u64) {
        let Some(sink) = &dataset.events else { return };
        while !self.done.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(200));
            sink.send(&Event::Reading {
                dataset: &dataset.name,
                bytes: self.bytes.load(Ordering::Relaxed),
                size,
                records: self.records.load(Ordering::Relaxed),
            });
        }
        sink.send(&Event::Read {
            dataset: &dataset.name,
        });
    }
}
