//! Evaluating a plan over its runs. A dataset with `runs:` is read once per file,
//! and the whole plan (items, aggregates, metrics, gates) is evaluated per run; a
//! spec without runs is the one run. Datasets read from one `path` are loaded
//! once and shared by every run. What only all runs together decide comes after
//! the last run (`across_runs`).

use std::borrow::Cow;
use std::ops::ControlFlow;
use std::sync::Arc;

use crate::base::codec::{Reader, Writer};
use crate::base::diagnostic::{Diagnostic, Location};
use crate::base::value::Value;
use crate::data::read_chunked;
use crate::eval::decide::across_runs::{combine, RunSource};
use crate::eval::error::EvalError;
use crate::eval::join::index::index_join;
use crate::eval::join::lookup::{load_lookup, Lookup};
use crate::eval::join::partitioned::partitioned_join;
use crate::eval::join::table::{table_join, Tables};
use crate::eval::join::Pass;
use crate::eval::outcome::{DatasetOutcome, Outcome};
use crate::eval::physical::{JoinStrategy, PhysicalPlan};
use crate::eval::score::Roles;
use crate::eval::state::item_lines::LineLimit;
use crate::eval::state::RunState;
use crate::inputs::run_files::run_name_of_file;
use crate::ir::{evaluate_on_record, DatasetId, ExprLocations, Record};
use crate::plan::{Check, DatasetPlan, Plan};

/// Runs the plan as `physical` says.
pub fn evaluate(plan: &Plan, physical: &PhysicalPlan) -> Result<Outcome, Vec<Diagnostic>> {
    let roles = Roles::of(plan);
    let partial = evaluate_partial(plan, &roles, physical)?;
    finish(partial, physical.threads)
}

/// What evaluating a plan (or one bucket of its keys) gives before it is
/// decided: each run's state and what was read. Partial states of the same
/// plan merge ([`Partial::merge`]), travel as bytes ([`Partial::encode`]),
/// and are decided once whole ([`finish`]).
pub struct Partial<'p> {
    pub(in crate::eval) plan: &'p Plan,
    pub(in crate::eval) sources: Vec<RunSource>,
    /// Per run (in run order): its pass, and its files (dataset, path).
    pub(in crate::eval) passes: Vec<(Pass<'p>, Vec<(String, String)>)>,
}

/// Decides a partial state that holds every item: each run's errors, in run
/// order, or its metrics, gates and what is decided across runs.
pub fn finish(partial: Partial<'_>, threads: usize) -> Result<Outcome, Vec<Diagnostic>> {
    let Partial {
        plan,
        sources,
        mut passes,
    } = partial;
    for (pass, _) in &mut passes {
        if !pass.run.errors.is_empty() {
            return Err(std::mem::take(&mut pass.run.errors).into_diagnostics());
        }
    }
    nothing_scored(plan, &sources, &passes)?;
    combine(plan, &sources, passes, threads)
}

