//! Items: what one chunk of the items dataset contributes, item by item.

use std::cmp::Ordering;
use std::collections::hash_map::Entry;
use std::ops::ControlFlow;
use std::sync::Arc;

use crate::base::diagnostic::{Diagnostic, Location};
use crate::base::value::{Key, Value};
use crate::data::{validate, Flow};
use crate::eval::error::{EvalError, Within};
use crate::eval::item_lines::{LineLimit, LineSpool};
use crate::eval::item_scoring::{observe, passes_filter, shared_value, FlagSteps, Shared};
use crate::eval::item_values::{self, ValueTable};
use crate::eval::keys::{duplicate_error, key_of, FastMap, SeenKeys};
use crate::eval::lookup::Lookup;
use crate::eval::outcome::{push_item_body, report_order, ItemRow, OffenderRow};
use crate::eval::slices::{self, SliceFold};
use crate::ir::{evaluate, AggregateId, Frame, Record, RuntimeError};
use crate::library::aggregates::AggregateFn;
use crate::plan::{DatasetPlan, Plan};
use crate::spec::{Duplicates, Join};
use crate::stats::aggregate::{condition, Accumulator, Observation};

/// Item-evaluation errors to show before giving up.
pub(super) const MAX_ITEM_ERRORS: usize = 10;

/// What one chunk of items contributes.
pub(super) struct ItemChunk<'p> {
    pub(super) plan: &'p Plan,
    /// The items dataset as read in this run.
    pub(super) dataset: &'p DatasetPlan,
    pub(super) accumulators: Vec<Accumulator>,
    pub(super) derived: Vec<Value>,
    pub(super) count: usize,
    /// Evaluation errors, with the item's line for ordering.
    pub(super) errors: Vec<(usize, Diagnostic)>,
    /// Per lookup: which records an item matched, and how many items missed it.
    pub(super) matched: Vec<Vec<bool>>,
    pub(super) missing: Vec<usize>,
    pub(super) skipped: Vec<usize>,
    pub(super) keyless: usize,
    /// `duplicates: error`: each key's first line in this chunk, to find repeats
    /// within it (a stop) and across chunks (when merging).
    pub(super) seen: SeenKeys,
    /// `duplicates: first`/`last` need every earlier key: one chunk only.
    pub(super) first_lines: FastMap<Key, (u32, usize)>,
    pub(super) buffered: Vec<(Option<Key>, Record)>,
    pub(super) duplicates: usize,
    pub(super) label_counts: Vec<usize>,
    /// Each item's line of items.jsonl, when the plan keeps items.
    pub(super) lines: LineSpool,
    pub(super) offenders: Vec<OffenderRow>,
    /// The offenders have been trimmed to the plan's limit at least once
    /// (see [`ItemChunk::offender_is_cut`]).
    offenders_trimmed: bool,
    /// Per slice: its values so far, and the current item's entry in each.
    pub(super) slices: Vec<SliceFold>,
    places: Vec<usize>,
    /// Per aggregate: the slices that also fold it.
    routes: Vec<Vec<(usize, usize)>>,
    /// The aggregates folded item by item, in plan order. The others (a
    /// count's or ratio's whose observations `values` keeps, in no slice)
    /// are counted from their column once the chunk is read:
    /// [`ItemChunk::count_columns`].
    folded: Vec<usize>,
    /// Per aggregate counted from its column: the aggregate and its column.
    counted: Vec<(usize, usize)>,
    /// Per aggregate, whether it is one of `counted`: the current item's
    /// observation of it is its byte in `flags`, not in `contributions`.
    pub(super) flagged: Vec<bool>,
    /// The current item's observation of each `flagged` aggregate as its
    /// column keeps it (1, 0 or `NOT_COUNTED`): a byte written and copied
    /// instead of an `Observation` matched and converted twice.
    pub(super) flags: Vec<u8>,
    /// The flagged aggregates' steps.
    flag_steps: FlagSteps,
    /// Where each column of `values` takes an item's observation from.
    sources: item_values::Sources,
    /// Per item, its contribution to each metric computed from items.
    pub(super) values: ValueTable,
    /// The current item's contribution to each aggregate.
    pub(super) contributions: Vec<Observation>,
    /// Each shared filter's or argument's last value.
    shared: Vec<Shared>,
    /// Items scored by this chunk, counting from 1: the current item's number.
    scored: u64,
    /// The current item's value of each slice.
    pub(super) slice_texts: Vec<Arc<str>>,
    /// Per aggregate, the current item's value for a `stability` aggregate.
    pub(super) tracked: Vec<Option<Value>>,
    /// Whether the current item is an offender.
    pub(super) offender: bool,
    /// The current item's line of items.jsonl is kept already (a streamed
    /// join keeps it with the score it renders).
    pub(super) line_kept: bool,
    /// The current item's place in file order: its number in this chunk, or
    /// among all the items when a streamed join folds it.
    pub(super) ordinal: u64,
    /// Items this chunk has numbered itself, reading them in order (a
    /// streamed join's fold numbers them among all the items instead).
    pub(super) numbered: u64,
    /// Every record is kept in `buffered` and scored later (a streamed join
    /// scores items as the other dataset's records arrive); a repeated key is
    /// left for the caller to find under `duplicates: error`.
    pub(super) defer: bool,
}

