//! The scalar built-in functions: functions of one item's values. Each row's
//! signature drives type checking and its `eval` evaluation; rows are part of the
//! table of callables (`callables.rs`).

use std::collections::HashSet;
use std::sync::Arc;

use crate::base::types::Type;
use crate::base::value::{python_strip, SetItem, Value};
use crate::library::error::RuntimeErrorKind;
use crate::library::page_spans;
use crate::library::ranking;

/// What an argument must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    Any,
    Bool,
    Int,
    Num,
    Str,
    List,
    /// A list or a string (`len`).
    Sized,
}

impl Param {
    pub fn accepts(self, ty: &Type) -> bool {
        let expected = match self {
            Param::Any => return true,
            Param::Bool => Type::Bool,
            Param::Int => Type::Int,
            Param::Num => Type::Float,
            Param::Str => Type::Str,
            Param::List => Type::list_of(Type::Any),
            Param::Sized => return Type::Str.accepts(ty) || Type::list_of(Type::Any).accepts(ty),
        };
        expected.accepts(ty)
    }

    pub fn describe(self) -> &'static str {
        match self {
            Param::Any => "any value",
            Param::Bool => "a bool",
            Param::Int => "an integer",
            Param::Num => "a number",
            Param::Str => "a string",
            Param::List => "a list",
            Param::Sized => "a list or a string",
        }
    }

    /// The run-time check matching [`Param::accepts`]; null is always let through
    /// to the function, which decides what null means.
    fn check(self, value: &Value) -> bool {
        match (self, value) {
            (Param::Any, _) | (_, Value::Null) => true,
            (Param::Bool, Value::Bool(_))
            | (Param::Str, Value::String(_))
            | (Param::List, Value::List(_)) => true,
            (Param::Num, Value::Number(_)) => true,
            (Param::Int, Value::Number(n)) => n.fract() == 0.0,
            (Param::Sized, Value::String(_) | Value::List(_)) => true,
            _ => false,
        }
    }
}

/// The result type of a call, from its argument types.
#[derive(Debug, Clone, Copy)]
pub enum Returns {
    Bool,
    Int,
    Num,
    Str,
    ListOfStr,
    ListOfNum,
    Any,
    /// The type of argument `n`.
    Arg(usize),
    /// The join of the types of arguments `a` and `b`.
    Join(usize, usize),
    /// A list of argument 0's elements.
    SameList,
}

/// An entry of the table; its signature drives type checking, `eval` evaluation.
pub struct Builtin {
    pub name: &'static str,
    pub params: &'static [Param],
    /// How many trailing params may be left out.
    pub optional: usize,
    pub returns: Returns,
    pub eval: fn(&[Value]) -> Result<Value, RuntimeErrorKind>,
    pub summary: &'static str,
    pub example: &'static str,
}

impl std::fmt::Debug for Builtin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.name)
    }
}

impl Builtin {
    pub fn return_type(&self, args: &[Type]) -> Type {
        let arg = |i: usize| args.get(i).cloned().unwrap_or(Type::Any);
        match self.returns {
            Returns::Bool => Type::Bool,
            Returns::Int => Type::Int,
            Returns::Num => Type::Float,
            Returns::Str => Type::Str,
            Returns::ListOfStr => Type::list_of(Type::Str),
            Returns::ListOfNum => Type::list_of(Type::Float),
            Returns::Any => Type::Any,
            Returns::Arg(i) => arg(i),
            Returns::Join(a, b) => arg(a).join(&arg(b)),
            Returns::SameList => match arg(0) {
                Type::List(element) => Type::List(element),
                _ => Type::list_of(Type::Any),
            },
        }
    }

    /// Checks the arguments' run-time types, then applies the function.
    pub fn call(&self, args: &[Value]) -> Result<Value, RuntimeErrorKind> {
        for (i, (param, value)) in self.params.iter().zip(args).enumerate() {
            if !param.check(value) {
                return Err(RuntimeErrorKind::ArgumentType {
                    position: i + 1,
                    function: self.name,
                    expected: param.describe(),
                    found: value.clone(),
                });
            }
        }
        (self.eval)(args)
    }
}

