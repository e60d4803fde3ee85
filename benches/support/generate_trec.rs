//! Deterministic TREC qrels and run files: `queries` queries with `depth` retrieved
//! documents each, written query by query as retrieval systems write them. Two
//! shapes: `sparse` (the default), the mix of `../shared/bench/gen_ir.py` (its mix,
//! not its bytes: 1-3 relevant documents per query, level 1 or 2, each retrieved
//! with p = 0.8 near the top, the rest drawn from 8M documents); `dense`, half of
//! each query's candidates judged at levels 0-3, overlapping its ranking.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use super::generate::Rng;

pub fn dense(dir: &Path, queries: usize, depth: usize, seed: u64) -> std::io::Result<()> {
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

pub fn sparse(dir: &Path, queries: usize, depth: usize, seed: u64) -> std::io::Result<()> {
    const DOCS: usize = 8_000_000;
    std::fs::create_dir_all(dir)?;
    let mut qrels = BufWriter::with_capacity(1 << 20, File::create(dir.join("qrels.txt"))?);
    let mut run = BufWriter::with_capacity(1 << 20, File::create(dir.join("run.txt"))?);
    let mut rng = Rng::new(seed);
    let doc = |rng: &mut Rng| format!("D{:07}", rng.below(DOCS));
    for q in 0..queries {
        let qid = format!("q{q:06}");
        let mut relevant: Vec<String> = Vec::new();
        while relevant.len() < 1 + rng.below(3) {
            let d = doc(&mut rng);
            if !relevant.contains(&d) {
                writeln!(qrels, "{qid} 0 {d} {}", if rng.chance(70) { 1 } else { 2 })?;
                relevant.push(d);
            }
        }
        let mut ranking: Vec<Option<String>> = vec![None; depth];
        for d in &relevant {
            if rng.chance(80) {
                // About geometric with mean 8, probing down past a taken rank.
                let mut rank = (0..depth - 1).take_while(|_| !rng.chance(12)).count();
                while ranking[rank].is_some() {
                    rank = (rank + 1) % depth;
                }
                ranking[rank] = Some(d.clone());
            }
        }
        let mut seen: std::collections::HashSet<String> = relevant.into_iter().collect();
        let base = 20.0 + rng.below(10_000) as f64 / 1000.0;
        for (rank, slot) in ranking.into_iter().enumerate() {
            let d = slot.unwrap_or_else(|| loop {
                let d = doc(&mut rng);
                if seen.insert(d.clone()) {
                    break d;
                }
            });
            let score = base - rank as f64 * 0.1;
            writeln!(run, "{qid} Q0 {d} {} {score:.4} synth", rank + 1)?;
        }
    }
    qrels.flush()?;
    run.flush()
}
