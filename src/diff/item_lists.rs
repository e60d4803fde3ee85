//! Item-level changes as terminal text, Markdown and JSON. Text and Markdown
//! lists are capped (see [`crate::diff::page`]); JSON lists every item.

use std::fmt::Write as _;

use serde_json::{json, Value as Json};

use crate::diff::page::{self, Page, TEXT_LIST};
use crate::diff::{ItemChanges, Move};
use crate::inputs::prior_items::ItemValue;

/// A per-item value as printed: integers as integers, other numbers with four
/// decimals (as metrics are), `null` and `-` for a value the item lacks.
pub fn value(value: ItemValue) -> String {
    match value {
        ItemValue::Bool(b) => b.to_string(),
        ItemValue::Int(i) => i.to_string(),
        ItemValue::Float(f) => format!("{f:.4}"),
        ItemValue::Null => "null".into(),
        ItemValue::Missing | ItemValue::Other => "-".into(),
    }
}

fn moved(m: &Move) -> String {
    format!("{} {} → {}", page::key(&m.key), value(m.old), value(m.new))
}

fn keys(keys: &[String]) -> impl Iterator<Item = String> + '_ {
    keys.iter().map(|k| page::key(k))
}

/// The sections of `items` that changed, as terminal text.
pub fn text(out: &mut Page, items: &ItemChanges) {
    let list = |out: &mut Page, head: String, entries: &mut dyn Iterator<Item = String>, n| {
        out.list(&head, "      ", entries, n, TEXT_LIST, usize::MAX)
    };
    if !items.transitions.is_empty() {
        let _ = writeln!(out, "\nlabel transitions");
        for ((from, to), k) in &items.transitions {
            let head = format!("  {from} → {to} ({}): ", k.len());
            list(out, head, &mut keys(k), k.len());
        }
    }
    if !items.flips.is_empty() {
        let _ = writeln!(out, "\nflipped");
        for f in &items.flips {
            let head = format!(
                "  {}  {} → {} ({}): ",
                f.name.name,
                value(f.from),
                value(f.to),
                f.keys.len()
            );
            list(out, head, &mut keys(&f.keys), f.keys.len());
        }
    }
    if !items.moves.is_empty() {
        let _ = writeln!(out, "\nmoved, largest change first");
        for m in &items.moves {
            let head = format!("  {} ({}): ", m.name.name, m.items.len());
            list(out, head, &mut m.items.iter().map(moved), m.items.len());
        }
    }
    for (what, k) in [("added", &items.added), ("removed", &items.removed)] {
        if !k.is_empty() {
            let _ = writeln!(out);
            let head = format!("items {what} ({}): ", k.len());
            list(out, head, &mut keys(k), k.len());
        }
    }
    if out.cut() {
        let _ = writeln!(
            out,
            "\n(lists show at most {TEXT_LIST} items; `--format json` lists every item)"
        );
    }
}

/// Room kept per list still to come, for headings and blank lines.
const HEADINGS: usize = 80;

/// The sections of `items` that changed, as Markdown, within the page's budget.
/// Each list gets an equal share of the room left, so every group shows its
/// first entries; a short list leaves its share to those after it.
pub fn markdown(out: &mut Page, items: &ItemChanges) {
    let mut left = items.transitions.len()
        + items.flips.len()
        + items.moves.len()
        + usize::from(!items.added.is_empty())
        + usize::from(!items.removed.is_empty());
    let mut list = |out: &mut Page, head: String, entries: &mut dyn Iterator<Item = String>, n| {
        let share = out.room().saturating_sub(HEADINGS * left) / left.max(1);
        left = left.saturating_sub(1);
        out.list(&head, "  ", entries, n, usize::MAX, share)
    };
    if !items.transitions.is_empty() {
        let _ = writeln!(out, "\n**Label transitions**\n");
        for ((from, to), k) in &items.transitions {
            let head = format!("- `{from} → {to}` ({}): ", k.len());
            list(out, head, &mut keys(k), k.len());
        }
    }
    if !items.flips.is_empty() {
        let _ = writeln!(out, "\n**Flipped**\n");
        for f in &items.flips {
            let head = format!(
                "- `{}` {} → {} ({}): ",
                f.name.name,
                value(f.from),
                value(f.to),
                f.keys.len()
            );
            list(out, head, &mut keys(&f.keys), f.keys.len());
        }
    }
    if !items.moves.is_empty() {
        let _ = writeln!(out, "\n**Moved**, largest change first\n");
        for m in &items.moves {
            let head = format!("- `{}` ({}): ", m.name.name, m.items.len());
            list(out, head, &mut m.items.iter().map(moved), m.items.len());
        }
    }
    if !items.added.is_empty() || !items.removed.is_empty() {
        let _ = writeln!(out, "\n**Items**\n");
        for (what, k) in [("added", &items.added), ("removed", &items.removed)] {
            if !k.is_empty() {
                let head = format!("- {what} ({}): ", k.len());
                list(out, head, &mut keys(k), k.len());
            }
        }
    }
}

/// Every item-level change, uncut.
pub fn json(items: &ItemChanges) -> Json {
    let transitions: Vec<Json> = items
        .transitions
        .iter()
        .map(|((from, to), keys)| json!({"from": from, "to": to, "keys": keys}))
        .collect();
    let flips: Vec<Json> = items
        .flips
        .iter()
        .map(|f| {
            json!({
                "name": f.name.name,
                "kind": f.name.kind(),
                "from": f.from.to_json(),
                "to": f.to.to_json(),
                "keys": f.keys,
            })
        })
        .collect();
    let moves: Vec<Json> = items
        .moves
        .iter()
        .map(|m| {
            let items: Vec<Json> = m
                .items
                .iter()
                .map(|i| {
                    json!({
                        "key": i.key,
                        "old": i.old.to_json(),
                        "new": i.new.to_json(),
                        "delta": i.delta,
                    })
                })
                .collect();
            json!({"name": m.name.name, "kind": m.name.kind(), "items": items})
        })
        .collect();
    json!({
        "transitions": transitions,
        "flips": flips,
        "moves": moves,
        "added": items.added,
        "removed": items.removed,
    })
}
