// mimalloc: a join table holds millions of small values, and the system allocator
// spends a large share of a big run on bookkeeping for them. Built without
// transparent huge pages (`no_thp`): memory it returns to the system and takes
// back faults in again a 2 MB page at a time, each zeroed whole; at 1M items that
// zeroing was 15-20% of the run (kernel time 2.8 s, 1.1 s without).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // The process ends with the command: large structures are left to the exit.
    evalspec::base::deferred::leave_to_exit();
    std::process::exit(evalspec::run(std::env::args_os()));
}
