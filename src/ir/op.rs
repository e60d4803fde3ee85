//! Compiled expressions: typed operations over resolved slots. No names, no syntax.

use std::fmt;
use std::sync::Arc;

use crate::base::value::Value;
use crate::ir::ids::{AggregateId, DatasetId, DerivedId, ExprAt, MetricId, Slot};
use crate::library::builtins::Builtin;
use crate::library::matchers::Matcher;
use crate::library::run_stats::RunStat;
use crate::syntax::BinaryOp;

/// What the references of an op are at one stage of compilation. The evaluator
/// sees only [`Linked`] ops; the compiler's declared references are a stage of
/// their own, so nothing before linking looks like the runtime program.
pub trait Stage: Clone + fmt::Debug {
    /// A value read from a dataset's record.
    type Input: Clone + fmt::Debug;
    /// A per-item value computed earlier in the plan.
    type Derived: Copy + fmt::Debug + PartialEq;
    type Metric: Copy + fmt::Debug + PartialEq;
    type Dataset: Copy + fmt::Debug + PartialEq;
}

/// The stage the evaluator runs: every reference resolved to its slot.
#[derive(Debug, Clone)]
pub struct Linked;

impl Stage for Linked {
    type Input = Slot;
    type Derived = DerivedId;
    type Metric = MetricId;
    type Dataset = DatasetId;
}

#[derive(Debug, Clone)]
pub enum Op<S: Stage = Linked> {
    Const(Value),
    /// A projected field of a dataset's record (null when the item has no record).
    Input(S::Input),
    /// A per-item field or matcher computed earlier in the plan.
    Derived(S::Derived),
    /// An aggregate's result (metrics only).
    Aggregate(AggregateId),
    /// Another metric's value (metrics and gates).
    Metric(S::Metric),
    /// `baseline.NAME`: a metric's value in the baseline report (gates only; null
    /// without a baseline).
    Baseline(S::Metric),
    /// `records(dataset)`: how many records the dataset kept (metrics only).
    DatasetRecords(S::Dataset),
    /// `run_min(metric)` and kin: a per-run metric summarised over the runs.
    RunStat(RunStat, S::Metric),
    // The ops below can fail; each carries where its expression is written.
    /// `base.name` on a value read whole.
    Field(Box<Op<S>>, Arc<str>, ExprAt),
    Index(Box<Op<S>>, Box<Op<S>>, ExprAt),
    Not(Box<Op<S>>, ExprAt),
    Neg(Box<Op<S>>, ExprAt),
    Binary(BinaryOp, Box<Op<S>>, Box<Op<S>>, ExprAt),
    List(Vec<Op<S>>),
    Call(&'static Builtin, Vec<Op<S>>, ExprAt),
    /// `if(condition, then, else)`, evaluated lazily.
    If(Box<Op<S>>, Box<Op<S>>, Box<Op<S>>, ExprAt),
    Matcher(Arc<Matcher>, Vec<Op<S>>, ExprAt),
}

impl<S: Stage> Op<S> {
    /// Visits this op and every op inside it.
    pub fn walk(&self, f: &mut impl FnMut(&Op<S>)) {
        f(self);
        match self {
            Op::Field(a, ..) | Op::Not(a, _) | Op::Neg(a, _) => a.walk(f),
            Op::Index(a, b, _) | Op::Binary(_, a, b, _) => {
                a.walk(f);
                b.walk(f);
            }
            Op::If(a, b, c, _) => {
                a.walk(f);
                b.walk(f);
                c.walk(f);
            }
            Op::List(items) | Op::Call(_, items, _) | Op::Matcher(_, items, _) => {
                items.iter().for_each(|op| op.walk(f));
            }
            Op::Const(_)
            | Op::Input(_)
            | Op::Derived(_)
            | Op::Aggregate(_)
            | Op::Metric(_)
            | Op::Baseline(_)
            | Op::DatasetRecords(_)
            | Op::RunStat(..) => {}
        }
    }

