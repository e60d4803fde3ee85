//! Deterministic TREC qrels and run files: `queries` queries with `depth` retrieved
//! documents each, written query by query as retrieval systems write them.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use super::generate::Rng;

pub fn generate(dir: &Path, queries: usize, depth: usize, seed: u64) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut qrels = BufWriter::with_capacity(1 << 20, File::create(dir.join("qrels.txt"))?);
    let mut run = BufWriter::with_capacity(1 << 20, File::create(dir.join("run.txt"))?);
    let mut rng = Rng::new(seed);
    for q in 0..queries {
        let qid = format!("Q{q}");
        // A pool of candidate documents; some retrieved, some judged, overlapping.
        let pool: Vec<String> = (0..depth + depth / 2)
            .map(|_| format!("D{:07}", rng.below(2_000_000)))
            .collect();
        let mut judged = std::collections::HashSet::new();
        for doc in pool.iter().skip(depth / 3).take(depth / 2) {
            if judged.insert(doc.clone()) {
                writeln!(qrels, "{qid} 0 {doc} {}", *rng.pick(&[0, 0, 1, 1, 2, 3]))?;
            }
        }
        let mut retrieved = std::collections::HashSet::new();
        let mut score = 100.0;
        for (rank, doc) in pool.iter().take(depth).enumerate() {
            if retrieved.insert(doc.clone()) {
                score -= rng.below(100) as f64 / 100.0;
                writeln!(run, "{qid} Q0 {doc} {} {score:.2} bench", rank + 1)?;
            }
        }
    }
    qrels.flush()?;
    run.flush()
}
