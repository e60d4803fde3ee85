//! The sections that decide and show: `gates:` (expressions or shaped gates),
//! `tradeoff:` and `reports:`.

use crate::spec::error::SpecError;
use crate::spec::load::{dir_of, Loader, GATE_KEYS, REPORT_KEYS, TRADEOFF_KEYS};
use crate::spec::mapping::{locate, Mapping};
use crate::spec::model::*;
use crate::spec::yaml::{Node, NodeKind};

impl Loader {
    pub(super) fn gate(&mut self, name: Name, node: &Node, path: String) -> Option<GateDecl> {
        if !matches!(node.kind, NodeKind::Map(_)) {
            let expr = self.expr(node, &path)?;
            return Some(GateDecl {
                name,
                rule: GateRuleDecl::Expr(expr),
                runs: GateRuns::Every,
                severity: SeveritySpec::Fail,
                message: None,
                by: Vec::new(),
                slices: (GateSlices::Every, None),
                min_items: 0,
            });
        }
        let mut map = Mapping::new(node, &path, "a gate", &mut self.errors)?;
        let rule = match (map.take("expr"), map.take("metric")) {
            (Some(expr), None) => self
                .expr(expr, &map.path_of("expr"))
                .map(GateRuleDecl::Expr),
            (None, Some(metric)) => self
                .gate_shape(&mut map, metric)
                .map(|shape| GateRuleDecl::Shape(Box::new(shape))),
            (Some(_), Some(metric)) => {
                let kind = SpecError::GateExprAndMetric {
                    gate: name.text.clone(),
                };
                self.report(kind, locate(metric, &map.path_of("metric")));
                None
            }
            (None, None) => {
                let kind = SpecError::GateNoRule {
                    gate: name.text.clone(),
                };
                self.report(kind, locate(&name.node, &path));
                None
            }
        };
        let significance = map.take("significance").map(|n| {
            let path = map.path_of("significance");
            (self.probability(n, &path), locate(n, &path))
        });
        let rule = match (rule, significance) {
            (Some(GateRuleDecl::Shape(mut shape)), Some((level, at))) => {
                if shape.changes.is_empty() {
                    let kind = SpecError::SignificanceWithoutChange {
                        gate: name.text.clone(),
                        expr: false,
                    };
                    self.report(kind, at);
                }
                shape.significance = level;
                Some(GateRuleDecl::Shape(shape))
            }
            (Some(GateRuleDecl::Expr(_)), Some((_, at))) => {
                let kind = SpecError::SignificanceWithoutChange {
                    gate: name.text.clone(),
                    expr: true,
                };
                self.report(kind, at);
                None
            }
            (rule, _) => rule,
        };
        let severity = match map.take("severity") {
            None => Some(SeveritySpec::Fail),
            Some(n) => match &n.kind {
                NodeKind::Str(s) if s == "fail" => Some(SeveritySpec::Fail),
                NodeKind::Str(s) if s == "warn" => Some(SeveritySpec::Warn),
                _ => self
                    .expr(n, &map.path_of("severity"))
                    .map(SeveritySpec::Expr),
            },
        };
        let message = map
            .take("message")
            .and_then(|n| self.string(n, &map.path_of("message")));
        let runs = match map.take("runs") {
            None => Some(GateRuns::Every),
            Some(n) => self.keyword(
                n,
                &map.path_of("runs"),
                &[("every", GateRuns::Every), ("any", GateRuns::Any)],
            ),
        };
        let by = self.by(&mut map);
        let slices = self.gate_slices(&mut map, &by);
        map.finish(GATE_KEYS, &mut self.errors);
        let (slices, min_items) = slices?;
        Some(GateDecl {
            name,
            rule: rule?,
            runs: runs?,
            severity: severity?,
            message,
            by,
            slices,
            min_items,
        })
    }

