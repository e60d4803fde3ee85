//! Natural ordering of item keys: `q2` before `q10`, numbers before strings.

use std::cmp::Ordering;

use crate::base::value::{BigInt, Key};

/// Compares strings with runs of ASCII digits compared by their numeric value
/// (`q2` < `q10`); equal runs with fewer leading zeros first; then bytewise, so
/// that the order is total.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (a_bytes, b_bytes) = (a.as_bytes(), b.as_bytes());
    // Equal bytes compare equal, digit runs included, up to the digit run the
    // first difference falls in (keys such as `q0000123` share most of theirs).
    let same = (a_bytes.iter().zip(b_bytes))
        .take_while(|(p, q)| p == q)
        .count();
    let run_start = a_bytes[..same]
        .iter()
        .rposition(|c| !c.is_ascii_digit())
        .map_or(0, |i| i + 1);
    let (p, q) = (a_bytes.get(same), b_bytes.get(same));
    let digit = |c: Option<&u8>| c.is_some_and(u8::is_ascii_digit);
    match (digit(p), digit(q)) {
        // Runs through the difference, of one length: the differing digits order them.
        (true, true)
            if digit_run(&a_bytes[same..]).0.len() == digit_run(&b_bytes[same..]).0.len() =>
        {
            return p.cmp(&q);
        }
        // Any run before the difference ends in both: the differing bytes (or
        // the end of one string) order them; equal strings are equal.
        (false, false) => return p.cmp(&q),
        _ => {}
    }
    let (mut x, mut y) = (&a_bytes[run_start..], &b_bytes[run_start..]);
    loop {
        match (x.first(), y.first()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(p), Some(q)) if p.is_ascii_digit() && q.is_ascii_digit() => {
                let (run_x, rest_x) = digit_run(x);
                let (run_y, rest_y) = digit_run(y);
                let order = if run_x.len() == run_y.len() {
                    // Of one length, digits order as their values.
                    run_x.cmp(run_y)
                } else {
                    let (trim_x, trim_y) = (trim_zeros(run_x), trim_zeros(run_y));
                    (trim_x.len().cmp(&trim_y.len()))
                        .then_with(|| trim_x.cmp(trim_y))
                        .then_with(|| run_x.len().cmp(&run_y.len()))
                };
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
        (Some(x), Some(y)) => match (x, y) {
            (Key::Str(x), Key::Str(y)) => natural_cmp(x, y),
            (Key::Str(_), _) => Ordering::Greater,
            (_, Key::Str(_)) => Ordering::Less,
            (Key::Num(x), Key::Num(y)) => f64::from_bits(*x).total_cmp(&f64::from_bits(*y)),
            (Key::Big(x), Key::Big(y)) => x.to_i128().cmp(&y.to_i128()),
            (Key::Num(x), Key::Big(y)) => float_against_big(f64::from_bits(*x), *y),
            (Key::Big(x), Key::Num(y)) => float_against_big(f64::from_bits(*y), *x).reverse(),
        },
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

/// A float key against a big-integer key, by exact value; a float equal to the
/// integer (they are different keys) sorts first.
fn float_against_big(float: f64, big: BigInt) -> Ordering {
    if float.is_nan() {
        return Ordering::Greater; // as `total_cmp` puts NaN last
    }
    if float.abs() >= 1e38 {
        return if float > 0.0 {
            Ordering::Greater
        } else {
            Ordering::Less
        };
    }
    // Only a float below 2^53 has a fraction, and it cannot tie with a big integer.
    (float.floor() as i128)
        .cmp(&big.to_i128())
        .then(if float.fract() > 0.0 {
            Ordering::Greater
        } else {
            Ordering::Less
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::value::Value;

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
    fn big_integer_keys_sort_by_exact_value() {
        let key = |v: Value| Key::of(&v).unwrap().unwrap();
        let mut keys = [
            key(Value::from_u64((1 << 60) + 1)),
            key(Value::from_u64(1 << 60)),
            key(Value::Number((1u64 << 60) as f64)),
            key(Value::Number(3.5)),
            key(Value::from_i64(-(1 << 60))),
        ];
        keys.sort_by(|a, b| key_order(Some(a), Some(b)));
        let shown: Vec<String> = keys.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "-1152921504606846976",
                "3.5",
                "1.152921504606847e+18",
                "1152921504606846976",
                "1152921504606846977"
            ]
        );
        assert_eq!(
            keys[2],
            key(Value::Number((1u64 << 60) as f64)),
            "the float first"
        );
    }

    /// Natural order as its definition says it: the strings cut into digit
    /// runs and single other bytes, compared piece by piece.
    fn by_pieces(a: &str, b: &str) -> Ordering {
        fn pieces(s: &str) -> Vec<&[u8]> {
            let mut rest = s.as_bytes();
            let mut out = Vec::new();
            while let Some(first) = rest.first() {
                let end = match first.is_ascii_digit() {
                    true => rest.iter().take_while(|c| c.is_ascii_digit()).count(),
                    false => 1,
                };
                out.push(&rest[..end]);
                rest = &rest[end..];
            }
            out
        }
        let (x, y) = (pieces(a), pieces(b));
        for (p, q) in x.iter().zip(&y) {
            let order = if p[0].is_ascii_digit() && q[0].is_ascii_digit() {
                let (tp, tq) = (trim_zeros(p), trim_zeros(q));
                (tp.len().cmp(&tq.len()))
                    .then(tp.cmp(tq))
                    .then(p.len().cmp(&q.len()))
            } else {
                p[0].cmp(&q[0])
            };
            if order != Ordering::Equal {
                return order;
            }
        }
        x.len().cmp(&y.len()).then(a.cmp(b))
    }

    proptest::proptest! {
        /// The shortcuts (a shared prefix skipped, runs of one length compared
        /// as bytes) give the definition's order.
        #[test]
        fn natural_order_is_the_pieces_order(
            a in "[q0-9xé]{0,12}",
            b in "[q0-9xé]{0,12}",
            prefix in "[q0-9]{0,6}",
        ) {
            let (a, b) = (format!("{prefix}{a}"), format!("{prefix}{b}"));
            proptest::prop_assert_eq!(natural_cmp(&a, &b), by_pieces(&a, &b), "{} {}", a, b);
            proptest::prop_assert_eq!(natural_cmp(&b, &a), natural_cmp(&a, &b).reverse());
        }
    }

    #[test]
    fn the_order_is_total() {
        assert_eq!(natural_cmp("x01", "x1"), Ordering::Greater);
        assert_eq!(natural_cmp("x1", "x1"), Ordering::Equal);
        assert_ne!(natural_cmp("é2", "e2"), Ordering::Equal);
    }
}
