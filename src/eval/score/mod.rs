//! Scoring one item: what the item gives the run, computed from its joined
//! records and nothing else. The [`Scorer`] is the only way an item is scored,
//! whatever join produced its records; its [`Score`] is what a run's partial
//! state folds in (`state`), at once or, for a join that scores items out of
//! order, after being kept compactly (`saved`).

mod aggregates;
pub(in crate::eval) mod roles;
pub(in crate::eval) mod saved;

use std::sync::Arc;

use crate::base::diagnostic::Location;
use crate::base::value::Value;
use crate::eval::error::Within;
use crate::ir::{evaluate, Frame, Record, RuntimeError};
use crate::plan::{DerivedKind, Plan};
use crate::report_model::push_item_body;
use crate::stats::aggregate::{condition, Accumulator, Observation};
use crate::stats::resample::NOT_COUNTED;

pub(in crate::eval) use aggregates::untouched_flag;
use aggregates::{observe, passes_filter, shared_value, FlagSteps, Shared};
pub use roles::Roles;

/// Where an item failed to evaluate, in what, and why.
pub(in crate::eval) type ItemFailure = (Location, Within, RuntimeError);

/// What one item gives the run: every value the fold reads.
#[derive(Debug, Clone)]
pub(in crate::eval) struct Score {
    /// The item's derived values (fields, matchers, labels), in plan order.
    pub(in crate::eval) derived: Vec<Value>,
    /// Per aggregate not [`Roles::flagged`], the item's observation of it.
    pub(in crate::eval) contributions: Vec<Observation>,
    /// Per flagged aggregate, the item's observation as its column keeps it
    /// (1, 0 or `NOT_COUNTED`): a byte written and copied instead of an
    /// `Observation` matched and converted twice.
    pub(in crate::eval) flags: Vec<u8>,
    /// Per `stability` aggregate, the item's value.
    pub(in crate::eval) tracked: Vec<Option<Value>>,
    /// The item's value of each slice, as text.
    pub(in crate::eval) slice_texts: Vec<Arc<str>>,
    /// `offenders.when` holds for the item.
    pub(in crate::eval) offender: bool,
}

impl Score {
    fn new(plan: &Plan) -> Self {
        Score {
            derived: vec![Value::Null; plan.derived.len()],
            contributions: vec![Observation::Out; plan.aggregates.len()],
            flags: vec![NOT_COUNTED; plan.aggregates.len()],
            tracked: vec![None; plan.aggregates.len()],
            slice_texts: vec![Arc::from(""); plan.slices.len()],
            offender: false,
        }
    }

    /// The item's label, if it took one.
    pub(in crate::eval) fn label(&self, plan: &Plan) -> Option<Arc<str>> {
        let slot = plan.label_slot?;
        match &self.derived[slot.index()] {
            Value::String(label) => Some(label.clone()),
            _ => None,
        }
    }

    /// Appends the rest of the item's line of items.jsonl (after its key,
    /// line and run): its label, fields and matchers.
    pub(in crate::eval) fn push_item_body(&self, plan: &Plan, out: &mut String) {
        let label = self.label(plan);
        let label = (!plan.labels.is_empty()).then_some(label.as_deref());
        let members = |matchers: bool| {
            (plan.item_columns.iter())
                .filter(move |c| (c.kind == DerivedKind::Matcher) == matchers)
                .map(|c| (c.member.as_str(), &self.derived[c.slot.index()], &c.ty))
        };
        push_item_body(out, label, members(false), members(true));
    }
}

/// Scores items one at a time into its [`Score`], reused from item to item.
pub(in crate::eval) struct Scorer<'p> {
    plan: &'p Plan,
    roles: &'p Roles,
    /// Per aggregate, an empty accumulator: which observation it takes.
    kinds: Vec<Accumulator>,
    /// Each shared filter's or argument's last value.
    shared: Vec<Shared>,
    /// The flagged aggregates' steps.
    flag_steps: FlagSteps,
    /// Items scored, counting from 1: the current item's number for `shared`.
    scored: u64,
    pub(in crate::eval) score: Score,
}

