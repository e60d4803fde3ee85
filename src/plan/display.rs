//! `evalspec check`: the plan in words — what is read, what is computed, in order.

use std::fmt::{self, Write as _};

use crate::base::typed_json::format_typed;
use crate::base::types::Type;
use crate::inputs::ReportPlanKind;
use crate::library::aggregates::AggregateFn;
use crate::plan::{DerivedKind, Plan};
use crate::spec::ParamType;

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "spec {} {} ({}): OK",
            self.spec_name, self.spec_version, self.spec_display
        );
        self.write_params(&mut out);
        self.write_datasets(&mut out);
        self.write_computed(&mut out);
        self.write_decided(&mut out);
        self.write_reports(&mut out);
        f.write_str(&out)
    }
}

impl Plan {
    fn write_params(&self, out: &mut String) {
        if !self.params.is_empty() {
            let _ = writeln!(out, "\nparams");
            for p in &self.params {
                let ty = if p.ty == ParamType::Integer {
                    Type::Int
                } else {
                    Type::Any
                };
                let origin = match (p.differs(), p.overridden, p.locked) {
                    (true, _, _) => format!(
                        " (overridden with --param; spec default {})",
                        format_typed(&p.default, &ty)
                    ),
                    (false, true, _) => " (from --param)".to_string(),
                    (false, false, true) => " (locked)".to_string(),
                    (false, false, false) => String::new(),
                };
                let _ = writeln!(
                    out,
                    "  {} = {} ({}){origin}",
                    p.name,
                    format_typed(&p.value, &ty),
                    p.ty.keyword()
                );
            }
        }
    }

    /// The datasets in plan order: what each reads and checks (the order
    /// they are read in is the physical plan's: `eval::PhysicalPlan`).
    fn write_datasets(&self, out: &mut String) {
        let _ = writeln!(out, "\ndatasets");
        for (i, d) in self.datasets.iter().enumerate() {
            let role = if i == self.items_dataset.index() {
                format!(
                    "items, one per record, duplicates {}",
                    d.duplicates.keyword()
                )
            } else {
                format!(
                    "looked up by key, {} join, duplicates {}",
                    d.join.keyword(),
                    d.duplicates.keyword()
                )
            };
            let _ = writeln!(
                out,
                "  {}. {} ({} {}): {role}",
                i + 1,
                d.name,
                d.format.keyword(),
                d.display_path
            );
            let _ = writeln!(out, "     key: {}", d.key_text);
            let _ = writeln!(out, "     reads: {}", d.projection.describe().join(", "));
            for rule in &d.rules {
                let opt = if rule.optional { "?" } else { "" };
                let nonempty = if rule.nonempty { ", non-empty" } else { "" };
                let _ = writeln!(
                    out,
                    "     checks: {}: {}{opt}{nonempty}",
                    rule.field, rule.ty
                );
            }
        }
    }

    /// Per-item values, aggregates and metrics, in the order they are computed.
    fn write_computed(&self, out: &mut String) {
        if !self.derived.is_empty() {
            let _ = writeln!(out, "\nper item, in order");
            for (i, d) in self.derived.iter().enumerate() {
                let kind = match d.kind {
                    DerivedKind::Field => "field",
                    DerivedKind::Matcher => "matcher",
                    DerivedKind::Label => "labels",
                };
                let _ = writeln!(out, "  {}. {kind} {}: {} = {}", i + 1, d.name, d.ty, d.text);
            }
        }
        if !self.aggregates.is_empty() {
            let _ = writeln!(out, "\naggregates, folded item by item");
            for (i, a) in self.aggregates.iter().enumerate() {
                let empty = match a.function {
                    AggregateFn::Count | AggregateFn::Sum | AggregateFn::Confusion => "",
                    _ => " (no value when nothing is aggregated)",
                };
                let _ = writeln!(out, "  a{i}. {}{empty}", a.text);
            }
        }
        if !self.metrics.is_empty() {
            let _ = writeln!(out, "\nmetrics, in order");
            for (i, m) in self.metrics.iter().enumerate() {
                let empty = m
                    .empty
                    .map(|e| format!(" (empty: {})", format_typed(&e.into(), &Type::Float)))
                    .unwrap_or_default();
                let _ = writeln!(out, "  {}. {}: {} = {}{empty}", i + 1, m.name, m.ty, m.text);
            }
        }
        if !self.slices.is_empty() {
            let _ = writeln!(out, "\nslices, each value folded in the same pass");
            for s in &self.slices {
                let _ = write!(out, "  {} = {}", s.name, s.text);
                if let Some(values) = &s.values {
                    let listed: Vec<&str> = values.iter().map(|v| v.as_ref()).collect();
                    let when = s.unexpected.keyword();
                    let _ = write!(out, " (values [{}], else {when})", listed.join(", "));
                }
                let metrics: Vec<&str> = (self.metrics.iter().zip(&s.metrics))
                    .filter(|(_, needed)| **needed)
                    .map(|(m, _)| m.name.as_str())
                    .collect();
                let aggregates: Vec<String> =
                    s.aggregates.iter().map(|a| format!("a{a}")).collect();
                let _ = writeln!(
                    out,
                    "; per value: {} (folding {})",
                    metrics.join(", "),
                    aggregates.join(", ")
                );
            }
        }
    }

    /// Gates and offenders.
    fn write_decided(&self, out: &mut String) {
        if !self.gates.is_empty() {
            let _ = writeln!(out, "\ngates");
            for g in &self.gates {
                let _ = write!(out, "  {} [{}]: {}", g.name, g.severity.keyword(), g.text);
                if let Some(by) = &g.by {
                    let names: Vec<&str> = by
                        .slices
                        .iter()
                        .map(|&s| self.slices[s].name.as_str())
                        .collect();
                    let _ = write!(
                        out,
                        ", by {} ({} value",
                        names.join(", "),
                        by.mode.keyword()
                    );
                    if by.min_items > 0 {
                        let _ = write!(out, ", at least {} items", by.min_items);
                    }
                    out.push(')');
                }
                out.push('\n');
            }
        }
        if let Some(offenders) = &self.offenders {
            let show: Vec<&str> = offenders.show.iter().map(|(n, _)| n.as_str()).collect();
            let _ = writeln!(
                out,
                "\noffenders: the first {} items where {} (showing {})",
                offenders.limit,
                offenders.text,
                if show.is_empty() {
                    "key and label".to_string()
                } else {
                    show.join(", ")
                }
            );
        }
    }

    fn write_reports(&self, out: &mut String) {
        let _ = writeln!(out, "\nreports");
        for report in &self.reports {
            let how = match &report.kind {
                ReportPlanKind::Json => "report record".to_string(),
                ReportPlanKind::Items => "one line per item".to_string(),
                ReportPlanKind::Template(name) => format!("template {name}"),
            };
            let _ = writeln!(out, "  {} ({how})", report.file);
        }
        if let Some(baseline) = &self.baseline {
            let _ = writeln!(out, "\nbaseline: {}", baseline.display);
        }
    }
}
