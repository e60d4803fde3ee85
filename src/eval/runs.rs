//! A plan over its runs. A dataset with `runs:` is read once per file, and the
//! whole plan (items, aggregates, metrics, gates) is evaluated per run; a spec
//! without runs is the one run. Datasets read from one `path` are loaded once
//! and shared by every run. After the last run come what only all runs together
//! decide: `stability` (an item's value identical in every run), metrics over
//! runs (`run_mean(precision)`, …), and gates that every run, or the best, must pass.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use crate::base::diagnostic::{Diagnostic, Location};
use crate::base::natural::key_order;
use crate::base::value::{Key, Value};
use crate::data::read_chunked;
use crate::eval::aggregate::{Accumulator, Confusion};
use crate::eval::gates::{evaluate_gate, GateOutcome, GateStatus};
use crate::eval::run::{data_warnings, load_lookup, pass, Lookup, Pass};
use crate::eval::{DatasetOutcome, ItemRow, OffenderRow};
use crate::inputs::run_files::run_name_of_file;
use crate::ir::DatasetId;
use crate::ir::Record;
use crate::ir::{evaluate, evaluate_on_record, Frame};
use crate::library::aggregates::AggregateFn;
use crate::plan::{Check, DatasetPlan, GatePlan, Plan};
use crate::spec::GateRuns;

/// Items that flip listed per `stability` aggregate; the count covers them all.
pub const MAX_FLIPS: usize = 100;

#[derive(Debug)]
pub struct Outcome {
    /// Per dataset; with several runs, summed over the runs.
    pub datasets: Vec<DatasetOutcome>,
    /// Items evaluated (in all runs).
    pub items: usize,
    /// Metric values, in plan order; `empty` already applied. With several runs,
    /// per-run metrics are null here (each run has its own) and metrics across
    /// runs have their value.
    pub metrics: Vec<Value>,
    pub gates: Vec<GateOutcome>,
    pub warnings: Vec<Diagnostic>,
    /// Per label of `plan.labels`, how many items took it.
    pub label_counts: Vec<usize>,
    /// Every item, in file order (run by run), when the plan keeps items.
    pub rows: Vec<ItemRow>,
    /// The first `offenders.limit` offenders in key order.
    pub offenders: Vec<OffenderRow>,
    /// Per metric (plan order), its value in the baseline run.
    pub baseline: Vec<Value>,
    /// With several runs: each run, in run order. Empty for a spec without runs.
    pub runs: Vec<RunOutcome>,
    /// Per `stability` aggregate: the items compared and those that flip.
    pub stability: Vec<StabilityOutcome>,
    /// Per `kappa`/`agreement` subject (and run): its confusion table.
    pub agreements: Vec<AgreementOutcome>,
}

impl Outcome {
    /// No `fail` gate failed.
    pub fn pass(&self) -> bool {
        !self.gates.iter().any(|g| g.status == GateStatus::Fail)
    }
}

/// One run of a spec with several.
#[derive(Debug)]
pub struct RunOutcome {
    pub name: Arc<str>,
    /// Per dataset read as runs: its name and this run's file.
    pub files: Vec<(String, String)>,
    pub datasets: Vec<DatasetOutcome>,
    pub items: usize,
    /// Every metric (plan order): this run's per-run values and the values across runs.
    pub metrics: Vec<Value>,
    /// Per gate (plan order): how it decided in this run.
    pub gates: Vec<GateOutcome>,
    /// Per metric (plan order): its value for this run in the baseline run.
    pub baseline: Vec<Value>,
    pub label_counts: Vec<usize>,
}

#[derive(Debug)]
pub struct StabilityOutcome {
    /// Index of the aggregate in `plan.aggregates`.
    pub aggregate: usize,
    /// Keyed items seen in any run.
    pub items: usize,
    /// Items with the same value in every run.
    pub stable: usize,
    /// The first `MAX_FLIPS` items that flip, in key order.
    pub flips: Vec<Flip>,
}

/// An item whose value is not the same in every run.
#[derive(Debug)]
pub struct Flip {
    pub key: Key,
    /// The item's value per run; `None` where the run has no such item.
    pub values: Vec<Option<Value>>,
}

#[derive(Debug)]
pub struct AgreementOutcome {
    /// Index of the (first) aggregate of this subject in `plan.aggregates`.
    pub aggregate: usize,
    /// The run, with several.
    pub run: Option<Arc<str>>,
    pub confusion: Confusion,
}

/// What one run reads: its name, and per dataset which of its run files
/// (`None`: the dataset's one file, shared by every run).
struct RunSource {
    name: Option<Arc<str>>,
    files: Vec<Option<usize>>,
    /// Per dataset read as runs: the value every record's `run_name` must have.
    names: Vec<Option<Value>>,
}