/// A run whose items dataset has no record is an error (nothing was scored:
/// exit 2), unless the dataset says `allow_empty: true`. Records that all
/// join nothing (no key, or no record in an `inner` join) are a choice of the
/// spec, counted and warned about as they are.
fn nothing_scored(
    plan: &Plan,
    sources: &[RunSource],
    passes: &[(Pass<'_>, Vec<(String, String)>)],
) -> Result<(), Vec<Diagnostic>> {
    let items = &plan.datasets[plan.items_dataset.index()];
    if items.allow_empty {
        return Ok(());
    }
    for (source, (pass, files)) in sources.iter().zip(passes) {
        let records = (pass.datasets.get(plan.items_dataset.index())).map_or(0, |d| d.read.records);
        if pass.run.count > 0 || records > 0 {
            continue;
        }
        let path = (files.iter())
            .find(|(name, _)| *name == items.name)
            .map_or(&items.display_path, |(_, path)| path);
        let kind = EvalError::NothingScored {
            dataset: items.name.clone(),
            path: path.clone(),
            run: source.name.as_deref().map(str::to_string),
        };
        return Err(vec![Diagnostic::of(&kind).at(items.declared_at.clone())]);
    }
    Ok(())
}

/// Evaluates the plan as `physical` says (all its keys, or one bucket's)
/// without deciding it.
pub fn evaluate_partial<'p>(
    plan: &'p Plan,
    roles: &'p Roles,
    physical: &PhysicalPlan,
) -> Result<Partial<'p>, Vec<Diagnostic>> {
    let threads = physical.threads;
    let sources = run_sources(plan)?;
    // Lines of items.jsonl are spilled past a bound, unless a template reads
    // every item (then they are all in memory for it anyway).
    let limit = match plan.templates_read_items {
        true => LineLimit::UNBOUNDED,
        false => LineLimit::of(physical.max_memory, threads),
    };
    // Looked-up tables of datasets that every run shares, read once.
    let mut shared: Vec<Option<(Lookup, DatasetOutcome)>> =
        (0..plan.items_dataset.index()).map(|_| None).collect();
    let mut passes = Vec::with_capacity(sources.len());
    'runs: for source in &sources {
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
        let files = datasets
            .iter()
            .zip(&source.files)
            .filter(|(_, file)| file.is_some())
            .map(|(d, _)| (d.name.clone(), d.display_path.clone()))
            .collect();
        let run_datasets: Vec<&DatasetPlan> = datasets.iter().map(|d| d.as_ref()).collect();
        let mut result = match physical.join {
            JoinStrategy::Index => {
                let pair = [run_datasets[0], run_datasets[1]];
                index_join(plan, roles, pair, (threads, physical.bucket), limit)?
            }
            JoinStrategy::Partitioned { partitions } => {
                let pair = [run_datasets[0], run_datasets[1]];
                partitioned_join(
                    plan,
                    roles,
                    pair,
                    (threads, physical.bucket),
                    partitions,
                    limit,
                )?
            }
            JoinStrategy::Table => {
                let mut own: Vec<Option<(Lookup, DatasetOutcome)>> =
                    (0..plan.items_dataset.index()).map(|_| None).collect();
                for index in 0..plan.items_dataset.index() {
                    let slot = match source.files[index] {
                        Some(_) => &mut own[index],
                        None if shared[index].is_none() => &mut shared[index],
                        None => continue,
                    };
                    let mut outcome = DatasetOutcome::default();
                    let id = DatasetId::new(index);
                    let bucket = (threads, physical.bucket);
                    match load_lookup(plan, run_datasets[index], id, bucket, &mut outcome) {
                        Ok(table) => *slot = Some((table, outcome)),
                        // Read first, a looked-up dataset's first error is the run's only one.
                        Err(stop) => {
                            let pass = Pass::stopped(plan, roles, limit, index, stop);
                            passes.push((pass, files));
                            continue 'runs;
                        }
                    }
                }
                let lookups = (0..plan.items_dataset.index())
                    .map(|i| {
                        let (table, outcome) = own[i]
                            .as_ref()
                            .or(shared[i].as_ref())
                            .expect("every looked-up dataset is loaded");
                        (table, outcome)
                    })
                    .collect();
                let tables = Tables {
                    datasets: run_datasets,
                    bucket: physical.bucket,
                    lookups,
                };
                table_join(plan, roles, &tables, threads, limit)?
            }
        };
        if let Some(name) = &source.name {
            for row in &mut result.run.offenders {
                row.run = Some(name.clone());
            }
        }
        passes.push((result, files));
    }
    Ok(Partial {
        plan,
        sources,
        passes,
    })
}

/// Per file of a dataset read as runs: the run's name, and the value it came from.
pub(super) type RunNames = Vec<(String, Option<Value>)>;

