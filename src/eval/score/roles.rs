//! How each aggregate's observations reach its accumulator, decided once per
//! evaluation: folded item by item, or counted from its column of item values
//! once a part's items are all in (a count's or ratio's whose observations the
//! item values keep, in no slice: a loop over a column's bytes instead of a
//! call per item and aggregate).

use crate::eval::state::item_values::ValueTable;
use crate::ir::AggregateId;
use crate::library::aggregates::AggregateFn;
use crate::plan::Plan;

/// Decided once per plan ([`Roles::of`]); an evaluation's states borrow it.
#[derive(Debug)]
pub struct Roles {
    /// The aggregates folded item by item, in plan order.
    pub(in crate::eval) folded: Vec<usize>,
    /// Per aggregate counted from its column: the aggregate and its column.
    pub(in crate::eval) counted: Vec<(usize, usize)>,
    /// Per aggregate, whether it is one of `counted`: an item's observation
    /// of it is its byte in `Score::flags`, not in `Score::contributions`.
    pub(in crate::eval) flagged: Vec<bool>,
    /// Per aggregate: the slices that also fold it, and where in each
    /// slice's accumulators.
    pub(in crate::eval) routes: Vec<Vec<(usize, usize)>>,
}

impl Roles {
    pub fn of(plan: &Plan) -> Self {
        let mut routes = vec![Vec::new(); plan.aggregates.len()];
        for (s, slice) in plan.slices.iter().enumerate() {
            for (position, &a) in slice.aggregates.iter().enumerate() {
                routes[a].push((s, position));
            }
        }
        let values = ValueTable::new(plan);
        let (mut folded, mut counted) = (Vec::new(), Vec::new());
        for (a, aggregate) in plan.aggregates.iter().enumerate() {
            let column = match aggregate.function {
                AggregateFn::Count | AggregateFn::Ratio if routes[a].is_empty() => {
                    values.column_keeping(plan, AggregateId::new(a))
                }
                _ => None,
            };
            match column {
                Some(column) => counted.push((a, column)),
                None => folded.push(a),
            }
        }
        let mut flagged = vec![false; plan.aggregates.len()];
        counted.iter().for_each(|&(a, _)| flagged[a] = true);
        Roles {
            folded,
            counted,
            flagged,
            routes,
        }
    }
}