pub fn lookup(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

use Param as P;

pub static BUILTINS: &[Builtin] = &[
    Builtin { name: "lower", params: &[P::Str], optional: 0, returns: Returns::Str, eval: lower, summary: "lower-cases a string (Unicode, as Python's `str.lower`); null stays null", example: "lower(\"Not In Context\") == \"not in context\"" },
    Builtin { name: "upper", params: &[P::Str], optional: 0, returns: Returns::Str, eval: upper, summary: "upper-cases a string; null stays null", example: "upper(\"ok\") == \"OK\"" },
    Builtin { name: "trim", params: &[P::Str], optional: 0, returns: Returns::Str, eval: trim, summary: "removes leading and trailing whitespace (Python's `str.strip`); null stays null", example: "trim(\"  x \") == \"x\"" },
    Builtin { name: "len", params: &[P::Sized], optional: 0, returns: Returns::Int, eval: len, summary: "number of list elements, or of characters in a string; null has length 0", example: "len([1, 2]) == 2" },
    Builtin { name: "take", params: &[P::List, P::Int], optional: 0, returns: Returns::SameList, eval: take, summary: "the first n elements, as Python's `xs[:n]` (a negative n drops elements from the end); null is an empty list", example: "take([\"a\", \"b\", \"c\"], 2) == [\"a\", \"b\"]" },
    Builtin { name: "subset", params: &[P::List, P::List], optional: 0, returns: Returns::Bool, eval: subset, summary: "every element of the first list is in the second (null is an empty list)", example: "subset([\"p1\"], [\"p1\", \"p2\"])" },
    Builtin { name: "overlap", params: &[P::List, P::List], optional: 0, returns: Returns::Bool, eval: overlap, summary: "the lists share at least one element", example: "overlap([\"p1\", \"p3\"], [\"p3\"])" },
    Builtin { name: "intersect", params: &[P::List, P::List], optional: 0, returns: Returns::SameList, eval: intersect, summary: "distinct elements of the first list that are in the second, in first-list order", example: "intersect([\"a\", \"b\"], [\"b\"]) == [\"b\"]" },
    Builtin { name: "union", params: &[P::List, P::List], optional: 0, returns: Returns::SameList, eval: union, summary: "distinct elements of both lists, first list first", example: "union([\"a\"], [\"b\", \"a\"]) == [\"a\", \"b\"]" },
    Builtin { name: "unique", params: &[P::List], optional: 0, returns: Returns::SameList, eval: unique, summary: "distinct elements, in first-seen order", example: "unique([1, 1, 2]) == [1, 2]" },
    Builtin { name: "set_equal", params: &[P::List, P::List], optional: 0, returns: Returns::Bool, eval: set_equal, summary: "the lists hold the same distinct elements, in any order", example: "set_equal([\"b\", \"a\"], [\"a\", \"b\"])" },
    Builtin { name: "contains", params: &[P::Str, P::Str], optional: 0, returns: Returns::Bool, eval: contains, summary: "the string contains the substring (case-sensitive)", example: "contains(\"example.com\", \".com\")" },
    Builtin { name: "starts_with", params: &[P::Str, P::Str], optional: 0, returns: Returns::Bool, eval: starts_with, summary: "the string starts with the prefix", example: "starts_with(\"p1#2\", \"p1\")" },
    Builtin { name: "ends_with", params: &[P::Str, P::Str], optional: 0, returns: Returns::Bool, eval: ends_with, summary: "the string ends with the suffix", example: "ends_with(\"p1#2\", \"#2\")" },
    Builtin { name: "split", params: &[P::Str, P::Str], optional: 0, returns: Returns::ListOfStr, eval: split, summary: "splits a string on a separator", example: "split(\"a,b\", \",\") == [\"a\", \"b\"]" },
    Builtin { name: "join", params: &[P::List, P::Str], optional: 0, returns: Returns::Str, eval: join, summary: "joins strings with a separator", example: "join([\"a\", \"b\"], \"+\") == \"a+b\"" },
    Builtin { name: "str", params: &[P::Any], optional: 0, returns: Returns::Str, eval: to_str, summary: "a value as text (strings unchanged, others as JSON)", example: "str(3) == \"3\"" },
    Builtin { name: "pystr", params: &[P::Any], optional: 0, returns: Returns::Str, eval: pystr, summary: "a value as Python's `str` writes it (`None`, `True`, `1`, `1.5`, `['a', 1]`); whole numbers print without a fraction", example: "pystr(null) == \"None\"" },
    Builtin { name: "pystr_each", params: &[P::List], optional: 0, returns: Returns::ListOfStr, eval: pystr_each, summary: "each element through `pystr`; null stays null", example: "pystr_each([1, \"a\"]) == [\"1\", \"a\"]" },
    Builtin { name: "trim_each", params: &[P::List], optional: 0, returns: Returns::SameList, eval: trim_each, summary: "each string element trimmed as `trim` does; other elements unchanged; null stays null", example: "trim_each([\" a \", \"b\"]) == [\"a\", \"b\"]" },
    Builtin { name: "num", params: &[P::Any], optional: 0, returns: Returns::Num, eval: to_num, summary: "a number, or a string parsed as one; null stays null", example: "num(\"2.5\") == 2.5" },
    Builtin { name: "abs", params: &[P::Num], optional: 0, returns: Returns::Arg(0), eval: abs, summary: "absolute value", example: "abs(-2) == 2" },
    Builtin { name: "round", params: &[P::Num, P::Int], optional: 1, returns: Returns::Num, eval: round, summary: "rounds half to even to the given number of decimals (default 0), as Python's `round`", example: "round(0.125, 2) == 0.12" },
    Builtin { name: "least", params: &[P::Num, P::Num], optional: 0, returns: Returns::Join(0, 1), eval: least, summary: "the smaller of two numbers", example: "least(3, 5) == 3" },
    Builtin { name: "greatest", params: &[P::Num, P::Num], optional: 0, returns: Returns::Join(0, 1), eval: greatest, summary: "the larger of two numbers", example: "greatest(3, 5) == 5" },
    Builtin { name: "is_list", params: &[P::Any], optional: 0, returns: Returns::Bool, eval: is_list, summary: "the value is a list", example: "is_list(trace.citations)" },
    Builtin { name: "is_string", params: &[P::Any], optional: 0, returns: Returns::Bool, eval: is_string, summary: "the value is a string", example: "is_string(trace.answer)" },
    Builtin { name: "is_number", params: &[P::Any], optional: 0, returns: Returns::Bool, eval: is_number, summary: "the value is a number", example: "is_number(trace.latency_ms)" },
    Builtin { name: "is_bool", params: &[P::Any], optional: 0, returns: Returns::Bool, eval: is_bool, summary: "the value is true or false", example: "is_bool(gold.answerable)" },
    Builtin { name: "is_null", params: &[P::Any], optional: 0, returns: Returns::Bool, eval: is_null, summary: "the value is null or missing", example: "is_null(trace)" },
    Builtin { name: "truthy", params: &[P::Any], optional: 0, returns: Returns::Bool, eval: truthy, summary: "Python truthiness: false for null, false, 0, \"\", [] and {}", example: "truthy(trace.citations)" },
    Builtin { name: "relevance", params: &[P::List, P::Any], optional: 0, returns: Returns::ListOfNum, eval: ranking::relevance, summary: "the judged level of each ranked id (0 if unjudged or negative, as trec_eval; a repeated id gains at its first rank only)", example: "relevance(run.docs, qrels.judgements)" },
    Builtin { name: "count_relevant", params: &[P::Any], optional: 0, returns: Returns::Int, eval: ranking::count_relevant, summary: "judged ids with level ≥ 1", example: "count_relevant(qrels.judgements)" },
    Builtin { name: "ideal_gains", params: &[P::Any], optional: 0, returns: Returns::ListOfNum, eval: ranking::ideal_gains, summary: "the positive judged levels, best first", example: "ideal_gains(qrels.judgements)" },
    Builtin { name: "precision_at", params: &[P::List, P::Int], optional: 0, returns: Returns::Num, eval: ranking::precision_at, summary: "relevant ids in the top k, over k", example: "precision_at(gains, 10)" },
    Builtin { name: "recall_at", params: &[P::List, P::Num, P::Int], optional: 0, returns: Returns::Num, eval: ranking::recall_at, summary: "relevant ids in the top k, over all relevant (0 when none)", example: "recall_at(gains, relevant, 10)" },
    Builtin { name: "success_at", params: &[P::List, P::Int], optional: 0, returns: Returns::Num, eval: ranking::success_at, summary: "1 when any of the top k is relevant, else 0", example: "success_at(gains, 5)" },
    Builtin { name: "reciprocal_rank", params: &[P::List], optional: 0, returns: Returns::Num, eval: ranking::reciprocal_rank, summary: "1 / rank of the first relevant id, else 0", example: "reciprocal_rank(gains)" },
    Builtin { name: "reciprocal_rank_at", params: &[P::List, P::Int], optional: 0, returns: Returns::Num, eval: ranking::reciprocal_rank_at, summary: "reciprocal rank within the top k", example: "reciprocal_rank_at(gains, 10)" },
    Builtin { name: "average_precision", params: &[P::List, P::Num], optional: 0, returns: Returns::Num, eval: ranking::average_precision, summary: "mean precision at the relevant ranks, over all relevant (0 when none)", example: "average_precision(gains, relevant)" },
    Builtin { name: "average_precision_at", params: &[P::List, P::Num, P::Int], optional: 0, returns: Returns::Num, eval: ranking::average_precision_at, summary: "average precision within the top k", example: "average_precision_at(gains, relevant, 10)" },
    Builtin { name: "ndcg_at", params: &[P::List, P::List, P::Int], optional: 0, returns: Returns::Num, eval: ranking::ndcg_at, summary: "DCG of the top k over the ideal DCG (gain = level, discount log2(rank+1)); 0 when nothing is relevant", example: "ndcg_at(gains, ideal, 10)" },
    Builtin { name: "ndcg_exp_at", params: &[P::List, P::List, P::Int], optional: 0, returns: Returns::Num, eval: ranking::ndcg_exp_at, summary: "as ndcg_at with gain 2^level − 1", example: "ndcg_exp_at(gains, ideal, 10)" },
    Builtin { name: "span_relevance", params: &[P::List, P::List, P::Any], optional: 0, returns: Returns::ListOfNum, eval: page_spans::span_relevance, summary: "per rank, 1 when the hit matches a gold span: same doc_id and pages overlapping within the tolerance (null: same document only)", example: "span_relevance(ranked, questions.gold, 0)" },
    Builtin { name: "span_credit", params: &[P::List, P::List, P::Any], optional: 0, returns: Returns::ListOfNum, eval: page_spans::span_credit, summary: "per rank, 1 when the hit is credited to a not yet credited gold span (each gold span at most once)", example: "span_credit(ranked, questions.gold, 0)" },
    Builtin { name: "spans_ordered", params: &[P::List], optional: 0, returns: Returns::Bool, eval: page_spans::spans_ordered, summary: "every span has start_page <= end_page", example: "spans_ordered(gold)" },
    Builtin { name: "order_by", params: &[P::List, P::List], optional: 0, returns: Returns::SameList, eval: order_by, summary: "objects sorted by the named fields (\"-field\" for descending), stably; numbers and strings compare as in Python", example: "order_by(hits, [\"-score\", \"doc_id\"])" },
    Builtin { name: "pluck", params: &[P::List, P::Str], optional: 0, returns: Returns::Any, eval: pluck, summary: "the named field of each object in a list", example: "pluck(ranked, \"chunk_id\")" },
    Builtin { name: "repeat", params: &[P::Any, P::Int], optional: 0, returns: Returns::Any, eval: repeat, summary: "a list of n copies of a value", example: "repeat(1, 3) == [1, 1, 1]" },
    Builtin { name: "ranks_where", params: &[P::List], optional: 0, returns: Returns::Any, eval: ranks_where, summary: "the 1-based positions whose value is true or ≥ 1", example: "ranks_where([0, 1, 1]) == [2, 3]" },
    Builtin { name: "truthy_or", params: &[P::Any, P::Any], optional: 0, returns: Returns::Join(0, 1), eval: truthy_or, summary: "the first value if it is truthy, else the second (Python's `a or b`)", example: "truthy_or(trace.qid, trace.q_id)" },
];

fn null_or<F: FnOnce(&str) -> Value>(value: &Value, f: F) -> Value {
    match value {
        Value::String(s) => f(s),
        _ => Value::Null,
    }
}

fn list(value: &Value) -> &[Value] {
    match value {
        Value::List(items) => items,
        _ => &[],
    }
}

fn string(value: &Value) -> &str {
    match value {
        Value::String(s) => s,
        _ => "",
    }
}

fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => Some(*n),
        _ => None,
    }
}

