//! The interpreter: evaluates an [`Op`] against a frame of resolved slots.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::sync::Arc;

use crate::base::value::Value;
use crate::ir::{DatasetId, ExprAt, Op, Record, RuntimeError, Slot};
use crate::library::error::RuntimeErrorKind as K;
use crate::syntax::BinaryOp;

/// Everything an op can read. Per-item evaluation fills `records` and `derived`;
/// metric evaluation fills `aggregates` and `metrics`.
#[derive(Default)]
pub struct Frame<'a> {
    pub records: &'a [Option<&'a Record>],
    pub derived: &'a [Value],
    pub aggregates: &'a [Value],
    pub metrics: &'a [Value],
    /// Per dataset, the number of records it kept (for `records(dataset)`).
    pub dataset_records: &'a [Value],
    /// Per metric, its value in the baseline run (null when it has none).
    pub baseline: &'a [Value],
    /// Per run, every metric's value in that run (for `run_mean(metric)` and kin).
    pub run_metrics: &'a [Vec<Value>],
}

/// Evaluates `op` with only `record` in scope, at its dataset's place `index` in the
/// plan (keys and record checks). Small plans need no allocation per record.
pub fn evaluate_on_record(
    op: &Op,
    dataset: DatasetId,
    record: &Record,
) -> Result<Value, RuntimeError> {
    let mut inline: [Option<&Record>; 8] = [None; 8];
    let spilled: Vec<Option<&Record>>;
    let index = dataset.index();
    let records: &[Option<&Record>] = if index < inline.len() {
        inline[index] = Some(record);
        &inline[..=index]
    } else {
        let mut all = vec![None; index + 1];
        all[index] = Some(record);
        spilled = all;
        &spilled
    };
    evaluate(
        op,
        &Frame {
            records,
            ..Frame::default()
        },
    )
}

pub fn evaluate_constant(op: &Op) -> Result<Value, RuntimeError> {
    evaluate(op, &Frame::default())
}

/// Evaluates `op` as an operand that is only read: a constant or a slot is
/// borrowed from the plan or the frame, not cloned (a string's clone is an
/// atomic count up and down), anything else evaluated.
// Inlined into its callers: a comparison's two operands otherwise came back
// through a call each, as a `Result<Cow<Value>>` in memory.
#[inline(always)]
fn operand<'f>(op: &'f Op, frame: &'f Frame<'_>) -> Result<Cow<'f, Value>, RuntimeError> {
    Ok(Cow::Borrowed(match op {
        Op::Const(value) => value,
        Op::Input(slot) => input(slot, frame),
        Op::Derived(i) => &frame.derived[i.index()],
        _ => return evaluate(op, frame).map(Cow::Owned),
    }))
}

/// A record's slot; null where the item has no record of that dataset.
#[inline(always)]
fn input<'f>(Slot { dataset, slot }: &Slot, frame: &'f Frame<'_>) -> &'f Value {
    match frame.records.get(dataset.index()).copied().flatten() {
        Some(record) => &record.slots[slot.index()],
        None => &Value::Null,
    }
}

/// A field compared with a text (`items.gold == "c0"`, `!=` too), the
/// commonest per-item filter, taken out of its op once: `holds` reads the
/// slot and compares its bytes, without walking the op or `Value::eq`'s
/// dispatch on both sides.
#[derive(Debug, Clone)]
pub struct TextTest {
    slot: Slot,
    text: Arc<str>,
    equal: bool,
}

impl TextTest {
    /// The test `op` is, if it is one.
    pub fn of(op: &Op) -> Option<TextTest> {
        let Op::Binary(op @ (BinaryOp::Eq | BinaryOp::Ne), l, r, _) = op else {
            return None;
        };
        match (&**l, &**r) {
            (Op::Input(slot), Op::Const(Value::String(text)))
            | (Op::Const(Value::String(text)), Op::Input(slot)) => Some(TextTest {
                slot: *slot,
                text: text.clone(),
                equal: *op == BinaryOp::Eq,
            }),
            _ => None,
        }
    }

    /// What evaluating its op gives: `==` with a string holds only for a
    /// string of the same bytes.
    #[inline]
    pub fn holds(&self, frame: &Frame<'_>) -> bool {
        input(&self.slot, frame).is_text(&self.text) == self.equal
    }
}

/// Text tests evaluated together, those on one field reading it once: a
/// wide spec's conditions are mostly one field against each of its labels
/// (`items.gold == "c0"` ... `"c9"`), and finding the field's value cost as
/// much as comparing it.
#[derive(Debug, Clone, Default)]
pub struct TextTests {
    fields: Vec<FieldTests>,
}

