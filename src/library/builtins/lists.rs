//! List built-ins: length and slicing, set operations with Python's equality,
//! ordering and plucking records, and building lists of at most [`MAX_LIST`].

use std::collections::HashSet;
use std::sync::Arc;

use crate::base::value::{SetItem, Value};
use crate::library::error::RuntimeErrorKind;

use super::{list, number, string};

pub(super) fn len(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::Number(match a[0] {
        Value::String(s) => s.chars().count() as f64,
        other => list(other).len() as f64,
    }))
}

pub(super) fn take(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    let items = list(a[0]);
    let n = number(a[1]).unwrap_or(0.0);
    let end = if n >= 0.0 {
        (n as usize).min(items.len())
    } else {
        items.len().saturating_sub((-n) as usize)
    };
    Ok(Value::List(Arc::from(&items[..end])))
}

/// Membership in `haystack`, by Python equality; hashing only pays off for long lists.
pub(super) fn member_test(haystack: &[Value]) -> impl Fn(&Value) -> bool + '_ {
    let set: Option<HashSet<SetItem<'_>>> =
        (haystack.len() > 16).then(|| haystack.iter().map(SetItem).collect());
    move |needle| match &set {
        Some(set) => set.contains(&SetItem(needle)),
        None => haystack.iter().any(|h| h == needle),
    }
}

/// The first of each value by Python equality, in order. Past 16 distinct
/// values they are found by hash, as `member_test` finds them: comparing
/// each item with every value kept made `unique` of a 100,000-id list take
/// 16 s.
pub(super) fn distinct<'a>(items: impl Iterator<Item = &'a Value>) -> Vec<Value> {
    let mut firsts: Vec<&'a Value> = Vec::new();
    let mut seen: Option<HashSet<SetItem<'a>>> = None;
    for item in items {
        let new = match &mut seen {
            Some(seen) => seen.insert(SetItem(item)),
            None => !firsts.contains(&item),
        };
        if new {
            firsts.push(item);
            if seen.is_none() && firsts.len() > 16 {
                seen = Some(firsts.iter().map(|first| SetItem(first)).collect());
            }
        }
    }
    firsts.into_iter().cloned().collect()
}

pub(super) fn subset(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    let within = member_test(list(a[1]));
    Ok(Value::Bool(list(a[0]).iter().all(within)))
}

pub(super) fn overlap(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    let within = member_test(list(a[1]));
    Ok(Value::Bool(list(a[0]).iter().any(within)))
}

pub(super) fn intersect(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    let within = member_test(list(a[1]));
    Ok(Value::list(distinct(
        list(a[0]).iter().filter(|v| within(v)),
    )))
}

pub(super) fn union(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::list(distinct(list(a[0]).iter().chain(list(a[1])))))
}

pub(super) fn unique(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::list(distinct(list(a[0]).iter())))
}

pub(super) fn set_equal(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    let (x, y) = (list(a[0]), list(a[1]));
    Ok(Value::Bool(
        x.iter().all(member_test(y)) && y.iter().all(member_test(x)),
    ))
}

pub(super) fn order_by(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    let keys: Vec<(bool, &str)> = list(a[1])
        .iter()
        .map(|k| match k {
            Value::String(k) => Ok(k
                .strip_prefix('-')
                .map_or((false, &**k), |name| (true, name))),
            other => Err(RuntimeErrorKind::OrderByKeyNotName {
                found: other.clone(),
            }),
        })
        .collect::<Result<_, _>>()?;
    let items = list(a[0]);
    let mut rows: Vec<(Vec<Value>, &Value)> = Vec::with_capacity(items.len());
    for item in items {
        let Value::Object(_) = item else {
            return Err(RuntimeErrorKind::OrderByNotObject {
                found: item.clone(),
            });
        };
        rows.push((
            keys.iter()
                .map(|(_, k)| item.field(k))
                .collect::<Result<_, _>>()?,
            item,
        ));
    }
    // Each key column must hold one comparable kind, as Python's sort requires.
    for (column, (_, name)) in keys.iter().enumerate() {
        let kinds: HashSet<&str> = rows
            .iter()
            .map(|(values, _)| values[column].type_name())
            .collect();
        if kinds.len() > 1 || kinds.iter().any(|k| !matches!(*k, "number" | "string")) {
            return Err(RuntimeErrorKind::OrderByMixedField {
                field: name.to_string(),
            });
        }
    }
    rows.sort_by(|(x, _), (y, _)| {
        keys.iter().zip(x.iter().zip(y)).fold(
            std::cmp::Ordering::Equal,
            |order, ((descending, _), (a, b))| {
                order.then_with(|| {
                    let o = match (a, b) {
                        (Value::BigInt(a), Value::BigInt(b)) => a.cmp(b),
                        // `+ 0.0`: -0 and 0 tie, as in trec_eval.
                        (a, b) if a.as_f64().is_some() && b.as_f64().is_some() => {
                            let number = |v: &Value| v.as_f64().unwrap_or(0.0) + 0.0;
                            number(a).total_cmp(&number(b))
                        }
                        (Value::String(a), Value::String(b)) => a.cmp(b),
                        _ => std::cmp::Ordering::Equal,
                    };
                    if *descending {
                        o.reverse()
                    } else {
                        o
                    }
                })
            },
        )
    });
    Ok(Value::list(
        rows.into_iter().map(|(_, item)| item.clone()).collect(),
    ))
}

pub(super) fn pluck(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    let name = string(a[1]);
    Ok(Value::list(
        list(a[0])
            .iter()
            .map(|item| item.field(name))
            .collect::<Result<_, _>>()?,
    ))
}

/// The longest list a built-in builds (`repeat`): larger would exhaust memory
/// rather than mean anything for one item.
pub const MAX_LIST: usize = 1_000_000;

pub(super) fn repeat(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    let n = number(a[1]).unwrap_or(0.0).max(0.0);
    if n > MAX_LIST as f64 {
        return Err(RuntimeErrorKind::ListTooLong {
            function: "repeat",
            length: n,
        });
    }
    Ok(Value::list(vec![a[0].clone(); n as usize]))
}

pub(super) fn ranks_where(a: &[&Value]) -> Result<Value, RuntimeErrorKind> {
    let hit = |v: &Value| matches!(v, Value::Bool(true)) || v.as_f64().is_some_and(|n| n >= 1.0);
    Ok(Value::list(
        list(a[0])
            .iter()
            .enumerate()
            .filter(|(_, v)| hit(v))
            .map(|(i, _)| Value::Number((i + 1) as f64))
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Values that are equal across kinds as in Python (`1 == 1.0 == True`),
    /// a NaN (equal to nothing), and lists (hashed by length only).
    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            (0u8..30).prop_map(|n| Value::from(format!("id{n}").as_str())),
            (0u8..4).prop_map(|n| Value::Number(f64::from(n))),
            Just(Value::Number(f64::NAN)),
            any::<bool>().prop_map(Value::Bool),
            Just(Value::Null),
            (0u8..3).prop_map(|n| Value::list(vec![Value::Number(f64::from(n))])),
        ]
    }

    proptest! {
        /// Past the hashed threshold `distinct` keeps what comparing each
        /// item with every kept value keeps.
        #[test]
        fn distinct_keeps_the_first_of_each_value(
            items in proptest::collection::vec(value(), 0..80),
        ) {
            let mut expected: Vec<Value> = Vec::new();
            for item in &items {
                if !expected.contains(item) {
                    expected.push(item.clone());
                }
            }
            let got = distinct(items.iter());
            prop_assert_eq!(format!("{got:?}"), format!("{expected:?}"));
        }
    }
}
