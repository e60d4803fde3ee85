use super::*;
use crate::base::diagnostic::Location;
use crate::base::stats::bootstrap::RatioOfSums;
use crate::ir::{AggregateId, ExprLocations, MetricId};
use crate::syntax::BinaryOp;
use std::sync::Arc;

fn formula(op: Op, tested: bool) -> Formula {
    Formula {
        name: "m".into(),
        op,
        empty: None,
        tested,
    }
}

fn aggregate(k: usize) -> Box<Op> {
    Box::new(Op::Aggregate(AggregateId::new(k)))
}

fn times(a: Box<Op>, x: f64) -> Op {
    let at = ExprLocations::default().add(Location::in_data("f", 1, None));
    Op::Binary(BinaryOp::Mul, a, Box::new(Op::Const(Value::Number(x))), at)
}

fn numbers(values: &[f64]) -> Vec<Vec<Observation>> {
    values
        .iter()
        .map(|x| vec![Observation::Number(*x)])
        .collect()
}

impl Observed for Vec<Vec<Observation>> {
    fn observation(&self, item: usize, k: usize) -> Cow<'_, Observation> {
        Cow::Borrowed(&self[item][k])
    }
}

#[allow(clippy::ptr_arg)] // the Vec is what reads as `Observed`
fn units(rows: &Vec<Vec<Observation>>) -> Units<'_> {
    Units::items(rows, 0..rows.len())
}

#[test]
fn a_formula_over_one_mean_is_the_mean_bootstrap() {
    // Up to MAX_GROUPS items each item is its own unit, and replicate b draws
    // the same indices as the ratio-of-sums bootstrap with the same label.
    let values: Vec<f64> = (0..150).map(|i| ((i * 37) % 11) as f64).collect();
    let rows = numbers(&values);
    let formulas = [formula(times(aggregate(0), 1.0), true)];
    let recipe = Recipe {
        functions: vec![AggregateFn::Mean],
        formulas: &formulas,
    };
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let found = interval(&recipe, 0, &units(&rows), mean, 0.95, "interval:m").unwrap();
    let options: Vec<Option<f64>> = values.iter().copied().map(Some).collect();
    let expected =
        bootstrap::interval(&RatioOfSums::mean(&options), 0.95, 2000, "interval:m", 0).unwrap();
    assert_eq!(found.method, Method::Bootstrap);
    assert!(
        (found.low - expected.low).abs() < 1e-12,
        "{found:?} {expected:?}"
    );
    assert!(
        (found.high - expected.high).abs() < 1e-12,
        "{found:?} {expected:?}"
    );
}

#[test]
fn many_items_are_drawn_in_groups_and_keep_the_intervals_width() {
    // 5,000 items of a 0/1 outcome at 30%: the grouped interval of
    // 100·ratio is close to Wilson's (n large, both near ±1.27 points).
    let rows: Vec<Vec<Observation>> = (0..5000)
        .map(|i| vec![Observation::Number(f64::from(u8::from(i % 10 < 3)))])
        .collect();
    let formulas = [formula(times(aggregate(0), 100.0), true)];
    let recipe = Recipe {
        functions: vec![AggregateFn::Ratio],
        formulas: &formulas,
    };
    let found = interval(&recipe, 0, &units(&rows), 30.0, 0.95, "interval:m").unwrap();
    assert_eq!(found.method, Method::GroupedBootstrap);
    let (low, high) = crate::base::stats::wilson::wilson(1500, 5000, 0.95).unwrap();
    let width = found.high - found.low;
    let expected = 100.0 * (high - low);
    assert!(
        (width / expected - 1.0).abs() < 0.15,
        "{found:?} vs {expected}"
    );
    assert!(found.low < 30.0 && 30.0 < found.high);
}

/// Rows that also offer their first aggregate's observations as flags.
struct WithFlags {
    rows: Vec<Vec<Observation>>,
    flags: Vec<u8>,
}

impl Observed for WithFlags {
    fn observation(&self, item: usize, k: usize) -> Cow<'_, Observation> {
        Cow::Borrowed(&self.rows[item][k])
    }

    fn flags(&self, k: usize) -> Option<Flags<'_>> {
        (k == 0).then(|| Flags::of(&self.flags))
    }
}

