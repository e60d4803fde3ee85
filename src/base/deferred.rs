//! Freeing large structures off a run's critical path: a run's last steps (its
//! intervals and reports) need not wait for a million records to be freed one
//! by one. The entry point waits for every such drop before it returns
//! ([`finish`]), so that nothing outlives the run.

use std::sync::Mutex;
use std::thread::JoinHandle;

static PENDING: Mutex<Vec<JoinHandle<()>>> = Mutex::new(Vec::new());

/// Drops `value` on a thread of its own (or here, if no thread can start).
pub fn drop_later<T: Send + 'static>(value: T) {
    let spawned = std::thread::Builder::new()
        .name("evalspec-drop".into())
        .spawn(move || drop(value));
    // A thread that could not start has dropped `value` with its closure.
    if let Ok(handle) = spawned {
        PENDING
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(handle);
    }
}

/// Waits for every drop started by [`drop_later`].
pub fn finish() {
    let pending = std::mem::take(&mut *PENDING.lock().unwrap_or_else(|p| p.into_inner()));
    for handle in pending {
        // A drop does not panic; if one did, its message is printed and the
        // memory is freed with the process.
        let _ = handle.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    struct Counted(Arc<AtomicUsize>);

    impl Drop for Counted {
        fn drop(&mut self) {
            std::thread::sleep(std::time::Duration::from_millis(20));
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn finish_waits_for_every_drop() {
        let dropped = Arc::new(AtomicUsize::new(0));
        for _ in 0..3 {
            drop_later(Counted(dropped.clone()));
        }
        finish();
        assert_eq!(dropped.load(Ordering::SeqCst), 3);
    }
}
