//! Property tests for invariants the metrics rely on.

use evalspec::base::value::{python_strip, Value};
use evalspec::eval::percentile;
use evalspec::library::builtins::lookup;
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

fn num(v: Value) -> f64 {
    match v {
        Value::Number(x) => x,
        other => panic!("{other}"),
    }
}

fn levels() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(prop::sample::select(vec![0.0, 0.0, 1.0, 2.0, 3.0]), 0..30)
}

proptest! {
    #[test]
    fn ranking_measures_are_bounded_and_recall_grows_with_k(gains in levels(), extra_relevant in 0usize..5, k in 1usize..40) {
        let relevant = gains.iter().filter(|g| **g >= 1.0).count() + extra_relevant;
        let g = Value::list(gains.iter().map(|x| Value::Number(*x)).collect());
        let mut ideal: Vec<f64> = gains.iter().copied().filter(|x| *x > 0.0).collect();
        ideal.sort_by(|a, b| b.total_cmp(a));
        let ideal = Value::list(ideal.into_iter().map(Value::Number).collect());
        let (r, k_value) = (Value::Number(relevant as f64), Value::Number(k as f64));
        for value in [
            call("precision_at", &[g.clone(), k_value.clone()]),
            call("recall_at", &[g.clone(), r.clone(), k_value.clone()]),
            call("success_at", &[g.clone(), k_value.clone()]),
            call("reciprocal_rank", std::slice::from_ref(&g)),
            call("average_precision", &[g.clone(), r.clone()]),
            call("ndcg_at", &[g.clone(), ideal.clone(), k_value.clone()]),
        ] {
            let x = num(value);
            prop_assert!((0.0..=1.0 + 1e-12).contains(&x), "{x}");
        }
        let at = |k: usize| num(call("recall_at", &[g.clone(), r.clone(), Value::Number(k as f64)]));
        prop_assert!(at(k) <= at(k + 1));
    }

    #[test]
    fn a_perfect_ranking_scores_one(mut gains in prop::collection::vec(prop::sample::select(vec![1.0f64, 2.0, 3.0]), 1..20), k in 1usize..30) {
        gains.sort_by(|a, b| b.total_cmp(a));
        let g = Value::list(gains.iter().map(|x| Value::Number(*x)).collect());
        let r = Value::Number(gains.len() as f64);
        prop_assert_eq!(num(call("average_precision", &[g.clone(), r.clone()])), 1.0);
        prop_assert_eq!(num(call("reciprocal_rank", std::slice::from_ref(&g))), 1.0);
        prop_assert!((num(call("ndcg_at", &[g.clone(), g.clone(), Value::Number(k as f64)])) - 1.0).abs() < 1e-12);
        prop_assert_eq!(num(call("recall_at", &[g, r, Value::Number(gains.len() as f64)])), 1.0);
    }
}
