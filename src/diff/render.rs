//! A comparison as terminal text, Markdown (a PR comment) or JSON.

use std::fmt::Write as _;

use serde_json::{json, Value as Json};

use crate::base::markup::escape_markdown;
use crate::diff::item_lists;
use crate::diff::page::{Page, MARKDOWN_LIMIT};
use crate::diff::{Comparison, Direction, MetricChange, DEFAULT_SIGNIFICANCE};
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

/// `, significant (95% bound ≤ −0.010, one-sided p = 0.004, Holm p = 0.020,
/// McNemar, 212 items)` or `, within noise (…)`, for a change with a paired test.
fn noise_mark(c: &Comparison, change: &MetricChange) -> String {
    let alpha = c.significance.unwrap_or(DEFAULT_SIGNIFICANCE);
    match (&change.paired, change.significant(alpha)) {
        (Some(test), Some(significant)) => format!(
            ", {} ({}, {}, {} items)",
            if significant {
                "significant"
            } else {
                "within noise"
            },
            test.one_sided_text(),
            test.test_name(),
            test.items
        ),
        _ => String::new(),
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
    match (c.spec.changed(), c.params.is_empty()) {
        (true, _) => format!("{} → {}", id(&c.spec.old), id(&c.spec.new)),
        (false, true) => format!("{}, unchanged", id(&c.spec.new)),
        // The same spec text run with other params is not the same gate.
        (false, false) => format!("{}, unchanged, but run with other params", id(&c.spec.new)),
    }
}

/// A param's value in one run, or `-` when the run has no such param.
fn param(value: &Option<Json>) -> String {
    value
        .as_ref()
        .map_or_else(|| "-".to_string(), Json::to_string)
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
    let mut out = Page::new(None);
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
        return out.finish();
    }
    let width = c
        .metrics
        .iter()
        .map(|m| m.name.len())
        .chain(c.gates.iter().map(|g| g.name.len()))
        .chain(c.params.iter().map(|p| p.name.len()))
        .max()
        .unwrap_or(0);
    if !c.params.is_empty() {
        let _ = writeln!(out, "\nparams");
        for p in &c.params {
            let _ = writeln!(
                out,
                "  {:width$}  {} → {}",
                p.name,
                param(&p.old),
                param(&p.new)
            );
        }
    }
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
                "  {:width$}  {} → {}  {} {}  {verdict}{}",
                m.name,
                show(&m.old),
                show(&m.new),
                delta(m),
                relative(m),
                noise_mark(c, m),
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
        Some(items) => item_lists::text(&mut out, items),
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
    out.finish()
}

/// The most room item lists leave for the spec diff in Markdown.
const SPEC_DIFF_ROOM: usize = 10_000;

