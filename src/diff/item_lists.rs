//! Item-level changes as terminal text, Markdown and JSON. Text and Markdown
//! lists are capped (see [`crate::diff::page`]); JSON lists every item.

use std::fmt::Write as _;

use serde_json::{json, Value as Json};

use crate::base::markup::escape_markdown;
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

/// One list of an item-change group: its head in each form, and its entries.
struct List<'a> {
    text: String,
    markdown: String,
    len: usize,
    entries: Box<dyn Iterator<Item = String> + 'a>,
}

/// A group of lists under one heading. Added and removed items have no heading
/// of their own in text: each list is its own paragraph there.
struct Group<'a> {
    text: Option<&'static str>,
    markdown: &'static str,
    lists: Vec<List<'a>>,
}

/// The groups that changed, in the order both forms print them: what each says
/// is decided here once, and only the framing differs by form.
fn groups(items: &ItemChanges) -> Vec<Group<'_>> {
    let transitions = items.transitions.iter().map(|((from, to), k)| List {
        text: format!("  {from} → {to} ({}): ", k.len()),
        markdown: format!("- `{from} → {to}` ({}): ", k.len()),
        len: k.len(),
        entries: Box::new(keys(k)),
    });
    let flips = items.flips.iter().map(|f| {
        let change = format!("{} → {} ({})", value(f.from), value(f.to), f.keys.len());
        List {
            text: format!("  {}  {change}: ", f.name.name),
            markdown: format!("- `{}` {change}: ", f.name.name),
            len: f.keys.len(),
            entries: Box::new(keys(&f.keys)),
        }
    });
    let moves = items.moves.iter().map(|m| List {
        text: format!("  {} ({}): ", m.name.name, m.items.len()),
        markdown: format!("- `{}` ({}): ", m.name.name, m.items.len()),
        len: m.items.len(),
        entries: Box::new(m.items.iter().map(moved)),
    });
    let added_removed = [("added", &items.added), ("removed", &items.removed)]
        .into_iter()
        .filter(|(_, k)| !k.is_empty())
        .map(|(what, k)| List {
            text: format!("items {what} ({}): ", k.len()),
            markdown: format!("- {what} ({}): ", k.len()),
            len: k.len(),
            entries: Box::new(keys(k)),
        });
    let groups = [
        (
            Some("label transitions"),
            "**Label transitions**",
            transitions.collect(),
        ),
        (Some("flipped"), "**Flipped**", flips.collect()),
        (
            Some("moved, largest change first"),
            "**Moved**, largest change first",
            moves.collect(),
        ),
        (None, "**Items**", added_removed.collect::<Vec<_>>()),
    ];
    groups
        .into_iter()
        .filter(|(.., lists)| !lists.is_empty())
        .map(|(text, markdown, lists)| Group {
            text,
            markdown,
            lists,
        })
        .collect()
}

/// The sections of `items` that changed, as terminal text.
pub fn text(out: &mut Page, items: &ItemChanges) {
    for group in groups(items) {
        if let Some(heading) = group.text {
            let _ = writeln!(out, "\n{heading}");
        }
        for list in group.lists {
            if group.text.is_none() {
                let _ = writeln!(out);
            }
            out.list(
                &list.text,
                "      ",
                list.entries,
                list.len,
                TEXT_LIST,
                usize::MAX,
            );
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
    let groups = groups(items);
    let mut left: usize = groups.iter().map(|g| g.lists.len()).sum();
    for group in groups {
        let _ = writeln!(out, "\n{}\n", group.markdown);
        for list in group.lists {
            let share = out.room().saturating_sub(HEADINGS * left) / left.max(1);
            left -= 1;
            // Keys, labels and names are data: inert in a PR comment.
            let entries = list.entries.map(|e| escape_markdown(&e));
            out.list(
                &escape_markdown(&list.markdown),
                "  ",
                entries,
                list.len,
                usize::MAX,
                share,
            );
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