/// Where an item failed to evaluate, in what, and why.
pub(super) type ItemFailure = (Location, Within, RuntimeError);

impl<'p> ItemChunk<'p> {
    pub(super) fn new(
        plan: &'p Plan,
        dataset: &'p DatasetPlan,
        lookups: &[&Lookup],
        limit: LineLimit,
    ) -> Self {
        let routes = slices::routes(plan);
        let values = ValueTable::new(plan);
        let (mut folded, mut counted) = (Vec::new(), Vec::new());
        for (a, aggregate) in plan.aggregates.iter().enumerate() {
            let column = match aggregate.function {
                AggregateFn::Count | AggregateFn::Ratio if routes[a].is_empty() => {
                    values.column_keeping(plan, AggregateId::new(a))
                }
                _ => None,
            };
            match column {
                Some(column) => counted.push((a, column)),
                None => folded.push(a),
            }
        }
        let mut flagged = vec![false; plan.aggregates.len()];
        counted.iter().for_each(|&(a, _)| flagged[a] = true);
        let sources = values.sources(plan, &flagged);
        let flag_steps = FlagSteps::of(plan, counted.iter().map(|&(a, _)| a));
        Self {
            plan,
            dataset,
            accumulators: plan
                .aggregates
                .iter()
                .map(|a| Accumulator::new(a.function))
                .collect(),
            derived: vec![Value::Null; plan.derived.len()],
            count: 0,
            errors: Vec::new(),
            matched: lookups
                .iter()
                .map(|l| vec![false; l.records.len()])
                .collect(),
            missing: vec![0; lookups.len()],
            skipped: vec![0; lookups.len()],
            keyless: 0,
            seen: SeenKeys::default(),
            first_lines: FastMap::default(),
            buffered: Vec::new(),
            duplicates: 0,
            label_counts: vec![0; plan.labels.len()],
            lines: LineSpool::new(limit),
            offenders: Vec::new(),
            offenders_trimmed: false,
            slices: plan.slices.iter().map(|_| SliceFold::default()).collect(),
            places: vec![0; plan.slices.len()],
            routes,
            folded,
            counted,
            flagged,
            flag_steps,
            sources,
            flags: vec![crate::stats::resample::NOT_COUNTED; plan.aggregates.len()],
            values,
            contributions: vec![Observation::Out; plan.aggregates.len()],
            shared: Shared::all(plan),
            scored: 0,
            slice_texts: vec![Arc::from(""); plan.slices.len()],
            tracked: vec![None; plan.aggregates.len()],
            offender: false,
            line_kept: false,
            ordinal: 0,
            numbered: 0,
            defer: false,
        }
    }

