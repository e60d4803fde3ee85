//! Item-level changes between two runs: items are matched by run and key (items
//! sharing both in line order), then each matched pair is compared value by
//! value. Booleans that flipped are grouped by value and direction; numbers that
//! moved are grouped by value, largest absolute change first. Everything else is
//! in natural key order, so the same two runs give the same lists.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::base::natural::natural_cmp;
use crate::inputs::prior_items::{ItemValue, PriorItem, PriorItems, ValueName};

#[derive(Debug, Default, PartialEq)]
pub struct ItemChanges {
    /// `(old label, new label)` → keys, in natural key order; transitions in
    /// order of label pairs.
    pub transitions: Vec<((String, String), Vec<String>)>,
    /// Booleans (or nulls) that changed, by value in the new run's order, then by
    /// direction.
    pub flips: Vec<Flips>,
    /// Numbers that moved, by value in the new run's order.
    pub moves: Vec<Moves>,
    pub added: Vec<String>,
    pub removed: Vec<String>,
}

impl ItemChanges {
    pub fn is_empty(&self) -> bool {
        self.transitions.is_empty()
            && self.flips.is_empty()
            && self.moves.is_empty()
            && self.added.is_empty()
            && self.removed.is_empty()
    }
}

/// The items whose value `name` went from `from` to `to` (each a boolean or null).
#[derive(Debug, PartialEq)]
pub struct Flips {
    pub name: ValueName,
    pub from: ItemValue,
    pub to: ItemValue,
    /// In natural key order.
    pub keys: Vec<String>,
}

/// The items whose value `name` moved, largest absolute change first.
#[derive(Debug, PartialEq)]
pub struct Moves {
    pub name: ValueName,
    pub items: Vec<Move>,
}

#[derive(Debug, PartialEq)]
pub struct Move {
    pub key: String,
    /// A number on at least one side; the other may be null or a boolean.
    pub old: ItemValue,
    pub new: ItemValue,
    /// `new - old` when both are numbers.
    pub delta: Option<f64>,
}

/// An item as matched: its run, its key and how many items of that run and key
/// come before it (by line).
#[derive(Clone, Copy)]
struct Id<'a> {
    run: Option<&'a str>,
    key: &'a str,
    nth: usize,
}

impl Id<'_> {
    /// `KEY`, `KEY#2` for the second item with that key, `KEY@RUN` with runs.
    fn shown(&self) -> String {
        let mut s = self.key.to_string();
        if self.nth > 0 {
            s.push_str(&format!("#{}", self.nth + 1));
        }
        if let Some(run) = self.run {
            s.push('@');
            s.push_str(run);
        }
        s
    }

    /// Natural key order, then the repeat, then the run.
    fn natural(&self, other: &Id) -> Ordering {
        natural_cmp(self.key, other.key)
            .then(self.nth.cmp(&other.nth))
            .then_with(|| match (self.run, other.run) {
                (Some(a), Some(b)) => natural_cmp(a, b),
                (a, b) => a.cmp(&b),
            })
    }

    /// The order items are matched in (bytewise: cheaper than natural).
    fn matching(&self, other: &Id) -> Ordering {
        (self.run, self.key, self.nth).cmp(&(other.run, other.key, other.nth))
    }
}

/// Each item with its id, in matching order.
fn identified(items: &PriorItems) -> Vec<(Id<'_>, &PriorItem)> {
    let mut sorted: Vec<&PriorItem> = items.items.iter().collect();
    sorted.sort_by(|a, b| {
        (a.run.as_deref(), a.key.as_str(), a.line).cmp(&(b.run.as_deref(), b.key.as_str(), b.line))
    });
    let mut out: Vec<(Id, &PriorItem)> = Vec::with_capacity(sorted.len());
    for item in sorted {
        let nth = match out.last() {
            Some((id, _)) if id.run == item.run.as_deref() && id.key == item.key => id.nth + 1,
            _ => 0,
        };
        let id = Id {
            run: item.run.as_deref(),
            key: &item.key,
            nth,
        };
        out.push((id, item));
    }
    out
}

