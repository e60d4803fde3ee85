//! What an evaluation tells whoever runs it while it runs. Layers do not print:
//! a long read reports its progress to the sink it was given (the command
//! line draws a progress line on a terminal; a library caller may show a
//! progress bar, log it, or give no sink and hear nothing).

use std::sync::Arc;

/// Something that happened during an evaluation.
#[derive(Debug, Clone, PartialEq)]
pub enum Event<'a> {
    /// A large dataset is being read: bytes read of its size, records so far.
    Reading {
        dataset: &'a str,
        bytes: u64,
        size: u64,
        records: u64,
    },
    /// The dataset's read has ended.
    Read { dataset: &'a str },
}

/// Where events go; called from any thread.
#[derive(Clone)]
pub struct EventSink(Arc<dyn Fn(&Event<'_>) + Send + Sync>);

impl EventSink {
    pub fn new(sink: impl Fn(&Event<'_>) + Send + Sync + 'static) -> Self {
        EventSink(Arc::new(sink))
    }

    pub fn send(&self, event: &Event<'_>) {
        (self.0)(event);
    }
}

impl std::fmt::Debug for EventSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EventSink")
    }
}
