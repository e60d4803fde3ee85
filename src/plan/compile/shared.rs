//! Common subexpressions of the aggregates (part of phase 6, linking): the
//! `where` filters and arguments that several aggregates repeat
//! (`ratio(j.gold == "c" where j.pred == "c")` and `count(j.pred == "c")`
//! share `j.pred == "c"`) are listed once, so that an item computes each once
//! however many metrics use it.

use crate::plan::{Aggregate, SharedExprs};

pub(super) fn shared_exprs(aggregates: &[Aggregate]) -> SharedExprs {
    let mut shared = SharedExprs::default();
    let place = |op: &Option<crate::ir::Op>, ops: &mut Vec<crate::ir::Op>| {
        let op = op.as_ref()?;
        Some(match ops.iter().position(|o| o.same(op)) {
            Some(at) => at,
            None => {
                ops.push(op.clone());
                ops.len() - 1
            }
        })
    };
    for aggregate in aggregates {
        let filter = place(&aggregate.filter, &mut shared.ops);
        let arg = place(&aggregate.arg, &mut shared.ops);
        shared.filter.push(filter);
        shared.arg.push(arg);
    }
    shared
}
