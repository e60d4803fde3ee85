//! Property tests for invariants the metrics rely on.

use evalspec::base::python::python_strip;
use evalspec::base::value::Value;
use evalspec::library::builtins::lookup;
use evalspec::stats::aggregate::percentile;
use proptest::prelude::*;

fn call(name: &str, args: &[Value]) -> Value {
    lookup(name)
        .unwrap()
        .call(&args.iter().collect::<Vec<_>>())
        .unwrap()
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

/// Items with a true and a predicted label from a few classes, and a confidence.
fn labelled() -> impl Strategy<Value = Vec<(&'static str, &'static str, f64)>> {
    let label = || prop::sample::select(vec!["a", "b", "c", "d"]);
    prop::collection::vec((label(), label(), 0f64..=1.0), 0..60)
}

fn confusion(items: &[(&'static str, &'static str, f64)]) -> evalspec::stats::aggregate::Confusion {
    let mut c = evalspec::stats::aggregate::Confusion::default();
    for (t, p, _) in items {
        c.add((*t).into(), (*p).into());
    }
    c
}

fn calibration(
    items: &[(&str, &str, f64)],
    bins: u32,
) -> evalspec::stats::calibration::Calibration {
    let mut c = evalspec::stats::calibration::Calibration::new(bins);
    for (t, p, confidence) in items {
        c.add(*confidence, t == p).unwrap();
    }
    c
}

proptest! {
    #[test]
    fn f1_scores_are_bounded_and_micro_f1_is_the_accuracy(items in labelled(), cut in 0usize..60) {
        let whole = confusion(&items).table();
        for f1 in [whole.macro_f1(), whole.micro_f1(), whole.weighted_f1()] {
            prop_assert_eq!(f1.is_none(), items.is_empty());
            prop_assert!(f1.is_none_or(|f| (0.0..=1.0).contains(&f)));
        }
        let right = items.iter().filter(|(t, p, _)| t == p).count();
        if !items.is_empty() {
            prop_assert_eq!(whole.micro_f1(), Some(right as f64 / items.len() as f64));
        }
        // Split anywhere and merged, the scores are the same to the bit.
        let cut = cut.min(items.len());
        let mut first = confusion(&items[..cut]);
        first.merge(&confusion(&items[cut..]));
        let first = first.table();
        prop_assert_eq!(first.macro_f1(), whole.macro_f1());
        prop_assert_eq!(first.weighted_f1(), whole.weighted_f1());
    }

    #[test]
    fn calibration_is_bounded_and_does_not_depend_on_the_split(items in labelled(), cut in 0usize..60, bins in 1u32..20) {
        let whole = calibration(&items, bins);
        for score in [whole.ece(), whole.brier()] {
            prop_assert_eq!(score.is_none(), items.is_empty());
            prop_assert!(score.is_none_or(|s| (0.0..=1.0).contains(&s)));
        }
        let cut = cut.min(items.len());
        let mut first = calibration(&items[..cut], bins);
        first.merge(&calibration(&items[cut..], bins));
        prop_assert_eq!(first.ece(), whole.ece());
        prop_assert_eq!(first.brier(), whole.brier());
        // One bin: |accuracy − mean confidence|.
        if !items.is_empty() {
            let n = items.len() as f64;
            let right = items.iter().filter(|(t, p, _)| t == p).count() as f64;
            let confidence: f64 = items.iter().map(|(_, _, c)| c).sum();
            let one = calibration(&items, 1).ece().unwrap();
            prop_assert!((one - (right / n - confidence / n).abs()).abs() < 1e-12);
        }
    }
}

mod item_diffs {
    use evalspec::diff::item_changes;
    use evalspec::inputs::prior_items::{ItemValue, PriorItem, PriorItems, ValueName};
    use proptest::prelude::*;

    fn value() -> impl Strategy<Value = ItemValue> {
        prop_oneof![
            Just(ItemValue::Null),
            any::<bool>().prop_map(ItemValue::Bool),
            (0i64..4).prop_map(ItemValue::Int),
            (0u8..4).prop_map(|f| ItemValue::Float(f as f64 / 2.0)),
        ]
    }

    /// Up to 12 items over few keys and runs (so keys repeat), two values each.
    fn side() -> impl Strategy<Value = PriorItems> {
        let item = (0u8..5, prop::option::of(0u8..2), value(), value());
        prop::collection::vec(item, 0..12).prop_map(|rows| PriorItems {
            names: ["hit", "score"]
                .map(|n| ValueName {
                    name: n.into(),
                    matcher: false,
                })
                .to_vec(),
            items: rows
                .into_iter()
                .enumerate()
                .map(|(line, (key, run, x, y))| PriorItem {
                    key: format!("q{key}"),
                    line: line as u64 + 1,
                    run: run.map(|r| format!("seed{r}")),
                    label: None,
                    values: vec![x, y],
                })
                .collect(),
        })
    }

    proptest! {
        #[test]
        fn a_run_against_itself_has_no_item_changes(a in side()) {
            prop_assert!(item_changes(&a, &a).is_empty());
        }

        #[test]
        fn diffing_the_other_way_round_mirrors_every_change(a in side(), b in side()) {
            let (ab, ba) = (item_changes(&a, &b), item_changes(&b, &a));
            prop_assert_eq!(&ab.added, &ba.removed);
            prop_assert_eq!(&ab.removed, &ba.added);
            for f in &ab.flips {
                let back = ba.flips.iter().find(|g| g.name == f.name && g.from == f.to && g.to == f.from);
                prop_assert_eq!(Some(&f.keys), back.map(|g| &g.keys));
            }
            prop_assert_eq!(ab.flips.len(), ba.flips.len());
            for (m, n) in ab.moves.iter().zip(&ba.moves) {
                let mut there: Vec<_> = m.items.iter().map(|i| (i.key.clone(), i.delta.map(|d| -d))).collect();
                let mut back: Vec<_> = n.items.iter().map(|i| (i.key.clone(), i.delta)).collect();
                there.sort_by(|x, y| x.0.cmp(&y.0));
                back.sort_by(|x, y| x.0.cmp(&y.0));
                prop_assert_eq!(there, back);
                // Largest first.
                let sizes: Vec<f64> = m.items.iter().filter_map(|i| i.delta).map(f64::abs).collect();
                prop_assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "{:?}", sizes);
            }
            prop_assert_eq!(ab.moves.len(), ba.moves.len());
        }
    }
}