    /// Reads one record of the items dataset; breaks once this chunk has as many
    /// evaluation errors as are shown.
    pub(super) fn record(&mut self, lookups: &[&Lookup], record: Record) -> Flow {
        let dataset = self.dataset;
        validate(
            dataset,
            self.plan.items_dataset,
            &record,
            &self.plan.locations,
        )?;
        let key = key_of(
            dataset,
            self.plan.items_dataset,
            &record,
            &self.plan.locations,
        )?;
        match &key {
            None => self.keyless += 1,
            Some(key) => match dataset.duplicates {
                Duplicates::Keep => {}
                // A deferred read's caller finds repeats in its index of every key.
                Duplicates::Error if self.defer => {}
                Duplicates::Error => {
                    if let Some(first) = self.seen.insert(key, record.line) {
                        return Err(duplicate_error(dataset, key, first, record.line));
                    }
                }
                Duplicates::First | Duplicates::Last => match self.first_lines.entry(key.clone()) {
                    Entry::Vacant(slot) => {
                        slot.insert((record.line, self.buffered.len()));
                    }
                    Entry::Occupied(slot) => {
                        self.duplicates += 1;
                        if dataset.duplicates == Duplicates::Last {
                            self.buffered[slot.get().1].1 = record;
                        }
                        return Ok(ControlFlow::Continue(()));
                    }
                },
            },
        }
        if self.defer || dataset.duplicates == Duplicates::Last {
            self.buffered.push((key, record));
            // A deferred read's items are numbered by the fold that scores them.
            if !self.defer {
                self.numbered += 1;
            }
            return Ok(ControlFlow::Continue(()));
        }
        self.ordinal = self.numbered;
        self.numbered += 1;
        self.item(lookups, key.as_ref(), &record);
        Ok(if self.errors.len() >= MAX_ITEM_ERRORS {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        })
    }

    pub(super) fn item(&mut self, lookups: &[&Lookup], key: Option<&Key>, record: &Record) {
        let plan = self.plan;
        let found: Vec<Option<usize>> = lookups
            .iter()
            .map(|l| key.and_then(|k| l.index.get(k)).copied())
            .collect();
        let mut skip = false;
        for (index, position) in found.iter().enumerate() {
            match position {
                Some(position) => self.matched[index][*position] = true,
                None => {
                    self.missing[index] += 1;
                    if plan.datasets[index].join == Join::Inner {
                        self.skipped[index] += 1;
                        skip = true;
                    }
                }
            }
        }
        if skip {
            return;
        }
        let mut records: Vec<Option<&Record>> = found
            .iter()
            .zip(lookups)
            .map(|(p, l)| p.map(|p| &l.records[p]))
            .collect();
        records.push(Some(record));
        self.count += 1;
        if let Err(failure) = self.evaluate(&records, key, record.line) {
            let (at, within, error) = *failure;
            let sources: Vec<String> = plan
                .datasets
                .iter()
                .zip(&records)
                .filter_map(|(d, r)| r.map(|r| format!("{}:{}", d.display_path, r.line)))
                .collect();
            let kind = EvalError::ItemNotEvaluated {
                item: key.cloned(),
                sources,
                within,
                error,
            };
            let diagnostic = kind.report(&plan.locations).at(at);
            self.errors.push((record.line as usize, diagnostic));
        }
    }

    /// Scores the item and folds it in at once (items read in order).
    pub(super) fn evaluate(
        &mut self,
        records: &[Option<&Record>],
        key: Option<&Key>,
        line: u32,
    ) -> Result<(), Box<ItemFailure>> {
        self.score(records)?;
        self.fold(key, line)
    }

    /// Computes what the item gives the run, into this chunk's scratch (the
    /// derived values, slice values, contributions, tracked values and whether
    /// it is an offender), without folding anything in.
    pub(super) fn score(&mut self, records: &[Option<&Record>]) -> Result<(), Box<ItemFailure>> {
        let plan = self.plan;
        for (i, derived) in plan.derived.iter().enumerate() {
            let frame = Frame {
                records,
                derived: &self.derived,
                ..Frame::default()
            };
            let value = evaluate(&derived.op, &frame).map_err(|e| {
                let within = Within::Derived(derived.name.clone());
                Box::new((derived.at.clone(), within, e))
            })?;
            self.derived[i] = value;
        }
        // Lent out while the rest is scored, which writes to the chunk's other
        // fields.
        let derived = std::mem::take(&mut self.derived);
        let scored = self.score_derived(records, &derived);
        self.derived = derived;
        scored
    }