#[test]
fn a_fold_over_flags_read_in_place_is_the_fold_over_observations() {
    // A ratio with items left out (`Out`; a count cannot tell `Out` from 0)
    // and a count, drawn one by one and in groups: reading the flags in place
    // must give the same intervals, bit for bit, as reading each observation.
    for n in [150, 5000] {
        let rows: Vec<Vec<Observation>> = (0..n)
            .map(|i| match i % 7 {
                0 | 3 => Observation::Out,
                r => Observation::Number(f64::from(u8::from(r % 2 == 1))),
            })
            .map(|o| vec![o])
            .collect();
        let flags = Flags::encode(rows.iter().map(|row| &row[0]));
        let with_flags = WithFlags {
            rows: rows.clone(),
            flags,
        };
        for function in [AggregateFn::Ratio, AggregateFn::Count] {
            let formulas = [formula(times(aggregate(0), 100.0), true)];
            let recipe = Recipe {
                functions: vec![function],
                formulas: &formulas,
            };
            // Units numbered against item order, some items left out: a fold
            // that grouped by item instead of unit would differ.
            let kept: Vec<usize> = (0..n).filter(|i| i % 11 != 5).collect();
            let mut units = vec![None; n];
            for (place, &item) in kept.iter().enumerate() {
                units[item] = Some((kept.len() - 1 - place) as u32);
            }
            let read = |source: &dyn Observed| {
                let units = Units::paired(kept.len(), &units, source);
                interval(&recipe, 0, &units, 50.0, 0.95, "interval:m").unwrap()
            };
            let (each, in_place) = (read(&rows), read(&with_flags));
            assert_eq!(
                (each.low.to_bits(), each.high.to_bits()),
                (in_place.low.to_bits(), in_place.high.to_bits()),
                "{function:?} over {n}: {each:?} {in_place:?}"
            );
        }
    }
}

#[test]
fn the_same_run_twice_has_no_change_and_a_real_shift_is_found() {
    let values: Vec<f64> = (0..120).map(|i| ((i * 7) % 13) as f64).collect();
    let rows = numbers(&values);
    let shifted = numbers(&values.iter().map(|x| x + 1.0).collect::<Vec<_>>());
    // p90 is a formula of its own: a percentile, not a ratio of sums.
    let formulas = [formula(Op::Aggregate(AggregateId::new(0)), true)];
    let recipe = Recipe {
        functions: vec![AggregateFn::Percentile(90.0)],
        formulas: &formulas,
    };
    let same = change(&recipe, 0, &units(&rows), &units(&rows), 0.95, "change:m").unwrap();
    assert_eq!(
        (same.delta, same.low, same.high, same.p_value),
        (0.0, 0.0, 0.0, 1.0)
    );
    let up = change(
        &recipe,
        0,
        &units(&shifted),
        &units(&rows),
        0.95,
        "change:m",
    )
    .unwrap();
    assert_eq!(up.delta, 1.0);
    assert!(up.p_increase < 0.001 && up.p_value < 0.002, "{up:?}");
    assert!(up.low > 0.0, "{up:?}");
}

#[test]
fn a_formula_reading_an_earlier_one_recomputes_it() {
    // m1 = 2·m0, m0 = mean: m1's interval is twice m0's.
    let values: Vec<f64> = (0..80).map(|i| (i % 9) as f64).collect();
    let rows = numbers(&values);
    let formulas = [
        formula(times(aggregate(0), 1.0), false),
        formula(times(Box::new(Op::Metric(MetricId::new(0))), 2.0), true),
    ];
    let recipe = Recipe {
        functions: vec![AggregateFn::Mean],
        formulas: &formulas,
    };
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let once = interval(&recipe, 0, &units(&rows), mean, 0.9, "x").unwrap();
    let twice = interval(&recipe, 1, &units(&rows), 2.0 * mean, 0.9, "x").unwrap();
    assert!(
        (twice.low - 2.0 * once.low).abs() < 1e-9,
        "{once:?} {twice:?}"
    );
    assert!(
        (twice.high - 2.0 * once.high).abs() < 1e-9,
        "{once:?} {twice:?}"
    );
    assert_eq!(recipe.reads(1), vec![true]);
}

#[test]
fn a_replicate_evaluates_only_what_its_targets_read() {
    // m0 = a0, m1 = a1, m2 = 2·m0, m3 = 3·a1: m2 reads m0 and a0 only.
    let formulas = [
        formula(times(aggregate(0), 1.0), false),
        formula(times(aggregate(1), 1.0), false),
        formula(times(Box::new(Op::Metric(MetricId::new(0))), 2.0), true),
        formula(times(aggregate(1), 3.0), true),
    ];
    let recipe = Recipe {
        functions: vec![AggregateFn::Mean, AggregateFn::Mean],
        formulas: &formulas,
    };
    let reads = recipe.read_by([2]);
    assert_eq!(reads.formulas, [true, false, true]);
    assert_eq!(reads.aggregates, [true, false]);
    let both = recipe.read_by([0, 3]);
    assert_eq!(both.formulas, [true, false, false, true]);
    assert_eq!(both.aggregates, [true, true]);
    // The others are null, the targets as the run computes them.
    let values = recipe.values(&[Value::Number(1.5), Value::Number(4.0)], &reads.formulas);
    let expected = [Value::Number(1.5), Value::Null, Value::Number(3.0)];
    assert_eq!(values, expected);
}

