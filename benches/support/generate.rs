//! Deterministic generator of realistic seed-000 gold sets and traces. The same
//! `seed` and size always give the same bytes.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// xorshift64*: fast and deterministic. Also used by the tests' case generators.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const TOPICS: &[&str] = &[
    "retention",
    "encryption",
    "null keys",
    "rate limits",
    "SSO",
    "audit logs",
    "backups",
    "quotas",
    "webhooks",
    "regions",
];
const VERBS: &[&str] = &[
    "rejects", "requires", "allows", "limits", "rotates", "stores", "encrypts", "forwards",
];
const WORDS: &[&str] = &[
    "policy", "service", "cluster", "tenant", "record", "window", "token", "bucket", "replica",
    "index", "shard", "quota",
];

fn phrase(rng: &mut Rng, words: usize) -> String {
    (0..words)
        .map(|_| *rng.pick(WORDS))
        .collect::<Vec<_>>()
        .join(" ")
}

fn doc_id(rng: &mut Rng) -> String {
    format!("d{}#{}", rng.below(5000), 1 + rng.below(9))
}

fn quote(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

fn list(items: &[String]) -> String {
    format!(
        "[{}]",
        items.iter().map(|s| quote(s)).collect::<Vec<_>>().join(",")
    )
}

/// Writes `items` gold records and about as many trace lines (with ~2% repeated
/// traces, ~1% missing, ~1% keyed by `q_id`) into `dir`. Returns the two paths.
pub fn generate(dir: &Path, items: u64, seed: u64) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut gold = BufWriter::with_capacity(1 << 20, File::create(dir.join("gold.jsonl"))?);
    let mut trace = BufWriter::with_capacity(1 << 20, File::create(dir.join("trace.jsonl"))?);
    let mut rng = Rng::new(seed);
    for i in 0..items {
        let qid = format!("Q{i:07}");
        let topic = *rng.pick(TOPICS);
        let verb = *rng.pick(VERBS);
        let answerable = rng.chance(75);
        let fact = format!("{verb} {topic} for every {}", phrase(&mut rng, 2));
        let citations: Vec<String> = (0..1 + rng.below(2)).map(|_| doc_id(&mut rng)).collect();
        let constraints: Vec<String> = if rng.chance(30) {
            vec![format!("The {topic} {verb} rule holds.")]
        } else {
            vec![]
        };
        let question = format!(
            "Does the {} {} {topic} under {}?",
            phrase(&mut rng, 1),
            verb,
            phrase(&mut rng, 3)
        );
        if answerable {
            writeln!(
                gold,
                r#"{{"qid":{},"question":{},"answerable":true,"gold_claim_substr":[{}],"gold_citations":{},"constraints":{},"notes":{}}}"#,
                quote(&qid),
                quote(&question),
                quote(&fact),
                list(&citations),
                list(&constraints),
                quote(&phrase(&mut rng, 4))
            )?;
        } else {
            writeln!(
                gold,
                r#"{{"qid":{},"question":{},"answerable":false,"gold_claim_substr":[],"gold_citations":[]}}"#,
                quote(&qid),
                quote(&question)
            )?;
        }
        if rng.chance(1) {
            continue; // no trace for this item
        }
        let repeats = if rng.chance(2) { 2 } else { 1 };
        for _ in 0..repeats {
            let mut retrieved: Vec<String> = (0..8).map(|_| doc_id(&mut rng)).collect();
            if answerable && rng.chance(85) {
                let at = rng.below(8);
                retrieved[at] = citations[0].clone();
            }
            let refuse = if answerable {
                rng.chance(8)
            } else {
                rng.chance(90)
            };
            let (claim, cited) = if refuse {
                ("not in context".to_string(), vec![])
            } else if answerable && rng.chance(85) {
                let cited = if retrieved.contains(&citations[0]) && rng.chance(85) {
                    citations[0].clone()
                } else {
                    retrieved[rng.below(8)].clone()
                };
                (
                    format!(
                        "The platform {fact}, per the {} documentation.",
                        phrase(&mut rng, 1)
                    ),
                    vec![cited],
                )
            } else {
                (
                    format!("It {} {}.", phrase(&mut rng, 3), phrase(&mut rng, 2)),
                    vec![retrieved[0].clone()],
                )
            };
            let echo = if !constraints.is_empty() && rng.chance(90) {
                constraints.clone()
            } else {
                vec![]
            };
            let key = if rng.chance(1) { "q_id" } else { "qid" };
            let chunks: Vec<String> = retrieved
                .iter()
                .take(4)
                .map(|id| {
                    format!(
                        r#"{{"id":{},"score":0.{:03},"text":{}}}"#,
                        quote(id),
                        rng.below(1000),
                        quote(&phrase(&mut rng, 5))
                    )
                })
                .collect();
            writeln!(
                trace,
                r#"{{"ts":{},"{key}":{},"q":{},"retrieved_ids":{},"answer_json":{{"claim":{},"citations":{},"constraints_echo":{}}},"ok":true,"reason":"ok","latency_ms":{},"model":"rag-small","chunks":[{}]}}"#,
                1_723_430_400 + i,
                quote(&qid),
                quote(&question),
                list(&retrieved),
                quote(&claim),
                list(&cited),
                list(&echo),
                200 + rng.below(1800),
                chunks.join(",")
            )?;
        }
    }
    gold.flush()?;
    trace.flush()
}