fn lower(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(null_or(&a[0], |s| Value::from(s.to_lowercase().as_str())))
}
fn upper(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(null_or(&a[0], |s| Value::from(s.to_uppercase().as_str())))
}
fn trim(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(match &a[0] {
        Value::String(s) if python_strip(s).len() == s.len() => a[0].clone(),
        other => null_or(other, |s| Value::from(python_strip(s))),
    })
}
fn len(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::Number(match &a[0] {
        Value::String(s) => s.chars().count() as f64,
        other => list(other).len() as f64,
    }))
}
fn take(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    let items = list(&a[0]);
    let n = number(&a[1]).unwrap_or(0.0);
    let end = if n >= 0.0 {
        (n as usize).min(items.len())
    } else {
        items.len().saturating_sub((-n) as usize)
    };
    Ok(Value::List(Arc::from(&items[..end])))
}

/// Membership in `haystack`, by Python equality; hashing only pays off for long lists.
fn member_test(haystack: &[Value]) -> impl Fn(&Value) -> bool + '_ {
    let set: Option<HashSet<SetItem<'_>>> =
        (haystack.len() > 16).then(|| haystack.iter().map(SetItem).collect());
    move |needle| match &set {
        Some(set) => set.contains(&SetItem(needle)),
        None => haystack.iter().any(|h| h == needle),
    }
}