    /// `metric:` with `threshold`, `warn_threshold` and change bounds.
    pub(super) fn gate_shape(
        &mut self,
        map: &mut Mapping<'_>,
        metric: &Node,
    ) -> Option<GateShapeDecl> {
        let metric = self.name(metric, &map.path_of("metric"));
        let better = map.take("better").and_then(|n| {
            self.keyword(
                n,
                &map.path_of("better"),
                &[("higher", Better::Higher), ("lower", Better::Lower)],
            )
        });
        let mut bound = |this: &mut Self, key: &str| {
            map.take(key).and_then(|n| this.expr(n, &map.path_of(key)))
        };
        let threshold = bound(self, "threshold");
        let warn_threshold = bound(self, "warn_threshold");
        let changes: Vec<(Change, ExprText)> = Change::ALL
            .iter()
            .filter_map(|(key, change)| bound(self, key).map(|e| (*change, e)))
            .collect();
        let when_no_baseline = match map.take("when_no_baseline") {
            None => Some(NoBaseline::Pass),
            Some(n) => self.keyword(
                n,
                &map.path_of("when_no_baseline"),
                &[
                    ("pass", NoBaseline::Pass),
                    ("warn", NoBaseline::Warn),
                    ("fail", NoBaseline::Fail),
                ],
            ),
        };
        let metric = metric?;
        if threshold.is_none() && warn_threshold.is_none() && changes.is_empty() {
            let kind = SpecError::GateNoBound {
                metric: metric.text.clone(),
            };
            self.report(kind, locate(&metric.node, &map.path_of("metric")));
            return None;
        }
        Some(GateShapeDecl {
            metric,
            better,
            threshold,
            warn_threshold,
            changes,
            when_no_baseline: when_no_baseline?,
            significance: None,
        })
    }

    /// `tradeoff: {latency: p95_latency_ms, accuracy: [precision, chr]}`.
    pub(super) fn tradeoff(&mut self, node: &Node) -> Option<TradeoffDecl> {
        let mut map = Mapping::new(node, "tradeoff", "`tradeoff`", &mut self.errors)?;
        let latency = match map.take("latency") {
            Some(n) => self.name(n, "tradeoff.latency"),
            None => {
                self.report(SpecError::TradeoffNoLatency, locate(node, "tradeoff"));
                None
            }
        };
        let accuracy = match map.take("accuracy") {
            Some(n) => match &n.kind {
                NodeKind::Seq(items) if !items.is_empty() => items
                    .iter()
                    .filter_map(|item| self.name(item, "tradeoff.accuracy"))
                    .collect(),
                NodeKind::Str(_) => self.name(n, "tradeoff.accuracy").into_iter().collect(),
                _ => {
                    let kind = SpecError::AccuracyNotMetrics {
                        found: n.type_name(),
                    };
                    self.report(kind, locate(n, "tradeoff.accuracy"));
                    Vec::new()
                }
            },
            None => {
                self.report(SpecError::TradeoffNoAccuracy, locate(node, "tradeoff"));
                Vec::new()
            }
        };
        map.finish(TRADEOFF_KEYS, &mut self.errors);
        if accuracy.is_empty() {
            return None;
        }
        Some(TradeoffDecl {
            latency: latency?,
            accuracy,
        })
    }

    /// `reports:` built-in formats by name, or `{format|template, path}`.
    pub(super) fn reports(&mut self, node: &Node) -> Vec<ReportDecl> {
        let NodeKind::Seq(entries) = &node.kind else {
            let kind = SpecError::ReportsNotAList {
                found: node.type_name(),
            };
            self.report(kind, locate(node, "reports"));
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            let path = format!("reports[{i}]");
            if let NodeKind::Str(_) = entry.kind {
                if let Some(format) = self.keyword(entry, &path, &ReportFormat::ALL) {
                    out.push(ReportDecl {
                        kind: ReportKind::Builtin(format),
                        path: None,
                        dir: dir_of(entry),
                        node: entry.clone(),
                    });
                }
                continue;
            }
            let Some(mut map) = Mapping::new(entry, &path, "a report", &mut self.errors) else {
                continue;
            };
            let format = map
                .take("format")
                .and_then(|n| self.keyword(n, &map.path_of("format"), &ReportFormat::ALL));
            let template_node = map.take("template");
            let template = template_node.and_then(|n| self.string(n, &map.path_of("template")));
            let file = map
                .take("path")
                .and_then(|n| self.string(n, &map.path_of("path")));
            map.finish(REPORT_KEYS, &mut self.errors);
            let kind = match (format, template) {
                (Some(format), None) => ReportKind::Builtin(format),
                (None, Some(template)) => ReportKind::Template(template),
                _ => {
                    self.report(SpecError::ReportKind, locate(entry, &path));
                    continue;
                }
            };
            out.push(ReportDecl {
                kind,
                path: file,
                dir: dir_of(template_node.unwrap_or(entry)),
                node: entry.clone(),
            });
        }
        out
    }
}
