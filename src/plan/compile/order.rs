//! Dependency order: fields and metrics may use each other in any declaration
//! order; they are evaluated in an order where each comes after what it reads.
//! Reads each declaration's dependencies; adds the order, or an error per cycle.

use crate::base::diagnostic::{Diagnostic, Location};
use crate::plan::compile::error::CompileError;

/// Declarations in dependency order, and where each declaration went.
#[derive(Debug)]
pub struct Ordered<T> {
    pub items: Vec<T>,
    /// By declaration position: the position in `items`.
    pub position: Vec<usize>,
}

impl<T> Default for Ordered<T> {
    fn default() -> Self {
        Ordered {
            items: Vec::new(),
            position: Vec::new(),
        }
    }
}

impl<T> Ordered<T> {
    /// `declared` put in `order` (declaration positions, first to last).
    pub fn new(declared: Vec<T>, order: &[usize]) -> Self {
        let mut position = vec![0; order.len()];
        for (new, &old) in order.iter().enumerate() {
            position[old] = new;
        }
        let mut slots: Vec<Option<T>> = declared.into_iter().map(Some).collect();
        let items = order
            .iter()
            .filter_map(|&old| slots.get_mut(old).and_then(Option::take))
            .collect();
        Ordered { items, position }
    }
}

/// A topological order of `deps` (declaration order among independent entries),
/// or `None` after reporting each cycle. Iterative, so a long chain of
/// declarations cannot exhaust the stack.
pub fn by_dependencies(
    names: &[String],
    deps: &[Vec<usize>],
    what: &'static str,
    locate: impl Fn(usize) -> Location,
    errors: &mut Vec<Diagnostic>,
) -> Option<Vec<usize>> {
    const NEW: u8 = 0;
    const ON_STACK: u8 = 1;
    const DONE: u8 = 2;
    let n = names.len();
    let mut state = vec![NEW; n];
    let mut order = Vec::with_capacity(n);
    let mut cycles: Vec<Vec<usize>> = Vec::new();
    // The path being explored: each entry and how many of its dependencies were seen.
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if state[root] != NEW {
            continue;
        }
        state[root] = ON_STACK;
        stack.push((root, 0));
        while let Some(&mut (i, ref mut next)) = stack.last_mut() {
            let Some(&d) = deps[i].get(*next) else {
                stack.pop();
                state[i] = DONE;
                order.push(i);
                continue;
            };
            *next += 1;
            match state[d] {
                NEW => {
                    state[d] = ON_STACK;
                    stack.push((d, 0));
                }
                ON_STACK => {
                    let start = stack.iter().position(|&(s, _)| s == d).unwrap_or(0);
                    cycles.push(stack[start..].iter().map(|&(s, _)| s).collect());
                }
                _ => {}
            }
        }
    }
    let mut reported = vec![false; n];
    let mut ok = true;
    for cycle in cycles {
        if cycle.iter().any(|&i| reported[i]) {
            continue;
        }
        cycle.iter().for_each(|&i| reported[i] = true);
        let kind = CompileError::Cycle {
            what,
            names: cycle.iter().map(|&i| names[i].clone()).collect(),
        };
        errors.push(Diagnostic::of(&kind).at(locate(cycle[0])));
        ok = false;
    }
    ok.then_some(order)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("m{i}")).collect()
    }

    fn at(_: usize) -> Location {
        Location::in_data("spec.yaml", 1, None)
    }

    #[test]
    fn dependencies_come_first_and_independent_entries_keep_their_order() {
        let deps = vec![vec![2], vec![], vec![1]];
        let mut errors = Vec::new();
        let order = by_dependencies(&names(3), &deps, "metric", at, &mut errors);
        assert_eq!(order, Some(vec![1, 2, 0]));
        let ordered = Ordered::new(vec!["a", "b", "c"], &[1, 2, 0]);
        assert_eq!(ordered.items, ["b", "c", "a"]);
        assert_eq!(ordered.position, [2, 0, 1]);
    }

    #[test]
    fn each_cycle_is_reported_once() {
        let deps = vec![vec![1], vec![0], vec![2]];
        let mut errors = Vec::new();
        assert_eq!(
            by_dependencies(&names(3), &deps, "field", at, &mut errors),
            None
        );
        let messages: Vec<String> = errors.iter().map(|e| e.message.clone()).collect();
        assert_eq!(
            messages,
            [
                "fields depend on each other in a cycle: m0 → m1 → m0",
                "field `m2` depends on itself"
            ]
        );
    }

    #[test]
    fn a_chain_of_a_hundred_thousand_does_not_exhaust_the_stack() {
        let n = 100_000;
        let deps: Vec<Vec<usize>> = (0..n)
            .map(|i| if i + 1 < n { vec![i + 1] } else { vec![] })
            .collect();
        let mut errors = Vec::new();
        let order = by_dependencies(&names(n), &deps, "metric", at, &mut errors).unwrap();
        assert_eq!(order[0], n - 1);
        assert_eq!(order[n - 1], 0);
    }
}