fn distinct(items: impl Iterator<Item = Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

fn subset(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    let within = member_test(list(&a[1]));
    Ok(Value::Bool(list(&a[0]).iter().all(within)))
}
fn overlap(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    let within = member_test(list(&a[1]));
    Ok(Value::Bool(list(&a[0]).iter().any(within)))
}
fn intersect(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    let within = member_test(list(&a[1]));
    Ok(Value::list(distinct(
        list(&a[0]).iter().filter(|v| within(v)).cloned(),
    )))
}
fn union(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::list(distinct(
        list(&a[0]).iter().chain(list(&a[1])).cloned(),
    )))
}
fn unique(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::list(distinct(list(&a[0]).iter().cloned())))
}
fn set_equal(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    let (x, y) = (list(&a[0]), list(&a[1]));
    Ok(Value::Bool(
        x.iter().all(member_test(y)) && y.iter().all(member_test(x)),
    ))
}
fn contains(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::Bool(string(&a[0]).contains(string(&a[1]))))
}
fn starts_with(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::Bool(string(&a[0]).starts_with(string(&a[1]))))
}
fn ends_with(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::Bool(string(&a[0]).ends_with(string(&a[1]))))
}
fn split(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    if a[0].is_null() {
        return Ok(Value::list(Vec::new()));
    }
    let separator = string(&a[1]);
    if separator.is_empty() {
        return Err(RuntimeErrorKind::SplitEmptySeparator);
    }
    Ok(Value::list(
        string(&a[0]).split(separator).map(Value::from).collect(),
    ))
}
fn join(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    let parts: Result<Vec<&str>, RuntimeErrorKind> = list(&a[0])
        .iter()
        .map(|v| match v {
            Value::String(s) => Ok(&**s),
            other => Err(RuntimeErrorKind::JoinNeedsStrings {
                found: other.clone(),
            }),
        })
        .collect();
    Ok(Value::from(parts?.join(string(&a[1])).as_str()))
}
fn to_str(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(match &a[0] {
        Value::String(_) => a[0].clone(),
        other => Value::from(other.to_string().as_str()),
    })
}
fn python_text(value: &Value) -> Value {
    match value {
        Value::String(_) => value.clone(),
        other => Value::from(crate::base::value::python_str(other).as_str()),
    }
}
/// `f` applied to each element of a list argument; null stays null.
fn each(value: &Value, f: impl Fn(&Value) -> Value) -> Value {
    match value {
        Value::Null => Value::Null,
        other => Value::list(list(other).iter().map(f).collect()),
    }
}
fn pystr(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(python_text(&a[0]))
}
fn pystr_each(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(each(&a[0], python_text))
}
fn trim_each(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(each(&a[0], |v| match v {
        Value::String(s) => Value::from(python_strip(s)),
        other => other.clone(),
    }))
}
fn to_num(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(match &a[0] {
        Value::Null => Value::Null,
        Value::Number(_) => a[0].clone(),
        Value::Bool(b) => Value::Number(f64::from(u8::from(*b))),
        Value::String(s) => s.trim().parse::<f64>().map(Value::Number).map_err(|_| {
            RuntimeErrorKind::NumCannotRead {
                found: a[0].clone(),
            }
        })?,
        other => {
            return Err(RuntimeErrorKind::NumCannotConvert {
                found: other.clone(),
            })
        }
    })
}
fn abs(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(number(&a[0]).map_or(Value::Null, |n| Value::Number(n.abs())))
}
fn round(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    // Past ±1100 digits every f64 rounds to itself (or to zero): the same answer.
    let digits = a
        .get(1)
        .and_then(number)
        .unwrap_or(0.0)
        .clamp(-1100.0, 1100.0) as i32;
    Ok(number(&a[0]).map_or(Value::Null, |n| Value::Number(round_half_even(n, digits))))
}

