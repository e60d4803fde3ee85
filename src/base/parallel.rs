//! Independent computations spread over the run's threads, their results in
//! order: what each computes does not depend on which thread computes it, so
//! the output is the same for any `--threads`.

/// `(0..n).map(f)`, on up to `threads` threads. Thread t takes every index
/// congruent to t, so that costly and cheap indexes (an interval by bootstrap
/// beside a Wilson one) are shared out evenly.
pub fn map_in_parallel<T: Send>(threads: usize, n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = threads.clamp(1, n.max(1));
    if threads == 1 {
        return (0..n).map(f).collect();
    }
    let f = &f;
    let parts: Vec<Vec<T>> = std::thread::scope(|scope| {
        let share = move |t: usize| (t..n).step_by(threads).map(f).collect::<Vec<T>>();
        // A thread the system cannot start (`ulimit -u`): its share is
        // computed here instead, never a panic.
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                std::thread::Builder::new()
                    .spawn_scoped(scope, move || share(t))
                    .map_err(|_| t)
            })
            .collect();
        (handles.into_iter())
            .map(|h| match h {
                Ok(h) => h.join().expect("computations in parallel do not panic"),
                Err(t) => share(t),
            })
            .collect()
    });
    let mut parts: Vec<_> = parts.into_iter().map(Vec::into_iter).collect();
    (0..n)
        .map(|i| parts[i % threads].next().expect("each index computed once"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_order_for_any_thread_count() {
        for threads in [0, 1, 2, 3, 8, 40] {
            for n in [0, 1, 5, 17] {
                let squares = map_in_parallel(threads, n, |i| i * i);
                assert_eq!(squares, (0..n).map(|i| i * i).collect::<Vec<_>>());
            }
        }
    }
}
