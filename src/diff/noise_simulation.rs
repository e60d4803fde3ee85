//! The guarantee, simulated: a generator of nightly traces (2,000 items in five
//! categories, each with a fixed difficulty and a typical latency; every night
//! each item is answered right with its own probability and takes a lognormal
//! time; some traces are missing, some repeated), compared night against night
//! as `diff --fail-on-regression --significance 0.05` decides it: each metric
//! and each category's value tested on the items both nights share (the tests
//! `paired.rs` runs), Holm's adjustment over them (`adjust`), and a regression
//! counted as `counts_as_regression` counts it. Deterministic (seeded), and
//! about a second in a debug build.
//!
//! Run with `--nocapture` to see the rates.

use serde_json::Value as Json;

use super::{adjust, Direction, MetricChange, DEFAULT_SIGNIFICANCE};
use crate::base::stats::rng::SplitMix64;
use crate::report_model::item_values::ValueKind;
use crate::report_model::Better;
use crate::stats::inference::{change, Pairing};

const ITEMS: usize = 2000;
/// The categories' sizes: ~400 each.
const CATEGORIES: [usize; 5] = [447, 420, 400, 380, 353];
const COMPARISONS: usize = 500;
/// Per night, the chance that an item's trace is missing, and repeated.
const MISSING: f64 = 0.02;
const REPEATED: f64 = 0.01;

/// The items as the generator knows them.
struct Items {
    category: Vec<usize>,
    /// The chance of a right answer: Beta(1, ½), mean ⅔ (items differ: some are
    /// nearly always right, some a coin toss).
    difficulty: Vec<f64>,
    /// The log of the typical latency (ms): N(6.5, 0.6²); each night adds
    /// N(0, 0.3²).
    latency: Vec<f64>,
    keys: Vec<String>,
}