/// The tests on one field, each with its place.
#[derive(Debug, Clone)]
struct FieldTests {
    slot: Slot,
    tests: Vec<(TextTest, usize)>,
}

impl TextTests {
    pub fn new(tests: Vec<TextTest>) -> Self {
        let mut fields: Vec<FieldTests> = Vec::new();
        for (at, test) in tests.into_iter().enumerate() {
            match fields.iter_mut().find(|field| field.slot == test.slot) {
                Some(field) => field.tests.push((test, at)),
                None => fields.push(FieldTests {
                    slot: test.slot,
                    tests: vec![(test, at)],
                }),
            }
        }
        TextTests { fields }
    }

    /// Writes whether test i holds (1 or 0) into `truths[i]`, for each test.
    #[inline]
    pub fn truths_into(&self, frame: &Frame<'_>, truths: &mut [u8]) {
        for field in &self.fields {
            let value = input(&field.slot, frame);
            for (test, at) in &field.tests {
                truths[*at] = u8::from(value.is_text(&test.text) == test.equal);
            }
        }
    }
}

/// Evaluates `op` into `out`. An equality (`items.gold == "c0"`, what per-item
/// filters mostly are) writes its bool in place: returned as a `Value` it
/// was copied through the stack in pieces the store before it could not
/// forward, which stalled every item's every shared filter.
pub fn evaluate_into(op: &Op, frame: &Frame<'_>, out: &mut Value) -> Result<(), RuntimeError> {
    match op {
        Op::Binary(op @ (BinaryOp::Eq | BinaryOp::Ne), l, r, _) => {
            let equal = *operand(l, frame)? == *operand(r, frame)?;
            *out = Value::Bool(equal == (*op == BinaryOp::Eq));
        }
        _ => *out = evaluate(op, frame)?,
    }
    Ok(())
}

/// Evaluates `op`. An error names the innermost op that failed: each fallible op
/// places the errors it makes, and passes on those of its operands as they are.
pub fn evaluate(op: &Op, frame: &Frame<'_>) -> Result<Value, RuntimeError> {
    Ok(match op {
        Op::Const(value) => value.clone(),
        Op::Input(slot) => input(slot, frame).clone(),
        Op::Derived(i) => frame.derived[i.index()].clone(),
        Op::Aggregate(i) => frame.aggregates[i.index()].clone(),
        Op::Baseline(i) => frame
            .baseline
            .get(i.index())
            .cloned()
            .unwrap_or(Value::Null),
        Op::Metric(i) => frame.metrics[i.index()].clone(),
        Op::DatasetRecords(i) => frame.dataset_records[i.index()].clone(),
        Op::RunStat(stat, metric) => {
            let values: Vec<f64> = frame
                .run_metrics
                .iter()
                .filter_map(|run| match run[metric.index()] {
                    Value::Number(x) => Some(x),
                    _ => None,
                })
                .collect();
            stat.of(&values).map_or(Value::Null, Value::Number)
        }
        Op::Field(base, name, at) => operand(base, frame)?
            .field(name)
            .map_err(|e| RuntimeError::located(e, *at))?,
        Op::Index(base, index, at) => {
            index_value(&evaluate(base, frame)?, &evaluate(index, frame)?)
                .map_err(|e| RuntimeError::located(e, *at))?
        }
        Op::Not(inner, at) => match &*operand(inner, frame)? {
            Value::Bool(b) => Value::Bool(!b),
            Value::Null => Value::Null,
            found => {
                let found = found.clone();
                return Err(RuntimeError::located(K::NotNeedsBool { found }, *at));
            }
        },
        Op::Neg(operand, at) => match evaluate(operand, frame)?.into_float() {
            Value::Number(n) => Value::Number(-n),
            Value::Null => Value::Null,
            found => return Err(RuntimeError::located(K::NegNeedsNumber { found }, *at)),
        },
        Op::Binary(BinaryOp::And, l, r, at) => logic(true, l, r, *at, frame)?,
        Op::Binary(BinaryOp::Or, l, r, at) => logic(false, l, r, *at, frame)?,
        Op::Binary(BinaryOp::Coalesce, l, r, _) => match evaluate(l, frame)? {
            Value::Null => evaluate(r, frame)?,
            value => value,
        },
        Op::Binary(op, l, r, at) if op.compares() => {
            let (l, r) = (operand(l, frame)?, operand(r, frame)?);
            // Equality cannot fail: answered here, without `compare`'s result.
            match op {
                BinaryOp::Eq => Value::Bool(*l == *r),
                BinaryOp::Ne => Value::Bool(*l != *r),
                _ => compare(*op, &l, &r).map_err(|e| RuntimeError::located(e, *at))?,
            }
        }
        Op::Binary(op, l, r, at) => binary(*op, evaluate(l, frame)?, evaluate(r, frame)?)
            .map_err(|e| RuntimeError::located(e, *at))?,
        Op::List(items) => Value::list(
            items
                .iter()
                .map(|op| evaluate(op, frame))
                .collect::<Result<_, _>>()?,
        ),
        Op::Call(builtin, args, at) => with_arguments(args, frame, |args| builtin.call(args))?
            .map_err(|e| RuntimeError::located(e, *at))?,
        Op::If(condition, then, otherwise, at) => match evaluate(condition, frame)? {
            Value::Bool(true) => evaluate(then, frame)?,
            Value::Bool(false) | Value::Null => evaluate(otherwise, frame)?,
            found => return Err(RuntimeError::located(K::IfConditionNotBool { found }, *at)),
        },
        Op::Matcher(matcher, inputs, at) => {
            with_arguments(inputs, frame, |inputs| matcher.apply(inputs))?
                .map_err(|e| RuntimeError::located(e, *at))?
        }
    })
}

