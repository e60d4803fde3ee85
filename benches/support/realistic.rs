//! Seed-000 data shaped like real traces, the profile of `../shared/bench/gen_rag.py`
//! (its mix, not its bytes): traces out of gold order (blocks of 64 shuffled, retries
//! written up to 2,000 items later), 5-20 retrieved ids, 60-250-character claims,
//! unused fields (`q`, `ts`, `latency_ms`, `ok`, `reason`), ~1% missing and ~1%
//! repeated traces (the later one wins), ~0.2% keyed `q_id`, ~0.5% failures with
//! `answer_json: null`, refusal tokens in varied case and padding, raw non-ASCII
//! text and escaped quotes. The same seed and size always give the same bytes.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use super::generate::Rng;

const WORDS: &str = "the of and to in is was for on that with as by at from which its be this \
are were has have an or not had it their been also first one after new other two more than into \
during all between most only over such some under later about when can where while these both \
three system model data river city council treaty protocol engine battery reactor compiler kernel \
network protein enzyme vaccine mission satellite orbit telescope planet galaxy museum library \
archive bridge railway harbor airport stadium festival parliament election court company revenue \
market merger acquisition patent license standard release version update population climate \
rainfall glacier volcano earthquake forest desert island peninsula algorithm database index query \
latency throughput cache memory storage cluster region founded established completed announced \
reported measured estimated designed launched approximately nearly roughly exactly annual \
quarterly northern southern eastern western central national international regional municipal \
federal european asian african Paris Berlin Tokyo Nairobi Lima Oslo Toronto Sydney Mumbai Cairo \
Seoul Lagos Quito Einstein Curie Turing Lovelace Darwin Newton Hopper Noether Ramanujan Tesla Faraday";
const EXOTIC: &[&str] = &[
    "Zürich",
    "São",
    "café",
    "naïve",
    "Dvořák",
    "Łódź",
    "Ærø",
    "Kraków",
    "Málaga",
    "Reykjavík",
    "Düsseldorf",
    "Curaçao",
    "東京",
];
const NUMS: &[&str] = &[
    "1848",
    "1969",
    "2004",
    "2019",
    "2023",
    "12",
    "42",
    "3.5",
    "7,200",
    "120",
    "98.6",
    "15%",
    "4 km",
    "250 MW",
    "1.2 million",
    "37 °C",
    "€3.4 billion",
    "$870",
    "64 GB",
    "9 hours",
];
const QUESTION_STARTS: &[&str] = &[
    "What is",
    "When was",
    "Who founded",
    "How many",
    "Which",
    "Where is",
    "Why did",
    "How does",
    "What year did",
    "What was the",
    "Who designed",
    "How long is",
];
const CONSTRAINTS: &[&str] = &[
    "Answer in one sentence.",
    "Cite at least one source.",
    "Use metric units.",
    "Do not speculate beyond the provided context.",
    "Include the year if known.",
    "Respond in English.",
    "Quote the relevant figure exactly.",
    "Keep the answer under 50 words.",
    "Name the organisation responsible.",
    "Mention the location explicitly.",
    "If the context is insufficient, say so.",
    "Prefer the most recent figure.",
    "Give the full name on first mention.",
    "Avoid abbreviations.",
    "Report currency as stated.",
];
const REFUSALS: &[&str] = &[
    "not in context",
    "not in context",
    "not in context",
    "not in context",
    "Not in context",
    "NOT IN CONTEXT",
    "Not In Context",
    " not in context",
    "not in context ",
    "  Not in context  ",
    "\tnot in context\n",
    "not in context\n",
];
const FAILURES: &[&str] = &[
    "timeout",
    "rate_limited",
    "upstream_error",
    "context_overflow",
];
const REASONS: &[Option<&str>] = &[
    None,
    None,
    None,
    None,
    None,
    None,
    Some(""),
    Some("stop"),
    Some("length"),
];

struct Gold {
    qid: String,
    answerable: bool,
    phrases: Vec<String>,
    citations: Vec<String>,
    constraints: Vec<&'static str>,
}

struct Generator {
    rng: Rng,
    words: Vec<&'static str>,
    docs: usize,
}

