//! A comparison as terminal text, Markdown (a PR comment) or JSON.

use std::fmt::Write as _;

use serde_json::{json, Value as Json};

use crate::diff::{Comparison, Direction, MetricChange};
use crate::report_model::GateStatus;

fn show(value: &Json) -> String {
    match value {
        Json::Null => "n/a".into(),
        Json::Number(n) if n.is_i64() || n.is_u64() => n.to_string(),
        Json::Number(n) => format!("{:.4}", n.as_f64().unwrap_or(f64::NAN)),
        other => other.to_string(),
    }
}

fn delta(change: &MetricChange) -> String {
    match change.delta {
        None => "".into(),
        Some(d) if change.old.is_i64() && change.new.is_i64() => format!("{d:+}"),
        Some(d) => format!("{d:+.4}"),
    }
}

fn relative(change: &MetricChange) -> String {
    change
        .relative
        .map_or_else(String::new, |r| format!("{:+.2}%", 100.0 * r))
}

fn verdict(change: &MetricChange) -> String {
    match change.direction {
        Direction::Unchanged => "unchanged".into(),
        Direction::Moved => "changed".into(),
        Direction::Improved => "improved".into(),
        Direction::WorseWithinTolerance => {
            format!("worse, within tolerance {}", change.tolerance)
        }
        Direction::Regressed => "REGRESSED".into(),
        Direction::Added => "new metric".into(),
        Direction::Removed => "removed".into(),
    }
}

fn spec_line(c: &Comparison) -> String {
    let id = |s: &crate::diff::SpecId| {
        format!(
            "{} {} (sha256 {})",
            s.name,
            s.version,
            s.sha256.get(..12).unwrap_or(&s.sha256)
        )
    };
    if c.spec.changed() {
        format!("{} → {}", id(&c.spec.old), id(&c.spec.new))
    } else {
        format!("{}, unchanged", id(&c.spec.new))
    }
}