    /// What `score` does once the item's derived values are known.
    fn score_derived(
        &mut self,
        records: &[Option<&Record>],
        derived: &[Value],
    ) -> Result<(), Box<ItemFailure>> {
        let plan = self.plan;
        let frame = Frame {
            records,
            derived,
            ..Frame::default()
        };
        slices::slice_texts(plan, &frame, &mut self.slice_texts).map_err(|(s, e)| {
            let slice = &plan.slices[s];
            Box::new((slice.at.clone(), Within::Slice(slice.name.clone()), e))
        })?;
        // Each shared filter or argument is computed once for this item, when
        // the first aggregate that needs it asks, and read in place after.
        self.scored += 1;
        if !self.observe_fast(&frame) {
            self.observe_in_plan_order(&frame)?;
        }
        self.offender = match &plan.offenders {
            Some(offenders) => {
                let picked = evaluate(&offenders.when, &frame).map_err(|e| {
                    let within = Within::OffendersWhen(offenders.text.clone());
                    Box::new((offenders.at.clone(), within, e))
                })?;
                picked == Value::Bool(true)
            }
            None => false,
        };
        Ok(())
    }

    /// Observes the item for every aggregate: the ones folded item by item,
    /// then the flagged ones from their compact steps. False if anything
    /// failed; `observe_in_plan_order` then finds the error to report, the
    /// first in plan order, which these two loops need not meet first.
    fn observe_fast(&mut self, frame: &Frame<'_>) -> bool {
        let (plan, item) = (self.plan, self.scored);
        for &i in &self.folded {
            let scratch = (&mut self.contributions[i], &mut self.tracked[i]);
            let accumulator = &self.accumulators[i];
            let observed = observe(plan, i, &mut self.shared, item, frame, accumulator, scratch);
            if observed.is_err() {
                return false;
            }
        }
        (self.flag_steps).flag(&mut self.shared, item, plan, frame, &mut self.flags)
    }

    /// Observes the item for every aggregate in plan order, stopping at the
    /// first that fails.
    fn observe_in_plan_order(&mut self, frame: &Frame<'_>) -> Result<(), Box<ItemFailure>> {
        let (plan, item) = (self.plan, self.scored);
        for (i, aggregate) in plan.aggregates.iter().enumerate() {
            if !self.flagged[i] {
                let scratch = (&mut self.contributions[i], &mut self.tracked[i]);
                let accumulator = &self.accumulators[i];
                observe(plan, i, &mut self.shared, item, frame, accumulator, scratch)?;
                continue;
            }
            let fail = |e: RuntimeError| {
                let within = Within::Aggregate(aggregate.text.clone());
                Box::new((aggregate.at.clone(), within, e))
            };
            if !passes_filter(plan, i, &mut self.shared, item, frame).map_err(fail)? {
                self.flags[i] = item_values::untouched_flag(aggregate.function);
                continue;
            }
            let value = match plan.shared.arg[i] {
                Some(arg) => {
                    Some(shared_value(&mut self.shared, arg, item, plan, frame).map_err(fail)?)
                }
                None => None,
            };
            // What `observe_into` gives a count or ratio, as its byte.
            let hit = condition(value)
                .map_err(|kind| fail(RuntimeError::from(kind).or_at(aggregate.arg_at)))?;
            self.flags[i] = u8::from(hit);
        }
        Ok(())
    }

    /// Folds the scored item (this chunk's scratch, as `score` left it or as
    /// restored) into the aggregates, slices, item values and reports.
    pub(super) fn fold(&mut self, key: Option<&Key>, line: u32) -> Result<(), Box<ItemFailure>> {
        let plan = self.plan;
        slices::place_item(plan, &self.slice_texts, &mut self.slices, &mut self.places);
        for &i in &self.folded {
            let (aggregate, accumulator) = (&plan.aggregates[i], &mut self.accumulators[i]);
            let (routes, contribution) = (&self.routes[i], &self.contributions[i]);
            if let Some(value) = self.tracked[i].take() {
                accumulator.track(key, value);
                continue;
            }
            let fail = |kind| {
                let within = Within::Aggregate(aggregate.text.clone());
                let error = RuntimeError::from(kind).or_at(aggregate.arg_at);
                Box::new((aggregate.at.clone(), within, error))
            };
            if !routes.is_empty() {
                slices::add(&mut self.slices, &self.places, routes, contribution).map_err(fail)?;
            }
            accumulator.observe_one(contribution).map_err(fail)?;
        }
        if plan.stats.keeps_values() {
            let (contributions, flags) = (&self.contributions, &self.flags);
            item_values::push(
                &mut self.values,
                &mut self.sources,
                key,
                contributions,
                flags,
            );
            let slices = self.places.iter().zip(&self.slices);
            (self.values.slices).extend(slices.map(|(&place, fold)| fold.value_at(place).clone()));
        }
        self.keep(self.offender, key, line);
        Ok(())
    }

