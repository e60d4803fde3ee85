//! The TREC yardstick: a straight-line Rust computation of specs/trec.yaml's measures
//! (both files read whole, every id borrowed from them; qrels in a hash map, the run
//! scored query by query). Single-purpose and unvalidated: not used by the engine.

use std::collections::HashMap;

pub const MEASURES: [&str; 12] = [
    "map",
    "recip_rank",
    "recip_rank_10",
    "P_5",
    "P_10",
    "P_20",
    "recall_5",
    "recall_10",
    "recall_20",
    "ndcg_cut_5",
    "ndcg_cut_10",
    "ndcg_cut_20",
];

fn dcg(gains: &[f64], k: usize) -> f64 {
    gains
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, g)| g / ((i + 2) as f64).log2())
        .sum()
}

fn score(judged: &HashMap<&str, f64>, ranked: &mut [(f64, &str)], sums: &mut [f64; 12]) {
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| b.1.cmp(a.1)));
    let gains: Vec<f64> = ranked
        .iter()
        .map(|(_, d)| judged.get(d).copied().unwrap_or(0.0))
        .collect();
    let relevant = judged.values().filter(|g| **g >= 1.0).count() as f64;
    let mut ideal: Vec<f64> = judged.values().copied().filter(|g| *g > 0.0).collect();
    ideal.sort_by(|a, b| b.total_cmp(a));
    let hits = |k: usize| gains.iter().take(k).filter(|g| **g >= 1.0).count() as f64;
    let first = gains.iter().position(|g| *g >= 1.0);
    let mut found = 0.0;
    let mut ap = 0.0;
    for (i, g) in gains.iter().enumerate() {
        if *g >= 1.0 {
            found += 1.0;
            ap += found / (i + 1) as f64;
        }
    }
    let ratio = |n: f64, d: f64| if d > 0.0 { n / d } else { 0.0 };
    let values = [
        ratio(ap, relevant),
        first.map_or(0.0, |i| 1.0 / (i + 1) as f64),
        first
            .filter(|i| *i < 10)
            .map_or(0.0, |i| 1.0 / (i + 1) as f64),
        hits(5) / 5.0,
        hits(10) / 10.0,
        hits(20) / 20.0,
        ratio(hits(5), relevant),
        ratio(hits(10), relevant),
        ratio(hits(20), relevant),
        ratio(dcg(&gains, 5), dcg(&ideal, 5)),
        ratio(dcg(&gains, 10), dcg(&ideal, 10)),
        ratio(dcg(&gains, 20), dcg(&ideal, 20)),
    ];
    for (sum, value) in sums.iter_mut().zip(values) {
        *sum += value;
    }
}

/// Averages over the queries in both files, as trec_eval does by default.
pub fn evaluate(qrels_path: &str, run_path: &str) -> [f64; 12] {
    let qrels_text = std::fs::read_to_string(qrels_path).unwrap();
    let run_text = std::fs::read_to_string(run_path).unwrap();
    let mut qrels: HashMap<&str, HashMap<&str, f64>> = HashMap::new();
    for line in qrels_text.lines() {
        let mut f = line.split_ascii_whitespace();
        let (qid, doc, rel) = (f.next().unwrap(), f.nth(1).unwrap(), f.next().unwrap());
        qrels
            .entry(qid)
            .or_default()
            .insert(doc, rel.parse().unwrap());
    }
    let mut sums = [0.0; 12];
    let mut queries = 0usize;
    let mut current: Option<&str> = None;
    let mut ranked: Vec<(f64, &str)> = Vec::new();
    let mut finish = |qid: Option<&str>, ranked: &mut Vec<(f64, &str)>, sums: &mut [f64; 12]| {
        if let Some(judged) = qid.and_then(|q| qrels.get(q)) {
            score(judged, ranked, sums);
            queries += 1;
        }
        ranked.clear();
    };
    for line in run_text.lines() {
        let mut f = line.split_ascii_whitespace();
        let (qid, doc) = (f.next().unwrap(), f.nth(1).unwrap());
        let score = f.nth(1).unwrap().parse().unwrap();
        if current != Some(qid) {
            finish(current, &mut ranked, &mut sums);
            current = Some(qid);
        }
        ranked.push((score, doc));
    }
    finish(current, &mut ranked, &mut sums);
    sums.map(|s| s / queries as f64)
}
