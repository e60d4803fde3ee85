//! Scoring one item's aggregates: the shared filters and arguments computed
//! once per item (`Shared`), the general path that writes an `Observation`
//! (`observe`), and the compact steps of the counts and ratios kept as flags
//! (`FlagStep`). `ItemChunk::score` drives them.

use crate::base::value::Value;
use crate::eval::aggregate::{Accumulator, Observation};
use crate::eval::error::Within;
use crate::eval::item::ItemFailure;
use crate::eval::item_values;
use crate::ir::{evaluate_into, Frame, RuntimeError, TextTest};
use crate::library::aggregates::AggregateFn;
use crate::library::error::RuntimeErrorKind;
use crate::plan::Plan;

/// A shared filter's or argument's (`plan.shared`) last value, the item it
/// was computed for (a number from `ItemChunk::scored`), and the op as a
/// [`TextTest`] where it is one.
#[derive(Debug, Clone)]
pub(super) struct Shared {
    computed_for: u64,
    value: Value,
    test: Option<TextTest>,
}

impl Shared {
    pub(super) fn all(plan: &Plan) -> Vec<Shared> {
        (plan.shared.ops.iter())
            .map(|op| Shared {
                computed_for: 0,
                value: Value::Null,
                test: TextTest::of(op),
            })
            .collect()
    }
}

/// A shared filter's or argument's value for item `item`: computed into
/// `shared[at]` the first time an aggregate asks, read in place after.
// Numbered rather than cleared per item: an `Option<Value>` per slot, set to
// `None` for every item and then to `Some` of the result, cost as much as
// the comparisons it held.
#[inline(always)]
pub(super) fn shared_value<'s>(
    shared: &'s mut [Shared],
    at: usize,
    item: u64,
    plan: &Plan,
    frame: &Frame<'_>,
) -> Result<&'s Value, RuntimeError> {
    let shared = &mut shared[at];
    if shared.computed_for != item {
        match &shared.test {
            Some(test) => shared.value = Value::Bool(test.holds(frame)),
            None => evaluate_into(&plan.shared.ops[at], frame, &mut shared.value)?,
        }
        shared.computed_for = item;
    }
    Ok(&shared.value)
}

/// Whether the item passes aggregate `i`'s filter (one without passes).
#[inline(always)]
pub(super) fn passes_filter(
    plan: &Plan,
    i: usize,
    shared: &mut [Shared],
    item: u64,
    frame: &Frame<'_>,
) -> Result<bool, RuntimeError> {
    let Some(filter) = plan.shared.filter[i] else {
        return Ok(true);
    };
    match shared_value(shared, filter, item, plan, frame)? {
        Value::Bool(true) => Ok(true),
        Value::Bool(false) | Value::Null => Ok(false),
        found => {
            let found = found.clone();
            let kind = RuntimeErrorKind::WhereNeedsBool { found };
            Err(RuntimeError::from(kind).or_at(plan.aggregates[i].filter_at))
        }
    }
}

/// Observes the item for aggregate `i`, one not flagged: into its
/// contribution, or its tracked value for a `stability`.
#[inline(always)]
pub(super) fn observe(
    plan: &Plan,
    i: usize,
    shared: &mut [Shared],
    item: u64,
    frame: &Frame<'_>,
    accumulator: &Accumulator,
    (contribution, tracked): (&mut Observation, &mut Option<Value>),
) -> Result<(), Box<ItemFailure>> {
    let aggregate = &plan.aggregates[i];
    let fail = |e: RuntimeError| {
        let within = Within::Aggregate(aggregate.text.clone());
        Box::new((aggregate.at.clone(), within, e))
    };
    if !passes_filter(plan, i, shared, item, frame).map_err(fail)? {
        // Each contribution is written once (an item filtered out, its
        // untouched one): it is an enum with a boxed case, so every write
        // drops the one before.
        *contribution = item_values::untouched(aggregate.function);
        if tracked.is_some() {
            *tracked = None;
        }
        return Ok(());
    }
    let value = match plan.shared.arg[i] {
        Some(arg) => Some(shared_value(shared, arg, item, plan, frame).map_err(fail)?),
        None => None,
    };
    if aggregate.function == AggregateFn::Stability {
        *contribution = Observation::Out;
        *tracked = Some(value.cloned().unwrap_or(Value::Null));
        return Ok(());
    }
    accumulator
        .observe_into(value, contribution)
        .map_err(|kind| fail(RuntimeError::from(kind).or_at(aggregate.arg_at)))
}

/// A flagged aggregate's scoring, compact: its shared filter and argument
/// (`NONE` where it has none) and its flag when filtered out. A loop over
/// these is what most of a wide spec's aggregates cost per item.
#[derive(Debug, Clone, Copy)]
pub(super) struct FlagStep {
    pub(super) aggregate: u32,
    filter: u32,
    arg: u32,
    untouched: u8,
}

impl FlagStep {
    const NONE: u32 = u32::MAX;

    pub(super) fn of(plan: &Plan, a: usize) -> Self {
        let place = |at: Option<usize>| at.map_or(Self::NONE, |at| at as u32);
        FlagStep {
            aggregate: a as u32,
            filter: place(plan.shared.filter[a]),
            arg: place(plan.shared.arg[a]),
            untouched: item_values::untouched_flag(plan.aggregates[a].function),
        }
    }

    /// The item's flag; `None` where `observe_in_plan_order` must look (a
    /// value that is no condition, an error).
    #[inline]
    pub(super) fn flag(
        &self,
        shared: &mut [Shared],
        item: u64,
        plan: &Plan,
        frame: &Frame<'_>,
    ) -> Option<u8> {
        if self.filter != Self::NONE && !truth(shared, self.filter, item, plan, frame)? {
            return Some(self.untouched);
        }
        if self.arg == Self::NONE {
            return Some(1);
        }
        truth(shared, self.arg, item, plan, frame).map(u8::from)
    }
}

/// A shared condition's truth for the item (null is false); `None` for
/// anything else or an error.
#[inline(always)]
fn truth(
    shared: &mut [Shared],
    at: u32,
    item: u64,
    plan: &Plan,
    frame: &Frame<'_>,
) -> Option<bool> {
    match shared_value(shared, at as usize, item, plan, frame) {
        Ok(Value::Bool(true)) => Some(true),
        Ok(Value::Bool(false) | Value::Null) => Some(false),
        _ => None,
    }
}