/// The runs, in the order of the first dataset read as runs; every such dataset
/// must have a file for each run and no other.
pub(super) fn run_sources(plan: &Plan) -> Result<Vec<RunSource>, Vec<Diagnostic>> {
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
                    let value = first_run_name(
                        &dataset.for_run(file, None),
                        DatasetId::new(index),
                        check,
                        &plan.locations,
                    )?;
                    let text = match &value {
                        Value::String(s) => s.to_string(),
                        other => other.preview(),
                    };
                    (text, Some(value))
                }
            };
            if let Some(earlier) = names.iter().position(|(n, _)| *n == name.0) {
                let kind = EvalError::RunNamedTwice {
                    dataset: dataset.name.clone(),
                    run: name.0,
                    first: dataset.runs[earlier].display_path.clone(),
                    second: file.display_path.clone(),
                    from_records: dataset.run_name.is_some(),
                };
                return Err(vec![Diagnostic::of(&kind).at(dataset.declared_at.clone())]);
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
            let kind = EvalError::RunsDiffer {
                first: a.name.clone(),
                second: b.name.clone(),
                first_runs: order.iter().map(|(n, _)| n.clone()).collect(),
                second_runs: names.iter().map(|(n, _)| n.clone()).collect(),
            };
            return Err(vec![Diagnostic::of(&kind).at(b.declared_at.clone())]);
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
pub(super) fn first_run_name(
    dataset: &DatasetPlan,
    dataset_id: DatasetId,
    check: &Check,
    locations: &ExprLocations,
) -> Result<Value, Vec<Diagnostic>> {
    // One reader: stopping at the first record parses no further (a file past
    // two chunks' size is still hashed whole beside it, `chunks::hash_apart`).
    let read = read_chunked(
        dataset,
        1,
        || None::<Record>,
        |first, record| {
            *first = Some(record);
            // Only the first record is needed.
            Ok(ControlFlow::Break(()))
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
            let kind = EvalError::RunWithoutRecords {
                dataset: dataset.name.clone(),
                path: dataset.display_path.clone(),
            };
            return Err(vec![Diagnostic::of(&kind).at(dataset.declared_at.clone())]);
        }
    };
    let kind = match evaluate_on_record(&check.op, dataset_id, &record) {
        Ok(value @ (Value::String(_) | Value::Number(_) | Value::BigInt(_))) => return Ok(value),
        Ok(found) => EvalError::RunNameNotScalar {
            dataset: dataset.name.clone(),
            run_name: check.text.clone(),
            found,
        },
        Err(error) => EvalError::RunNameNotEvaluated {
            dataset: dataset.name.clone(),
            run_name: check.text.clone(),
            error,
        },
    };
    Err(vec![kind.report(locations).at(at(record.line as usize))])
}

/// What a partial state's bytes begin with, and the version of their layout.
const STATE_MAGIC: &[u8] = b"evalspec-state";
const STATE_VERSION: u8 = 3;

impl<'p> Partial<'p> {
    /// What identifies the plan a state belongs to: evalspec's version, the
    /// spec's resolved text, every param's value and the confidence level.
    /// States of different plans (or versions) do not merge.
    pub fn fingerprint(plan: &Plan) -> String {
        let mut hasher = crate::base::sha256::Sha256::new();
        hasher.update(env!("CARGO_PKG_VERSION"));
        hasher.update([0]);
        hasher.update(&plan.spec_text);
        for param in &plan.params {
            hasher.update([0]);
            hasher.update(&param.name);
            hasher.update([0]);
            hasher.update(param.value.preview());
        }
        hasher.update([0]);
        hasher.update(plan.stats.confidence.to_bits().to_le_bytes());
        hasher.hex()
    }

    /// The state as versioned bytes, its plan's fingerprint first.
    pub fn encode(&mut self) -> std::io::Result<Vec<u8>> {
        let mut w = Writer::default();
        for &byte in STATE_MAGIC {
            w.u8(byte);
        }
        w.u8(STATE_VERSION);
        w.str(&Partial::fingerprint(self.plan));
        w.seq(self.sources.iter(), |w, source| {
            w.option(source.name.as_deref(), Writer::str);
            w.seq(source.files.iter(), |w, f| w.option(*f, Writer::usize));
            w.seq(source.names.iter(), |w, n| {
                w.option(n.as_ref(), Writer::value)
            });
        });
        w.usize(self.passes.len());
        for (pass, files) in &mut self.passes {
            w.seq(pass.datasets.iter(), |w, d| d.encode(w));
            w.seq(pass.table_sizes.iter(), |w, n| w.usize(*n));
            pass.run.encode(&mut w)?;
            w.seq(files.iter(), |w, (name, path)| {
                w.str(name);
                w.str(path);
            });
        }
        Ok(w.into_bytes())
    }

    /// The state [`Partial::encode`] wrote, for `plan`: refused, saying why,
    /// when its bytes are damaged or it belongs to another plan or version.
    pub fn decode(
        plan: &'p Plan,
        roles: &'p Roles,
        bytes: &[u8],
        physical: &PhysicalPlan,
    ) -> Result<Partial<'p>, Diagnostic> {
        let damaged = |error: crate::base::codec::DecodeError| {
            Diagnostic::of(&EvalError::StateNotDecoded {
                reason: error.to_string(),
            })
        };
        let mut r = Reader::new(bytes);
        let magic: Vec<u8> = (0..STATE_MAGIC.len())
            .map(|_| r.u8())
            .collect::<Result<_, _>>()
            .map_err(damaged)?;
        if magic != STATE_MAGIC {
            let reason = "it is not an evalspec partial state".to_string();
            return Err(Diagnostic::of(&EvalError::StateNotDecoded { reason }));
        }
        let version = r.u8().map_err(damaged)?;
        if version != STATE_VERSION {
            let reason =
                format!("its layout is version {version}, this evalspec reads {STATE_VERSION}");
            return Err(Diagnostic::of(&EvalError::StateNotDecoded { reason }));
        }
        let fingerprint = r.str().map_err(damaged)?;
        if fingerprint != Partial::fingerprint(plan) {
            return Err(Diagnostic::of(&EvalError::StateOfAnotherPlan {
                spec: plan.spec_display.clone(),
            }));
        }
        let limit = LineLimit::of(physical.max_memory, physical.threads);
        let mut decode = || -> crate::base::codec::Decoded<Partial<'p>> {
            let sources = r.seq(|r| {
                Ok(RunSource {
                    name: r.option(Reader::arc_str)?,
                    files: r.seq(|r| r.option(Reader::usize))?,
                    names: r.seq(|r| r.option(Reader::value))?,
                })
            })?;
            let count = r.usize()?;
            let mut passes = Vec::new();
            for _ in 0..count.min(sources.len()) {
                let datasets = r.seq(DatasetOutcome::decode)?;
                if datasets.len() != plan.datasets.len() {
                    return Err(r.expected("one dataset outcome per dataset of the plan"));
                }
                let table_sizes = r.seq(Reader::usize)?;
                let run = RunState::decode(&mut r, plan, roles, limit)?;
                let files = r.seq(|r| Ok((r.string()?, r.string()?)))?;
                let pass = Pass {
                    datasets,
                    table_sizes,
                    run,
                };
                passes.push((pass, files));
            }
            if passes.len() != sources.len() || !r.is_done() {
                return Err(r.expected("one pass per run, and nothing after"));
            }
            Ok(Partial {
                plan,
                sources,
                passes,
            })
        };
        decode().map_err(damaged)
    }

    /// Merges the state of other keys of the same plan (another bucket's):
    /// each run's passes merge.
    pub fn merge(&mut self, other: Partial<'p>) -> Result<(), Diagnostic> {
        let names = |p: &Partial<'_>| -> Vec<Option<Arc<str>>> {
            p.sources.iter().map(|s| s.name.clone()).collect()
        };
        if names(self) != names(&other) {
            return Err(Diagnostic::of(&EvalError::StateOfAnotherPlan {
                spec: self.plan.spec_display.clone(),
            }));
        }
        for ((mine, _), (theirs, _)) in self.passes.iter_mut().zip(other.passes) {
            mine.merge(theirs);
        }
        Ok(())
    }
}