fn normal(rng: &mut SplitMix64) -> f64 {
    let (u, v) = (1.0 - rng.next_f64(), rng.next_f64());
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

impl Items {
    fn new(rng: &mut SplitMix64) -> Items {
        let category = (CATEGORIES.iter().enumerate())
            .flat_map(|(c, &n)| std::iter::repeat_n(c, n))
            .collect();
        let difficulty = (0..ITEMS).map(|_| 1.0 - rng.next_f64().powi(2)).collect();
        let latency = (0..ITEMS).map(|_| 6.5 + 0.6 * normal(rng)).collect();
        let keys = (0..ITEMS).map(|i| format!("\"q{i}\"")).collect();
        Items {
            category,
            difficulty,
            latency,
            keys,
        }
    }
}

/// One night's traces: per trace its item, whether it was right, its latency.
struct Night {
    item: Vec<usize>,
    hit: Vec<Option<f64>>,
    latency: Vec<Option<f64>>,
}

/// A change to the items' chance of a right answer, in points, over the
/// items of one category (`None`: all of them). Each item's chance is scaled,
/// so that the mean drops by the points given.
#[derive(Clone, Copy)]
struct Drop {
    points: f64,
    category: Option<usize>,
}

fn night(items: &Items, drop: Option<Drop>, rng: &mut SplitMix64) -> Night {
    let scale: Vec<f64> = (0..CATEGORIES.len())
        .map(|c| match drop {
            Some(d) if d.category.is_none_or(|x| x == c) => {
                let members = (0..ITEMS).filter(|&i| items.category[i] == c);
                let (sum, n) =
                    members.fold((0.0, 0.0), |(s, n), i| (s + items.difficulty[i], n + 1.0));
                1.0 - d.points / (sum / n)
            }
            _ => 1.0,
        })
        .collect();
    let mut out = Night {
        item: Vec::new(),
        hit: Vec::new(),
        latency: Vec::new(),
    };
    for i in 0..ITEMS {
        if rng.next_f64() < MISSING {
            continue;
        }
        let copies = if rng.next_f64() < REPEATED { 2 } else { 1 };
        for _ in 0..copies {
            let p = items.difficulty[i] * scale[items.category[i]];
            out.item.push(i);
            out.hit.push(Some(f64::from(u8::from(rng.next_f64() < p))));
            out.latency
                .push(Some((items.latency[i] + 0.3 * normal(rng)).exp()));
        }
    }
    out
}

/// A metric's name, kind, better direction and values in a night.
type MetricDef = (
    &'static str,
    ValueKind,
    Better,
    fn(&Night) -> &[Option<f64>],
);

/// The two metrics, `accuracy` (a ratio, higher is better) and `latency` (a
/// mean, lower is better), over all items and per category, as a diff of the
/// two nights lists them, each with its paired test; then Holm's adjustment.
fn compare(items: &Items, old: &Night, new: &Night) -> Vec<MetricChange> {
    let keys = |n: &Night| -> Vec<Option<&str>> {
        n.item
            .iter()
            .map(|&i| Some(items.keys[i].as_str()))
            .collect()
    };
    let pairing = Pairing::new(keys(new).into_iter(), keys(old).into_iter());
    let old_items = pairing.old_items();
    let mut metrics = Vec::new();
    let metric_defs: [MetricDef; 2] = [
        ("accuracy", ValueKind::Ratio, Better::Higher, |n| &n.hit),
        ("latency", ValueKind::Mean, Better::Lower, |n| &n.latency),
    ];
    for (name, kind, better, values) in metric_defs {
        for category in std::iter::once(None).chain((0..CATEGORIES.len()).map(Some)) {
            // A category's items, paired with the old night's of the same keys.
            let within = category.map(|c| {
                let members: Vec<usize> = (0..new.item.len())
                    .filter(|&j| items.category[new.item[j]] == c)
                    .collect();
                let (sub, old_members) = pairing.subset(&members, &old_items);
                let gather = |n: &Night, at: &[usize]| -> Vec<Option<f64>> {
                    at.iter().map(|&j| values(n)[j]).collect()
                };
                (sub, gather(new, &members), gather(old, &old_members))
            });
            let mean = |n: &Night| {
                let (s, k) = (n.item.iter().zip(values(n)))
                    .filter(|(i, _)| category.is_none_or(|c| items.category[**i] == c))
                    .filter_map(|(_, v)| *v)
                    .fold((0.0, 0.0), |(s, k), v| (s + v, k + 1.0));
                s / k
            };
            let (x, y) = (mean(old), mean(new));
            let worse = match better {
                Better::Higher => x - y,
                Better::Lower => y - x,
            };
            let name = match category {
                Some(c) => format!("{name}[category=c{c}]"),
                None => name.to_string(),
            };
            let paired = match &within {
                Some((sub, y, x)) => change(kind, sub, y, x, 0.95, &name),
                None => change(kind, &pairing, values(new), values(old), 0.95, &name),
            };
            metrics.push(MetricChange {
                name,
                old: Json::from(x),
                new: Json::from(y),
                delta: Some(y - x),
                relative: None,
                better: Some(better),
                tolerance: 0.0,
                // Tolerance 0: any worsening is a regression unless the test says noise.
                direction: if worse > 0.0 {
                    Direction::Regressed
                } else {
                    Direction::Improved
                },
                paired,
            });
        }
    }
    adjust(&mut metrics);
    metrics
}

/// The share of `COMPARISONS` comparisons that fail the build, each of a fresh
/// night without change against a night with `drop`.
fn fail_rate(items: &Items, drop: Option<Drop>, label: &str) -> f64 {
    let mut rng = SplitMix64::seeded(label, 47);
    let mut failed = 0;
    for _ in 0..COMPARISONS {
        let old = night(items, None, &mut rng);
        let new = night(items, drop, &mut rng);
        let metrics = compare(items, &old, &new);
        failed += usize::from(
            metrics
                .iter()
                .any(|m| m.counts_as_regression(Some(DEFAULT_SIGNIFICANCE))),
        );
    }
    failed as f64 / COMPARISONS as f64
}

#[test]
fn noise_fails_the_build_at_most_at_the_level_and_real_drops_are_caught() {
    let items = Items::new(&mut SplitMix64::seeded("items", 47));
    let alpha = DEFAULT_SIGNIFICANCE;
    let se = (alpha * (1.0 - alpha) / COMPARISONS as f64).sqrt();
    // Noise alone, a 12-point drop in one category of 400 items, and a 5-point
    // drop over all 2,000: each its own seeded stream, on its own thread.
    let drops = [
        None,
        Some(Drop {
            points: 0.12,
            category: Some(2),
        }),
        Some(Drop {
            points: 0.05,
            category: None,
        }),
    ];
    let labels = ["noise", "drop 0.12 Some(2)", "drop 0.05 None"];
    let found: Vec<f64> = std::thread::scope(|scope| {
        let running: Vec<_> = (drops.iter().zip(labels))
            .map(|(drop, label)| scope.spawn(|| fail_rate(&items, *drop, label)))
            .collect();
        running.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let (noise, rates) = (found[0], &found[1..]);
    println!(
        "noise only: {noise:.3} of {COMPARISONS} fail (bound {:.3})",
        alpha + 2.0 * se
    );
    println!("12-point drop in c2: caught {:.3}", rates[0]);
    println!("5-point drop in all: caught {:.3}", rates[1]);
    assert!(
        noise <= alpha + 2.0 * se,
        "noise-only comparisons failed {noise}"
    );
    assert!(
        rates[0] >= 0.80,
        "a 12-point drop in 400 items was caught {}",
        rates[0]
    );
    assert!(
        rates[1] >= 0.90,
        "a 5-point drop over 2,000 items was caught {}",
        rates[1]
    );
}

/// Power at smaller drops, for the README (run by hand: `--ignored --nocapture`).
#[test]
#[ignore]
fn power_at_smaller_drops() {
    let items = Items::new(&mut SplitMix64::seeded("items", 47));
    for (points, category) in [
        (0.04, Some(2)),
        (0.06, Some(2)),
        (0.08, Some(2)),
        (0.10, Some(2)),
        (0.01, None),
        (0.02, None),
        (0.03, None),
        (0.04, None),
    ] {
        let drop = Some(Drop { points, category });
        let rate = fail_rate(&items, drop, &format!("drop {points} {category:?}"));
        println!(
            "{:.0}-point drop in {}: caught {rate:.3}",
            points * 100.0,
            category.map_or("all".into(), |c| format!("c{c}"))
        );
    }
}
