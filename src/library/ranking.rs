//! Ranking measures over a query's *gains*: the relevance level of the document at
//! each rank (0 for unjudged), as `relevance(docs, judgements)` computes them. A
//! level of 1 or more counts as relevant, as trec_eval's default. The formulas and
//! edge rules are written out in grammar/README.md.

use std::collections::HashMap;

use crate::base::value::Value;
use crate::library::error::RuntimeErrorKind;

/// A query's gains, read in place: every entry is checked to be a number once, so
/// that a measure at cutoff k reads only the top k and allocates nothing.
#[derive(Clone, Copy)]
struct Gains<'a>(&'a [Value]);

impl<'a> Gains<'a> {
    fn iter(self) -> impl Iterator<Item = f64> + 'a {
        // Only numbers get past `gains`.
        self.0.iter().map(|v| v.as_f64().unwrap_or(0.0))
    }
}

fn gains(value: &Value) -> Result<Gains<'_>, RuntimeErrorKind> {
    match value {
        Value::Null => Ok(Gains(&[])),
        Value::List(items) => match items.iter().find(|v| !matches!(v, Value::Number(_))) {
            Some(other) => Err(RuntimeErrorKind::GainNotNumber {
                found: other.clone(),
            }),
            None => Ok(Gains(items)),
        },
        other => Err(RuntimeErrorKind::GainsNotList {
            found: other.clone(),
        }),
    }
}

/// A cutoff: a whole number ≥ 1.
fn cutoff(value: &Value) -> Result<usize, RuntimeErrorKind> {
    match value {
        Value::Number(k) if *k >= 1.0 && k.fract() == 0.0 => Ok(*k as usize),
        other => Err(RuntimeErrorKind::BadCutoff {
            found: other.clone(),
        }),
    }
}

fn number(value: &Value) -> f64 {
    value.as_f64().unwrap_or(0.0)
}

fn relevant(gain: f64) -> bool {
    gain >= 1.0
}

/// `relevance(docs, judgements)`: the judged level of each ranked document; a
/// document repeated in the ranking gains only at its first rank.
pub fn relevance(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    let mut judged = match a[1] {
        Value::Null => Judged::new(&[]),
        Value::Object(fields) => Judged::new(fields),
        other => {
            return Err(RuntimeErrorKind::JudgementsNotLevels {
                found: other.clone(),
            })
        }
    };
    let docs: &[Value] = match a[0] {
        Value::Null => &[],
        Value::List(docs) => docs,
        other => {
            return Err(RuntimeErrorKind::RankingNotList {
                found: other.clone(),
            })
        }
    };
    let mut out = Vec::with_capacity(docs.len());
    for doc in docs {
        let Value::String(id) = doc else {
            return Err(RuntimeErrorKind::RankingIdNotString { found: doc.clone() });
        };
        // A negative level (a junk judgement) gains nothing, as in trec_eval.
        out.push(Value::Number(judged.take(id).max(0.0)));
    }
    Ok(Value::list(out))
}

