//! Formulas: the metrics computed from items as ops over *observed* aggregates,
//! so that a metric can be recomputed from resampled items (intervals) and from
//! another run's observations (`diff`, `--baseline`), without its spec.
//!
//! In a formula, `Op::Aggregate(k)` is the `k`-th observed aggregate and
//! `Op::Metric(j)` the `j`-th formula of the same list (always an earlier one).
//! Only what a metric over aggregates can be built from is a formula:
//! constants, arithmetic and comparisons, `not`, `-`, `if`, lists, fields,
//! indexing and the built-in functions. A metric reading anything else
//! (`records(d)`, a matcher, a run statistic) has no formula.
//!
//! As JSON (item-values.jsonl's header): `{"const": 100}`, `{"aggregate": 0}`,
//! `{"metric": 1}`, `{"binary": "*", "args": [a, b]}`, `{"not": a}`,
//! `{"neg": a}`, `{"if": [c, then, else]}`, `{"list": [..]}`,
//! `{"field": "name", "of": a}`, `{"index": [a, i]}`,
//! `{"call": "round", "args": [..]}`.

use std::sync::Arc;

use serde_json::{json, Value as Json};

use crate::base::value::{json_to_value, Value};
use crate::ir::ids::{AggregateId, ExprAt, MetricId};
use crate::ir::op::Op;
use crate::library::builtins;
use crate::syntax::BinaryOp;

/// One metric as a formula over observed aggregates.
#[derive(Debug, Clone)]
pub struct Formula {
    pub name: String,
    pub op: Op,
    /// The value a null result takes (the metric's `empty`).
    pub empty: Option<f64>,
    /// Whether it gets an interval and a change of its own; a formula kept only
    /// because a tested one reads it does not.
    pub tested: bool,
}

/// The formula's op as JSON; `None` when it reads something a formula cannot.
pub fn op_to_json(op: &Op) -> Option<Json> {
    let all = |ops: &[Op]| ops.iter().map(op_to_json).collect::<Option<Vec<Json>>>();
    Some(match op {
        Op::Const(value) => json!({ "const": constant_json(value)? }),
        Op::Aggregate(k) => json!({ "aggregate": k.index() }),
        Op::Metric(j) => json!({ "metric": j.index() }),
        Op::Binary(operator, a, b, _) => {
            json!({ "binary": operator.symbol(), "args": [op_to_json(a)?, op_to_json(b)?] })
        }
        Op::Not(a, _) => json!({ "not": op_to_json(a)? }),
        Op::Neg(a, _) => json!({ "neg": op_to_json(a)? }),
        Op::If(c, t, e, _) => json!({ "if": [op_to_json(c)?, op_to_json(t)?, op_to_json(e)?] }),
        Op::List(items) => json!({ "list": all(items)? }),
        Op::Field(base, name, _) => json!({ "field": name.as_ref(), "of": op_to_json(base)? }),
        Op::Index(base, index, _) => json!({ "index": [op_to_json(base)?, op_to_json(index)?] }),
        Op::Call(builtin, args, _) => json!({ "call": builtin.name, "args": all(args)? }),
        Op::Input(_)
        | Op::Derived(_)
        | Op::Baseline(_)
        | Op::DatasetRecords(_)
        | Op::RunStat(..)
        | Op::Matcher(..) => return None,
    })
}

/// The op a formula's JSON describes; `None` for anything [`op_to_json`] does
/// not write (a file from a newer evalspec, or edited by hand). `at` is where
/// errors would point: formulas read back are never reported.
pub fn op_from_json(json: &Json, at: ExprAt) -> Option<Op> {
    let object = json.as_object()?;
    let one = |key: &str| op_from_json(object.get(key)?, at).map(Box::new);
    let list = |key: &str| -> Option<Vec<Op>> {
        object
            .get(key)?
            .as_array()?
            .iter()
            .map(|item| op_from_json(item, at))
            .collect()
    };
    // The key naming the op (`args` and `of` only accompany one).
    let key = object
        .keys()
        .find(|k| !matches!(k.as_str(), "args" | "of"))?;
    Some(match key.as_str() {
        "const" => Op::Const(constant(object.get("const")?)?),
        "aggregate" => Op::Aggregate(AggregateId::new(index(object.get("aggregate")?)?)),
        "metric" => Op::Metric(MetricId::new(index(object.get("metric")?)?)),
        "binary" => {
            let operator = binary_op(object.get("binary")?.as_str()?)?;
            let [a, b]: [Op; 2] = list("args")?.try_into().ok()?;
            Op::Binary(operator, Box::new(a), Box::new(b), at)
        }
        "not" => Op::Not(one("not")?, at),
        "neg" => Op::Neg(one("neg")?, at),
        "if" => {
            let [c, t, e]: [Op; 3] = list("if")?.try_into().ok()?;
            Op::If(Box::new(c), Box::new(t), Box::new(e), at)
        }
        "list" => Op::List(list("list")?),
        "field" => {
            let name = object.get("field")?.as_str()?;
            Op::Field(one("of")?, Arc::from(name), at)
        }
        "index" => {
            let [a, i]: [Op; 2] = list("index")?.try_into().ok()?;
            Op::Index(Box::new(a), Box::new(i), at)
        }
        "call" => {
            let builtin = builtins::lookup(object.get("call")?.as_str()?)?;
            Op::Call(builtin, list("args")?, at)
        }
        _ => return None,
    })
}