/// Python's `round(x, digits)`: the exact binary value rounded half to even.
/// Rust's fixed-precision formatting rounds exactly that way, so it does the work.
pub fn round_half_even(x: f64, digits: i32) -> f64 {
    if !x.is_finite() {
        return x;
    }
    if digits < -308 {
        // 10^309 overflows, and every finite f64 is below half of it: Python gives ±0.
        return x * 0.0;
    }
    if digits < 0 {
        let scale = 10f64.powi(-digits);
        return round_half_even(x / scale, 0) * scale;
    }
    format!("{:.*}", digits as usize, x).parse().unwrap_or(x)
}

fn least(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(match (number(&a[0]), number(&a[1])) {
        (Some(x), Some(y)) => Value::Number(x.min(y)),
        _ => Value::Null,
    })
}
fn greatest(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(match (number(&a[0]), number(&a[1])) {
        (Some(x), Some(y)) => Value::Number(x.max(y)),
        _ => Value::Null,
    })
}
fn order_by(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    let keys: Vec<(bool, &str)> = list(&a[1])
        .iter()
        .map(|k| match k {
            Value::String(k) => Ok(k
                .strip_prefix('-')
                .map_or((false, &**k), |name| (true, name))),
            other => Err(RuntimeErrorKind::OrderByKeyNotName {
                found: other.clone(),
            }),
        })
        .collect::<Result<_, _>>()?;
    let items = list(&a[0]);
    let mut rows: Vec<(Vec<Value>, &Value)> = Vec::with_capacity(items.len());
    for item in items {
        let Value::Object(_) = item else {
            return Err(RuntimeErrorKind::OrderByNotObject {
                found: item.clone(),
            });
        };
        rows.push((
            keys.iter()
                .map(|(_, k)| item.field(k))
                .collect::<Result<_, _>>()?,
            item,
        ));
    }
    // Each key column must hold one comparable kind, as Python's sort requires.
    for (column, (_, name)) in keys.iter().enumerate() {
        let kinds: HashSet<&str> = rows
            .iter()
            .map(|(values, _)| values[column].type_name())
            .collect();
        if kinds.len() > 1 || kinds.iter().any(|k| !matches!(*k, "number" | "string")) {
            return Err(RuntimeErrorKind::OrderByMixedField {
                field: name.to_string(),
            });
        }
    }
    rows.sort_by(|(x, _), (y, _)| {
        keys.iter().zip(x.iter().zip(y)).fold(
            std::cmp::Ordering::Equal,
            |order, ((descending, _), (a, b))| {
                order.then_with(|| {
                    let o = match (a, b) {
                        (Value::Number(a), Value::Number(b)) => a.total_cmp(b),
                        (Value::String(a), Value::String(b)) => a.cmp(b),
                        _ => std::cmp::Ordering::Equal,
                    };
                    if *descending {
                        o.reverse()
                    } else {
                        o
                    }
                })
            },
        )
    });
    Ok(Value::list(
        rows.into_iter().map(|(_, item)| item.clone()).collect(),
    ))
}
fn pluck(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    let name = string(&a[1]);
    Ok(Value::list(
        list(&a[0])
            .iter()
            .map(|item| item.field(name))
            .collect::<Result<_, _>>()?,
    ))
}
/// The longest list a built-in builds (`repeat`): larger would exhaust memory
/// rather than mean anything for one item.
pub const MAX_LIST: usize = 1_000_000;