/// Markdown for a pull-request comment, of at most [`MARKDOWN_LIMIT`]
/// characters: rows and lists that do not fit are left out, and say so.
pub fn markdown(c: &Comparison) -> String {
    // Every name, path and value comes from the reports: inert in a PR
    // comment (no HTML, no @mention, no hidden character).
    let md = escape_markdown;
    let mut out = Page::new(Some(MARKDOWN_LIMIT));
    let _ = writeln!(out, "### evalspec diff\n");
    let _ = writeln!(out, "`{}` → `{}`\n", md(&c.old), md(&c.new));
    let _ = writeln!(out, "**Spec:** {}\n", md(&spec_line(c)));
    if c.spec.version_changed() {
        let (old, new) = (&c.spec.old, &c.spec.new);
        let _ = writeln!(
            out,
            "> ⚠ The runs used different specs ({} {} → {} {}); changes may come from the spec.\n",
            md(&old.name),
            md(&old.version),
            md(&new.name),
            md(&new.version)
        );
    }
    if c.unchanged() {
        let _ = writeln!(out, "No change.");
        return out.finish();
    }
    if !c.params.is_empty() {
        let _ = writeln!(out, "| param | old | new |");
        let _ = writeln!(out, "|---|---|---|");
        for p in &c.params {
            let cell = |v: &Option<Json>| md(&param(v).replace('|', "\\|"));
            let _ = writeln!(
                out,
                "| {} | `{}` | `{}` |",
                md(&p.name),
                cell(&p.old),
                cell(&p.new)
            );
        }
        more(&mut out, "params");
        let _ = writeln!(out);
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
        let noise = match m.direction {
            Direction::Unchanged => String::new(),
            _ => noise_mark(c, m),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {mark}{noise} |",
            md(&m.name),
            show(&m.old),
            show(&m.new),
            delta(m),
            relative(m)
        );
    }
    more(&mut out, "metrics");
    let flipped: Vec<_> = c.gates.iter().filter(|g| g.changed()).collect();
    if !flipped.is_empty() {
        let _ = writeln!(out, "\n**Gates that changed**\n");
        let _ = writeln!(out, "| gate | old | new |");
        let _ = writeln!(out, "|---|---|---|");
        for g in flipped {
            let _ = writeln!(
                out,
                "| {} | {} | {}{} |",
                md(&g.name),
                g.old.map_or("—", GateStatus::keyword),
                g.new.map_or("—", GateStatus::keyword),
                if g.regressed() { " ✗" } else { "" }
            );
        }
        more(&mut out, "gates");
    }
    // Room kept for the spec diff, which comes after the items.
    let held = c
        .spec
        .unified
        .as_ref()
        .map_or(0, |u| (u.chars().count() + 100).min(SPEC_DIFF_ROOM));
    out.hold(held);
    match &c.items {
        Some(items) => item_lists::markdown(&mut out, items),
        None => {
            let _ = writeln!(out, "\n_Items not compared: a run has no items.jsonl._");
        }
    }
    out.release(held);
    if let Some(unified) = &c.spec.unified {
        // Opened only with room for some of it, so that it is always closed.
        if out.room() > 200 {
            // A fence longer than any run of backticks in the specs, so that
            // their text cannot close it.
            let fence = "`".repeat(longest_backticks(unified).max(2) + 1);
            out.close(&format!(
                "\n<details><summary>Spec diff</summary>\n\n{fence}diff\n"
            ));
            let _ = write!(out, "{}", md(unified));
            out.close(&format!("{fence}\n</details>\n"));
            more(&mut out, "lines of the spec diff");
        } else {
            out.left_out();
        }
    }
    if out.cut() {
        out.close(&format!(
            "\n_Cut to fit a comment ({MARKDOWN_LIMIT} characters): `evalspec diff --format json` lists everything._\n"
        ));
    }
    if c.regressed() {
        out.close("\n**Regressed.**\n");
    }
    out.finish()
}

/// The longest run of backticks in `text`.
fn longest_backticks(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// Says how many lines of a table or block were left out, if any.
fn more(out: &mut Page, what: &str) {
    let n = out.dropped();
    if n > 0 {
        out.close(&format!("\n… and {n} more {what}\n"));
    }
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
                "direction": m.direction.keyword(),
                "change": m.paired.as_ref().map(crate::report::stats::change_info),
            })
        })
        .collect();
    let gates: Vec<Json> = c
        .gates
        .iter()
        .map(|g| json!({"name": g.name, "old": g.old, "new": g.new, "changed": g.changed(), "regressed": g.regressed()}))
        .collect();
    let params: Vec<Json> = c
        .params
        .iter()
        .map(|p| json!({"name": p.name, "old": p.old, "new": p.new}))
        .collect();
    let labels: Vec<Json> = c
        .labels
        .iter()
        .map(|l| json!({"label": l.label, "old": l.old, "new": l.new}))
        .collect();
    let items = c.items.as_ref().map(item_lists::json);
    let (failed_metrics, failed_gates) = c.failed_by();
    let failed_by: Vec<Json> = (failed_metrics.iter())
        .map(|m| {
            let (metric, slice, run) = m.parts();
            json!({
                "metric": metric,
                "slice": slice.map(|(s, _)| s),
                "value": slice.map(|(_, v)| v),
                "run": run,
                "p_adjusted": m.paired.as_ref().and_then(|t| t.p_adjusted()),
            })
        })
        .chain(failed_gates.iter().map(|g| json!({"gate": g.name})))
        .collect();
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
        "failed_by": failed_by,
        "significance": c.significance,
        "params": params,
        "metrics": metrics,
        "gates": gates,
        "labels": labels,
        "items": items,
    });
    let mut text = serde_json::to_string_pretty(&value).expect("JSON values serialise");
    text.push('\n');
    text
}
