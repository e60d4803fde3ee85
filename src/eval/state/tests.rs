//! A run's state merged from parts, in any grouping and any order, is the
//! state one fold of every item in order gives: what lets threads, joins,
//! partitions and machines split the work any way.

use std::ops::ControlFlow;

use proptest::prelude::*;

use super::RunState;
use crate::base::stats::rng::SplitMix64;
use crate::base::value::Value;
use crate::data::read_chunked;
use crate::eval::join::items::place;
use crate::eval::join::keys::key_of;
use crate::eval::score::{Roles, Scorer};
use crate::eval::state::item_lines::LineLimit;
use crate::eval::state::slices;
use crate::inputs::{gather, Overrides};
use crate::ir::Record;
use crate::plan::Plan;

/// Every kind of aggregate, slices, labels, offenders, and the item values
/// intervals read; items with repeated keys and without one.
const SPEC: &str = r#"name: t
version: 1.0.0
datasets:
  j: {format: jsonl, path: j.jsonl, key: id, duplicates: keep}
fields:
  ok: j.answer == j.gold
  score: j.score
  answer: j.answer
labels:
  - RIGHT: ok
  - WRONG: true
slices:
  topic: j.topic
offenders:
  when: not ok
  show: [score, answer]
  limit: 3
metrics:
  accuracy: {expr: ratio(ok), by: topic}
  n: count()
  hits: count(ok)
  mean_score: mean(score)
  total: sum(score)
  low: min(score)
  high: max(score)
  p90: percentile(score, 90)
  kappa: kappa(j.answer, j.gold)
  f1: macro_f1(j.gold, j.answer)
  ece: ece(j.conf, ok, 5)
reports: [json, items]
"#;

/// The plan of [`SPEC`] over `items` JSONL lines, and its records read back.
fn plan_and_records(items: &[String]) -> (Plan, Vec<Record>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("spec.yaml"), SPEC).unwrap();
    std::fs::write(dir.path().join("j.jsonl"), items.join("\n") + "\n").unwrap();
    let spec = crate::spec::load(&dir.path().join("spec.yaml")).unwrap();
    let (inputs, _) = gather(&spec, &Overrides::default());
    let plan = crate::plan::compile(&spec, &[], inputs).unwrap();
    let (chunks, _) = read_chunked(&plan.datasets[0], 1, Vec::new, |records, record| {
        records.push(record);
        Ok(ControlFlow::Continue(()))
    })
    .unwrap();
    let records = chunks.into_iter().flat_map(|c| c.state).collect();
    (plan, records, dir)
}

/// `n` items: answers right or wrong, scores with both zeros, keys repeated
/// and missing, three topics.
fn items(n: usize, seed: u64) -> Vec<String> {
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|i| {
            let mut pick = |k: u64| rng.next_u64() % k;
            let id = match pick(10) {
                0 => "null".to_string(),
                1 => format!("\"q{}\"", pick(5)),
                _ => format!("\"q{i}\""),
            };
            let score = match pick(8) {
                0 => "-0.0".to_string(),
                1 => "0.0".to_string(),
                k => format!("{}.{}", k, pick(100)),
            };
            format!(
                "{{\"id\": {id}, \"answer\": \"a{}\", \"gold\": \"a{}\", \"score\": {score}, \"conf\": 0.{}, \"topic\": \"t{}\"}}",
                pick(3),
                pick(3),
                pick(10),
                pick(3)
            )
        })
        .collect()
}

/// Folds the items `chosen` (in item order) into a fresh state.
fn fold<'p>(
    plan: &'p Plan,
    roles: &'p Roles,
    records: &[Record],
    chosen: &[usize],
) -> RunState<'p> {
    let mut state = RunState::new(plan, roles, LineLimit::UNBOUNDED);
    let mut scorer = Scorer::new(plan, roles);
    let mut last = (0, 0);
    for (i, record) in records.iter().enumerate() {
        // Places count through every record, chosen or not.
        let at = place(record.line, &mut last);
        if !chosen.contains(&i) {
            continue;
        }
        let dataset = &plan.datasets[0];
        let key = key_of(dataset, plan.items_dataset, record, &plan.locations).unwrap();
        scorer.score(&[Some(record)]).unwrap();
        state
            .fold(&scorer.score, key.as_ref(), record.line, at, false)
            .unwrap();
    }
    state
}