fn repeat(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    let n = number(&a[1]).unwrap_or(0.0).max(0.0);
    if n > MAX_LIST as f64 {
        return Err(RuntimeErrorKind::ListTooLong {
            function: "repeat",
            length: n,
        });
    }
    Ok(Value::list(vec![a[0].clone(); n as usize]))
}
fn ranks_where(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    let hit =
        |v: &Value| matches!(v, Value::Bool(true)) || matches!(v, Value::Number(n) if *n >= 1.0);
    Ok(Value::list(
        list(&a[0])
            .iter()
            .enumerate()
            .filter(|(_, v)| hit(v))
            .map(|(i, _)| Value::Number((i + 1) as f64))
            .collect(),
    ))
}
fn is_list(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::Bool(matches!(a[0], Value::List(_))))
}
fn is_string(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::Bool(matches!(a[0], Value::String(_))))
}
fn is_number(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::Bool(matches!(a[0], Value::Number(_))))
}
fn is_bool(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::Bool(matches!(a[0], Value::Bool(_))))
}
fn is_null(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::Bool(a[0].is_null()))
}
fn truthy(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(Value::Bool(a[0].truthy()))
}
fn truthy_or(a: &[Value]) -> Result<Value, RuntimeErrorKind> {
    Ok(if a[0].truthy() {
        a[0].clone()
    } else {
        a[1].clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, args: Vec<Value>) -> Value {
        lookup(name).unwrap().call(&args).unwrap()
    }

    fn strs(items: &[&str]) -> Value {
        Value::list(items.iter().map(|s| Value::from(*s)).collect())
    }

    #[test]
    fn round_takes_any_number_of_digits_as_python_does() {
        let round = |x: f64, d: f64| call("round", vec![Value::Number(x), Value::Number(d)]);
        // Python: round(1.5, 65536) == 1.5; round(12345.5, -400) == 0.0.
        assert_eq!(round(1.5, 65536.0), Value::Number(1.5));
        assert_eq!(round(12345.5, -400.0), Value::Number(0.0));
        assert_eq!(round(12345.5, -2.0), Value::Number(12300.0));
        assert_eq!(round(0.125, 2.0), Value::Number(0.12));
    }

    #[test]
    fn repeat_refuses_lists_past_the_limit() {
        let repeat = |n: f64| {
            lookup("repeat")
                .unwrap()
                .call(&[Value::Number(1.0), Value::Number(n)])
        };
        assert_eq!(
            repeat(3.0).unwrap(),
            Value::list(vec![Value::Number(1.0); 3])
        );
        let error = repeat(1e9).unwrap_err();
        assert!(matches!(
            error,
            RuntimeErrorKind::ListTooLong {
                function: "repeat",
                ..
            }
        ));
    }

    #[test]
    fn take_follows_python_slicing() {
        let xs = strs(&["a", "b", "c"]);
        assert_eq!(
            call("take", vec![xs.clone(), 2.0.into()]),
            strs(&["a", "b"])
        );
        assert_eq!(call("take", vec![xs.clone(), 9.0.into()]), xs);
        assert_eq!(
            call("take", vec![xs.clone(), (-1.0).into()]),
            strs(&["a", "b"])
        );
        assert_eq!(call("take", vec![Value::Null, 2.0.into()]), strs(&[]));
    }

    #[test]
    fn set_functions_use_python_equality() {
        assert_eq!(
            call("subset", vec![strs(&[]), Value::Null]),
            Value::Bool(true)
        );
        assert_eq!(
            call("overlap", vec![strs(&["a", "b"]), strs(&["b"])]),
            Value::Bool(true)
        );
        let many: Vec<Value> = (0..40).map(|i| Value::Number(f64::from(i))).collect();
        assert_eq!(
            call(
                "subset",
                vec![Value::list(vec![Value::Bool(true)]), Value::list(many)]
            ),
            Value::Bool(true)
        );
        assert_eq!(
            call("set_equal", vec![strs(&["a", "b", "a"]), strs(&["b", "a"])]),
            Value::Bool(true)
        );
        assert_eq!(
            call("intersect", vec![strs(&["a", "b", "a"]), strs(&["a"])]),
            strs(&["a"])
        );
    }

    #[test]
    fn order_by_sorts_stably_by_several_keys() {
        let hit = |score: f64, doc: &str, chunk: &str| {
            Value::Object(
                vec![
                    ("score".into(), score.into()),
                    ("doc_id".into(), doc.into()),
                    ("chunk_id".into(), chunk.into()),
                ]
                .into(),
            )
        };
        let hits = Value::list(vec![
            hit(0.5, "B", "c1"),
            hit(0.9, "A", "c2"),
            hit(0.5, "A", "c3"),
            hit(0.5, "A", "c0"),
        ]);
        let keys = strs(&["-score", "doc_id"]);
        let ordered = call("order_by", vec![hits, keys]);
        // Ties on (score, doc_id) keep their input order: c3 before c0.
        assert_eq!(
            call("pluck", vec![ordered, "chunk_id".into()]),
            strs(&["c2", "c3", "c0", "c1"])
        );
        let mixed = Value::list(vec![
            hit(0.5, "A", "c"),
            Value::Object(vec![("score".into(), "x".into())].into()),
        ]);
        assert!(lookup("order_by")
            .unwrap()
            .call(&[mixed, strs(&["score"])])
            .is_err());
    }

    #[test]
    fn ranks_and_repeats() {
        let flags = Value::list(vec![0.0.into(), 1.0.into(), Value::Bool(true)]);
        assert_eq!(
            call("ranks_where", vec![flags]),
            Value::list(vec![2.0.into(), 3.0.into()])
        );
        assert_eq!(
            call("repeat", vec![1.0.into(), 2.0.into()]),
            Value::list(vec![1.0.into(), 1.0.into()])
        );
    }

    #[test]
    fn runtime_argument_types_are_checked() {
        let err = lookup("trim")
            .unwrap()
            .call(&[Value::Number(5.0)])
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "argument 1 of `trim` must be a string, found number 5"
        );
    }

    #[test]
    fn round_is_half_even_on_exact_values() {
        assert_eq!(round_half_even(0.125, 2), 0.12);
        assert_eq!(round_half_even(0.375, 2), 0.38);
        assert_eq!(round_half_even(2.675, 2), 2.67); // 2.675 is 2.67499999… in binary
        assert_eq!(round_half_even(2.5, 0), 2.0);
        assert_eq!(round_half_even(-0.125, 2), -0.12);
    }
}
