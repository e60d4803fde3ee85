//! A run's partial state: what the items scored so far give the run. Every
//! way of running a plan (a chunk of a file on a thread, a partition of a
//! join, the items of a run) folds its items into one of these
//! ([`RunState::fold`]) and the states are merged in item order
//! ([`RunState::merge`]), so that the outcome is the same however the work
//! was split.

use std::cmp::Ordering;
use std::sync::Arc;

pub(in crate::eval) mod errors;
pub(in crate::eval) mod item_lines;
pub(in crate::eval) mod item_values;
pub(in crate::eval) mod slices;

use crate::base::codec::{Decoded, Reader, Writer};
use crate::base::value::Key;
use crate::eval::error::Within;
use crate::eval::outcome::{report_order, ItemRow, OffenderRow};
use crate::eval::score::{ItemFailure, Roles, Score};
use crate::eval::state::errors::ErrorLog;
use crate::eval::state::item_lines::{ItemLines, LineLimit, LineSpool};
use crate::eval::state::item_values::ValueTable;
use crate::eval::state::slices::SliceFold;
use crate::ir::RuntimeError;
use crate::plan::Plan;
use crate::stats::aggregate::Accumulator;

/// What the items folded so far give one run.
pub(in crate::eval) struct RunState<'p> {
    plan: &'p Plan,
    roles: &'p Roles,
    pub(in crate::eval) accumulators: Vec<Accumulator>,
    /// Items folded.
    pub(in crate::eval) count: usize,
    /// Per label of `plan.labels`, how many items took it.
    pub(in crate::eval) label_counts: Vec<usize>,
    /// Each item's line of items.jsonl, when the plan keeps items: those
    /// this state folded (the last spool) and those of states merged in.
    pub(in crate::eval) lines: ItemLines,
    /// The first offenders in report order, at most twice the plan's limit.
    pub(in crate::eval) offenders: Vec<OffenderRow>,
    /// The offenders have been trimmed to the plan's limit at least once
    /// (see [`RunState::offender_is_cut`]).
    offenders_trimmed: bool,
    /// Per slice: its values so far.
    pub(in crate::eval) slices: Vec<SliceFold>,
    /// The current item's entry in each slice's values.
    places: Vec<usize>,
    /// Where each column of `values` takes an item's observation from.
    sources: item_values::Sources,
    /// Per item, its contribution to each metric computed from items.
    pub(in crate::eval) values: ValueTable,
    /// The errors met, first by place.
    pub(in crate::eval) errors: ErrorLog,
    /// The items whose observations of the aggregates counted from their
    /// columns are counted ([`RunState::count_columns`]): the first this many.
    counted: usize,
}

impl<'p> RunState<'p> {
    pub(in crate::eval) fn new(plan: &'p Plan, roles: &'p Roles, limit: LineLimit) -> Self {
        let values = ValueTable::new(plan);
        let sources = values.sources(plan, &roles.flagged);
        RunState {
            plan,
            roles,
            accumulators: (plan.aggregates.iter())
                .map(|a| Accumulator::new(a.function))
                .collect(),
            count: 0,
            label_counts: vec![0; plan.labels.len()],
            lines: ItemLines::of(LineSpool::new(limit)),
            offenders: Vec::new(),
            offenders_trimmed: false,
            slices: plan.slices.iter().map(|_| SliceFold::default()).collect(),
            places: vec![0; plan.slices.len()],
            sources,
            values,
            errors: ErrorLog::default(),
            counted: 0,
        }
    }

