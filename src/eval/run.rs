//! One run of a plan over its datasets. Looked-up datasets are read into keyed
//! tables (projected fields only); the items dataset is then streamed, each item
//! evaluated and folded into the aggregates as it is read.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use crate::data::{read_dataset, validate, ReadStats, Record};
use crate::diagnostic::{Diagnostic, Location};
use crate::eval::aggregate::Accumulator;
use crate::eval::interp::{evaluate, Frame};
use crate::plan::{DatasetPlan, GatePlan, Plan, Severity};
use crate::spec::{Duplicates, Join};
use crate::value::{Key, Value};

/// Item-evaluation errors to show before giving up.
const MAX_ITEM_ERRORS: usize = 10;

#[derive(Debug)]
pub struct Outcome {
    pub datasets: Vec<DatasetOutcome>,
    /// Items evaluated.
    pub items: usize,
    /// Metric values, in plan order; `empty` already applied.
    pub metrics: Vec<Value>,
    pub gates: Vec<GateOutcome>,
    pub warnings: Vec<Diagnostic>,
}

impl Outcome {
    /// No `fail` gate failed.
    pub fn pass(&self) -> bool {
        !self.gates.iter().any(|g| g.status == GateStatus::Fail)
    }
}

#[derive(Debug, Default)]
pub struct DatasetOutcome {
    pub read: ReadStats,
    /// Records whose key was null (they join nothing).
    pub keyless: usize,
    /// Records dropped or replaced under the duplicates policy.
    pub duplicates: usize,
    /// Lookups: records that no item matched.
    pub unmatched: usize,
    /// Lookups: items that found no record here (scored with null, or skipped).
    pub missing: usize,
    /// Lookups joined `inner`: items skipped because they had no record here.
    pub skipped_items: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateStatus {
    Pass,
    Warn,
    Fail,
}

impl GateStatus {
    pub fn keyword(self) -> &'static str {
        match self {
            GateStatus::Pass => "pass",
            GateStatus::Warn => "warn",
            GateStatus::Fail => "fail",
        }
    }
}

#[derive(Debug)]
pub struct GateOutcome {
    pub value: Value,
    pub pass: bool,
    pub status: GateStatus,
}

struct Lookup {
    records: Vec<Record>,
    index: HashMap<Key, usize>,
    matched: Vec<bool>,
}

pub fn run(plan: &Plan) -> Result<Outcome, Vec<Diagnostic>> {
    let mut outcomes: Vec<DatasetOutcome> = plan
        .datasets
        .iter()
        .map(|_| DatasetOutcome::default())
        .collect();
    let mut lookups = Vec::new();
    for (index, dataset) in plan.datasets.iter().enumerate().take(plan.items) {
        lookups.push(load_lookup(dataset, index, &mut outcomes[index]).map_err(|d| vec![d])?);
    }
    let mut state = ItemState {
        plan,
        accumulators: plan
            .aggregates
            .iter()
            .map(|a| Accumulator::new(a.function))
            .collect(),
        derived: vec![Value::Null; plan.derived.len()],
        errors: Vec::new(),
        items: 0,
    };
    stream_items(plan, &mut lookups, &mut outcomes, &mut state)?;
    if !state.errors.is_empty() {
        return Err(state.errors);
    }
    for (outcome, lookup) in outcomes.iter_mut().zip(&lookups) {
        outcome.unmatched = lookup.matched.iter().filter(|m| !**m).count();
    }
    let aggregates: Vec<Value> = state
        .accumulators
        .into_iter()
        .zip(&plan.aggregates)
        .map(|(acc, agg)| acc.finish(agg.function))
        .collect();
    let metrics = evaluate_metrics(plan, &aggregates)?;
    let gates = plan
        .gates
        .iter()
        .map(|gate| evaluate_gate(gate, &metrics))
        .collect::<Result<_, _>>()?;
    let warnings = data_warnings(plan, &outcomes);
    Ok(Outcome {
        datasets: outcomes,
        items: state.items,
        metrics,
        gates,
        warnings,
    })
}

fn key_of(dataset: &DatasetPlan, index: usize, record: &Record) -> Result<Option<Key>, Diagnostic> {
    let mut records: Vec<Option<&Record>> = vec![None; index + 1];
    records[index] = Some(record);
    let frame = Frame {
        records: &records,
        ..Frame::default()
    };
    let value = evaluate(&dataset.key, &frame).and_then(|v| Key::of(&v));
    value.map_err(|message| {
        Diagnostic::error(format!(
            "{}: cannot compute the key `{}`: {message}",
            dataset.name, dataset.key_text
        ))
        .at(Location::in_data(
            &dataset.display_path,
            record.line as usize,
            None,
        ))
        .help("a key must be a string or a number")
    })
}

fn duplicate_error(dataset: &DatasetPlan, key: &Key, first: u32, again: u32) -> Diagnostic {
    Diagnostic::error(format!(
        "{}: duplicate key `{key}` (first on line {first})",
        dataset.name
    ))
    .at(Location::in_data(
        &dataset.display_path,
        again as usize,
        None,
    ))
    .help(format!(
        "keys must be unique; or set `duplicates: first` or `last` on dataset `{}` to keep one",
        dataset.name
    ))
}