    /// The same op at another stage: `refs` maps each reference.
    pub fn map<T: Stage>(self, refs: &impl Relink<S, T>) -> Op<T> {
        let map = |op: Box<Op<S>>| Box::new(op.map(refs));
        let map_all = |ops: Vec<Op<S>>| ops.into_iter().map(|op| op.map(refs)).collect();
        match self {
            Op::Const(value) => Op::Const(value),
            Op::Input(input) => refs.input(input),
            Op::Derived(d) => Op::Derived(refs.derived(d)),
            Op::Aggregate(a) => Op::Aggregate(a),
            Op::Metric(m) => Op::Metric(refs.metric(m)),
            Op::Baseline(m) => Op::Baseline(refs.metric(m)),
            Op::DatasetRecords(d) => Op::DatasetRecords(refs.dataset(d)),
            Op::RunStat(stat, m) => Op::RunStat(stat, refs.metric(m)),
            Op::Field(base, name, at) => Op::Field(map(base), name, at),
            Op::Index(base, index, at) => Op::Index(map(base), map(index), at),
            Op::Not(a, at) => Op::Not(map(a), at),
            Op::Neg(a, at) => Op::Neg(map(a), at),
            Op::Binary(op, a, b, at) => Op::Binary(op, map(a), map(b), at),
            Op::List(items) => Op::List(map_all(items)),
            Op::Call(builtin, args, at) => Op::Call(builtin, map_all(args), at),
            Op::If(a, b, c, at) => Op::If(map(a), map(b), map(c), at),
            Op::Matcher(matcher, inputs, at) => Op::Matcher(matcher, map_all(inputs), at),
        }
    }
}

impl Op {
    /// Whether two ops compute the same thing from the same inputs: the same
    /// tree, wherever each is written (their `ExprAt`s are not compared). The
    /// evaluator computes such ops once per item.
    pub fn same(&self, other: &Op) -> bool {
        let all =
            |a: &[Op], b: &[Op]| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same(y));
        match (self, other) {
            (Op::Const(a), Op::Const(b)) => {
                std::mem::discriminant(a) == std::mem::discriminant(b) && a == b
            }
            (Op::Input(a), Op::Input(b)) => a == b,
            (Op::Derived(a), Op::Derived(b)) => a == b,
            (Op::Aggregate(a), Op::Aggregate(b)) => a == b,
            (Op::Metric(a), Op::Metric(b)) | (Op::Baseline(a), Op::Baseline(b)) => a == b,
            (Op::DatasetRecords(a), Op::DatasetRecords(b)) => a == b,
            (Op::RunStat(s, a), Op::RunStat(t, b)) => s == t && a == b,
            (Op::Field(a, x, _), Op::Field(b, y, _)) => x == y && a.same(b),
            (Op::Index(a, i, _), Op::Index(b, j, _)) => a.same(b) && i.same(j),
            (Op::Not(a, _), Op::Not(b, _)) | (Op::Neg(a, _), Op::Neg(b, _)) => a.same(b),
            (Op::Binary(o, a, c, _), Op::Binary(p, b, d, _)) => o == p && a.same(b) && c.same(d),
            (Op::List(a), Op::List(b)) => all(a, b),
            (Op::Call(f, a, _), Op::Call(g, b, _)) => std::ptr::eq(*f, *g) && all(a, b),
            (Op::If(a, b, c, _), Op::If(x, y, z, _)) => a.same(x) && b.same(y) && c.same(z),
            (Op::Matcher(m, a, _), Op::Matcher(n, b, _)) => Arc::ptr_eq(m, n) && all(a, b),
            _ => false,
        }
    }
}

/// How the references of one stage become those of the next (linking).
pub trait Relink<S: Stage, T: Stage> {
    /// An input may become a whole op (a slot and the fields read inside it).
    fn input(&self, input: S::Input) -> Op<T>;
    fn derived(&self, derived: S::Derived) -> T::Derived;
    fn metric(&self, metric: S::Metric) -> T::Metric;
    fn dataset(&self, dataset: S::Dataset) -> T::Dataset;
}
