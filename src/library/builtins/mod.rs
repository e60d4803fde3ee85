//! The scalar built-in functions: functions of one item's values. Each row's
//! signature drives type checking and its `eval` evaluation; rows are part of the
//! table of callables (`callables.rs`).

use crate::base::types::Type;
use crate::base::value::Value;
use crate::library::error::RuntimeErrorKind;
use crate::library::page_spans;
use crate::library::ranking;

mod kinds;
mod lists;
mod numbers;
mod text;

use kinds::*;
use lists::*;
use numbers::*;
use text::*;

pub use lists::MAX_LIST;
pub use numbers::round_half_even;
pub use text::{check_text, MAX_TEXT};

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
    /// Numbers, as many as are given (only last): `least(a, b, …)`.
    Nums,
}

impl Param {
    pub fn accepts(self, ty: &Type) -> bool {
        let expected = match self {
            Param::Any => return true,
            Param::Bool => Type::Bool,
            Param::Int => Type::Int,
            Param::Num | Param::Nums => Type::Float,
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
            Param::Num | Param::Nums => "a number",
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
            (Param::Num | Param::Nums, Value::Number(_)) => true,
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
    /// The join of the types of every argument.
    JoinAll,
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
    pub eval: fn(&[&Value]) -> Result<Value, RuntimeErrorKind>,
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
            Returns::JoinAll => args
                .iter()
                .skip(1)
                .fold(arg(0), |joined, ty| joined.join(ty)),
            Returns::SameList => match arg(0) {
                Type::List(element) => Type::List(element),
                _ => Type::list_of(Type::Any),
            },
        }
    }

    /// Fewest and most arguments (`None`: any number, the last param repeating).
    pub fn arity(&self) -> (usize, Option<usize>) {
        let max = self.params.len();
        let repeats = self.params.last() == Some(&Param::Nums);
        (max - self.optional, (!repeats).then_some(max))
    }

    /// What argument `i` must be (the last param covers every argument after it).
    pub fn param(&self, i: usize) -> Param {
        self.params[i.min(self.params.len() - 1)]
    }

    /// Checks the arguments' run-time types, then applies the function.
    pub fn call(&self, args: &[&Value]) -> Result<Value, RuntimeErrorKind> {
        // A big integer is a number to a numeric parameter: as its float.
        let numeric = |i: usize| matches!(self.param(i), Param::Num | Param::Nums | Param::Int);
        if (0..args.len()).any(|i| matches!(args[i], Value::BigInt(_)) && numeric(i)) {
            let floats: Vec<Value> = (0..args.len())
                .map(|i| match numeric(i) {
                    true => args[i].clone().into_float(),
                    false => args[i].clone(),
                })
                .collect();
            return self.call(&floats.iter().collect::<Vec<_>>());
        }
        for (i, &value) in args.iter().enumerate() {
            let param = self.param(i);
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
    Builtin { name: "least", params: &[P::Num, P::Nums], optional: 0, returns: Returns::JoinAll, eval: least, summary: "the smallest of two or more numbers; null if any is null", example: "least(3, 5, 4) == 3" },
    Builtin { name: "greatest", params: &[P::Num, P::Nums], optional: 0, returns: Returns::JoinAll, eval: greatest, summary: "the largest of two or more numbers; null if any is null", example: "greatest(3, 5, 4) == 5" },
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

pub(super) fn null_or<F: FnOnce(&str) -> Value>(value: &Value, f: F) -> Value {
    match value {
        Value::String(s) => f(s),
        _ => Value::Null,
    }
}

pub(super) fn list(value: &Value) -> &[Value] {
    match value {
        Value::List(items) => items,
        _ => &[],
    }
}

pub(super) fn string(value: &Value) -> &str {
    match value {
        Value::String(s) => s,
        _ => "",
    }
}

/// `f` applied to each element of a list argument; null stays null.
pub(super) fn each(value: &Value, f: impl Fn(&Value) -> Value) -> Value {
    match value {
        Value::Null => Value::Null,
        other => Value::list(list(other).iter().map(f).collect()),
    }
}

pub(super) fn number(value: &Value) -> Option<f64> {
    value.as_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, args: Vec<Value>) -> Value {
        lookup(name)
            .unwrap()
            .call(&args.iter().collect::<Vec<_>>())
            .unwrap()
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
    fn least_and_greatest_take_two_or_more_numbers_and_null_wins() {
        let nums = |xs: &[f64]| xs.iter().map(|&x| Value::Number(x)).collect::<Vec<_>>();
        assert_eq!(call("least", nums(&[3.0, 5.0])), Value::Number(3.0));
        assert_eq!(
            call("least", nums(&[3.0, 5.0, -1.0, 4.0])),
            Value::Number(-1.0)
        );
        assert_eq!(call("greatest", nums(&[3.0, 5.0, 4.0])), Value::Number(5.0));
        let mut with_null = nums(&[3.0, 5.0]);
        with_null.insert(1, Value::Null);
        assert_eq!(call("least", with_null.clone()), Value::Null);
        assert_eq!(call("greatest", with_null), Value::Null);
        let least = lookup("least").unwrap();
        assert_eq!(least.arity(), (2, None));
        assert_eq!(lookup("round").unwrap().arity(), (1, Some(2)));
        // Every argument past the second is checked as a number too.
        let error = least
            .call(&[&Value::Number(1.0), &Value::Number(2.0), &Value::from("x")])
            .unwrap_err();
        assert!(
            matches!(error, RuntimeErrorKind::ArgumentType { position: 3, .. }),
            "{error}"
        );
        let ints = least.return_type(&[Type::Int, Type::Int, Type::Int]);
        assert_eq!(ints, Type::Int);
        let mixed = least.return_type(&[Type::Int, Type::Float, Type::Int]);
        assert_eq!(mixed, Type::Float);
    }

    #[test]
    fn repeat_refuses_lists_past_the_limit() {
        let repeat = |n: f64| {
            lookup("repeat")
                .unwrap()
                .call(&[&Value::Number(1.0), &Value::Number(n)])
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
            .call(&[&mixed, &strs(&["score"])])
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
            .call(&[&Value::Number(5.0)])
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
