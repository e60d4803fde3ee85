//! Freeing large structures off a run's critical path: a run's last steps (its
//! intervals and reports) need not wait for a million records to be freed one
//! by one. In a process that ends with the run (the `evalspec` binary,
//! [`leave_to_exit`]) what a run makes once is not freed at all
//! ([`drop_at_exit`]): the exit returns its memory whole. In a process that
//! goes on (a library caller) it is freed on a thread of its own.

use std::sync::atomic::{AtomicBool, Ordering};

static PROCESS_ENDS_WITH_RUN: AtomicBool = AtomicBool::new(false);

/// Says that the process exits when the command returns, so that what
/// [`drop_at_exit`] is given is left for the exit to reclaim. Freed on a
/// thread of its own, a 1M-item run's records took 0.4 s of CPU time from its
/// intervals and reports on a two-core machine; the exit unmaps the same pages
/// in a few tens of milliseconds. Only the binary calls this (its `main`): a
/// library caller that goes on running never does, and everything is freed.
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
    // A thread that could not start has dropped `value` with its closure.
    let _ = std::thread::Builder::new()
        .name("evalspec-drop".into())
        .spawn(move || drop(value));
}