    /// Moves the flags still waiting into their columns
    /// (`item_values::flush`), then counts the aggregates left to their
    /// columns (`counted`, the ones `fold` skips) into their accumulators,
    /// once every item of the chunk is folded: a loop over a column's bytes
    /// instead of a call per item and aggregate. The chunks' merge
    /// (`pass::merge_items`) calls it before it reads the chunk's values.
    pub(super) fn count_columns(&mut self) {
        item_values::flush(&mut self.values, &mut self.sources);
        for (a, column) in std::mem::take(&mut self.counted) {
            self.values.count_into(column, &mut self.accumulators[a]);
        }
    }

    /// The scored item's label, if it took one.
    pub(super) fn label(&self) -> Option<Arc<str>> {
        let slot = self.plan.label_slot?;
        match &self.derived[slot.index()] {
            Value::String(label) => Some(label.clone()),
            _ => None,
        }
    }

    /// Appends the scored item's rest of its line in the items report.
    pub(super) fn push_item_body(&self, out: &mut String) {
        let label = self.label();
        push_item_body(self.plan, label.as_ref(), &self.derived, out);
    }

    /// Whether an offender at `key` and `line` cannot be among the first the
    /// chunk lists. Once trimmed, the chunk's first `limit` rows are its first
    /// in report order so far, and a row after the last of them (or level
    /// with it: it came later) is cut at the next trim, so it is not built: no
    /// shown values cloned, no sort. Items in key order (a gold set's usual
    /// order) are then all cut at one comparison each.
    pub(super) fn offender_is_cut(&self, key: Option<&Key>, line: u32) -> bool {
        let Some(offenders) = &self.plan.offenders else {
            return true;
        };
        if !self.offenders_trimmed {
            return false;
        }
        match offenders.limit.checked_sub(1) {
            None => true,
            Some(last) => {
                let last = &self.offenders[last];
                let last = (last.key.as_ref(), last.run.as_deref(), last.line);
                report_order((key, None, line), last) != Ordering::Less
            }
        }
    }

    /// What the reports keep of an evaluated item: its label's count, its row,
    /// and whether it is an offender.
    pub(super) fn keep(&mut self, offender: bool, key: Option<&Key>, line: u32) {
        let plan = self.plan;
        let label = self.label();
        if let Some(label) = &label {
            if let Some(i) = plan.labels.iter().position(|l| **l == **label) {
                self.label_counts[i] += 1;
            }
        }
        if let (Some(offenders), true) = (
            &plan.offenders,
            offender && !self.offender_is_cut(key, line),
        ) {
            self.offenders.push(ItemRow {
                line,
                key: key.cloned(),
                run: None,
                label: label.clone(),
                values: offenders
                    .show
                    .iter()
                    .map(|(_, slot)| self.derived[slot.index()].clone())
                    .collect(),
            });
            // Bounded: keep only the first `limit` in key order.
            if self.offenders.len() >= 2 * offenders.limit.max(8) {
                self.offenders.sort_by(ItemRow::report_order);
                self.offenders.truncate(offenders.limit);
                self.offenders_trimmed = true;
            }
        }
        if plan.keep_items && !std::mem::take(&mut self.line_kept) {
            let label = self.label();
            let body = |out: &mut String| push_item_body(plan, label.as_ref(), &self.derived, out);
            (self.lines).push(key.cloned(), line, self.ordinal, body);
        }
    }
}