/// Which value of the old run each value of the new run is (by name).
fn pair_names(old: &PriorItems, new: &PriorItems) -> Vec<(usize, usize)> {
    new.names
        .iter()
        .enumerate()
        .filter_map(|(j, name)| old.names.iter().position(|n| n == name).map(|i| (i, j)))
        .collect()
}

/// How a value changed, when it changed in a way an item-level diff shows.
enum Change {
    Flip,
    Move(Option<f64>),
}

fn change(old: ItemValue, new: ItemValue) -> Option<Change> {
    use ItemValue::{Bool, Missing, Null, Other};
    match (old, new) {
        (Missing | Other, _) | (_, Missing | Other) => None,
        (Null | Bool(_), Null | Bool(_)) => (old != new).then_some(Change::Flip),
        _ => match (old.as_f64(), new.as_f64()) {
            (Some(x), Some(y)) if x == y => None,
            (Some(x), Some(y)) => Some(Change::Move(Some(y - x))),
            _ => Some(Change::Move(None)),
        },
    }
}

/// The items of a flip group, before they are sorted and shown.
struct Flipped<'a> {
    from: ItemValue,
    to: ItemValue,
    ids: Vec<Id<'a>>,
}

/// A move, before it is sorted and shown.
struct Moved<'a> {
    id: Id<'a>,
    old: ItemValue,
    new: ItemValue,
    delta: Option<f64>,
}

/// Directions in a fixed order: true → false first.
fn rank(value: ItemValue) -> u8 {
    match value {
        ItemValue::Bool(true) => 0,
        ItemValue::Bool(false) => 1,
        _ => 2,
    }
}

