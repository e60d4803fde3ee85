//! Property tests for invariants the metrics rely on.

use evalspec::builtins::lookup;
use evalspec::eval::percentile;
use evalspec::value::{python_strip, Value};
use proptest::prelude::*;

fn call(name: &str, args: &[Value]) -> Value {
    lookup(name).unwrap().call(args).unwrap()
}

fn ids() -> impl Strategy<Value = Value> {
    prop::collection::vec(
        prop::sample::select(vec!["p1", "p2", "p3", "p4", "p5"]),
        0..6,
    )
    .prop_map(|v| Value::list(v.into_iter().map(Value::from).collect()))
}

proptest! {
    #[test]
    fn set_functions_agree_with_each_other(a in ids(), b in ids()) {
        let subset_ab = call("subset", &[a.clone(), b.clone()]);
        let subset_ba = call("subset", &[b.clone(), a.clone()]);
        let both = Value::Bool(subset_ab == Value::Bool(true) && subset_ba == Value::Bool(true));
        prop_assert_eq!(call("set_equal", &[a.clone(), b.clone()]), both);
        let Value::List(common) = call("intersect", &[a.clone(), b.clone()]) else { unreachable!() };
        prop_assert_eq!(call("overlap", &[a.clone(), b.clone()]), Value::Bool(!common.is_empty()));
        // Every list is a subset of itself and of its union with another.
        let union = call("union", &[a.clone(), b]);
        prop_assert_eq!(call("subset", &[a.clone(), union]), Value::Bool(true));
    }

    #[test]
    fn take_never_grows_and_keeps_a_prefix(a in ids(), k in -8i64..8) {
        let Value::List(all) = a.clone() else { unreachable!() };
        let Value::List(top) = call("take", &[a, Value::Number(k as f64)]) else { unreachable!() };
        prop_assert!(top.len() <= all.len());
        prop_assert_eq!(&all[..top.len()], &top[..]);
    }

    #[test]
    fn percentiles_are_monotone_and_bounded(mut xs in prop::collection::vec(-1e6f64..1e6, 1..40), q1 in 0f64..=100.0, q2 in 0f64..=100.0) {
        xs.sort_by(f64::total_cmp);
        let (lo, hi) = if q1 <= q2 { (q1, q2) } else { (q2, q1) };
        let (a, b) = (percentile(&xs, lo).unwrap(), percentile(&xs, hi).unwrap());
        prop_assert!(a <= b, "p{lo}={a} > p{hi}={b}");
        prop_assert!(xs[0] <= a && b <= xs[xs.len() - 1]);
    }

    #[test]
    fn strip_is_idempotent(s in "\\PC{0,20}") {
        let once = python_strip(&s);
        prop_assert_eq!(python_strip(once), once);
    }
}
