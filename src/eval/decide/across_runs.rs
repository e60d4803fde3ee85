//! What only all runs together decide: `stability` (an item's value identical in
//! every run), metrics over runs (`run_mean(precision)`, …), the baseline's
//! values per run, and gates that every run, or the best, must pass.

use std::collections::HashMap;
use std::sync::Arc;

use crate::base::diagnostic::Diagnostic;
use crate::base::natural::key_order;
use crate::base::sha256::Sha256;
use crate::base::value::{Key, Value};
use crate::eval::decide::gates::{evaluate_gate, FailedTest, GateOutcome};
use crate::eval::decide::run_stats::{across_stats, run_stats, slice_intervals};
use crate::eval::decide::significance::{adjust, Tests};
use crate::eval::decide::slice_gates::SliceRun;
use crate::eval::error::EvalError;
use crate::eval::join::{data_warnings, Pass};
use crate::eval::outcome::{
    AgreementOutcome, DatasetOutcome, Flip, ItemRow, Outcome, RunOutcome, StabilityOutcome,
    MAX_FLIPS,
};
use crate::eval::state::item_lines::ItemLines;
use crate::eval::state::slices;
use crate::ir::{evaluate, Frame, RuntimeError};
use crate::library::aggregates::AggregateFn;
use crate::plan::{GatePlan, GateRule, Plan};
use crate::spec::GateRuns;
use crate::stats::aggregate::Accumulator;

/// What one run reads: its name, and per dataset which of its run files
/// (`None`: the dataset's one file, shared by every run).
pub(in crate::eval) struct RunSource {
    pub(in crate::eval) name: Option<Arc<str>>,
    pub(in crate::eval) files: Vec<Option<usize>>,
    /// Per dataset read as runs: the value every record's `run_name` must have.
    pub(in crate::eval) names: Vec<Option<Value>>,
}

/// The `n`-th item with a key in a run, and its value in each run.
pub(in crate::eval) type Occurrences = Vec<((Key, u32), Vec<Option<Value>>)>;

