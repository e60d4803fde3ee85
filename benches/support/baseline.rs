//! The yardstick: a hand-written, single-purpose Rust scorer for seed 000's metrics
//! (typed serde structs borrowing from the line, gold in a hash map, traces
//! streamed). Not used by the engine; the benchmark compares against it.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{BufRead, BufReader};

use serde::Deserialize;

#[derive(Deserialize)]
struct Gold<'a> {
    #[serde(borrow)]
    qid: Cow<'a, str>,
    answerable: bool,
    #[serde(borrow, default)]
    gold_claim_substr: Option<Vec<Cow<'a, str>>>,
    #[serde(borrow, default)]
    gold_citations: Option<Vec<Cow<'a, str>>>,
}

#[derive(Deserialize)]
struct Answer<'a> {
    #[serde(borrow, default)]
    claim: Option<Cow<'a, str>>,
    #[serde(default)]
    citations: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct Trace<'a> {
    #[serde(borrow, default)]
    qid: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    q_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    retrieved_ids: Option<Vec<Cow<'a, str>>>,
    #[serde(borrow, default)]
    answer_json: Option<Answer<'a>>,
}

struct Kept {
    claim: String,
    citations: Option<Vec<String>>,
    retrieved: Vec<String>,
}

struct GoldKept {
    answerable: bool,
    substr: Option<Vec<String>>,
    citations: Vec<String>,
}

#[derive(Debug, PartialEq)]
pub struct Metrics {
    pub answered: u64,
    pub refused: u64,
    pub precision: f64,
    pub chr: f64,
    pub under_refusal: f64,
    pub over_refusal: f64,
    pub recall_at_k: f64,
}

fn lines(path: &str) -> impl Iterator<Item = String> {
    BufReader::with_capacity(1 << 20, std::fs::File::open(path).expect("data file"))
        .lines()
        .map(|l| l.expect("readable line"))
        .filter(|l| !l.trim().is_empty())
}

pub fn score(gold_path: &str, trace_path: &str, k: usize) -> Metrics {
    let mut gold: Vec<(String, GoldKept)> = Vec::new();
    for line in lines(gold_path) {
        let g: Gold<'_> = serde_json::from_str(&line).expect("gold JSON");
        gold.push((
            g.qid.into_owned(),
            GoldKept {
                answerable: g.answerable,
                substr: g
                    .gold_claim_substr
                    .map(|v| v.into_iter().map(|s| s.to_lowercase()).collect()),
                citations: g
                    .gold_citations
                    .unwrap_or_default()
                    .into_iter()
                    .map(Cow::into_owned)
                    .collect(),
            },
        ));
    }
    let mut traces: HashMap<String, Kept> = HashMap::with_capacity(gold.len());
    for line in lines(trace_path) {
        let t: Trace<'_> = serde_json::from_str(&line).expect("trace JSON");
        let key = match (t.qid, t.q_id) {
            (Some(q), _) if !q.is_empty() => q,
            (_, Some(q)) if !q.is_empty() => q,
            _ => continue,
        };
        let answer = t.answer_json;
        let (claim, citations) = match answer {
            Some(a) => (
                a.claim.map(|c| c.trim().to_string()).unwrap_or_default(),
                a.citations,
            ),
            None => (String::new(), None),
        };
        let citations = match citations {
            None | Some(serde_json::Value::Null) => Some(Vec::new()),
            Some(serde_json::Value::Array(items)) => Some(
                items
                    .into_iter()
                    .map(|v| v.as_str().unwrap_or_default().to_string())
                    .collect(),
            ),
            Some(_) => None,
        };
        let retrieved = t
            .retrieved_ids
            .unwrap_or_default()
            .into_iter()
            .map(Cow::into_owned)
            .collect();
        traces.insert(
            key.into_owned(),
            Kept {
                claim,
                citations,
                retrieved,
            },
        );
    }
    let (mut s, mut r, mut a, mut u, mut tp, mut hits, mut under, mut over, mut recall) =
        (0u64, 0u64, 0u64, 0u64, 0u64, 0u64, 0u64, 0u64, 0u64);
    let empty = Kept {
        claim: String::new(),
        citations: Some(Vec::new()),
        retrieved: Vec::new(),
    };
    for (qid, g) in &gold {
        let t = traces.get(qid).unwrap_or(&empty);
        let shipped = t.claim.to_lowercase() != "not in context";
        if g.answerable {
            a += 1
        } else {
            u += 1
        }
        if shipped {
            s += 1;
            let claim = t.claim.to_lowercase();
            let contains = match &g.substr {
                None => false,
                Some(v) if v.is_empty() => true,
                Some(v) => v
                    .iter()
                    .any(|n| n.chars().count() >= 5 && claim.contains(n.as_str())),
            };
            let hit = match &t.citations {
                None => false,
                Some(c) if !c.iter().all(|x| t.retrieved.contains(x)) => false,
                Some(c) if g.citations.is_empty() => c.is_empty(),
                Some(c) => c.iter().any(|x| g.citations.contains(x)),
            };
            if !g.answerable {
                under += 1;
            } else {
                hits += u64::from(hit);
                tp += u64::from(contains && hit);
            }
        } else {
            r += 1;
            over += u64::from(g.answerable);
        }
        if g.answerable {
            let top = &t.retrieved[..k.min(t.retrieved.len())];
            recall += u64::from(g.citations.iter().all(|c| top.contains(c)));
        }
    }
    let rate = |n: u64, d: u64, empty: f64| if d == 0 { empty } else { n as f64 / d as f64 };
    Metrics {
        answered: s,
        refused: r,
        precision: rate(tp, s, 1.0),
        chr: rate(hits, s, 1.0),
        under_refusal: rate(under, u, 0.0),
        over_refusal: rate(over, a, 0.0),
        recall_at_k: rate(recall, a, 0.0),
    }
}