/// Evaluates `ops` in order and calls `f` with them, for a function that only
/// reads its arguments (a built-in, a matcher): a constant or a slot is lent,
/// not cloned ([`operand`]), and only what must be computed is owned. Up to
/// `INLINE` arguments (every matcher, every built-in but `least` and
/// `greatest` given more) are kept on the stack: a `Vec` per call was an
/// allocation and a free for every call of every item. Arguments are mostly
/// fields: texts and lists, whose clone is an atomic count up and down.
fn with_arguments<R>(
    ops: &[Op],
    frame: &Frame<'_>,
    f: impl FnOnce(&[&Value]) -> R,
) -> Result<R, RuntimeError> {
    const INLINE: usize = 4;
    if ops.len() > INLINE {
        let operands: Vec<Cow<'_, Value>> = ops
            .iter()
            .map(|op| operand(op, frame))
            .collect::<Result<_, _>>()?;
        return Ok(f(&operands.iter().map(|v| &**v).collect::<Vec<&Value>>()));
    }
    let mut operands: [Option<Cow<'_, Value>>; INLINE] = Default::default();
    for (operand_of, op) in operands.iter_mut().zip(ops) {
        *operand_of = Some(operand(op, frame)?);
    }
    let values: [&Value; INLINE] =
        std::array::from_fn(|i| operands[i].as_deref().unwrap_or(&Value::Null));
    Ok(f(&values[..ops.len()]))
}

/// `and` / `or` with short-circuit and SQL's three-valued logic for null.
// Inlined: its bool, returned through memory, was read back wider than it
// was written, a stall for every `and` of every item.
#[inline(always)]
fn logic(
    is_and: bool,
    l: &Op,
    r: &Op,
    at: ExprAt,
    frame: &Frame<'_>,
) -> Result<Value, RuntimeError> {
    // Operands are read where they are (a field, a matcher's result): a
    // bool copied out was read back wider than it was written.
    let as_bool = |v: &Value| match v {
        Value::Bool(b) => Ok(Some(*b)),
        Value::Null => Ok(None),
        found => {
            let op = if is_and { "and" } else { "or" };
            let found = found.clone();
            Err(RuntimeError::located(K::LogicNeedsBools { op, found }, at))
        }
    };
    let decisive = !is_and; // false decides `and`, true decides `or`
    let left = as_bool(&*operand(l, frame)?)?;
    if left == Some(decisive) {
        return Ok(Value::Bool(decisive));
    }
    let right = as_bool(&*operand(r, frame)?)?;
    Ok(match (left, right) {
        (_, Some(b)) if b == decisive => Value::Bool(decisive),
        (Some(_), Some(b)) => Value::Bool(b),
        _ => Value::Null,
    })
}

/// A comparison (`==`, `<`, `in`, …): reads its operands, never takes them.
fn compare(op: BinaryOp, l: &Value, r: &Value) -> Result<Value, K> {
    use BinaryOp as B;
    let mismatch = || {
        Err(K::CannotApply {
            op: op.symbol(),
            left: l.clone(),
            right: r.clone(),
        })
    };
    Ok(match op {
        B::Eq => Value::Bool(l == r),
        B::Ne => Value::Bool(l != r),
        B::Lt | B::Le | B::Gt | B::Ge => {
            let ordering = match (l, r) {
                (Value::Null, _) | (_, Value::Null) => return Ok(Value::Null),
                (Value::BigInt(a), Value::BigInt(b)) => Some(a.cmp(b)),
                (a, b) if a.as_f64().is_some() && b.as_f64().is_some() => {
                    a.as_f64().partial_cmp(&b.as_f64())
                }
                (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
                _ => return mismatch(),
            };
            let Some(ordering) = ordering else {
                return Ok(Value::Bool(false));
            };
            Value::Bool(match op {
                B::Lt => ordering == Ordering::Less,
                B::Le => ordering != Ordering::Greater,
                B::Gt => ordering == Ordering::Greater,
                _ => ordering != Ordering::Less,
            })
        }
        B::In | B::NotIn => {
            let found = match (l, r) {
                (_, Value::Null) => return Ok(Value::Null),
                (_, Value::List(items)) => items.contains(l),
                (Value::String(needle), Value::String(haystack)) => haystack.contains(&**needle),
                _ => return mismatch(),
            };
            Value::Bool(found == (op == B::In))
        }
        _ => unreachable!("not a comparison: {op:?}"),
    })
}

fn binary(op: BinaryOp, l: Value, r: Value) -> Result<Value, K> {
    use BinaryOp as B;
    if op.compares() {
        return compare(op, &l, &r);
    }
    let mismatch = |l: &Value, r: &Value| {
        Err(K::CannotApply {
            op: op.symbol(),
            left: l.clone(),
            right: r.clone(),
        })
    };
    // Arithmetic reads a big integer as its float.
    let (l, r) = (l.into_float(), r.into_float());
    Ok(match op {
        B::Add => match (&l, &r) {
            (Value::Null, _) | (_, Value::Null) => Value::Null,
            (Value::Number(a), Value::Number(b)) => Value::Number(a + b),
            (Value::String(a), Value::String(b)) => {
                crate::library::builtins::check_text("+", a.len() + b.len())?;
                Value::from(format!("{a}{b}").as_str())
            }
            (Value::List(a), Value::List(b)) => {
                let length = a.len() + b.len();
                if length > crate::library::builtins::MAX_LIST {
                    return Err(K::ListTooLong {
                        function: "+",
                        length: length as f64,
                    });
                }
                Value::list(a.iter().chain(b.iter()).cloned().collect())
            }
            _ => return mismatch(&l, &r),
        },
        B::Sub | B::Mul | B::Div | B::Rem => match (&l, &r) {
            (Value::Null, _) | (_, Value::Null) => Value::Null,
            (Value::Number(a), Value::Number(b)) => match op {
                B::Sub => Value::Number(a - b),
                B::Mul => Value::Number(a * b),
                // An empty denominator has no value; a metric's `empty` fills it in.
                B::Div if *b == 0.0 => Value::Null,
                B::Div => Value::Number(a / b),
                B::Rem if *b == 0.0 => Value::Null,
                // Python's modulo: the result takes the divisor's sign.
                _ => Value::Number(a - b * (a / b).floor()),
            },
            _ => return mismatch(&l, &r),
        },
        B::And | B::Or | B::Coalesce => unreachable!("handled lazily"),
        _ => unreachable!("a comparison: {op:?}"),
    })
}

fn index_value(base: &Value, index: &Value) -> Result<Value, K> {
    Ok(match (base, index) {
        (Value::Null, _) | (_, Value::Null) => Value::Null,
        (Value::List(items), Value::Number(n)) if n.fract() == 0.0 => {
            let i = if *n < 0.0 { items.len() as f64 + n } else { *n };
            if i >= 0.0 && (i as usize) < items.len() {
                items[i as usize].clone()
            } else {
                Value::Null
            }
        }
        (Value::Object(_), Value::String(name)) => base.field(name)?,
        _ => {
            return Err(K::CannotIndex {
                base: base.clone(),
                index: index.clone(),
            })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::diagnostic::Location;
    use crate::ir::ExprLocations;
    use crate::syntax::BinaryOp as B;

    fn c(v: Value) -> Box<Op> {
        Box::new(Op::Const(v))
    }

    fn at() -> ExprAt {
        ExprLocations::default().add(Location::in_data("t", 1, None))
    }

    #[test]
    fn an_error_is_placed_at_the_innermost_failing_op_and_stays_small() {
        let mut locations = ExprLocations::default();
        let [outer, call] = [1, 2].map(|line| locations.add(Location::in_data("t", line, None)));
        let len = crate::library::builtins::lookup("len").unwrap();
        let failing = Op::Call(len, vec![Op::Const(3.0.into())], call);
        let op = Op::Not(
            Box::new(Op::Binary(B::Gt, Box::new(failing), c(0.0.into()), outer)),
            outer,
        );
        let error = evaluate(&op, &Frame::default()).unwrap_err();
        assert_eq!(error.at, Some(call));
        assert_eq!(error.location(&locations).unwrap().line, 2);
        assert!(matches!(
            *error.kind,
            K::ArgumentType {
                position: 1,
                function: "len",
                ..
            }
        ));
        assert_eq!(error.code(), "argument_type");
        assert_eq!(
            error.to_string(),
            "argument 1 of `len` must be a list or a string, found number 3"
        );
        // The error path is boxed: a result is no larger than a value and an id.
        assert!(std::mem::size_of::<Result<Value, RuntimeError>>() <= 24);
    }

    #[test]
    fn logic_is_three_valued_and_short_circuits() {
        let frame = Frame::default();
        let and =
            |a: Value, b: Value| evaluate(&Op::Binary(B::And, c(a), c(b), at()), &frame).unwrap();
        assert_eq!(and(Value::Null, false.into()), Value::Bool(false));
        assert_eq!(and(Value::Null, true.into()), Value::Null);
        // The right side is not evaluated once the left decides.
        assert_eq!(
            and(false.into(), Value::from("not a bool")),
            Value::Bool(false)
        );
        assert!(evaluate(
            &Op::Binary(B::Or, c(Value::from("x")), c(true.into()), at()),
            &frame
        )
        .is_err());
    }

    #[test]
    fn arithmetic_follows_python_and_empty_division_is_null() {
        assert_eq!(
            binary(B::Rem, (-7.0).into(), 3.0.into()).unwrap(),
            Value::Number(2.0)
        );
        assert_eq!(binary(B::Div, 1.0.into(), 0.0.into()).unwrap(), Value::Null);
        assert_eq!(binary(B::Lt, Value::Null, 1.0.into()).unwrap(), Value::Null);
        assert_eq!(
            binary(B::In, "a".into(), Value::list(vec!["a".into()])).unwrap(),
            Value::Bool(true)
        );
        assert!(binary(B::Add, "a".into(), 1.0.into()).is_err());
    }

    #[test]
    fn a_call_sees_its_arguments_in_order_however_many_and_stops_at_the_first_error() {
        let frame = Frame::default();
        let least = crate::library::builtins::lookup("least").unwrap();
        let call = |args: Vec<Op>| evaluate(&Op::Call(least, args, at()), &frame);
        let numbers = |xs: &[f64]| xs.iter().map(|x| Op::Const((*x).into())).collect();
        // Two, four (on the stack) and six (in a Vec) arguments.
        assert_eq!(call(numbers(&[2.0, 1.0])).unwrap(), Value::Number(1.0));
        assert_eq!(
            call(numbers(&[4.0, 3.0, 0.5, 2.0])).unwrap(),
            Value::Number(0.5)
        );
        let six = numbers(&[6.0, 5.0, 4.0, 3.0, 2.0, -1.0]);
        assert_eq!(call(six).unwrap(), Value::Number(-1.0));
        // The last argument fails too: the first one's error is the one
        // returned, on either path.
        let len = crate::library::builtins::lookup("len").unwrap();
        let mut located = ExprLocations::default();
        let [first, second] = [1, 2].map(|line| located.add(Location::in_data("t", line, None)));
        let failing = |place| Op::Call(len, vec![Op::Const(3.0.into())], place);
        for count in [2, 6] {
            let mut args: Vec<Op> = numbers(&vec![1.0; count]);
            args[0] = failing(first);
            args[count - 1] = failing(second);
            assert_eq!(call(args).unwrap_err().at, Some(first), "{count} arguments");
        }
    }

    proptest::proptest! {
        /// What `evaluate` gives, for the comparisons written in place and the
        /// rest alike, and the same error when an operand fails.
        #[test]
        fn evaluating_into_a_value_is_evaluating(
            l in crate::base::value::strategies::value(),
            r in crate::base::value::strategies::value(),
            which in 0usize..4,
            failing in proptest::prelude::any::<bool>(),
        ) {
            let op = [B::Eq, B::Ne, B::Lt, B::In][which];
            let len = crate::library::builtins::lookup("len").unwrap();
            let left = match failing {
                true => Box::new(Op::Call(len, vec![Op::Const(3.0.into())], at())),
                false => c(l),
            };
            let op = Op::Binary(op, left, c(r), at());
            let frame = Frame::default();
            let mut out = Value::from("held before");
            let into = evaluate_into(&op, &frame, &mut out).map(|()| out);
            proptest::prop_assert_eq!(
                format!("{into:?}"),
                format!("{:?}", evaluate(&op, &frame))
            );
        }
    }

    #[test]
    fn negative_indexes_count_from_the_end() {
        let xs = Value::list(vec![1.0.into(), 2.0.into()]);
        assert_eq!(
            index_value(&xs, &(-1.0).into()).unwrap(),
            Value::Number(2.0)
        );
        assert_eq!(index_value(&xs, &5.0.into()).unwrap(), Value::Null);
    }

    /// A field compared with a text, either way round and with `!=` too, is
    /// taken out as a test that holds where evaluating the op gives true, for
    /// every kind of value in the field and for an item without the record.
    #[test]
    fn a_text_test_holds_where_its_op_is_true() {
        let slot = Slot {
            dataset: DatasetId::new(0),
            slot: crate::ir::SlotId::new(1),
        };
        let field = || Box::new(Op::Input(slot));
        let text = || c(Value::from("c0"));
        let ops = [
            Op::Binary(B::Eq, field(), text(), at()),
            Op::Binary(B::Eq, text(), field(), at()),
            Op::Binary(B::Ne, field(), text(), at()),
            Op::Binary(B::Ne, text(), field(), at()),
        ];
        let values = [
            Value::from("c0"),
            Value::from("c1"),
            Value::from(""),
            Value::Null,
            Value::Bool(true),
            Value::Number(0.0),
            Value::list(vec![Value::from("c0")]),
        ];
        for op in &ops {
            let test = TextTest::of(op).expect("a field against a text");
            for value in &values {
                let record = Record {
                    slots: vec![Value::Null, value.clone()].into(),
                    line: 1,
                };
                let records = [Some(&record)];
                let frame = Frame {
                    records: &records,
                    ..Frame::default()
                };
                let expected = evaluate(op, &frame).unwrap() == Value::Bool(true);
                assert_eq!(test.holds(&frame), expected, "{op:?} with {value:?}");
            }
            let without: [Option<&Record>; 1] = [None];
            let frame = Frame {
                records: &without,
                ..Frame::default()
            };
            assert_eq!(
                test.holds(&frame),
                evaluate(op, &frame).unwrap() == Value::Bool(true)
            );
        }
        let neither = [
            Op::Binary(B::Eq, field(), c(Value::Number(1.0)), at()),
            Op::Binary(B::Lt, field(), text(), at()),
            Op::Binary(B::Eq, field(), field(), at()),
        ];
        assert!(neither.iter().all(|op| TextTest::of(op).is_none()));
    }

    /// Tests taken together, over two fields in any order, give each test's
    /// own truth in its place.
    #[test]
    fn text_tests_together_hold_as_each_alone() {
        let slot = |s| Slot {
            dataset: DatasetId::new(0),
            slot: crate::ir::SlotId::new(s),
        };
        let test = |s, op, text: &str| {
            let op = Op::Binary(op, Box::new(Op::Input(slot(s))), c(Value::from(text)), at());
            TextTest::of(&op).expect("a field against a text")
        };
        let tests = [
            test(0, B::Eq, "c0"),
            test(1, B::Eq, "c0"),
            test(0, B::Ne, "c1"),
            test(0, B::Eq, "c1"),
            test(1, B::Ne, ""),
        ];
        let together = TextTests::new(tests.to_vec());
        assert_eq!(together.fields.len(), 2);
        let values = [
            Value::from("c0"),
            Value::from("c1"),
            Value::from(""),
            Value::Null,
        ];
        for a in &values {
            for b in &values {
                let record = Record {
                    slots: vec![a.clone(), b.clone()].into(),
                    line: 1,
                };
                for records in [[Some(&record)], [None]] {
                    let frame = Frame {
                        records: &records,
                        ..Frame::default()
                    };
                    let mut truths = vec![9; tests.len()];
                    together.truths_into(&frame, &mut truths);
                    let alone: Vec<u8> = tests.iter().map(|t| u8::from(t.holds(&frame))).collect();
                    assert_eq!(truths, alone, "{a:?}, {b:?}");
                }
            }
        }
    }
}