/// Folds `groups` (of `function`'s accumulators) with `Fold::of`, checks it
/// chose a fold `is_expected` accepts, and that 20 random replicates (each
/// group drawn up to 3 times) get the value merging the groups gives.
fn assert_folded_as_merged(
    function: AggregateFn,
    groups: Vec<Accumulator>,
    is_expected: fn(&Fold) -> bool,
    rng: &mut SplitMix64,
) {
    let n = groups.len();
    let folded = Fold::of(groups.clone());
    assert!(n == 0 || is_expected(&folded), "{function:?}");
    let merged = Fold::Accumulators(groups);
    for _ in 0..20 {
        let weights: Vec<u32> = (0..n).map(|_| rng.below(4) as u32).collect();
        assert_eq!(
            folded.value(function, &weights),
            merged.value(function, &weights),
            "{function:?}, {n} groups, {weights:?}"
        );
    }
}

/// A count's or ratio's groups folded as counts give each replicate the
/// value that merging each group `weight` times gives; other aggregates
/// keep their accumulators.
#[test]
fn groups_folded_as_counts_weigh_as_merged_accumulators() {
    let mut rng = SplitMix64::seeded("counts", 7);
    for function in [AggregateFn::Count, AggregateFn::Ratio] {
        for groups in [0, 1, 5, 300] {
            let accumulators: Vec<Accumulator> = (0..groups)
                .map(|_| {
                    let mut group = Accumulator::new(function);
                    for _ in 0..rng.below(40) {
                        let flag = f64::from(u8::from(rng.below(3) == 0));
                        group.observe_one(&Observation::Number(flag)).unwrap();
                    }
                    group
                })
                .collect();
            let counts = |fold: &Fold| matches!(fold, Fold::Counts { .. });
            assert_folded_as_merged(function, accumulators, counts, &mut rng);
        }
    }
    let mean = Fold::of(vec![Accumulator::new(AggregateFn::Mean); 3]);
    assert!(matches!(mean, Fold::Accumulators(_)));
}

/// Counts are folded in 32 bits; a group counted past that keeps its
/// accumulators, and weighs the same.
#[test]
fn counts_past_32_bits_keep_their_accumulators() {
    let mut rng = SplitMix64::seeded("wide counts", 7);
    let big = u64::from(u32::MAX) + 1;
    for (function, group) in [
        (AggregateFn::Count, Accumulator::Count(big)),
        (
            AggregateFn::Ratio,
            Accumulator::Ratio {
                hits: 3,
                total: big,
            },
        ),
    ] {
        let groups = vec![Accumulator::new(function), group];
        let accumulators = |fold: &Fold| matches!(fold, Fold::Accumulators(_));
        assert_folded_as_merged(function, groups, accumulators, &mut rng);
    }
}

/// A confusion table's groups folded as numbered cells give each replicate
/// every score that merging each group `weight` times gives, with classes
/// that only undrawn groups name left out, and cells of no items kept.
#[test]
fn groups_folded_as_cells_weigh_as_merged_tables() {
    let mut rng = SplitMix64::seeded("cells", 7);
    let labels = ["c2", "c10", "c02", "yes", "no", "c1"];
    let functions = [
        AggregateFn::Kappa,
        AggregateFn::Agreement,
        AggregateFn::MacroF1,
        AggregateFn::MicroF1,
        AggregateFn::WeightedF1,
        AggregateFn::Confusion,
    ];
    for function in functions {
        for groups in [0, 1, 5, 300] {
            let accumulators: Vec<Accumulator> = (0..groups)
                .map(|_| {
                    let mut group = Accumulator::new(function);
                    for _ in 0..rng.below(6) {
                        let label = |rng: &mut SplitMix64| {
                            Arc::from(labels[rng.below(labels.len() as u64) as usize])
                        };
                        let pair = Observation::labels(label(&mut rng), label(&mut rng));
                        group.observe(&pair, rng.below(3)).unwrap();
                    }
                    group
                })
                .collect();
            let cells = |fold: &Fold| matches!(fold, Fold::Cells { .. });
            assert_folded_as_merged(function, accumulators, cells, &mut rng);
        }
    }
}

/// A calibration's groups are summed with weights in fixed-point digits, and
/// score each replicate as merging each group `weight` times does.
#[test]
fn groups_folded_as_calibrations_weigh_as_merged_ones() {
    let mut rng = SplitMix64::seeded("calibrations", 7);
    for function in [
        AggregateFn::Ece(10),
        AggregateFn::Ece(1),
        AggregateFn::Brier,
    ] {
        for groups in [0, 1, 5, 300] {
            let accumulators: Vec<Accumulator> = (0..groups)
                .map(|_| {
                    let mut group = Accumulator::new(function);
                    for _ in 0..rng.below(6) {
                        let item = Observation::Calibrated(rng.next_f64(), rng.below(2) == 0);
                        group.observe(&item, 1).unwrap();
                    }
                    group
                })
                .collect();
            let calibrations = |fold: &Fold| matches!(fold, Fold::Calibrations(_));
            assert_folded_as_merged(function, accumulators, calibrations, &mut rng);
        }
    }
}