fn load_lookup(
    dataset: &DatasetPlan,
    index: usize,
    outcome: &mut DatasetOutcome,
) -> Result<Lookup, Diagnostic> {
    let mut lookup = Lookup {
        records: Vec::new(),
        index: HashMap::new(),
        matched: Vec::new(),
    };
    let (mut keyless, mut duplicates) = (0, 0);
    outcome.read = read_dataset(dataset, |record| {
        validate(dataset, &record)?;
        let Some(key) = key_of(dataset, index, &record)? else {
            keyless += 1;
            return Ok(());
        };
        match lookup.index.entry(key) {
            Entry::Vacant(slot) => {
                slot.insert(lookup.records.len());
                lookup.records.push(record);
                lookup.matched.push(false);
            }
            Entry::Occupied(slot) => {
                duplicates += 1;
                let existing = &mut lookup.records[*slot.get()];
                match dataset.duplicates {
                    Duplicates::Error => {
                        return Err(duplicate_error(
                            dataset,
                            slot.key(),
                            existing.line,
                            record.line,
                        ))
                    }
                    Duplicates::First | Duplicates::Keep => {}
                    Duplicates::Last => *existing = record,
                }
            }
        }
        Ok(())
    })?;
    outcome.keyless = keyless;
    outcome.duplicates = duplicates;
    Ok(lookup)
}

struct ItemState<'p> {
    plan: &'p Plan,
    accumulators: Vec<Accumulator>,
    derived: Vec<Value>,
    errors: Vec<Diagnostic>,
    items: usize,
}

/// Streams the items dataset. With `duplicates: last` the items are buffered so
/// that a later record can replace an earlier one at its position.
fn stream_items(
    plan: &Plan,
    lookups: &mut [Lookup],
    outcomes: &mut [DatasetOutcome],
    state: &mut ItemState<'_>,
) -> Result<(), Vec<Diagnostic>> {
    let dataset = &plan.datasets[plan.items];
    let mut first_lines: HashMap<Key, (u32, usize)> = HashMap::new();
    let mut buffered: Vec<(Option<Key>, Record)> = Vec::new();
    let (mut keyless, mut duplicates) = (0, 0);
    let read = read_dataset(dataset, |record| {
        validate(dataset, &record)?;
        let key = key_of(dataset, plan.items, &record)?;
        if key.is_none() {
            keyless += 1;
        }
        if let (Some(key), true) = (&key, dataset.duplicates != Duplicates::Keep) {
            match first_lines.entry(key.clone()) {
                Entry::Vacant(slot) => {
                    slot.insert((record.line, buffered.len()));
                }
                Entry::Occupied(slot) => {
                    duplicates += 1;
                    let (first_line, position) = *slot.get();
                    match dataset.duplicates {
                        Duplicates::Error => {
                            return Err(duplicate_error(dataset, key, first_line, record.line))
                        }
                        Duplicates::Last => buffered[position].1 = record,
                        _ => {}
                    }
                    return Ok(());
                }
            }
        }
        if dataset.duplicates == Duplicates::Last {
            buffered.push((key, record));
        } else {
            state.item(key.as_ref(), &record, lookups, outcomes);
        }
        if state.errors.len() >= MAX_ITEM_ERRORS {
            return Err(Diagnostic::error(format!(
                "stopped after {MAX_ITEM_ERRORS} items could not be evaluated"
            )));
        }
        Ok(())
    });
    match read {
        Ok(read) => outcomes[plan.items].read = read,
        Err(diagnostic) => {
            state.errors.push(diagnostic);
            return Err(std::mem::take(&mut state.errors));
        }
    }
    for (key, record) in &buffered {
        state.item(key.as_ref(), record, lookups, outcomes);
    }
    outcomes[plan.items].keyless = keyless;
    outcomes[plan.items].duplicates = duplicates;
    Ok(())
}

