//! A progress line on stderr for long reads: records read, rate and ETA. Shown only
//! when stderr is a terminal and the file is large; silent otherwise.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Files smaller than this finish before a progress line would help.
const MIN_BYTES: u64 = 64 << 20;

#[derive(Default)]
pub struct Progress {
    pub bytes: AtomicU64,
    pub records: AtomicU64,
    done: AtomicBool,
}

impl Progress {
    pub fn wanted(size: u64) -> bool {
        size >= MIN_BYTES && std::io::stderr().is_terminal()
    }

    /// Counts a batch of records read by one chunk.
    pub fn add(&self, bytes: u64, records: u64) {
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
        self.records.fetch_add(records, Ordering::Relaxed);
    }

    pub fn finish(&self) {
        self.done.store(true, Ordering::Relaxed);
    }

    /// Redraws the line until [`Progress::finish`], then clears it.
    pub fn show(&self, name: &str, size: u64) {
        let start = Instant::now();
        while !self.done.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(200));
            let bytes = self.bytes.load(Ordering::Relaxed);
            let seconds = start.elapsed().as_secs_f64().max(1e-3);
            let rate = bytes as f64 / seconds;
            let eta = if rate > 0.0 {
                (size.saturating_sub(bytes)) as f64 / rate
            } else {
                0.0
            };
            let _ = write!(
                std::io::stderr(),
                "\r{name}: {} records, {:.0} MB/s, {:.0}%, ETA {eta:.0}s   ",
                self.records.load(Ordering::Relaxed),
                rate / 1e6,
                100.0 * bytes as f64 / size.max(1) as f64
            );
        }
        let _ = write!(std::io::stderr(), "\r{}\r", " ".repeat(72));
    }
}