fn quote(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

fn list<S: AsRef<str>>(items: &[S]) -> String {
    let items: Vec<String> = items.iter().map(|s| quote(s.as_ref())).collect();
    format!("[{}]", items.join(", "))
}

impl Generator {
    fn unit(&mut self) -> f64 {
        (self.rng.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn between(&mut self, low: usize, high: usize) -> usize {
        low + self.rng.below(high - low + 1)
    }

    fn doc_id(&mut self) -> String {
        format!("doc{}#{}", self.rng.below(self.docs), self.rng.below(40))
    }

    /// A word: a number with probability `nums`, a non-ASCII word with `exotic`.
    fn word(&mut self, nums: f64, exotic: f64) -> &'static str {
        let x = self.unit();
        let list: &[&'static str] = if x < nums {
            NUMS
        } else if x < nums + exotic {
            EXOTIC
        } else {
            &self.words
        };
        list[self.rng.below(list.len())]
    }

    /// Words whose joined length is about `low..=high` characters.
    fn words_to_len(&mut self, low: usize, high: usize) -> String {
        let target = self.between(low, high);
        let mut out: Vec<&str> = Vec::new();
        let mut len = 0;
        while len < target {
            let w = self.word(0.08, 0.005);
            let w_len = w.chars().count();
            if len + w_len + 1 > high && len >= low {
                break;
            }
            len += w_len + usize::from(!out.is_empty());
            out.push(w);
        }
        out.join(" ").chars().take(high).collect()
    }

    /// 5-40 characters of one to five words, sometimes capitalised.
    fn phrase(&mut self) -> String {
        loop {
            let n = self.between(1, 5);
            let mut words: Vec<String> = (0..n).map(|_| self.word(0.15, 0.03).into()).collect();
            if self.unit() < 0.3 {
                words = words.iter().map(|w| capitalise(w)).collect();
            }
            let s = words.join(" ");
            if (5..=40).contains(&s.chars().count()) {
                return s;
            }
        }
    }

    fn recase(&mut self, s: &str) -> String {
        match self.unit() {
            x if x < 0.70 => s.into(),
            x if x < 0.85 => s.to_lowercase(),
            x if x < 0.95 => s.to_uppercase(),
            _ => s.split(' ').map(capitalise).collect::<Vec<_>>().join(" "),
        }
    }

    /// A 60-250-character sentence holding each of `inserts`, sometimes with a
    /// quoted word (JSON escapes).
    fn claim(&mut self, inserts: &[String]) -> String {
        let inserted: usize = inserts.iter().map(|p| p.chars().count() + 1).sum();
        let low = 60usize.saturating_sub(inserted).max(10);
        let high = (240usize.saturating_sub(inserted)).max(low + 5);
        let base = self.words_to_len(low, high);
        let mut words: Vec<String> = base.split(' ').map(String::from).collect();
        for p in inserts {
            let at = self.between(0, words.len());
            words.insert(at, p.clone());
        }
        if self.unit() < 0.05 {
            let at = self.rng.below(words.len());
            words[at] = format!("\"{}\"", words[at]);
        }
        let mut s = capitalise(&words.join(" "));
        let len = s.chars().count();
        if len < 60 {
            let more = self.words_to_len(60 - len, 70);
            s = format!("{s} {more}");
        }
        if s.chars().count() > 249 && inserts.is_empty() {
            s = s.chars().take(249).collect();
        }
        s + "."
    }

    fn question(&mut self) -> String {
        loop {
            let start = self.rng.pick(QUESTION_STARTS);
            let rest = self.words_to_len(30, 110);
            let s: String = format!("{start} {rest}")
                .chars()
                .take(119)
                .collect::<String>()
                + "?";
            if s.chars().count() >= 40 {
                return s;
            }
        }
    }

    fn sample<T: Clone>(&mut self, items: &[T], k: usize) -> Vec<T> {
        let mut pool: Vec<T> = items.to_vec();
        (0..k.min(pool.len()))
            .map(|_| pool.swap_remove(self.rng.below(pool.len())))
            .collect()
    }

    fn gold(&mut self, i: u64) -> Gold {
        let answerable = self.unit() < 0.80;
        let (mut phrases, mut citations) = (Vec::new(), Vec::new());
        if answerable {
            phrases = (0..self.between(1, 3)).map(|_| self.phrase()).collect();
            for _ in 0..self.between(1, 2) {
                let d = self.doc_id();
                if !citations.contains(&d) {
                    citations.push(d);
                }
            }
        }
        let n = self.between(0, 2);
        let constraints = self.sample(CONSTRAINTS, n);
        Gold {
            qid: format!("q{i:07}"),
            answerable,
            phrases,
            citations,
            constraints,
        }
    }

    fn gold_line(g: &Gold) -> String {
        format!(
            r#"{{"qid": {}, "answerable": {}, "gold_claim_substr": {}, "gold_citations": {}, "constraints": {}}}"#,
            quote(&g.qid),
            g.answerable,
            list(&g.phrases),
            list(&g.citations),
            list(&g.constraints)
        )
    }

    /// 5-20 distinct ids; the gold ones mostly in the top 5, sometimes lower, sometimes missing.
    fn retrieved(&mut self, g: &Gold) -> Vec<String> {
        let m = self.between(5, 20);
        let mut ids: Vec<String> = Vec::with_capacity(m);
        while ids.len() < m {
            let d = self.doc_id();
            if !ids.contains(&d) {
                ids.push(d);
            }
        }
        if !g.citations.is_empty() {
            let slots: Vec<usize> = match self.unit() {
                x if x < 0.70 => self.sample(&(0..m.min(5)).collect::<Vec<_>>(), g.citations.len()),
                x if x < 0.85 => self.sample(&(0..m).collect::<Vec<_>>(), g.citations.len()),
                _ => {
                    let k = self.rng.below(g.citations.len());
                    self.sample(&(0..m).collect::<Vec<_>>(), k)
                }
            };
            for (d, slot) in g.citations.iter().zip(slots) {
                if !ids.contains(d) {
                    ids[slot] = d.clone();
                }
            }
        }
        ids
    }

    fn latency(&mut self) -> f64 {
        // Log-normal(6.8, 0.5) by Box-Muller, rounded to microseconds.
        let (u, v) = (1.0 - self.unit(), self.unit());
        let z = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
        ((6.8 + 0.5 * z).exp() * 1000.0).round() / 1000.0
    }

    fn trace(&mut self, g: &Gold, ts: &str, failed: bool) -> String {
        let key = if self.unit() < 0.002 { "q_id" } else { "qid" };
        let q = self.question();
        let retrieved = self.retrieved(g);
        let head = format!(
            r#"{{"{key}": {}, "q": {}, "retrieved_ids": {}"#,
            quote(&g.qid),
            quote(&q),
            list(&retrieved)
        );
        let latency = self.latency();
        if failed || self.unit() < 0.005 {
            let reason = self.rng.pick(FAILURES);
            return format!(
                r#"{head}, "answer_json": null, "ts": {}, "latency_ms": {}, "ok": false, "reason": {}}}"#,
                quote(ts),
                latency * 4.0,
                quote(reason)
            );
        }
        let refuse = self.unit() < if g.answerable { 0.025 } else { 0.40 };
        let echo: Vec<&str> = if self.unit() < 0.9 {
            g.constraints.clone()
        } else {
            g.constraints.iter().take(1).copied().collect()
        };
        let (claim, mut citations) = if refuse {
            (self.rng.pick(REFUSALS).to_string(), Vec::new())
        } else if g.answerable {
            self.answer(g, &retrieved)
        } else {
            let inserts = if self.unit() < 0.5 {
                vec![self.phrase()]
            } else {
                vec![]
            };
            let claim = self.claim(&inserts);
            let citations = if self.unit() < 0.3 {
                vec![]
            } else {
                let k = self.between(1, 3);
                self.sample(&retrieved, k)
            };
            (claim, citations)
        };
        if !citations.is_empty() && self.unit() < 0.05 {
            *citations.last_mut().expect("not empty") = self.doc_id();
        } else if citations.is_empty() && !refuse && self.unit() < 0.03 {
            citations = vec![self.doc_id()];
        }
        citations.truncate(3);
        let reason = match self.rng.pick(REASONS) {
            Some(r) => quote(r),
            None => "null".into(),
        };
        format!(
            r#"{head}, "answer_json": {{"claim": {}, "citations": {}, "constraints_echo": {}}}, "ts": {}, "latency_ms": {latency}, "ok": true, "reason": {reason}}}"#,
            quote(&claim),
            list(&citations),
            list(&echo),
            quote(ts)
        )
    }

    /// An answerable question answered: ~78% good (a gold phrase, a retrieved gold
    /// citation), the rest missing the phrase and/or citing wrongly.
    fn answer(&mut self, g: &Gold, retrieved: &[String]) -> (String, Vec<String>) {
        let good = self.unit() < 0.78;
        let claim = if good || self.unit() < 0.5 {
            let k = if self.unit() < 0.8 {
                1
            } else {
                2.min(g.phrases.len())
            };
            let picked = self.sample(&g.phrases, k);
            let inserts: Vec<String> = picked.iter().map(|p| self.recase(p)).collect();
            self.claim(&inserts)
        } else {
            self.claim(&[])
        };
        let retrieved_gold: Vec<String> = g
            .citations
            .iter()
            .filter(|d| retrieved.contains(d))
            .cloned()
            .collect();
        let citations = if good && !retrieved_gold.is_empty() {
            let mut c = vec![self.rng.pick(&retrieved_gold).clone()];
            if self.unit() < 0.3 {
                let extra = self.rng.pick(retrieved).clone();
                if !c.contains(&extra) {
                    c.push(extra);
                }
            }
            c
        } else {
            match self.unit() {
                x if x < 0.4 => {
                    let k = self.between(1, 3);
                    self.sample(retrieved, k)
                }
                x if x < 0.6 => vec![],
                _ => vec![self.rng.pick(&g.citations).clone()],
            }
        };
        (claim, citations)
    }
}

fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// `2025-06-01T00:00:00.000Z` plus `millis`.
fn timestamp(millis: u64) -> String {
    let (secs, ms) = (millis / 1000, millis % 1000);
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // June 2025 onwards: count days through the months from June 1st.
    let months = [30, 31, 31, 30, 31, 30, 31, 31, 28, 31, 30, 31];
    let (mut year, mut month, mut day) = (2025, 6, days);
    let mut i = 0;
    while day >= months[i % 12] {
        day -= months[i % 12];
        i += 1;
        month += 1;
        if month > 12 {
            month = 1;
            year += 1;
        }
    }
    format!(
        "{year}-{month:02}-{:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        day + 1,
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// Writes a block of trace lines in shuffled order: completion order is not
/// submission order.
fn flush(out: &mut impl Write, block: &mut Vec<String>, rng: &mut Rng) -> std::io::Result<()> {
    for i in (1..block.len()).rev() {
        block.swap(i, rng.below(i + 1));
    }
    for line in block.drain(..) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// Writes `items` gold records and their traces into `dir`.
pub fn generate(dir: &Path, items: u64, seed: u64) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut gold_out = BufWriter::with_capacity(1 << 20, File::create(dir.join("gold.jsonl"))?);
    let mut trace_out = BufWriter::with_capacity(1 << 20, File::create(dir.join("trace.jsonl"))?);
    let mut gen = Generator {
        rng: Rng::new(seed),
        words: WORDS.split_whitespace().collect(),
        docs: (items as usize / 2).max(2000),
    };
    let mut pending: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    let mut block: Vec<String> = Vec::with_capacity(128);
    for i in 0..items {
        let g = gen.gold(i);
        writeln!(gold_out, "{}", Generator::gold_line(&g))?;
        let now = i * 350;
        match gen.unit() {
            x if x < 0.01 => {} // no trace
            x if x < 0.02 => {
                let failed = gen.unit() < 0.5;
                block.push(gen.trace(&g, &timestamp(now), failed));
                let delay = gen.between(1, 2000) as u64;
                let retry = gen.trace(&g, &timestamp(now + delay * 350), false);
                pending.entry(i + delay).or_default().push(retry);
            }
            _ => block.push(gen.trace(&g, &timestamp(now), false)),
        }
        block.extend(pending.remove(&i).unwrap_or_default());
        if block.len() >= 64 {
            flush(&mut trace_out, &mut block, &mut gen.rng)?;
        }
    }
    block.extend(pending.into_values().flatten());
    flush(&mut trace_out, &mut block, &mut gen.rng)?;
    trace_out.flush()?;
    gold_out.flush()
}
