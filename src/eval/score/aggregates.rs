//! Scoring one item's aggregates: the shared filters and arguments computed
//! once per item (`Shared`), the general path that writes an `Observation`
//! (`observe`), and the compact steps of the counts and ratios kept as flags
//! (`FlagSteps`). `Scorer::score` drives them.

use crate::base::value::Value;
use crate::eval::error::Within;
use crate::eval::score::ItemFailure;
use crate::ir::{evaluate_into, Frame, RuntimeError, TextTest, TextTests};
use crate::library::aggregates::AggregateFn;
use crate::library::error::RuntimeErrorKind;
use crate::plan::Plan;
use crate::stats::aggregate::{Accumulator, Observation};
use crate::stats::resample::NOT_COUNTED;

/// A shared filter's or argument's (`plan.shared`) last value, the item it
/// was computed for (a number from `Scorer::scored`), and the op as a
/// [`TextTest`] where it is one.
#[derive(Debug, Clone)]
pub(in crate::eval::score) struct Shared {
    computed_for: u64,
    value: Value,
    test: Option<TextTest>,
}

impl Shared {
    pub(in crate::eval::score) fn all(plan: &Plan) -> Vec<Shared> {
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
pub(in crate::eval::score) fn shared_value<'s>(
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
pub(in crate::eval::score) fn passes_filter(
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

/// What an item contributes to an aggregate it was not folded into (filtered
/// out by `where`): nothing, except 0 to a `count`.
pub(in crate::eval) fn untouched(function: AggregateFn) -> Observation {
    match function {
        AggregateFn::Count => Observation::Number(0.0),
        _ => Observation::Out,
    }
}

/// [`untouched`] as a flag.
pub(in crate::eval) fn untouched_flag(function: AggregateFn) -> u8 {
    match function {
        AggregateFn::Count => 0,
        _ => NOT_COUNTED,
    }
}

/// Observes the item for aggregate `i`, one not flagged: into its
/// contribution, or its tracked value for a `stability`.
#[inline(always)]
pub(in crate::eval::score) fn observe(
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
        *contribution = untouched(aggregate.function);
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

/// The flagged aggregates' scoring: those whose filter and argument are
/// text tests (or absent) from the item's truths of those tests, the others
/// from their shared values.
#[derive(Debug, Clone)]
pub(in crate::eval::score) struct FlagSteps {
    general: Vec<FlagStep>,
    /// The text tests the `text` steps read, and the current item's truths:
    /// an always-true entry that stands for "no filter" and "no argument",
    /// then each test's (0 or 1).
    tests: TextTests,
    truths: Vec<u8>,
    text: Vec<TextFlagStep>,
}

impl FlagSteps {
    /// The steps of aggregates `flagged`.
    pub(in crate::eval::score) fn of(plan: &Plan, flagged: impl Iterator<Item = usize>) -> Self {
        let tests: Vec<Option<TextTest>> = plan.shared.ops.iter().map(TextTest::of).collect();
        // Shared op -> its truth's place: its test's among those kept, numbered
        // as first met, after the always-true entry.
        let mut place: Vec<Option<u32>> = vec![None; tests.len()];
        let mut kept = Vec::new();
        let (mut general, mut text_steps) = (Vec::new(), Vec::new());
        for a in flagged {
            let step = FlagStep::of(plan, a);
            let is_text = |at: u32| at == FlagStep::NONE || tests[at as usize].is_some();
            if !(is_text(step.filter) && is_text(step.arg)) {
                general.push(step);
                continue;
            }
            let mut truth_of = |at: u32| -> u32 {
                if at == FlagStep::NONE {
                    return 0;
                }
                *place[at as usize].get_or_insert_with(|| {
                    kept.push(tests[at as usize].clone().expect("a text test"));
                    kept.len() as u32
                })
            };
            let (filter, arg) = (truth_of(step.filter), truth_of(step.arg));
            text_steps.push(TextFlagStep {
                aggregate: step.aggregate,
                filter,
                arg,
                untouched: step.untouched,
            });
        }
        let mut truths = vec![0; kept.len() + 1];
        truths[0] = 1;
        FlagSteps {
            general,
            tests: TextTests::new(kept),
            truths,
            text: text_steps,
        }
    }

    /// Writes the item's flag of every flagged aggregate into `flags`; false
    /// where `observe_in_plan_order` must look (a value that is no
    /// condition, an error).
    #[inline]
    pub(in crate::eval::score) fn flag(
        &mut self,
        shared: &mut [Shared],
        item: u64,
        plan: &Plan,
        frame: &Frame<'_>,
        flags: &mut [u8],
    ) -> bool {
        for step in &self.general {
            match step.flag(shared, item, plan, frame) {
                Some(flag) => flags[step.aggregate as usize] = flag,
                None => return false,
            }
        }
        // A text test cannot fail, so all are computed, once each, however
        // many steps read them, instead of each step asking for its shared
        // values (the 46-aggregate benchmark's 44 steps: `Scorer::score`
        // 115 -> 60 M instructions at 100k items).
        self.tests.truths_into(frame, &mut self.truths[1..]);
        let truths = &self.truths;
        for step in &self.text {
            let passes = truths[step.filter as usize] == 1;
            let hit = truths[step.arg as usize];
            flags[step.aggregate as usize] = if passes { hit } else { step.untouched };
        }
        true
    }
}

/// A flagged aggregate whose filter and argument are text tests (or
/// absent): their places in `FlagSteps::truths`.
#[derive(Debug, Clone, Copy)]
struct TextFlagStep {
    aggregate: u32,
    filter: u32,
    arg: u32,
    untouched: u8,
}

/// A flagged aggregate's scoring, compact: its shared filter and argument
/// (`NONE` where it has none) and its flag when filtered out.
#[derive(Debug, Clone, Copy)]
struct FlagStep {
    aggregate: u32,
    filter: u32,
    arg: u32,
    untouched: u8,
}

impl FlagStep {
    const NONE: u32 = u32::MAX;

    fn of(plan: &Plan, a: usize) -> Self {
        let place = |at: Option<usize>| at.map_or(Self::NONE, |at| at as u32);
        FlagStep {
            aggregate: a as u32,
            filter: place(plan.shared.filter[a]),
            arg: place(plan.shared.arg[a]),
            untouched: untouched_flag(plan.aggregates[a].function),
        }
    }

    /// The item's flag; `None` where `observe_in_plan_order` must look (a
    /// value that is no condition, an error).
    #[inline]
    fn flag(&self, shared: &mut [Shared], item: u64, plan: &Plan, frame: &Frame<'_>) -> Option<u8> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Record;
    use crate::plan::testing::plan;

    /// The steps read from text tests' truths flag every item as the general
    /// steps do, whatever its fields hold (texts, other kinds, nothing) or
    /// with no record at all; a step that is no text test's stays general.
    #[test]
    fn text_steps_flag_as_general_steps_do() {
        let plan = plan(
            "  precision: ratio(j.gold == 'a' where j.pred == 'a')\n  \
             differs: count(j.pred != 'a')\n  \
             either: ratio(j.gold == 'b' where j.pred != 'b')\n  \
             all: count()\n  \
             high: ratio(j.score > 0.5 where j.gold == 'a')\n  \
             mean_score: mean(j.score)\n",
        );
        let counts = |a: &usize| {
            let function = plan.aggregates[*a].function;
            matches!(function, AggregateFn::Count | AggregateFn::Ratio)
        };
        let flagged: Vec<usize> = (0..plan.aggregates.len()).filter(counts).collect();
        let mut steps = FlagSteps::of(&plan, flagged.iter().copied());
        assert_eq!((steps.text.len(), steps.general.len()), (4, 1));
        let values = [
            Value::Null,
            Value::from("a"),
            Value::from("b"),
            Value::Number(1.0),
            Value::Bool(true),
        ];
        let slot_count = plan.datasets[0].projection.slot_count;
        let mut shared = Shared::all(&plan);
        for combination in 0..values.len().pow(slot_count as u32) {
            let slots = (0..slot_count as u32)
                .map(|s| values[combination / values.len().pow(s) % values.len()].clone());
            let record = Record {
                slots: slots.collect::<Vec<_>>().into(),
                line: 1,
            };
            for records in [[Some(&record)], [None]] {
                let frame = Frame {
                    records: &records,
                    ..Frame::default()
                };
                let item = 2 * combination as u64 + 1 + u64::from(records[0].is_none());
                let mut flags = vec![crate::stats::resample::NOT_COUNTED; plan.aggregates.len()];
                let flagged_all = steps.flag(&mut shared, item, &plan, &frame, &mut flags);
                let mut general = Shared::all(&plan);
                let expected: Vec<Option<u8>> = (flagged.iter())
                    .map(|&a| FlagStep::of(&plan, a).flag(&mut general, 1, &plan, &frame))
                    .collect();
                assert_eq!(flagged_all, expected.iter().all(Option::is_some));
                if flagged_all {
                    let got: Vec<Option<u8>> = flagged.iter().map(|&a| Some(flags[a])).collect();
                    assert_eq!(
                        got,
                        expected,
                        "{record:?}, present: {}",
                        records[0].is_some()
                    );
                }
            }
        }
    }
}
