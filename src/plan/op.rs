//! Compiled expressions: typed operations over resolved slots. No names, no syntax.

use std::sync::Arc;

use crate::builtins::Builtin;
use crate::matchers::Matcher;
use crate::syntax::BinaryOp;
use crate::value::Value;

#[derive(Debug)]
pub enum Op {
    Const(Value),
    /// A projected field of a dataset's record (null when the item has no record).
    Slot {
        dataset: usize,
        slot: usize,
    },
    /// A per-item field or matcher computed earlier in the plan.
    Derived(usize),
    /// An aggregate's result (metrics only).
    Aggregate(usize),
    /// Another metric's value (metrics and gates).
    Metric(usize),
    /// `baseline.NAME`: a metric's value in the baseline run (gates only; null
    /// without a baseline).
    Baseline(usize),
    /// `records(dataset)`: how many records the dataset kept (metrics only).
    DatasetRecords(usize),
    /// `base.name` on a value read whole.
    Field(Box<Op>, Arc<str>),
    Index(Box<Op>, Box<Op>),
    Not(Box<Op>),
    Neg(Box<Op>),
    Binary(BinaryOp, Box<Op>, Box<Op>),
    List(Vec<Op>),
    Call(&'static Builtin, Vec<Op>),
    /// `if(condition, then, else)`, evaluated lazily.
    If(Box<Op>, Box<Op>, Box<Op>),
    Matcher(Arc<Matcher>, Vec<Op>),
    /// A dataset path before projection assigns it a slot; none survive compilation.
    Path {
        dataset: usize,
        path: Vec<String>,
    },
}

impl Op {
    /// Visits this op and every op inside it, mutably.
    pub fn walk_mut(&mut self, f: &mut impl FnMut(&mut Op)) {
        f(self);
        match self {
            Op::Field(a, _) | Op::Not(a) | Op::Neg(a) => a.walk_mut(f),
            Op::Index(a, b) | Op::Binary(_, a, b) => {
                a.walk_mut(f);
                b.walk_mut(f);
            }
            Op::If(a, b, c) => {
                a.walk_mut(f);
                b.walk_mut(f);
                c.walk_mut(f);
            }
            Op::List(items) | Op::Call(_, items) | Op::Matcher(_, items) => {
                items.iter_mut().for_each(|op| op.walk_mut(f));
            }
            Op::Const(_)
            | Op::Slot { .. }
            | Op::Derived(_)
            | Op::Aggregate(_)
            | Op::Metric(_)
            | Op::Baseline(_)
            | Op::DatasetRecords(_)
            | Op::Path { .. } => {}
        }
    }
}
