//! Many aggregates against few, on the same items: what a spec with 46
//! aggregates over 10 class predicates costs against a 7-metric one. Each
//! per-class predicate (`pred == "c3"`, `gold == "c3"`) is read by several
//! aggregates; the engine computes it once per item however many use it.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

pub const CLASSES: usize = 10;

/// `items` classification items: a gold class, a predicted one (right 70% of
/// the time) and a score, in a deterministic order.
pub fn generate(path: &Path, items: u64) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for id in 0..items {
        let gold = next() % CLASSES as u64;
        let pred = if next() % 10 < 7 {
            gold
        } else {
            next() % CLASSES as u64
        };
        let score = (next() % 1000) as f64 / 1000.0;
        writeln!(
            out,
            "{{\"id\": {id}, \"gold\": \"c{gold}\", \"pred\": \"c{pred}\", \"score\": {score}}}"
        )?;
    }
    out.flush()
}

const HEAD: &str = "version: 1.0.0
datasets:
  items: { format: jsonl, path: items.jsonl, key: id }
metrics:
";

/// Seven metrics, an aggregate each.
pub fn few() -> String {
    let mut spec = format!("name: few\n{HEAD}");
    spec.push_str(
        "  accuracy: ratio(items.pred == items.gold)
  n: count()
  mean_score: mean(items.score)
  p90_score: percentile(items.score, 90)
  confident: ratio(items.score > 0.5)
  right_score: mean(items.score where items.pred == items.gold)
  top_score: max(items.score)
reports: [json]
",
    );
    spec
}

/// Per class its precision, recall, support and predicted count (40), and
/// six over all items: 46 aggregates, with an F1 per class from them.
pub fn many() -> String {
    let mut spec = format!("name: many\n{HEAD}");
    for c in 0..CLASSES {
        let (pred, gold) = (
            format!("items.pred == \"c{c}\""),
            format!("items.gold == \"c{c}\""),
        );
        let _ = writeln!(spec, "  precision_c{c}: ratio({gold} where {pred})");
        let _ = writeln!(spec, "  recall_c{c}: ratio({pred} where {gold})");
        let _ = writeln!(spec, "  support_c{c}: count({gold})");
        let _ = writeln!(spec, "  predicted_c{c}: count({pred})");
        let _ = writeln!(
            spec,
            "  f1_c{c}: 2 * precision_c{c} * recall_c{c} / (precision_c{c} + recall_c{c})"
        );
    }
    spec.push_str(
        "  accuracy: ratio(items.pred == items.gold)
  n: count()
  mean_score: mean(items.score)
  p90_score: percentile(items.score, 90)
  right_score: mean(items.score where items.pred == items.gold)
  top_score: max(items.score)
reports: [json]
",
    );
    spec
}