/// Runs the plan with up to `threads` threads per dataset read.
pub fn run(plan: &Plan, threads: usize) -> Result<Outcome, Vec<Diagnostic>> {
    let sources = run_sources(plan)?;
    let mut shared: Vec<Option<(Lookup, DatasetOutcome)>> =
        (0..plan.items_dataset.index()).map(|_| None).collect();
    let mut passes = Vec::with_capacity(sources.len());
    for source in &sources {
        let datasets: Vec<Cow<'_, DatasetPlan>> = plan
            .datasets
            .iter()
            .zip(&source.files)
            .zip(&source.names)
            .map(|((dataset, file), name)| match file {
                Some(file) => Cow::Owned(dataset.for_run(&dataset.runs[*file], name.as_ref())),
                None => Cow::Borrowed(dataset),
            })
            .collect();
        let mut own: Vec<Option<(Lookup, DatasetOutcome)>> =
            (0..plan.items_dataset.index()).map(|_| None).collect();
        for index in 0..plan.items_dataset.index() {
            let slot = match source.files[index] {
                Some(_) => &mut own[index],
                None if shared[index].is_none() => &mut shared[index],
                None => continue,
            };
            let mut outcome = DatasetOutcome::default();
            let table = load_lookup(
                &datasets[index],
                DatasetId::new(index),
                threads,
                &mut outcome,
            )
            .map_err(|d| vec![d])?;
            *slot = Some((table, outcome));
        }
        let lookups: Vec<(&Lookup, &DatasetOutcome)> = (0..plan.items_dataset.index())
            .map(|i| {
                let (table, outcome) = own[i]
                    .as_ref()
                    .or(shared[i].as_ref())
                    .expect("every looked-up dataset is loaded");
                (table, outcome)
            })
            .collect();
        let mut result = pass(
            plan,
            &datasets[plan.items_dataset.index()],
            &lookups,
            threads,
        )?;
        if let Some(name) = &source.name {
            for row in result.rows.iter_mut().chain(&mut result.offenders) {
                row.run = Some(name.clone());
            }
        }
        let files = datasets
            .iter()
            .zip(&source.files)
            .filter(|(_, file)| file.is_some())
            .map(|(d, _)| (d.name.clone(), d.display_path.clone()))
            .collect();
        passes.push((result, files));
    }
    combine(plan, &sources, passes)
}

/// Per file of a dataset read as runs: the run's name, and the value it came from.
type RunNames = Vec<(String, Option<Value>)>;

/// The `n`-th item with a key in a run, and its value in each run.
type Occurrences = Vec<((Key, u32), Vec<Option<Value>>)>;

/// The runs, in the order of the first dataset read as runs; every such dataset
/// must have a file for each run and no other.
fn run_sources(plan: &Plan) -> Result<Vec<RunSource>, Vec<Diagnostic>> {
    let n = plan.datasets.len();
    if !plan.has_runs() {
        return Ok(vec![RunSource {
            name: None,
            files: vec![None; n],
            names: vec![None; n],
        }]);
    }
    // Per dataset read as runs: each file's run name (and the value it came from).
    let mut named: Vec<(usize, RunNames)> = Vec::new();
    for (index, dataset) in plan.datasets.iter().enumerate() {
        if dataset.runs.is_empty() {
            continue;
        }
        let mut names: RunNames = Vec::new();
        for file in &dataset.runs {
            let name = match &dataset.run_name {
                None => (run_name_of_file(&file.path), None),
                Some(check) => {
                    let value =
                        first_run_name(&dataset.for_run(file, None), DatasetId::new(index), check)?;
                    let text = match &value {
                        Value::String(s) => s.to_string(),
                        other => other.preview(),
                    };
                    (text, Some(value))
                }
            };
            if let Some(earlier) = names.iter().position(|(n, _)| *n == name.0) {
                return Err(vec![Diagnostic::error(format!(
                    "{}: two files are the run `{}`: {} and {}",
                    dataset.name, name.0, dataset.runs[earlier].display_path, file.display_path
                ))
                .at(dataset.declared_at.clone())
                .help(match dataset.run_name {
                    None => "runs are named by their file names; rename one, or set `run_name`",
                    Some(_) => "each file must be a run of its own: check its `run_name` field",
                })]);
            }
            names.push(name);
        }
        named.push((index, names));
    }
    let (first, order) = &named[0];
    for (index, names) in &named[1..] {
        let mut expected: Vec<&str> = order.iter().map(|(n, _)| n.as_str()).collect();
        let mut found: Vec<&str> = names.iter().map(|(n, _)| n.as_str()).collect();
        expected.sort_unstable();
        found.sort_unstable();
        if expected != found {
            let (a, b) = (&plan.datasets[*first], &plan.datasets[*index]);
            return Err(vec![Diagnostic::error(format!(
                "datasets `{}` and `{}` have different runs: [{}] and [{}]",
                a.name,
                b.name,
                order
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                names
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            ))
            .at(b.declared_at.clone())
            .help(
                "datasets read as runs are paired by run name; give each the same runs",
            )]);
        }
    }
    Ok(order
        .iter()
        .map(|(name, _)| {
            let mut files = vec![None; n];
            let mut names = vec![None; n];
            for (index, runs) in &named {
                let f = runs.iter().position(|(n, _)| n == name).expect("checked");
                files[*index] = Some(f);
                names[*index] = runs[f].1.clone();
            }
            RunSource {
                name: Some(Arc::from(name.as_str())),
                files,
                names,
            }
        })
        .collect())
}