    /// Folds a scored item into the aggregates, slices, item values and
    /// reports: the item at `line` (its `ordinal`-th in file order) with
    /// `key`. `line_kept`: its line of items.jsonl is kept already (a join
    /// that scores items out of order keeps it with the score it renders).
    pub(in crate::eval) fn fold(
        &mut self,
        score: &Score,
        key: Option<&Key>,
        line: u32,
        ordinal: u64,
        line_kept: bool,
    ) -> Result<(), Box<ItemFailure>> {
        let plan = self.plan;
        self.count += 1;
        slices::place_item(plan, &score.slice_texts, &mut self.slices, &mut self.places);
        let roles = self.roles;
        for &i in &roles.folded {
            let (aggregate, accumulator) = (&plan.aggregates[i], &mut self.accumulators[i]);
            let (routes, contribution) = (&roles.routes[i], &score.contributions[i]);
            if let Some(value) = &score.tracked[i] {
                accumulator.track(ordinal, key, value.clone());
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
            let (contributions, flags) = (&score.contributions, &score.flags);
            item_values::push(
                &mut self.values,
                &mut self.sources,
                (key, ordinal),
                contributions,
                flags,
            );
            let slices = self.places.iter().zip(&self.slices);
            (self.values.slices).extend(slices.map(|(&place, fold)| fold.value_at(place).clone()));
        }
        self.keep(score, key, line, ordinal, line_kept);
        Ok(())
    }

    /// Moves the flags still waiting into their columns
    /// (`item_values::flush`), then counts the aggregates left to their
    /// columns (`Roles::counted`, the ones `fold` skips) into their
    /// accumulators, once every item of the state is folded: a loop over a
    /// column's bytes instead of a call per item and aggregate. A merge
    /// calls it before it reads the state's values; items folded after are
    /// counted by the next call.
    pub(in crate::eval) fn count_columns(&mut self) {
        item_values::flush(&mut self.values, &mut self.sources);
        let from = std::mem::replace(&mut self.counted, self.values.len());
        for &(a, column) in &self.roles.counted {
            self.values
                .count_into(column, from, &mut self.accumulators[a]);
        }
    }

    /// Whether an offender at `key` and `line` cannot be among the first the
    /// state lists. Once trimmed, the state's first `limit` rows are its first
    /// in report order so far, and a row after the last of them (or level
    /// with it: it came later) is cut at the next trim, so it is not built: no
    /// shown values cloned, no sort. Items in key order (a gold set's usual
    /// order) are then all cut at one comparison each.
    pub(in crate::eval) fn offender_is_cut(&self, key: Option<&Key>, line: u32) -> bool {
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

    /// The state as bytes, for a partial state sent elsewhere: every part,
    /// its items' lines included (read back from their sorted files).
    pub(in crate::eval) fn encode(&mut self, w: &mut Writer) -> std::io::Result<()> {
        self.count_columns();
        w.seq(self.accumulators.iter(), |w, a| a.encode(w));
        w.usize(self.count);
        w.seq(self.label_counts.iter(), |w, n| w.usize(*n));
        self.lines.encode(w)?;
        w.seq(self.offenders.iter(), |w, row| {
            w.u64(u64::from(row.line));
            w.option(row.key.as_ref(), Writer::key);
            w.option(row.run.as_deref(), Writer::str);
            w.option(row.label.as_deref(), Writer::str);
            w.seq(row.values.iter(), Writer::value);
            w.u64(row.place);
        });
        w.seq(self.slices.iter(), |w, fold| fold.encode(w));
        self.values.encode(w);
        self.errors.encode(w);
        Ok(())
    }

    /// The state [`RunState::encode`] wrote, for `plan`; its lines kept
    /// within `limit`. Bytes of another plan's state are refused by what
    /// they hold (counts of aggregates, slices, labels), besides the
    /// fingerprint the caller checks.
    pub(in crate::eval) fn decode(
        r: &mut Reader<'_>,
        plan: &'p Plan,
        roles: &'p Roles,
        limit: LineLimit,
    ) -> Decoded<Self> {
        let mut state = RunState::new(plan, roles, limit);
        let accumulators = r.seq(Accumulator::decode)?;
        if accumulators.len() != plan.aggregates.len() {
            return Err(r.expected("one accumulator per aggregate of the plan"));
        }
        state.accumulators = accumulators;
        state.count = r.usize()?;
        state.label_counts = r.seq(Reader::usize)?;
        if state.label_counts.len() != plan.labels.len() {
            return Err(r.expected("one count per label of the plan"));
        }
        state.lines = ItemLines::decode(r, limit)?;
        state.offenders = r.seq(|r| {
            Ok(ItemRow {
                line: r.u32()?,
                key: r.option(Reader::key)?,
                run: r.option(Reader::arc_str)?,
                label: r.option(Reader::arc_str)?,
                values: r.seq(Reader::value)?.into(),
                place: r.u64()?,
            })
        })?;
        let limit_rows = plan.offenders.as_ref().map_or(0, |o| o.limit);
        state.offenders_trimmed = state.offenders.len() == limit_rows;
        state.slices = r.seq(SliceFold::decode)?;
        if state.slices.len() != plan.slices.len() {
            return Err(r.expected("one fold per slice of the plan"));
        }
        state.values = ValueTable::decode(r, plan)?;
        state.counted = state.values.len();
        state.errors = ErrorLog::decode(r)?;
        Ok(state)
    }

    /// Merges the state of other items of the run (in any order relative to
    /// these, and however they were grouped) into this one: what one state
    /// folding every item in order would hold. Merges are associative and
    /// commutative; what depends on the items' order (item values, lines,
    /// offenders, errors, `stability`'s items) merges by their places.
    pub(in crate::eval) fn merge(&mut self, mut other: RunState<'p>) {
        self.count_columns();
        other.count_columns();
        for (a, b) in self.accumulators.iter_mut().zip(&other.accumulators) {
            a.merge(b);
        }
        for (a, b) in self.slices.iter_mut().zip(other.slices) {
            a.merge(b);
        }
        self.count += other.count;
        for (a, b) in self.label_counts.iter_mut().zip(&other.label_counts) {
            *a += b;
        }
        self.lines.append(other.lines);
        self.values.merge(other.values);
        self.counted = self.values.len();
        self.offenders.extend(other.offenders);
        self.offenders.sort_by(ItemRow::report_order);
        let limit = self.plan.offenders.as_ref().map_or(0, |o| o.limit);
        self.offenders.truncate(limit);
        self.offenders_trimmed = self.offenders.len() == limit;
        self.errors.merge(other.errors);
    }

    /// The states of consecutive stretches of items, in item order, merged
    /// into one: what one state folding every item in order would hold (the
    /// fast path of [`RunState::merge`]; states that turn out to interleave
    /// are merged by it).
    /// Accumulators and slices merge exactly, item values and lines are
    /// concatenated in order (each vector grown on up to `threads` threads),
    /// and the offenders are the first of all in report order.
    pub(in crate::eval) fn merge_in_order(states: Vec<RunState<'p>>, threads: usize) -> Self {
        let in_order = (states.windows(2)).all(|pair| pair[0].values.precedes(&pair[1].values));
        if !in_order {
            // Stretches that interleave: merged by their items' places.
            let mut states = states.into_iter();
            let mut total = states.next().expect("at least one state");
            states.for_each(|state| total.merge(state));
            return total;
        }
        let mut states = states.into_iter().map(|mut state| {
            state.count_columns();
            state
        });
        let mut total = states.next().expect("at least one state");
        let mut values = Vec::new();
        for part in states {
            for (a, b) in total.accumulators.iter_mut().zip(&part.accumulators) {
                a.merge(b);
            }
            for (a, b) in total.slices.iter_mut().zip(part.slices) {
                a.merge(b);
            }
            total.count += part.count;
            for (a, b) in total.label_counts.iter_mut().zip(&part.label_counts) {
                *a += b;
            }
            total.lines.append(part.lines);
            values.push(part.values);
            total.offenders.extend(part.offenders);
            total.errors.merge(part.errors);
        }
        total.values.merge_all(values, threads);
        total.counted = total.values.len();
        total.offenders.sort_by(ItemRow::report_order);
        let limit = total.plan.offenders.as_ref().map_or(0, |o| o.limit);
        total.offenders.truncate(limit);
        total.offenders_trimmed = total.offenders.len() == limit;
        total
    }

    /// What the reports keep of a folded item: its label's count, its row,
    /// and whether it is an offender.
    fn keep(&mut self, score: &Score, key: Option<&Key>, line: u32, ordinal: u64, line_kept: bool) {
        let plan = self.plan;
        let label: Option<Arc<str>> = score.label(plan);
        if let Some(label) = &label {
            if let Some(i) = plan.labels.iter().position(|l| **l == **label) {
                self.label_counts[i] += 1;
            }
        }
        if let (Some(offenders), true) = (
            &plan.offenders,
            score.offender && !self.offender_is_cut(key, line),
        ) {
            self.offenders.push(ItemRow {
                line,
                key: key.cloned(),
                run: None,
                label: label.clone(),
                values: offenders
                    .show
                    .iter()
                    .map(|(_, slot)| score.derived[slot.index()].clone())
                    .collect(),
                place: ordinal,
            });
            // Bounded: keep only the first `limit` in key order.
            if self.offenders.len() >= 2 * offenders.limit.max(8) {
                self.offenders.sort_by(ItemRow::report_order);
                self.offenders.truncate(offenders.limit);
                self.offenders_trimmed = true;
            }
        }
        if plan.keep_items && !line_kept {
            let body = |out: &mut String| score.push_item_body(plan, out);
            (self.lines.spool()).push(key.cloned(), line, ordinal, body);
        }
    }
}

#[cfg(test)]
mod tests;