/// Terminal text; `colour` adds ANSI colours (red for regressions, green for
/// improvements).
pub fn text(c: &Comparison, colour: bool) -> String {
    let paint = |code: &str, s: &str| {
        if colour {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    };
    let mut out = String::new();
    let _ = writeln!(out, "evalspec diff: {} → {}", c.old, c.new);
    let _ = writeln!(out, "spec: {}", spec_line(c));
    if c.spec.version_changed() {
        let _ = writeln!(
            out,
            "{}",
            paint(
                "33",
                &format!(
                    "warning: the runs used different specs ({} {} → {} {}); changes may come from the spec",
                    c.spec.old.name, c.spec.old.version, c.spec.new.name, c.spec.new.version
                )
            )
        );
    }
    if c.unchanged() {
        let _ = writeln!(out, "no change");
        return out;
    }
    let width = c
        .metrics
        .iter()
        .map(|m| m.name.len())
        .chain(c.gates.iter().map(|g| g.name.len()))
        .max()
        .unwrap_or(0);
    let moved: Vec<&MetricChange> = c
        .metrics
        .iter()
        .filter(|m| m.direction != Direction::Unchanged)
        .collect();
    if !moved.is_empty() {
        let _ = writeln!(out, "\nmetrics");
        for m in moved {
            let verdict = verdict(m);
            let verdict = match m.direction {
                Direction::Regressed => paint("31", &verdict),
                Direction::Improved => paint("32", &verdict),
                _ => verdict,
            };
            let _ = writeln!(
                out,
                "  {:width$}  {} → {}  {} {}  {verdict}",
                m.name,
                show(&m.old),
                show(&m.new),
                delta(m),
                relative(m),
            );
        }
    }
    let flipped: Vec<_> = c.gates.iter().filter(|g| g.changed()).collect();
    if !flipped.is_empty() {
        let _ = writeln!(out, "\ngates");
        for g in flipped {
            let line = format!(
                "  {:width$}  {} → {}",
                g.name,
                g.old.map_or("(none)", GateStatus::keyword),
                g.new.map_or("(none)", GateStatus::keyword)
            );
            let _ = writeln!(
                out,
                "{}",
                if g.regressed() {
                    paint("31", &line)
                } else {
                    line
                }
            );
        }
    }
    let counts: Vec<_> = c.labels.iter().filter(|l| l.old != l.new).collect();
    if !counts.is_empty() {
        let _ = writeln!(out, "\nlabel counts");
        for l in counts {
            let n = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
            let _ = writeln!(out, "  {}  {} → {}", l.label, n(l.old), n(l.new));
        }
    }
    match &c.items {
        None => {
            let _ = writeln!(out, "\nitems: not compared (a run has no items.jsonl)");
        }
        Some(items) => {
            if !items.transitions.is_empty() {
                let _ = writeln!(out, "\nlabel transitions");
                for ((from, to), keys) in &items.transitions {
                    let _ = writeln!(out, "  {from} → {to} ({}): {}", keys.len(), keys.join(", "));
                }
            }
            if !items.added.is_empty() {
                let _ = writeln!(
                    out,
                    "\nitems added ({}): {}",
                    items.added.len(),
                    items.added.join(", ")
                );
            }
            if !items.removed.is_empty() {
                let _ = writeln!(
                    out,
                    "\nitems removed ({}): {}",
                    items.removed.len(),
                    items.removed.join(", ")
                );
            }
        }
    }
    if let Some(unified) = &c.spec.unified {
        let _ = writeln!(out, "\nspec diff");
        for line in unified.lines() {
            let painted = match line.as_bytes().first() {
                Some(b'+') if !line.starts_with("+++") => paint("32", line),
                Some(b'-') if !line.starts_with("---") => paint("31", line),
                _ => line.to_string(),
            };
            let _ = writeln!(out, "{painted}");
        }
    }
    if c.regressed() {
        let _ = writeln!(out, "\n{}", paint("31", "regressed"));
    }
    out
}

/// Markdown for a pull-request comment.
pub fn markdown(c: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "### evalspec diff\n");
    let _ = writeln!(out, "`{}` → `{}`\n", c.old, c.new);
    let _ = writeln!(out, "**Spec:** {}\n", spec_line(c));
    if c.spec.version_changed() {
        let _ = writeln!(
            out,
            "> ⚠ The runs used different specs ({} {} → {} {}); changes may come from the spec.\n",
            c.spec.old.name, c.spec.old.version, c.spec.new.name, c.spec.new.version
        );
    }
    if c.unchanged() {
        let _ = writeln!(out, "No change.");
        return out;
    }
    let _ = writeln!(out, "| metric | old | new | Δ | Δ% | |");
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---|");
    for m in &c.metrics {
        let mark = match m.direction {
            Direction::Regressed => "✗ regressed".to_string(),
            Direction::Improved => "✓ improved".to_string(),
            Direction::Unchanged => String::new(),
            _ => verdict(m),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {mark} |",
            m.name,
            show(&m.old),
            show(&m.new),
            delta(m),
            relative(m)
        );
    }
    let flipped: Vec<_> = c.gates.iter().filter(|g| g.changed()).collect();
    if !flipped.is_empty() {
        let _ = writeln!(out, "\n**Gates that changed**\n");
        let _ = writeln!(out, "| gate | old | new |");
        let _ = writeln!(out, "|---|---|---|");
        for g in flipped {
            let _ = writeln!(
                out,
                "| {} | {} | {}{} |",
                g.name,
                g.old.map_or("—", GateStatus::keyword),
                g.new.map_or("—", GateStatus::keyword),
                if g.regressed() { " ✗" } else { "" }
            );
        }
    }
    if let Some(items) = &c.items {
        if !items.transitions.is_empty() {
            let _ = writeln!(out, "\n**Label transitions**\n");
            for ((from, to), keys) in &items.transitions {
                let _ = writeln!(
                    out,
                    "- `{from} → {to}` ({}): {}",
                    keys.len(),
                    keys.join(", ")
                );
            }
        }
        if !items.added.is_empty() || !items.removed.is_empty() {
            let list = |keys: &[String]| {
                if keys.is_empty() {
                    "none".to_string()
                } else {
                    keys.join(", ")
                }
            };
            let _ = writeln!(
                out,
                "\n**Items** added: {}; removed: {}",
                list(&items.added),
                list(&items.removed)
            );
        }
    } else {
        let _ = writeln!(out, "\n_Items not compared: a run has no items.jsonl._");
    }
    if let Some(unified) = &c.spec.unified {
        let _ = writeln!(
            out,
            "\n<details><summary>Spec diff</summary>\n\n```diff\n{}```\n</details>",
            unified
        );
    }
    if c.regressed() {
        let _ = writeln!(out, "\n**Regressed.**");
    }
    out
}

/// The comparison as JSON.
pub fn json(c: &Comparison) -> String {
    let metrics: Vec<Json> = c
        .metrics
        .iter()
        .map(|m| {
            json!({
                "name": m.name,
                "old": m.old,
                "new": m.new,
                "delta": m.delta,
                "relative": m.relative,
                "better": m.better,
                "tolerance": m.tolerance,
                "change": m.direction.keyword(),
            })
        })
        .collect();
    let gates: Vec<Json> = c
        .gates
        .iter()
        .map(|g| json!({"name": g.name, "old": g.old, "new": g.new, "changed": g.changed(), "regressed": g.regressed()}))
        .collect();
    let labels: Vec<Json> = c
        .labels
        .iter()
        .map(|l| json!({"label": l.label, "old": l.old, "new": l.new}))
        .collect();
    let items = c.items.as_ref().map(|i| {
        json!({
            "transitions": i.transitions.iter().map(|((from, to), keys)| json!({"from": from, "to": to, "keys": keys})).collect::<Vec<_>>(),
            "added": i.added,
            "removed": i.removed,
        })
    });
    let id =
        |s: &crate::diff::SpecId| json!({"name": s.name, "version": s.version, "sha256": s.sha256});
    let value = json!({
        "old": c.old,
        "new": c.new,
        "spec": {
            "old": id(&c.spec.old),
            "new": id(&c.spec.new),
            "changed": c.spec.changed(),
            "version_changed": c.spec.version_changed(),
            "diff": c.spec.unified,
        },
        "unchanged": c.unchanged(),
        "regressed": c.regressed(),
        "metrics": metrics,
        "gates": gates,
        "labels": labels,
        "items": items,
    });
    let mut text = serde_json::to_string_pretty(&value).expect("JSON values serialise");
    text.push('\n');
    text
}