/// A run named by its records: the `run_name` of its first record.
fn first_run_name(
    dataset: &DatasetPlan,
    dataset_id: DatasetId,
    check: &Check,
) -> Result<Value, Vec<Diagnostic>> {
    // One reader hashes as it reads, so stopping at the first record reads no further.
    let read = read_chunked(
        dataset,
        1,
        || None::<Record>,
        |first, record| {
            *first = Some(record);
            // Stop at once: only the first record is needed.
            Err(Diagnostic::error("first record read"))
        },
    )
    .map_err(|d| vec![d])?;
    let record = read
        .0
        .into_iter()
        .find_map(|chunk| match (chunk.state, chunk.stop) {
            (Some(record), _) => Some(Ok(record)),
            (None, Some(error)) => Some(Err(error)),
            (None, None) => None,
        });
    let at = |line: usize| Location::in_data(&dataset.display_path, line, None);
    let record = match record {
        Some(Ok(record)) => record,
        Some(Err(error)) => return Err(vec![error]),
        None => {
            return Err(vec![Diagnostic::error(format!(
                "{}: `{}` has no records, so its run has no name",
                dataset.name, dataset.display_path
            ))
            .at(dataset.declared_at.clone())
            .help(
                "name runs by file (`run_name: file`), or give the file its records",
            )])
        }
    };
    match evaluate_on_record(&check.op, dataset_id, &record) {
        Ok(value @ (Value::String(_) | Value::Number(_))) => Ok(value),
        Ok(other) => Err(vec![Diagnostic::error(format!(
            "{}: the run name `{}` is {} {}",
            dataset.name,
            check.text,
            other.type_name(),
            other.preview()
        ))
        .at(at(record.line as usize))
        .help("a run's name must be a string or a number")]),
        Err(message) => Err(vec![Diagnostic::error(format!(
            "{}: cannot compute the run name `{}`: {message}",
            dataset.name, check.text
        ))
        .at(at(record.line as usize))]),
    }
}

