//! Page-span relevance: a retrieved hit `{doc_id, start_page, end_page}` is
//! relevant to a gold span of the same document when their inclusive page ranges
//! overlap, after widening the gold span by a page tolerance; or, doc-only, when the
//! documents match. Crediting gives each gold span to at most one hit, so repeated
//! hits never inflate recall or nDCG.

use crate::base::value::Value;
use crate::library::error::RuntimeErrorKind;

struct Span<'a> {
    doc: &'a str,
    start: f64,
    end: f64,
}

fn span<'a>(value: &'a Value, what: &'static str) -> Result<Span<'a>, RuntimeErrorKind> {
    let Value::Object(fields) = value else {
        return Err(RuntimeErrorKind::SpanNotObject {
            what,
            found: value.clone(),
        });
    };
    let get = |name: &str| {
        fields
            .iter()
            .rev()
            .find(|(k, _)| &**k == name)
            .map(|(_, v)| v)
    };
    match (get("doc_id"), get("start_page"), get("end_page")) {
        (Some(Value::String(doc)), Some(Value::Number(start)), Some(Value::Number(end))) => {
            Ok(Span {
                doc,
                start: *start,
                end: *end,
            })
        }
        _ => Err(RuntimeErrorKind::SpanFields {
            what,
            found: value.clone(),
        }),
    }
}

fn spans<'a>(value: &'a Value, what: &'static str) -> Result<Vec<Span<'a>>, RuntimeErrorKind> {
    match value {
        Value::Null => Ok(Vec::new()),
        Value::List(items) => items.iter().map(|v| span(v, what)).collect(),
        other => Err(RuntimeErrorKind::SpansNotList {
            what,
            found: other.clone(),
        }),
    }
}

/// `None` tolerance: doc-only matching.
fn matches(hit: &Span<'_>, gold: &Span<'_>, tolerance: Option<f64>) -> bool {
    hit.doc == gold.doc
        && tolerance.is_none_or(|t| hit.start <= gold.end + t && gold.start - t <= hit.end)
}

fn tolerance(value: &Value) -> Result<Option<f64>, RuntimeErrorKind> {
    match value {
        Value::Null => Ok(None),
        Value::Number(t) if *t >= 0.0 => Ok(Some(*t)),
        other => Err(RuntimeErrorKind::BadTolerance {
            found: other.clone(),
        }),
    }
}

fn flags(values: impl Iterator<Item = bool>) -> Value {
    Value::list(
        values
            .map(|b| Value::Number(f64::from(u8::from(b))))
            .collect(),
    )
}

/// `span_relevance(hits, gold, tolerance)`: per rank, 1 when the hit matches any gold
/// span (tolerance 0: overlapping pages; n: within n pages; null: same document).
pub fn span_relevance(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    let (hits, gold, tol) = (
        spans(a[0], "hit")?,
        spans(a[1], "gold span")?,
        tolerance(a[2])?,
    );
    Ok(flags(
        hits.iter().map(|h| gold.iter().any(|g| matches(h, g, tol))),
    ))
}

/// `span_credit(hits, gold, tolerance)`: per rank, 1 when the hit is credited to a gold
/// span: walking the hits in rank order, each hit takes the first gold span, in
/// `(doc_id, start_page, end_page)` order, that it matches and that is not yet taken.
pub fn span_credit(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    let (hits, mut gold, tol) = (
        spans(a[0], "hit")?,
        spans(a[1], "gold span")?,
        tolerance(a[2])?,
    );
    gold.sort_by(|x, y| {
        x.doc
            .cmp(y.doc)
            .then(x.start.total_cmp(&y.start))
            .then(x.end.total_cmp(&y.end))
    });
    let mut taken = vec![false; gold.len()];
    Ok(flags(hits.iter().map(|h| {
        let first = (0..gold.len()).find(|&i| !taken[i] && matches(h, &gold[i], tol));
        first.inspect(|&i| taken[i] = true).is_some()
    })))
}

/// `spans_ordered(spans)`: every span has `start_page <= end_page`.
pub fn spans_ordered(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::Bool(
        spans(a[0], "span")?.iter().all(|s| s.start <= s.end),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(doc: &str, start: f64, end: f64) -> Value {
        Value::Object(
            vec![
                ("doc_id".into(), Value::from(doc)),
                ("start_page".into(), start.into()),
                ("end_page".into(), end.into()),
            ]
            .into(),
        )
    }

    fn nums(v: Value) -> Vec<f64> {
        let Value::List(items) = v else { panic!() };
        items
            .iter()
            .map(|x| {
                if let Value::Number(n) = x {
                    *n
                } else {
                    panic!()
                }
            })
            .collect()
    }

    #[test]
    fn relevance_by_overlap_tolerance_and_document() {
        let gold = Value::list(vec![s("A", 3.0, 4.0)]);
        let hits = Value::list(vec![
            s("A", 4.0, 6.0),
            s("A", 5.0, 5.0),
            s("B", 3.0, 3.0),
            s("A", 1.0, 2.0),
        ]);
        assert_eq!(
            nums(span_relevance(&[&hits.clone(), &gold.clone(), &0.0.into()]).unwrap()),
            [1.0, 0.0, 0.0, 0.0]
        );
        assert_eq!(
            nums(span_relevance(&[&hits.clone(), &gold.clone(), &1.0.into()]).unwrap()),
            [1.0, 1.0, 0.0, 1.0]
        );
        assert_eq!(
            nums(span_relevance(&[&hits, &gold, &Value::Null]).unwrap()),
            [1.0, 1.0, 0.0, 1.0]
        );
    }

    #[test]
    fn each_gold_span_is_credited_once_in_gold_order() {
        // Two gold spans; the first hit matches both and takes the first in
        // (doc_id, start_page, end_page) order, B 1-2, although A is listed first.
        let gold = Value::list(vec![s("B", 5.0, 6.0), s("B", 1.0, 2.0)]);
        let hits = Value::list(vec![
            s("B", 1.0, 9.0),
            s("B", 1.0, 1.0),
            s("B", 6.0, 6.0),
            s("B", 5.0, 5.0),
        ]);
        // Hit 2 matches only B 1-2, already taken: no credit. Hit 3 takes B 5-6.
        assert_eq!(
            nums(span_credit(&[&hits, &gold, &0.0.into()]).unwrap()),
            [1.0, 0.0, 1.0, 0.0]
        );
    }

    #[test]
    fn malformed_spans_are_errors() {
        assert!(span_relevance(&[
            &Value::list(vec![Value::from("x")]),
            &Value::Null,
            &0.0.into()
        ])
        .is_err());
        assert!(span_relevance(&[&Value::Null, &Value::Null, &(-1.0).into()]).is_err());
        assert_eq!(
            spans_ordered(&[&Value::list(vec![s("A", 3.0, 2.0)])]).unwrap(),
            Value::Bool(false)
        );
    }
}