pub fn item_changes(old: &PriorItems, new: &PriorItems) -> ItemChanges {
    let (a, b) = (identified(old), identified(new));
    let names = pair_names(old, new);
    let mut removed: Vec<Id> = Vec::new();
    let mut added: Vec<Id> = Vec::new();
    let mut transitions: BTreeMap<(String, String), Vec<Id>> = BTreeMap::new();
    // Per new value index: flips by (from, to) and moves.
    let mut flips: BTreeMap<(usize, u8, u8), Flipped> = BTreeMap::new();
    let mut moves: BTreeMap<usize, Vec<Moved>> = BTreeMap::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let order = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => x.0.matching(&y.0),
            (Some(_), None) => Ordering::Less,
            _ => Ordering::Greater,
        };
        match order {
            Ordering::Less => {
                removed.push(a[i].0);
                i += 1;
                continue;
            }
            Ordering::Greater => {
                added.push(b[j].0);
                j += 1;
                continue;
            }
            Ordering::Equal => {}
        }
        let (id, x, y) = (b[j].0, a[i].1, b[j].1);
        (i, j) = (i + 1, j + 1);
        if x.label != y.label {
            let label = |l: &Option<String>| l.clone().unwrap_or_else(|| "(none)".into());
            transitions
                .entry((label(&x.label), label(&y.label)))
                .or_default()
                .push(id);
        }
        for &(p, q) in &names {
            let (u, v) = (x.value(p), y.value(q));
            match change(u, v) {
                None => {}
                Some(Change::Flip) => {
                    flips
                        .entry((q, rank(u), rank(v)))
                        .or_insert_with(|| Flipped {
                            from: u,
                            to: v,
                            ids: Vec::new(),
                        })
                        .ids
                        .push(id);
                }
                Some(Change::Move(delta)) => moves.entry(q).or_default().push(Moved {
                    id,
                    old: u,
                    new: v,
                    delta,
                }),
            }
        }
    }
    let shown = |mut ids: Vec<Id>| {
        ids.sort_by(|x, y| x.natural(y));
        ids.iter().map(Id::shown).collect::<Vec<_>>()
    };
    ItemChanges {
        transitions: transitions
            .into_iter()
            .map(|(pair, ids)| (pair, shown(ids)))
            .collect(),
        flips: flips
            .into_iter()
            .map(|((q, _, _), f)| Flips {
                name: new.names[q].clone(),
                from: f.from,
                to: f.to,
                keys: shown(f.ids),
            })
            .collect(),
        moves: moves
            .into_iter()
            .map(|(q, mut items)| {
                // Largest absolute change first; moves from or to a non-number last.
                items.sort_by(|x, y| {
                    let size = |d: Option<f64>| d.map(f64::abs);
                    match (size(x.delta), size(y.delta)) {
                        (Some(s), Some(t)) => t.total_cmp(&s),
                        (s, t) => t.is_some().cmp(&s.is_some()),
                    }
                    .then_with(|| x.id.natural(&y.id))
                });
                Moves {
                    name: new.names[q].clone(),
                    items: items
                        .into_iter()
                        .map(|m| Move {
                            key: m.id.shown(),
                            old: m.old,
                            new: m.new,
                            delta: m.delta,
                        })
                        .collect(),
                }
            })
            .collect(),
        added: shown(added),
        removed: shown(removed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ItemValue::{Bool, Float, Int, Null};

    /// Key, run, label and the values of `hit`, `score` and `refused`.
    type Row<'a> = (&'a str, Option<&'a str>, Option<&'a str>, [ItemValue; 3]);

    /// Items named `hit` (field), `score` (field), `refused` (matcher), in line order.
    fn side(items: &[Row]) -> PriorItems {
        let name = |name: &str, matcher| ValueName {
            name: name.into(),
            matcher,
        };
        PriorItems {
            names: vec![
                name("hit", false),
                name("score", false),
                name("refused", true),
            ],
            items: items
                .iter()
                .enumerate()
                .map(|(i, (key, run, label, values))| PriorItem {
                    key: key.to_string(),
                    line: i as u64 + 1,
                    run: run.map(str::to_string),
                    label: label.map(str::to_string),
                    values: values.to_vec(),
                })
                .collect(),
        }
    }

    fn keys(moves: &Moves) -> Vec<(&str, Option<f64>)> {
        moves
            .items
            .iter()
            .map(|m| (m.key.as_str(), m.delta))
            .collect()
    }

    #[test]
    fn flips_moves_transitions_added_and_removed() {
        let old = side(&[
            ("q1", None, Some("OK"), [Bool(true), Int(5), Bool(false)]),
            ("q2", None, Some("OK"), [Bool(true), Int(5), Bool(false)]),
            ("q3", None, Some("OK"), [Bool(true), Int(3), Bool(false)]),
            (
                "q10",
                None,
                Some("OK"),
                [Bool(true), Float(0.5), Bool(false)],
            ),
        ]);
        let new = side(&[
            (
                "q10",
                None,
                Some("OK"),
                [Bool(true), Float(0.5), Bool(true)],
            ),
            ("q2", None, Some("MISS"), [Bool(false), Int(4), Bool(false)]),
            ("q1", None, Some("OK"), [Bool(true), Int(5), Bool(false)]),
            ("q4", None, None, [Bool(true), Int(1), Bool(false)]),
        ]);
        let c = item_changes(&old, &new);
        assert_eq!(
            c.transitions,
            [(("OK".into(), "MISS".into()), vec!["q2".into()])]
        );
        let flips: Vec<(&str, &str, ItemValue, ItemValue, Vec<&str>)> = c
            .flips
            .iter()
            .map(|f| {
                let keys = f.keys.iter().map(String::as_str).collect();
                (f.name.name.as_str(), f.name.kind(), f.from, f.to, keys)
            })
            .collect();
        assert_eq!(
            flips,
            [
                ("hit", "field", Bool(true), Bool(false), vec!["q2"]),
                ("refused", "matcher", Bool(false), Bool(true), vec!["q10"]),
            ]
        );
        assert_eq!(c.moves.len(), 1);
        assert_eq!(c.moves[0].name.name, "score");
        assert_eq!(keys(&c.moves[0]), [("q2", Some(-1.0))]);
        assert_eq!(
            (c.moves[0].items[0].old, c.moves[0].items[0].new),
            (Int(5), Int(4))
        );
        assert_eq!(c.added, ["q4"]);
        assert_eq!(c.removed, ["q3"]);
        assert!(!c.is_empty());
        assert!(item_changes(&old, &old).is_empty());
    }

    #[test]
    fn the_largest_moves_come_first_and_ties_go_by_natural_key() {
        let item = |key, score| (key, None, None, [Bool(true), score, Bool(false)]);
        let old = side(&[
            item("q10", Int(5)),
            item("q9", Int(5)),
            item("q2", Int(1)),
            item("q1", Int(2)),
            item("q3", Null),
            item("q20", Float(0.25)),
        ]);
        let new = side(&[
            item("q10", Int(4)),
            item("q9", Int(6)),
            item("q2", Int(4)),
            item("q1", Int(2)),
            item("q3", Int(2)),
            item("q20", Float(0.5)),
        ]);
        let c = item_changes(&old, &new);
        assert_eq!(
            keys(&c.moves[0]),
            [
                ("q2", Some(3.0)),
                ("q9", Some(1.0)),
                ("q10", Some(-1.0)),
                ("q20", Some(0.25)),
                // A move from null has no size: after every sized one.
                ("q3", None),
            ]
        );
    }

    #[test]
    fn flips_group_by_direction_and_list_keys_in_natural_order() {
        let item = |key, hit| (key, None, None, [hit, Int(1), Bool(false)]);
        let old = side(&[
            item("b2", Bool(false)),
            item("a10", Bool(true)),
            item("a9", Bool(true)),
            item("c", Null),
        ]);
        let new = side(&[
            item("b2", Bool(true)),
            item("a10", Bool(false)),
            item("a9", Bool(false)),
            item("c", Bool(true)),
        ]);
        let c = item_changes(&old, &new);
        let groups: Vec<(ItemValue, ItemValue, &[String])> = c
            .flips
            .iter()
            .map(|f| (f.from, f.to, f.keys.as_slice()))
            .collect();
        assert_eq!(
            groups,
            [
                (
                    Bool(true),
                    Bool(false),
                    &["a9".to_string(), "a10".to_string()][..]
                ),
                (Bool(false), Bool(true), &["b2".to_string()][..]),
                (Null, Bool(true), &["c".to_string()][..]),
            ]
        );
    }

    #[test]
    fn runs_and_repeated_keys_are_matched_apart() {
        let item = |key, run, score| (key, Some(run), None, [Bool(true), Int(score), Bool(false)]);
        let old = side(&[
            item("q1", "seed1", 1),
            item("q1", "seed2", 1),
            item("q1", "seed2", 7),
            item("q2", "seed1", 1),
        ]);
        let new = side(&[
            item("q1", "seed2", 1),
            item("q1", "seed1", 2),
            item("q1", "seed2", 9),
            item("q2", "seed3", 1),
        ]);
        let c = item_changes(&old, &new);
        assert_eq!(
            keys(&c.moves[0]),
            [("q1#2@seed2", Some(2.0)), ("q1@seed1", Some(1.0))]
        );
        assert_eq!(c.added, ["q2@seed3"]);
        assert_eq!(c.removed, ["q2@seed1"]);
    }

    #[test]
    fn values_only_one_run_has_and_strings_are_not_compared() {
        let old = side(&[("q1", None, None, [ItemValue::Other, Int(1), Bool(true)])]);
        let mut new = side(&[("q1", None, None, [ItemValue::Other, Int(1), Bool(false)])]);
        // The new run names the matcher differently: nothing to compare it with.
        new.names[2].name = "declined".into();
        new.items[0].values.truncate(2);
        assert!(item_changes(&old, &new).is_empty());
    }
}