impl<'p> Scorer<'p> {
    pub(in crate::eval) fn new(plan: &'p Plan, roles: &'p Roles) -> Self {
        Scorer {
            plan,
            roles,
            kinds: (plan.aggregates.iter())
                .map(|a| Accumulator::new(a.function))
                .collect(),
            shared: Shared::all(plan),
            flag_steps: FlagSteps::of(plan, roles.counted.iter().map(|&(a, _)| a)),
            scored: 0,
            score: Score::new(plan),
        }
    }

    /// Scores the item whose records (one per dataset, `None` where it has
    /// none) are `records` into `self.score`, folding nothing in.
    pub(in crate::eval) fn score(
        &mut self,
        records: &[Option<&Record>],
    ) -> Result<(), Box<ItemFailure>> {
        let plan = self.plan;
        for (i, derived) in plan.derived.iter().enumerate() {
            let frame = Frame {
                records,
                derived: &self.score.derived,
                ..Frame::default()
            };
            let value = evaluate(&derived.op, &frame).map_err(|e| {
                let within = Within::Derived(derived.name.clone());
                Box::new((derived.at.clone(), within, e))
            })?;
            self.score.derived[i] = value;
        }
        // Lent out while the rest is scored, which writes to the score's
        // other fields.
        let derived = std::mem::take(&mut self.score.derived);
        let scored = self.score_derived(records, &derived);
        self.score.derived = derived;
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
        slice_texts(plan, &frame, &mut self.score.slice_texts).map_err(|(s, e)| {
            let slice = &plan.slices[s];
            Box::new((slice.at.clone(), Within::Slice(slice.name.clone()), e))
        })?;
        // Each shared filter or argument is computed once for this item, when
        // the first aggregate that needs it asks, and read in place after.
        self.scored += 1;
        if !self.observe_fast(&frame) {
            self.observe_in_plan_order(&frame)?;
        }
        self.score.offender = match &plan.offenders {
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
        let (plan, item, score) = (self.plan, self.scored, &mut self.score);
        for &i in &self.roles.folded {
            let scratch = (&mut score.contributions[i], &mut score.tracked[i]);
            let kind = &self.kinds[i];
            if observe(plan, i, &mut self.shared, item, frame, kind, scratch).is_err() {
                return false;
            }
        }
        (self.flag_steps).flag(&mut self.shared, item, plan, frame, &mut score.flags)
    }

    /// Observes the item for every aggregate in plan order, stopping at the
    /// first that fails.
    fn observe_in_plan_order(&mut self, frame: &Frame<'_>) -> Result<(), Box<ItemFailure>> {
        let (plan, item, score) = (self.plan, self.scored, &mut self.score);
        for (i, aggregate) in plan.aggregates.iter().enumerate() {
            if !self.roles.flagged[i] {
                let scratch = (&mut score.contributions[i], &mut score.tracked[i]);
                observe(
                    plan,
                    i,
                    &mut self.shared,
                    item,
                    frame,
                    &self.kinds[i],
                    scratch,
                )?;
                continue;
            }
            let fail = |e: RuntimeError| {
                let within = Within::Aggregate(aggregate.text.clone());
                Box::new((aggregate.at.clone(), within, e))
            };
            if !passes_filter(plan, i, &mut self.shared, item, frame).map_err(fail)? {
                score.flags[i] = untouched_flag(aggregate.function);
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
            score.flags[i] = u8::from(hit);
        }
        Ok(())
    }
}

/// The item's value of each slice (its derived values in `frame`), as text:
/// `texts[s]` for slice `s`. Fails on a slice that does not evaluate, or gives
/// a list or an object.
fn slice_texts(
    plan: &Plan,
    frame: &Frame<'_>,
    texts: &mut [Arc<str>],
) -> Result<(), (usize, RuntimeError)> {
    for (s, slice) in plan.slices.iter().enumerate() {
        let value = evaluate(&slice.op, frame).map_err(|e| (s, e))?;
        let Some(text) = crate::base::value::slice_text(&value) else {
            let kind = crate::library::error::RuntimeErrorKind::SliceNotScalar { found: value };
            return Err((s, RuntimeError::from(kind)));
        };
        texts[s] = text;
    }
    Ok(())
}
