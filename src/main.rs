// mimalloc: a join table holds millions of small values, and the system allocator
// spends a large share of a big run on bookkeeping for them.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(evalspec::run(std::env::args_os()));
}