/// A query's judgements, each taken by the first ranked document that matches it:
/// a document ranked again is unjudged by then. A query has a handful, for which
/// comparing each is cheaper than hashing every ranked document.
enum Judged<'a> {
    /// The judgements, and which of them are taken (bit i for the i-th).
    Few(&'a [(std::sync::Arc<str>, Value)], u32),
    Many(HashMap<&'a str, f64, foldhash::fast::FixedState>),
}

impl<'a> Judged<'a> {
    const FEW: usize = 32;

    fn new(fields: &'a [(std::sync::Arc<str>, Value)]) -> Self {
        match fields.len() <= Self::FEW {
            true => Judged::Few(fields, 0),
            // Collected in order, so a repeated key keeps its last level, as the
            // object does.
            false => Judged::Many(fields.iter().map(|(k, v)| (&**k, number(v))).collect()),
        }
    }

    /// The level of `doc` if it is judged and not yet taken, else 0.
    fn take(&mut self, doc: &str) -> f64 {
        match self {
            Judged::Few(fields, taken) => {
                let Some(i) = fields.iter().rposition(|(k, _)| **k == *doc) else {
                    return 0.0;
                };
                let bit = 1u32 << i;
                match *taken & bit {
                    0 => {
                        *taken |= bit;
                        number(&fields[i].1)
                    }
                    _ => 0.0,
                }
            }
            Judged::Many(levels) => levels.remove(doc).unwrap_or(0.0),
        }
    }
}

/// `count_relevant(judgements)`: judged documents with level ≥ 1.
pub fn count_relevant(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    let count = match a[0] {
        Value::Null => 0,
        Value::Object(fields) => fields.iter().filter(|(_, v)| relevant(number(v))).count(),
        other => {
            return Err(RuntimeErrorKind::JudgementsNotObject {
                found: other.clone(),
            })
        }
    };
    Ok(Value::Number(count as f64))
}

/// `ideal_gains(judgements)`: the positive levels, best first: the ideal ranking.
pub fn ideal_gains(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    let mut levels: Vec<f64> = match a[0] {
        Value::Null => Vec::new(),
        Value::Object(fields) => fields
            .iter()
            .map(|(_, v)| number(v))
            .filter(|g| *g > 0.0)
            .collect(),
        other => {
            return Err(RuntimeErrorKind::JudgementsNotObject {
                found: other.clone(),
            })
        }
    };
    levels.sort_by(|x, y| y.total_cmp(x));
    Ok(Value::list(levels.into_iter().map(Value::Number).collect()))
}

fn hits_in_top(g: Gains, k: usize) -> usize {
    g.iter().take(k).filter(|x| relevant(*x)).count()
}

/// `precision_at(gains, k)`: relevant in the top k, over k (even if fewer were retrieved).
pub fn precision_at(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    let (g, k) = (gains(a[0])?, cutoff(a[1])?);
    Ok(Value::Number(hits_in_top(g, k) as f64 / k as f64))
}

/// `recall_at(gains, relevant, k)`: relevant in the top k over all relevant; 0 when none are.
pub fn recall_at(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    let (g, total, k) = (gains(a[0])?, number(a[1]), cutoff(a[2])?);
    Ok(Value::Number(if total > 0.0 {
        hits_in_top(g, k) as f64 / total
    } else {
        0.0
    }))
}

/// `success_at(gains, k)`: 1 when any of the top k is relevant, else 0.
pub fn success_at(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    let (g, k) = (gains(a[0])?, cutoff(a[1])?);
    Ok(Value::Number(f64::from(u8::from(hits_in_top(g, k) > 0))))
}

fn reciprocal_rank_of(g: Gains, k: usize) -> f64 {
    g.iter()
        .take(k)
        .position(relevant)
        .map_or(0.0, |i| 1.0 / (i + 1) as f64)
}

/// `reciprocal_rank(gains)`: 1 / rank of the first relevant document, else 0.
pub fn reciprocal_rank(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::Number(reciprocal_rank_of(gains(a[0])?, usize::MAX)))
}

/// `reciprocal_rank_at(gains, k)`: as `reciprocal_rank`, looking at the top k only.
pub fn reciprocal_rank_at(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::Number(reciprocal_rank_of(
        gains(a[0])?,
        cutoff(a[1])?,
    )))
}

fn average_precision_of(g: Gains, total: f64, k: usize) -> f64 {
    if total <= 0.0 {
        return 0.0;
    }
    let mut hits = 0usize;
    let mut sum = 0.0;
    for (i, gain) in g.iter().take(k).enumerate() {
        if relevant(gain) {
            hits += 1;
            sum += hits as f64 / (i + 1) as f64;
        }
    }
    sum / total
}

/// `average_precision(gains, relevant)`: the mean of precision at each relevant
/// document's rank, over all relevant documents (retrieved or not); 0 when none are.
pub fn average_precision(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::Number(average_precision_of(
        gains(a[0])?,
        number(a[1]),
        usize::MAX,
    )))
}

