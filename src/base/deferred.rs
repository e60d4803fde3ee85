//! Freeing large structures off a run's critical path: a run's last steps (its
//! intervals and reports) need not wait for a million records to be freed one
//! by one. The entry point waits for every such drop before it returns
//! ([`finish`]), so that nothing outlives the run. In a process that ends with
//! the run (the `evalspec` binary, [`leave_to_exit`]) what a run makes once is
//! not freed at all ([`drop_at_exit`]): the exit returns its memory whole.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::thread::JoinHandle;

static PENDING: Mutex<Vec<JoinHandle<()>>> = Mutex::new(Vec::new());

static PROCESS_ENDS_WITH_RUN: AtomicBool = AtomicBool::new(false);

/// Says that the process exits when the command returns, so that what
/// [`drop_at_exit`] is given is left for the exit to reclaim. Freed on a
/// thread of its own, a 1M-item run's records took 0.4 s of CPU time from its
/// intervals and reports on a two-core machine; the exit unmaps the same pages
/// in a few tens of milliseconds. A library caller (the Python module) that
/// goes on running never calls this, and everything is freed.
pub fn leave_to_exit() {
    PROCESS_ENDS_WITH_RUN.store(true, Ordering::Relaxed);
}

/// After [`leave_to_exit`], leaves `value` to the process's exit; else drops
/// it later ([`drop_later`]). Only for what a command makes once: what is left
/// stays allocated until the exit.
pub fn drop_at_exit<T: Send + 'static>(value: T) {
    if PROCESS_ENDS_WITH_RUN.load(Ordering::Relaxed) {
        std::mem::forget(value);
    } else {
        drop_later(value);
    }
}

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

    /// No test leaves anything to the exit (the flag is the process's), so
    /// here what a run makes once is dropped later, as in a library caller.
    /// Waited for by polling: `finish` here could join the other test's drops
    /// before that test's own `finish` looks.
    #[test]
    fn a_library_caller_frees_what_a_run_makes_once() {
        let dropped = Arc::new(AtomicUsize::new(0));
        drop_at_exit(Counted(dropped.clone()));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while dropped.load(Ordering::SeqCst) == 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(dropped.load(Ordering::SeqCst), 1);
    }
}