/// Formulas reference earlier formulas only, and observed aggregates that
/// exist: what evaluating them in order needs.
pub fn well_formed(formulas: &[Formula], aggregates: usize) -> bool {
    formulas.iter().enumerate().all(|(j, formula)| {
        let mut ok = true;
        formula.op.walk(&mut |op| match op {
            Op::Aggregate(k) => ok &= k.index() < aggregates,
            Op::Metric(m) => ok &= m.index() < j,
            _ => {}
        });
        ok
    })
}

fn constant_json(value: &Value) -> Option<Json> {
    Some(match value {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Number(x) if x.is_finite() => json!(x),
        Value::String(s) => Json::from(s.as_ref()),
        _ => return None,
    })
}

fn constant(json: &Json) -> Option<Value> {
    match json {
        Json::Null | Json::Bool(_) | Json::Number(_) | Json::String(_) => {
            Some(match json_to_value(json) {
                // Constants in metrics are floats, as the compiler folds them.
                Value::BigInt(b) => Value::Number(b.to_f64()),
                value => value,
            })
        }
        _ => None,
    }
}

fn index(json: &Json) -> Option<usize> {
    usize::try_from(json.as_u64()?).ok()
}

fn binary_op(symbol: &str) -> Option<BinaryOp> {
    use BinaryOp::*;
    [
        Or, And, Eq, Ne, Lt, Le, Gt, Ge, In, NotIn, Coalesce, Add, Sub, Mul, Div, Rem,
    ]
    .into_iter()
    .find(|op| op.symbol() == symbol)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::diagnostic::Location;
    use crate::ir::ExprLocations;

    fn at() -> ExprAt {
        ExprLocations::default().add(Location::in_data("f", 1, None))
    }

    #[test]
    fn formulas_read_back_as_written() {
        let at = at();
        let aggregate = |k| Box::new(Op::Aggregate(AggregateId::new(k)));
        // 2·a·b / (a + b), rounded to 3 places, or the first formula when null.
        let f1 = Op::Binary(
            BinaryOp::Div,
            Box::new(Op::Binary(
                BinaryOp::Mul,
                Box::new(Op::Binary(
                    BinaryOp::Mul,
                    Box::new(Op::Const(Value::Number(2.0))),
                    aggregate(0),
                    at,
                )),
                aggregate(1),
                at,
            )),
            Box::new(Op::Binary(BinaryOp::Add, aggregate(0), aggregate(1), at)),
            at,
        );
        let op = Op::Binary(
            BinaryOp::Coalesce,
            Box::new(Op::Call(
                builtins::lookup("round").unwrap(),
                vec![f1, Op::Const(Value::Number(3.0))],
                at,
            )),
            Box::new(Op::Metric(MetricId::new(0))),
            at,
        );
        let json = op_to_json(&op).unwrap();
        let back = op_from_json(&json, at).unwrap();
        assert_eq!(op_to_json(&back).unwrap(), json);
        assert_eq!(
            json.to_string(),
            r#"{"binary":"??","args":[{"call":"round","args":[{"binary":"/","args":[{"binary":"*","args":[{"binary":"*","args":[{"const":2.0},{"aggregate":0}]},{"aggregate":1}]},{"binary":"+","args":[{"aggregate":0},{"aggregate":1}]}]},{"const":3.0}]},{"metric":0}]}"#
        );
    }

    #[test]
    fn what_a_formula_cannot_hold_is_refused_both_ways() {
        let at = at();
        let records = Op::DatasetRecords(crate::ir::DatasetId::new(0));
        assert!(op_to_json(&records).is_none());
        for text in [
            r#"{"call": "no_such_function", "args": []}"#,
            r#"{"binary": "^", "args": [{"const": 1}, {"const": 2}]}"#,
            r#"{"if": [{"const": true}]}"#,
            r#"{"matcher": 1}"#,
            r#"[1, 2]"#,
        ] {
            let json: Json = serde_json::from_str(text).unwrap();
            assert!(op_from_json(&json, at).is_none(), "{text}");
        }
    }

    #[test]
    fn formulas_may_read_only_earlier_formulas() {
        let formula = |op| Formula {
            name: "m".into(),
            op,
            empty: None,
            tested: true,
        };
        let early = formula(Op::Aggregate(AggregateId::new(0)));
        let later = formula(Op::Metric(MetricId::new(0)));
        assert!(well_formed(&[early.clone(), later.clone()], 1));
        assert!(!well_formed(&[later, early.clone()], 1));
        assert!(!well_formed(&[early], 0));
    }
}