/// `average_precision_at(gains, relevant, k)`: as `average_precision`, top k only.
pub fn average_precision_at(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::Number(average_precision_of(
        gains(a[0])?,
        number(a[1]),
        cutoff(a[2])?,
    )))
}

fn dcg(g: Gains, k: usize, exponential: bool) -> f64 {
    g.iter()
        .take(k)
        .enumerate()
        .map(|(i, gain)| {
            let gain = if exponential {
                2f64.powf(gain) - 1.0
            } else {
                gain
            };
            gain / ((i + 2) as f64).log2()
        })
        .sum()
}

fn ndcg(a: &[&Value], exponential: bool) -> Result<Value, RuntimeErrorKind> {
    let (g, ideal, k) = (gains(a[0])?, gains(a[1])?, cutoff(a[2])?);
    let best = dcg(ideal, k, exponential);
    Ok(Value::Number(if best > 0.0 {
        dcg(g, k, exponential) / best
    } else {
        0.0
    }))
}

/// `ndcg_at(gains, ideal, k)`: DCG of the top k (gain = level, discount log2(rank + 1))
/// over the DCG of the ideal gains' top k; 0 when nothing is relevant.
pub fn ndcg_at(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    ndcg(a, false)
}

/// `ndcg_exp_at(gains, ideal, k)`: as `ndcg_at` with gain 2^level − 1.
pub fn ndcg_exp_at(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    ndcg(a, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nums(xs: &[f64]) -> Value {
        Value::list(xs.iter().map(|x| Value::Number(*x)).collect())
    }

    #[test]
    fn negative_levels_gain_nothing_as_in_trec_eval() {
        let docs = Value::list(vec![Value::from("a"), Value::from("b"), Value::from("c")]);
        let judged = Value::Object(
            [("a", -2.0), ("b", 1.0), ("c", -1.0)]
                .iter()
                .map(|(k, v)| (std::sync::Arc::from(*k), Value::Number(*v)))
                .collect(),
        );
        let gains = relevance(&[&docs, &judged.clone()]).unwrap();
        assert_eq!(gains, nums(&[0.0, 1.0, 0.0]));
        let ideal = ideal_gains(&[&judged]).unwrap();
        let ndcg = ndcg_at(&[&gains, &ideal, &Value::Number(10.0)]).unwrap();
        // Only `b` is relevant, found at rank 2: 1/log2(3), never below zero.
        assert_eq!(ndcg, Value::Number(1.0 / 3f64.log2()));
    }

    fn n(v: Result<Value, RuntimeErrorKind>) -> f64 {
        match v.unwrap() {
            Value::Number(x) => x,
            other => panic!("{other}"),
        }
    }

    #[test]
    fn hand_computed_measures() {
        // Ranking d4, d3, d1 with judgements d1=1, d2=0, d3=2 (the trec_eval example).
        let judged = Value::Object(
            vec![
                ("d1".into(), Value::Number(1.0)),
                ("d2".into(), Value::Number(0.0)),
                ("d3".into(), Value::Number(2.0)),
            ]
            .into(),
        );
        let docs = Value::list(vec!["d4".into(), "d3".into(), "d1".into()]);
        let g = relevance(&[&docs, &judged.clone()]).unwrap();
        assert_eq!(g, nums(&[0.0, 2.0, 1.0]));
        let total = count_relevant(&[&judged]).unwrap();
        assert_eq!(total, Value::Number(2.0));
        let ideal = ideal_gains(&[&judged]).unwrap();
        assert_eq!(ideal, nums(&[2.0, 1.0]));
        assert_eq!(n(precision_at(&[&g.clone(), &5.0.into()])), 0.4);
        assert_eq!(
            n(recall_at(&[&g.clone(), &total.clone(), &2.0.into()])),
            0.5
        );
        assert_eq!(n(reciprocal_rank(&[&g])), 0.5);
        assert_eq!(n(reciprocal_rank_at(&[&g.clone(), &1.0.into()])), 0.0);
        assert_eq!(n(success_at(&[&g.clone(), &2.0.into()])), 1.0);
        // AP = (1/2 + 2/3) / 2; pytrec_eval gives 0.5833333333333333.
        assert_eq!(
            n(average_precision(&[&g.clone(), &total])),
            0.5833333333333333
        );
        // nDCG@5 = (2/log2 3 + 1/log2 4) / (2/log2 2 + 1/log2 3); pytrec_eval: 0.66967181649423.
        assert!((n(ndcg_at(&[&g, &ideal, &5.0.into()])) - 0.66967181649423).abs() < 1e-12);
    }

    #[test]
    fn edge_rules() {
        let none = nums(&[]);
        // No relevant documents: recall, AP and nDCG are 0, not undefined.
        assert_eq!(
            n(recall_at(&[&nums(&[0.0]), &0.0.into(), &5.0.into()])),
            0.0
        );
        assert_eq!(n(average_precision(&[&nums(&[0.0]), &0.0.into()])), 0.0);
        assert_eq!(
            n(ndcg_at(&[&nums(&[0.0]), &none.clone(), &5.0.into()])),
            0.0
        );
        // Fewer than k retrieved: precision still divides by k.
        assert_eq!(n(precision_at(&[&nums(&[1.0]), &10.0.into()])), 0.1);
        // A repeated document gains once.
        let judged = Value::Object(vec![("a".into(), Value::Number(1.0))].into());
        let docs = Value::list(vec!["a".into(), "a".into()]);
        assert_eq!(relevance(&[&docs, &judged]).unwrap(), nums(&[1.0, 0.0]));
        assert!(precision_at(&[&none, &0.0.into()]).is_err());
    }

    /// `relevance` as its rule reads: each id's last judged level, clamped at 0,
    /// at its first rank only.
    fn relevance_by_rule(docs: &[String], judged: &[(String, f64)]) -> Vec<f64> {
        let levels: HashMap<&str, f64> = judged.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        let mut seen = std::collections::HashSet::new();
        docs.iter()
            .map(|d| match seen.insert(d.as_str()) {
                true => levels.get(d.as_str()).copied().unwrap_or(0.0).max(0.0),
                false => 0.0,
            })
            .collect()
    }

    proptest::proptest! {
        // Few judgements (compared one by one) and many (hashed), repeated ids on
        // both sides, negative levels.
        #[test]
        fn relevance_follows_its_rule(
            docs in proptest::collection::vec("[a-e]{1,2}", 0..40),
            judged in proptest::collection::vec(("[a-e]{1,2}", -2i8..4), 0..60),
        ) {
            let judged: Vec<(String, f64)> = judged.into_iter().map(|(k, v)| (k, f64::from(v))).collect();
            let object = Value::Object(
                judged.iter().map(|(k, v)| (std::sync::Arc::from(k.as_str()), Value::Number(*v))).collect(),
            );
            let list = Value::list(docs.iter().map(|d| Value::from(d.as_str())).collect());
            let expected = Value::list(relevance_by_rule(&docs, &judged).into_iter().map(Value::Number).collect());
            proptest::prop_assert_eq!(relevance(&[&list, &object]).unwrap(), expected);
        }

        // Read in place, a measure at a cutoff still rejects a non-number anywhere.
        #[test]
        fn a_gain_past_the_cutoff_is_still_checked(len in 1usize..30, at in 0usize..30) {
            let at = at % len;
            let mut items: Vec<Value> = (0..len).map(|i| Value::Number((i % 3) as f64)).collect();
            items[at] = Value::from("x");
            let g = Value::list(items);
            proptest::prop_assert!(precision_at(&[&g.clone(), &1.0.into()]).is_err());
            proptest::prop_assert!(ndcg_at(&[&nums(&[1.0]), &g, &1.0.into()]).is_err());
        }
    }
}