impl ItemState<'_> {
    fn item(
        &mut self,
        key: Option<&Key>,
        record: &Record,
        lookups: &mut [Lookup],
        outcomes: &mut [DatasetOutcome],
    ) {
        let plan = self.plan;
        let mut records: Vec<Option<&Record>> = Vec::with_capacity(plan.datasets.len());
        for (index, lookup) in lookups.iter_mut().enumerate() {
            let found = key.and_then(|k| lookup.index.get(k)).copied();
            match found {
                Some(position) => lookup.matched[position] = true,
                None => {
                    outcomes[index].missing += 1;
                    if plan.datasets[index].join == Join::Inner {
                        outcomes[index].skipped_items += 1;
                        return;
                    }
                }
            }
            records.push(found.map(|position| &lookup.records[position]));
        }
        records.push(Some(record));
        self.items += 1;
        if let Err(error) = self.evaluate_item(&records) {
            let sources: Vec<String> = plan
                .datasets
                .iter()
                .zip(&records)
                .filter_map(|(d, r)| r.map(|r| format!("{}:{}", d.display_path, r.line)))
                .collect();
            let item = key.map_or_else(|| "(no key)".to_string(), |k| format!("`{k}`"));
            self.errors.push(
                Diagnostic::error(format!("item {item} ({}): {}", sources.join(", "), error.1))
                    .at(error.0)
                    .help("fix the data, or guard the expression (`??`, `if`, `is_list`, …)"),
            );
        }
    }

    fn evaluate_item(
        &mut self,
        records: &[Option<&Record>],
    ) -> Result<(), Box<(Location, String)>> {
        let plan = self.plan;
        for (i, derived) in plan.derived.iter().enumerate() {
            let frame = Frame {
                records,
                derived: &self.derived,
                ..Frame::default()
            };
            let value = evaluate(&derived.op, &frame).map_err(|e| {
                Box::new((derived.at.clone(), format!("in `{}`: {e}", derived.name)))
            })?;
            self.derived[i] = value;
        }
        let frame = Frame {
            records,
            derived: &self.derived,
            ..Frame::default()
        };
        for (aggregate, accumulator) in plan.aggregates.iter().zip(&mut self.accumulators) {
            let fail = |e: String| {
                Box::new((
                    aggregate.at.clone(),
                    format!("in `{}`: {e}", aggregate.text),
                ))
            };
            if let Some(filter) = &aggregate.filter {
                match evaluate(filter, &frame).map_err(fail)? {
                    Value::Bool(true) => {}
                    Value::Bool(false) | Value::Null => continue,
                    other => {
                        return Err(fail(format!(
                            "`where` needs a bool, found {} {}",
                            other.type_name(),
                            other.preview()
                        )))
                    }
                }
            }
            let value = match &aggregate.arg {
                Some(arg) => Some(evaluate(arg, &frame).map_err(fail)?),
                None => None,
            };
            accumulator.add(value).map_err(fail)?;
        }
        Ok(())
    }
}

fn evaluate_metrics(plan: &Plan, aggregates: &[Value]) -> Result<Vec<Value>, Vec<Diagnostic>> {
    let mut metrics: Vec<Value> = Vec::with_capacity(plan.metrics.len());
    for metric in &plan.metrics {
        let frame = Frame {
            aggregates,
            metrics: &metrics,
            ..Frame::default()
        };
        let value = evaluate(&metric.op, &frame)
            .map_err(|e| vec![Diagnostic::error(format!("metric `{}`: {e}", metric.name))])?;
        let value = match (value, metric.empty) {
            (Value::Null, Some(empty)) => Value::Number(empty),
            (Value::Number(n), _) if !n.is_finite() => Value::Null,
            (value, _) => value,
        };
        metrics.push(value);
    }
    Ok(metrics)
}

fn evaluate_gate(gate: &GatePlan, metrics: &[Value]) -> Result<GateOutcome, Vec<Diagnostic>> {
    let frame = Frame {
        metrics,
        ..Frame::default()
    };
    let fail = |e: String| vec![Diagnostic::error(format!("gate `{}`: {e}", gate.name))];
    // A gate that cannot be decided (a metric has no value) does not pass.
    let pass = evaluate(&gate.op, &frame).map_err(fail)? == Value::Bool(true);
    let value = evaluate(&gate.value, &frame).map_err(fail)?;
    let status = match (pass, gate.severity) {
        (true, _) => GateStatus::Pass,
        (false, Severity::Warn) => GateStatus::Warn,
        (false, Severity::Fail) => GateStatus::Fail,
    };
    Ok(GateOutcome {
        value,
        pass,
        status,
    })
}

fn data_warnings(plan: &Plan, outcomes: &[DatasetOutcome]) -> Vec<Diagnostic> {
    let mut warnings = Vec::new();
    let items = &plan.datasets[plan.items].name;
    for (dataset, outcome) in plan.datasets.iter().zip(outcomes) {
        let mut say = |text: String| warnings.push(Diagnostic::warning(text));
        if outcome.keyless > 0 {
            say(format!(
                "{}: {} record(s) have no key (`{}` is null) and join nothing",
                dataset.name, outcome.keyless, dataset.key_text
            ));
        }
        if outcome.unmatched > 0 {
            say(format!(
                "{}: {} record(s) match no {items} item",
                dataset.name, outcome.unmatched
            ));
        }
        if outcome.missing > 0 {
            let fate = match dataset.join {
                Join::Left => "scored with it missing",
                Join::Inner => "skipped",
            };
            say(format!(
                "{}: {} {items} item(s) have no record here ({fate})",
                dataset.name, outcome.missing
            ));
        }
        if outcome.duplicates > 0 && dataset.duplicates != Duplicates::Keep {
            say(format!(
                "{}: {} record(s) repeat an earlier key (kept the {} one)",
                dataset.name,
                outcome.duplicates,
                if dataset.duplicates == Duplicates::Last {
                    "last"
                } else {
                    "first"
                }
            ));
        }
    }
    warnings
}
