//! Natural ordering of item keys: `q2` before `q10`, numbers before strings.

use std::cmp::Ordering;

use crate::base::value::Key;

/// Compares strings with runs of ASCII digits compared by their numeric value
/// (`q2` < `q10`); equal runs with fewer leading zeros first; then bytewise, so
/// that the order is total.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(p), Some(q)) if p.is_ascii_digit() && q.is_ascii_digit() => {
                let (run_x, rest_x) = digit_run(x);
                let (run_y, rest_y) = digit_run(y);
                let (trim_x, trim_y) = (trim_zeros(run_x), trim_zeros(run_y));
                let order = trim_x
                    .len()
                    .cmp(&trim_y.len())
                    .then_with(|| trim_x.cmp(trim_y))
                    .then_with(|| run_x.len().cmp(&run_y.len()));
                if order != Ordering::Equal {
                    return order;
                }
                (x, y) = (rest_x, rest_y);
            }
            (Some(p), Some(q)) => {
                if p != q {
                    return p.cmp(q);
                }
                (x, y) = (&x[1..], &y[1..]);
            }
        }
    }
}

fn digit_run(s: &[u8]) -> (&[u8], &[u8]) {
    let end = s
        .iter()
        .position(|c| !c.is_ascii_digit())
        .unwrap_or(s.len());
    s.split_at(end)
}

fn trim_zeros(run: &[u8]) -> &[u8] {
    let start = run.iter().position(|&c| c != b'0').unwrap_or(run.len());
    &run[start..]
}

/// Item keys in report order: numbers by value, then strings naturally, then
/// items without a key.
pub fn key_order(a: Option<&Key>, b: Option<&Key>) -> Ordering {
    match (a, b) {
        (Some(Key::Num(x)), Some(Key::Num(y))) => f64::from_bits(*x).total_cmp(&f64::from_bits(*y)),
        (Some(Key::Num(_)), Some(Key::Str(_))) => Ordering::Less,
        (Some(Key::Str(_)), Some(Key::Num(_))) => Ordering::Greater,
        (Some(Key::Str(x)), Some(Key::Str(y))) => natural_cmp(x, y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_inside_keys_sort_by_value() {
        let mut keys = vec!["q10", "q2", "q1", "q02", "a", "q", "q1b", "q1a", "10", "9"];
        keys.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            keys,
            ["9", "10", "a", "q", "q1", "q1a", "q1b", "q2", "q02", "q10"]
        );
    }

    #[test]
    fn the_order_is_total() {
        assert_eq!(natural_cmp("x01", "x1"), Ordering::Greater);
        assert_eq!(natural_cmp("x1", "x1"), Ordering::Equal);
        assert_ne!(natural_cmp("é2", "e2"), Ordering::Equal);
    }
}