/// Finishes every run's aggregates and metrics, then what is decided across runs.
fn combine(
    plan: &Plan,
    sources: &[RunSource],
    mut passes: Vec<(Pass, Vec<(String, String)>)>,
) -> Result<Outcome, Vec<Diagnostic>> {
    let names: Vec<Option<Arc<str>>> = sources.iter().map(|s| s.name.clone()).collect();
    let mut tracks: Vec<Vec<Vec<(Key, Value)>>> = vec![Vec::new(); plan.aggregates.len()];
    let mut agreements: Vec<AgreementOutcome> = Vec::new();
    let mut run_aggregates = Vec::with_capacity(passes.len());
    let mut run_metrics = Vec::with_capacity(passes.len());
    for ((pass, _), name) in passes.iter_mut().zip(&names) {
        let accumulators = std::mem::take(&mut pass.accumulators);
        let mut values = Vec::with_capacity(plan.aggregates.len());
        for (i, (accumulator, aggregate)) in
            accumulators.into_iter().zip(&plan.aggregates).enumerate()
        {
            values.push(match accumulator {
                Accumulator::Track(items) => {
                    tracks[i].push(items);
                    Value::Null
                }
                Accumulator::Confusion(confusion) => {
                    let value = confusion.value(aggregate.function);
                    // `kappa(a, b)` and `agreement(a, b)` share one table per run.
                    let seen = agreements.iter().any(|a| {
                        a.run == *name && plan.aggregates[a.aggregate].subject == aggregate.subject
                    });
                    if !seen {
                        agreements.push(AgreementOutcome {
                            aggregate: i,
                            run: name.clone(),
                            confusion,
                        });
                    }
                    value
                }
                other => other.finish(aggregate.function),
            });
        }
        run_metrics.push(per_run_metrics(plan, &values, &pass.dataset_records)?);
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
        metrics[i] = metric_value(metric, evaluate(&metric.op, &frame))?;
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
    let (mut rows, mut offenders, mut warnings) = (Vec::new(), Vec::new(), Vec::new());
    let mut single = None;
    for ((((pass, files), name), metrics), aggregates) in passes
        .into_iter()
        .zip(&names)
        .zip(run_metrics)
        .zip(&run_aggregates)
    {
        let baseline = baseline_values(plan, name.as_deref());
        let gates: Vec<GateOutcome> = plan
            .gates
            .iter()
            .map(|gate| {
                let has_baseline = plan.baseline.is_some();
                evaluate_gate(gate, &metrics, aggregates, &baseline, has_baseline)
            })
            .collect::<Result<_, _>>()?;
        for warning in data_warnings(plan, &pass.datasets) {
            warnings.push(match name {
                Some(name) => Diagnostic::warning(format!("run `{name}`: {}", warning.message)),
                None => warning,
            });
        }
        if datasets.is_empty() {
            datasets = pass.datasets.clone();
        } else {
            for ((total, outcome), dataset) in
                datasets.iter_mut().zip(&pass.datasets).zip(&plan.datasets)
            {
                add_dataset(total, outcome, !dataset.runs.is_empty());
            }
        }
        items += pass.items;
        for (total, n) in label_counts.iter_mut().zip(&pass.label_counts) {
            *total += n;
        }
        rows.extend(pass.rows);
        offenders.extend(pass.offenders);
        match name {
            Some(name) => runs.push(RunOutcome {
                name: name.clone(),
                files,
                datasets: pass.datasets,
                items: pass.items,
                metrics,
                gates,
                baseline,
                label_counts: pass.label_counts,
            }),
            None => single = Some((metrics, gates)),
        }
    }
    for (index, (total, dataset)) in datasets.iter_mut().zip(&plan.datasets).enumerate() {
        if !dataset.runs.is_empty() {
            total.read.sha256 = combined_sha256(&runs, index);
        }
    }
    offenders.sort_by(ItemRow::report_order);
    offenders.truncate(plan.offenders.as_ref().map_or(0, |o| o.limit));

    // Without runs the one pass is the outcome; with runs, per-run metrics stay
    // with their runs and each gate is decided over them.
    let (metrics, gates) = match single {
        Some(single) => single,
        None => {
            let gates = (0..plan.gates.len())
                .map(|g| decide_over_runs(&plan.gates[g], &runs, g))
                .collect();
            (metrics, gates)
        }
    };
    Ok(Outcome {
        datasets,
        items,
        metrics,
        gates,
        warnings,
        label_counts,
        rows,
        offenders,
        baseline: baseline_values(plan, None),
        runs,
        stability,
        agreements,
    })
}

/// How a per-run metric is named in `report.json`, and found again by `--baseline`.
pub fn per_run_name(metric: &str, run: &str) -> String {
    format!("{metric}@{run}")
}

/// Each metric's value in the `--baseline` run: for `run`, per-run metrics are
/// looked up under their per-run names.
fn baseline_values(plan: &Plan, run: Option<&str>) -> Vec<Value> {
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
fn per_run_metrics(
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
        metrics.push(metric_value(metric, evaluate(&metric.op, &frame))?);
    }
    Ok(metrics)
}

/// A metric's value: `empty` for null, null for a non-finite number.
fn metric_value(
    metric: &crate::plan::MetricPlan,
    value: Result<Value, String>,
) -> Result<Value, Vec<Diagnostic>> {
    let value =
        value.map_err(|e| vec![Diagnostic::error(format!("metric `{}`: {e}", metric.name))])?;
    Ok(match (value, metric.empty) {
        (Value::Null, Some(empty)) => Value::Number(empty),
        (Value::Number(n), _) if !n.is_finite() => Value::Null,
        (value, _) => value,
    })
}

/// `stability`: per keyed item (the n-th item with a key, for repeated keys), its
/// value in each run; stable when every run has it with the same value.
fn compare_runs(
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
fn add_dataset(total: &mut DatasetOutcome, run: &DatasetOutcome, per_run: bool) {
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
fn combined_sha256(runs: &[RunOutcome], index: usize) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    for run in runs {
        hasher.update(format!("{} {}\n", run.name, run.datasets[index].read.sha256).as_bytes());
    }
    format!("{:x}", hasher.finalize())
}

/// A gate over several runs. One that reads only values across runs decides
/// the same in each; otherwise `every` run must pass (the gate shows the worst),
/// or `any` (it shows the best).
fn decide_over_runs(gate: &GatePlan, runs: &[RunOutcome], g: usize) -> GateOutcome {
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