/// Everything a finished state gives the reports, as text and bytes.
fn finished(plan: &Plan, mut state: RunState<'_>) -> String {
    state.count_columns();
    // The reports list the first offenders up to the limit (`combine`).
    state
        .offenders
        .sort_by(crate::eval::outcome::ItemRow::report_order);
    state
        .offenders
        .truncate(plan.offenders.as_ref().map_or(0, |o| o.limit));
    let aggregates: Vec<Value> = (state.accumulators.iter().zip(&plan.aggregates))
        .map(|(a, aggregate)| a.clone().finish(aggregate.function))
        .collect();
    let records = [Value::Number(state.count as f64)];
    let slices = slices::finish(plan, std::mem::take(&mut state.slices), &records).unwrap();
    let mut items = Vec::new();
    state.lines.write_sorted(&mut items, false).unwrap();
    let writer = state.values.line_writer();
    let mut values = Vec::new();
    for i in 0..state.values.len() {
        values.extend(format!("{:?}", state.values.keys[i]).bytes());
        writer.push_entries(i, &mut values);
        values.push(b'\n');
    }
    format!(
        "{aggregates:?}\n{slices:?}\n{} {:?}\n{:?}\n{}\n{}\n{:?}",
        state.count,
        state.label_counts,
        state.offenders,
        String::from_utf8(items).unwrap(),
        String::from_utf8(values).unwrap(),
        state.values.slices,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// The items dealt into groups at random (each group's items in item
    /// order, the groups interleaved, as a shuffle delivers them), each
    /// group folded on its own, then merged two at a time in a random
    /// order and grouping: the finished state is the one fold's.
    #[test]
    fn states_merged_in_any_grouping_finish_as_one_fold(
        seed in any::<u64>(),
        n in 1usize..90,
        groups in 1usize..7,
    ) {
        let (plan, records, _dir) = plan_and_records(&items(n, seed));
        let roles = Roles::of(&plan);
        let all: Vec<usize> = (0..records.len()).collect();
        let expected = finished(&plan, fold(&plan, &roles, &records, &all));

        let mut rng = SplitMix64::new(seed ^ 0x5eed);
        let mut dealt: Vec<Vec<usize>> = vec![Vec::new(); groups];
        for i in 0..records.len() {
            dealt[(rng.next_u64() % groups as u64) as usize].push(i);
        }
        let mut pool: Vec<RunState<'_>> =
            dealt.iter().map(|chosen| fold(&plan, &roles, &records, chosen)).collect();
        while pool.len() > 1 {
            let a = pool.swap_remove((rng.next_u64() % pool.len() as u64) as usize);
            let b = (rng.next_u64() % pool.len() as u64) as usize;
            pool[b].merge(a);
        }
        let merged = pool.pop().unwrap();
        prop_assert_eq!(finished(&plan, merged), expected);
    }
}

/// Consecutive stretches merged in order by the fast path give the fold's
/// state too.
#[test]
fn stretches_merged_in_order_finish_as_one_fold() {
    let (plan, records, _dir) = plan_and_records(&items(70, 7));
    let roles = Roles::of(&plan);
    let all: Vec<usize> = (0..records.len()).collect();
    let expected = finished(&plan, fold(&plan, &roles, &records, &all));
    let stretches: Vec<RunState<'_>> = all
        .chunks(13)
        .map(|stretch| fold(&plan, &roles, &records, stretch))
        .collect();
    let merged = RunState::merge_in_order(stretches, 3);
    assert_eq!(finished(&plan, merged), expected);
}