/// Finishes every run's aggregates and metrics, then what is decided across runs.
pub(in crate::eval) fn combine(
    plan: &Plan,
    sources: &[RunSource],
    mut passes: Vec<(Pass<'_>, Vec<(String, String)>)>,
    threads: usize,
) -> Result<Outcome, Vec<Diagnostic>> {
    let names: Vec<Option<Arc<str>>> = sources.iter().map(|s| s.name.clone()).collect();
    let mut tracks: Vec<Vec<Vec<(Key, Value)>>> = vec![Vec::new(); plan.aggregates.len()];
    let mut agreements: Vec<AgreementOutcome> = Vec::new();
    let mut confusions: Vec<AgreementOutcome> = Vec::new();
    let mut run_aggregates = Vec::with_capacity(passes.len());
    let mut run_metrics = Vec::with_capacity(passes.len());
    let mut run_slices = Vec::with_capacity(passes.len());
    for ((pass, _), name) in passes.iter_mut().zip(&names) {
        let accumulators = std::mem::take(&mut pass.run.accumulators);
        let mut values = Vec::with_capacity(plan.aggregates.len());
        for (i, (accumulator, aggregate)) in
            accumulators.into_iter().zip(&plan.aggregates).enumerate()
        {
            values.push(match accumulator {
                Accumulator::Track(items) => {
                    tracks[i].push(
                        items
                            .into_iter()
                            .map(|(_, key, value)| (key, value))
                            .collect(),
                    );
                    Value::Null
                }
                Accumulator::Confusion(confusion) => {
                    let value = confusion.table().value(aggregate.function);
                    // The reports show the tables of `kappa`/`agreement` and of
                    // `confusion`; the F1 scores only give their value.
                    let tables = match aggregate.function {
                        AggregateFn::Kappa | AggregateFn::Agreement => Some(&mut agreements),
                        AggregateFn::Confusion => Some(&mut confusions),
                        _ => None,
                    };
                    // `kappa(a, b)` and `agreement(a, b)` share one table per run.
                    if let Some(tables) = tables {
                        let seen = tables.iter().any(|a| {
                            a.run == *name
                                && plan.aggregates[a.aggregate].subject == aggregate.subject
                        });
                        if !seen {
                            tables.push(AgreementOutcome {
                                aggregate: i,
                                run: name.clone(),
                                confusion,
                            });
                        }
                    }
                    value
                }
                other => other.finish(aggregate.function),
            });
        }
        let dataset_records = pass.dataset_records(plan);
        run_metrics.push(per_run_metrics(plan, &values, &dataset_records)?);
        let folds = std::mem::take(&mut pass.run.slices);
        run_slices.push(slices::finish(plan, folds, &dataset_records)?);
        run_aggregates.push(values);
    }

    // Across runs: stability, then the metrics that read it or summarise runs.
    let mut across_aggregates = vec![Value::Null; plan.aggregates.len()];
    let mut stability = Vec::new();
    for (i, aggregate) in plan.aggregates.iter().enumerate() {
        if aggregate.function == AggregateFn::Stability {
            let (value, outcome) = compare_runs(i, std::mem::take(&mut tracks[i]), names.len());
            across_aggregates[i] = value;
            stability.push(outcome);
        }
    }
    let mut metrics = vec![Value::Null; plan.metrics.len()];
    for (i, metric) in plan.metrics.iter().enumerate() {
        if !metric.across {
            continue;
        }
        let frame = Frame {
            aggregates: &across_aggregates,
            metrics: &metrics,
            run_metrics: &run_metrics,
            ..Frame::default()
        };
        metrics[i] = metric_value(plan, metric, evaluate(&metric.op, &frame))?;
    }
    for run in &mut run_metrics {
        for (i, metric) in plan.metrics.iter().enumerate() {
            if metric.across {
                run[i] = metrics[i].clone();
            }
        }
    }

    let mut runs = Vec::with_capacity(names.len());
    let mut datasets: Vec<DatasetOutcome> = Vec::new();
    let (mut items, mut label_counts) = (0, vec![0; plan.labels.len()]);
    let (mut lines, mut offenders, mut warnings) = (ItemLines::default(), Vec::new(), Vec::new());
    let mut single = None;
    let mut item_values = Vec::with_capacity(names.len());
    // Every run's paired tests first: the tests that can fail the build are
    // one family over all runs (`significance::adjust`).
    let mut all_stats: Vec<_> = (passes.iter_mut().zip(&names).zip(&run_metrics))
        .zip(&mut run_slices)
        .map(|((((pass, _), name), metrics), slices)| {
            pass.run.values.run = name.clone();
            slice_intervals(plan, &pass.run.values, slices);
            run_stats(plan, &pass.run.values, metrics, threads)
        })
        .collect();
    adjust(plan, &mut all_stats, &mut run_slices);
    // Bounds are computed from params (and metrics): the first run's serve.
    let power = (run_metrics.first())
        .map(|metrics| crate::eval::decide::significance::power_warnings(plan, metrics))
        .unwrap_or_default();
    for ((((((pass, files), name), metrics), aggregates), slices), stats) in passes
        .into_iter()
        .zip(&names)
        .zip(run_metrics)
        .zip(&run_aggregates)
        .zip(run_slices)
        .zip(all_stats)
    {
        let mut pass = pass;
        let baseline = baseline_values(plan, name.as_deref());
        let slice_run = SliceRun {
            plan,
            slices: &slices,
            run: name.as_deref(),
        };
        let gates: Vec<GateOutcome> = plan
            .gates
            .iter()
            .map(|gate| {
                if gate.by.is_some() || matches!(gate.rule, GateRule::SliceValues { .. }) {
                    return slice_run.decide(gate);
                }
                let has_baseline = plan.baseline.is_some();
                let tests = Tests {
                    changes: &stats.changes,
                };
                evaluate_gate(gate, &metrics, aggregates, &baseline, has_baseline, tests)
            })
            .collect::<Result<_, EvalError>>()
            .map_err(|e| vec![e.report(&plan.locations)])?;
        warnings.extend(data_warnings(plan, &pass.datasets, name.as_ref()));
        item_values.push(std::mem::take(&mut pass.run.values));
        if datasets.is_empty() {
            datasets = pass.datasets.clone();
        } else {
            for ((total, outcome), dataset) in
                datasets.iter_mut().zip(&pass.datasets).zip(&plan.datasets)
            {
                add_dataset(total, outcome, !dataset.runs.is_empty());
            }
        }
        items += pass.run.count;
        for (total, n) in label_counts.iter_mut().zip(&pass.run.label_counts) {
            *total += n;
        }
        let run = u32::try_from(runs.len()).unwrap_or(u32::MAX);
        lines.extend_run(pass.run.lines, name.clone(), run);
        offenders.extend(pass.run.offenders);
        match name {
            Some(name) => runs.push(RunOutcome {
                name: name.clone(),
                files,
                datasets: pass.datasets,
                items: pass.run.count,
                metrics,
                gates,
                baseline,
                label_counts: pass.run.label_counts,
                slices,
                stats,
            }),
            None => single = Some((metrics, gates, slices, stats)),
        }
    }
    for (index, (total, dataset)) in datasets.iter_mut().zip(&plan.datasets).enumerate() {
        if !dataset.runs.is_empty() {
            total.read.sha256 = combined_sha256(&runs, index);
        }
    }
    warnings.extend(power);
    if let Some(missing) = crate::eval::decide::gates::baseline_missing(plan) {
        warnings.push(Diagnostic::warning("no_baseline", missing));
    }
    offenders.sort_by(ItemRow::report_order);
    offenders.truncate(plan.offenders.as_ref().map_or(0, |o| o.limit));

    // Without runs the one pass is the outcome; with runs, per-run metrics stay
    // with their runs and each gate is decided over them.
    let (metrics, gates, slices, stats) = match single {
        Some(single) => single,
        None => {
            let gates = (0..plan.gates.len())
                .map(|g| decide_over_runs(&plan.gates[g], &runs, g))
                .collect();
            let stats = across_stats(plan, &item_values, &metrics);
            (metrics, gates, Vec::new(), stats)
        }
    };
    Ok(Outcome {
        datasets,
        items,
        metrics,
        gates,
        warnings,
        label_counts,
        lines,
        offenders,
        baseline: baseline_values(plan, None),
        runs,
        stability,
        agreements,
        confusions,
        slices,
        item_values,
        stats,
    })
}

/// How a per-run metric is named in `report.json`, and found again by `--baseline`.
pub fn per_run_name(metric: &str, run: &str) -> String {
    format!("{metric}@{run}")
}

/// Each metric's value in the `--baseline` run: for `run`, per-run metrics are
/// looked up under their per-run names.
pub(in crate::eval) fn baseline_values(plan: &Plan, run: Option<&str>) -> Vec<Value> {
    plan.metrics
        .iter()
        .map(|m| match (&plan.baseline, run) {
            (None, _) => Value::Null,
            (Some(prior), Some(run)) if !m.across => prior.metric(&per_run_name(&m.name, run)),
            (Some(prior), _) => prior.metric(&m.name),
        })
        .collect()
}

/// Every metric's value in one run; metrics across runs stay null until every
/// run is read.
pub(in crate::eval) fn per_run_metrics(
    plan: &Plan,
    aggregates: &[Value],
    dataset_records: &[Value],
) -> Result<Vec<Value>, Vec<Diagnostic>> {
    let mut metrics: Vec<Value> = Vec::with_capacity(plan.metrics.len());
    for metric in &plan.metrics {
        if metric.across {
            metrics.push(Value::Null);
            continue;
        }
        let frame = Frame {
            aggregates,
            metrics: &metrics,
            dataset_records,
            ..Frame::default()
        };
        metrics.push(metric_value(plan, metric, evaluate(&metric.op, &frame))?);
    }
    Ok(metrics)
}

/// A metric's value: `empty` for null, null for a non-finite number.
pub(in crate::eval) fn metric_value(
    plan: &Plan,
    metric: &crate::plan::MetricPlan,
    value: Result<Value, RuntimeError>,
) -> Result<Value, Vec<Diagnostic>> {
    let value = value.map_err(|error| {
        let kind = EvalError::MetricNotEvaluated {
            metric: metric.name.clone(),
            error,
        };
        vec![kind.report(&plan.locations)]
    })?;
    Ok(match (value, metric.empty) {
        (Value::Null, Some(empty)) => Value::Number(empty),
        (Value::Number(n), _) if !n.is_finite() => Value::Null,
        (value, _) => value,
    })
}

/// `stability`: per keyed item (the n-th item with a key, for repeated keys), its
/// value in each run; stable when every run has it with the same value.
pub(in crate::eval) fn compare_runs(
    aggregate: usize,
    runs: Vec<Vec<(Key, Value)>>,
    run_count: usize,
) -> (Value, StabilityOutcome) {
    type Seen = HashMap<(Key, u32), Vec<Option<Value>>, foldhash::fast::FixedState>;
    let mut seen: Seen = HashMap::default();
    for (r, items) in runs.into_iter().enumerate() {
        let mut occurrences: HashMap<Key, u32, foldhash::fast::FixedState> = HashMap::default();
        for (key, value) in items {
            let nth = occurrences.entry(key.clone()).or_insert(0);
            let values = seen
                .entry((key, *nth))
                .or_insert_with(|| vec![None; run_count]);
            *nth += 1;
            values[r] = Some(value);
        }
    }
    let total = seen.len();
    let mut flips: Occurrences = seen
        .into_iter()
        .filter(|(_, values)| {
            let first = &values[0];
            first.is_none() || values.iter().any(|v| v != first)
        })
        .collect();
    let stable = total - flips.len();
    flips.sort_by(|((a, m), _), ((b, n), _)| key_order(Some(a), Some(b)).then(m.cmp(n)));
    flips.truncate(MAX_FLIPS);
    let value = if total == 0 {
        Value::Null
    } else {
        Value::Number(stable as f64 / total as f64)
    };
    let outcome = StabilityOutcome {
        aggregate,
        items: total,
        stable,
        flips: flips
            .into_iter()
            .map(|((key, _), values)| Flip { key, values })
            .collect(),
    };
    (value, outcome)
}

/// Adds one run's counts of a dataset to the totals. A dataset shared by every
/// run was read once: its records count once.
pub(in crate::eval) fn add_dataset(
    total: &mut DatasetOutcome,
    run: &DatasetOutcome,
    per_run: bool,
) {
    if per_run {
        total.read.records += run.read.records;
        total.read.bytes += run.read.bytes;
        total.keyless += run.keyless;
        total.duplicates += run.duplicates;
    }
    total.unmatched += run.unmatched;
    total.missing += run.missing;
    total.skipped_items += run.skipped_items;
}

/// The fingerprint of a dataset read as runs (at `index` in the plan): SHA-256
/// over `name sha256` lines, one per run in run order.
pub(in crate::eval) fn combined_sha256(runs: &[RunOutcome], index: usize) -> String {
    let mut hasher = Sha256::new();
    for run in runs {
        hasher.update(format!("{} {}\n", run.name, run.datasets[index].read.sha256).as_bytes());
    }
    hasher.hex()
}

/// A gate over several runs. One that reads only values across runs decides
/// the same in each; otherwise `every` run must pass (the gate shows the worst),
/// or `any` (it shows the best).
pub(in crate::eval) fn decide_over_runs(
    gate: &GatePlan,
    runs: &[RunOutcome],
    g: usize,
) -> GateOutcome {
    let outcomes: Vec<(&Arc<str>, &GateOutcome)> =
        runs.iter().map(|r| (&r.name, &r.gates[g])).collect();
    if !gate.per_run {
        return outcomes[0].1.clone();
    }
    let statuses = outcomes.iter().map(|(_, o)| o.status);
    let status = match gate.runs {
        GateRuns::Every => statuses.max(),
        GateRuns::Any => statuses.min(),
    };
    // The first run (in run order) with the deciding status.
    let deciding = outcomes
        .iter()
        .find(|(_, o)| Some(o.status) == status)
        .expect("at least one run");
    let mut decided = deciding.1.clone();
    decided.run = Some(deciding.0.clone());
    // Every run's failing tests, each named with its run.
    decided.failed_by = (outcomes.iter())
        .flat_map(|(name, o)| {
            o.failed_by.iter().map(move |t| FailedTest {
                run: Some((*name).clone()),
                ..t.clone()
            })
        })
        .collect();
    decided.reasons = if decided.pass {
        Vec::new()
    } else {
        outcomes
            .iter()
            .filter(|(_, o)| !o.pass)
            .flat_map(|(name, o)| o.reasons.iter().map(move |r| format!("run `{name}`: {r}")))
            .collect()
    };
    if gate.runs == GateRuns::Any && !decided.pass {
        decided.reasons.insert(0, "no run passes".into());
    }
    decided
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(items: &[(&str, &str)]) -> Vec<(Key, Value)> {
        items
            .iter()
            .map(|(k, v)| (Key::Str(Arc::from(*k)), Value::from(*v)))
            .collect()
    }

    #[test]
    fn an_item_is_stable_only_with_the_same_value_in_every_run() {
        let runs = vec![
            run(&[("q1", "OK"), ("q2", "OK"), ("q3", "OK"), ("q10", "OK")]),
            run(&[("q1", "OK"), ("q2", "HALLUCINATION"), ("q3", "OK")]),
            run(&[("q3", "OK"), ("q1", "OK"), ("q2", "OK"), ("q10", "OK")]),
        ];
        let (value, outcome) = compare_runs(0, runs, 3);
        // q1 and q3 are stable; q2 flips; q10 is missing from run 2.
        assert_eq!(value, Value::Number(0.5));
        assert_eq!((outcome.items, outcome.stable), (4, 2));
        let flips: Vec<String> = outcome.flips.iter().map(|f| f.key.to_string()).collect();
        assert_eq!(flips, ["q2", "q10"]);
        assert_eq!(outcome.flips[1].values[1], None);
    }

    #[test]
    fn repeated_keys_are_compared_occurrence_by_occurrence() {
        let runs = vec![
            run(&[("q1", "a"), ("q1", "b")]),
            run(&[("q1", "a"), ("q1", "c")]),
        ];
        let (value, outcome) = compare_runs(0, runs, 2);
        assert_eq!(value, Value::Number(0.5));
        assert_eq!(outcome.flips.len(), 1);
        assert_eq!(
            outcome.flips[0].values,
            [Some(Value::from("b")), Some(Value::from("c"))]
        );
    }

    #[test]
    fn one_run_is_trivially_stable_and_no_items_have_no_stability() {
        let (value, _) = compare_runs(0, vec![run(&[("q1", "x")])], 1);
        assert_eq!(value, Value::Number(1.0));
        let (value, outcome) = compare_runs(0, vec![Vec::new(), Vec::new()], 2);
        assert_eq!(value, Value::Null);
        assert_eq!(outcome.items, 0);
    }
}
