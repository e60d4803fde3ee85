//! Phase 6: linking. Reads every phase's output; orders the datasets (looked-up
//! ones first, the items dataset last), builds each dataset's projection from the
//! paths the plan reads, and maps every declared reference to its id in the plan:
//! paths to slots, fields and matchers to their place in dependency order, and so
//! on. Adds the finished [`Plan`]; nothing else builds one.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::base::typed_json::push_string;
use crate::inputs::{PriorReport, ReportFiles};
use crate::ir::{DatasetId, DerivedId, ExprAt, ExprLocations, Linked, MetricId, Op, Relink, Slot};
use crate::plan::compile::datasets::DatasetDraft;
use crate::plan::compile::declared::{
    DatasetPath, Declared, DeclaredDataset, DeclaredDerived, DeclaredMetric,
};
use crate::plan::compile::metrics::Metrics;
use crate::plan::compile::order::Ordered;
use crate::plan::compile::{shared, stats};
use crate::plan::{
    Aggregate, Check, DatasetPlan, Derived, DerivedKind, GatePlan, GateRule, ItemColumn,
    MetricPlan, OffendersPlan, ParamValue, Plan, Projection, Rule, ShapePlan, SlicePlan, StatsPlan,
    Tradeoff, DEFAULT_CONFIDENCE,
};
use crate::spec::Spec;
use crate::syntax::BinaryOp;

/// What the phases produced.
pub struct Parts<'s> {
    pub spec: &'s Spec,
    pub params: Vec<ParamValue>,
    /// Fields, matchers and the label, as declared.
    pub derived_names: Vec<String>,
    pub derived: Ordered<Derived<Declared>>,
    pub aggregates: Vec<Aggregate<Declared>>,
    pub metrics: Metrics,
    pub slices: Vec<SlicePlan<Declared>>,
    pub gates: Vec<GatePlan<Declared>>,
    pub offenders: Option<OffendersPlan<Declared>>,
    pub tradeoff: Option<(DeclaredMetric, Vec<DeclaredMetric>)>,
    pub datasets: Vec<DatasetDraft>,
    pub locations: ExprLocations,
    pub reports: ReportFiles,
    pub baseline: Option<PriorReport>,
    /// `--confidence`, else the spec's `confidence:`.
    pub confidence: Option<f64>,
}

/// Every declared reference and where it goes in the plan.
struct Linker {
    /// By declared dataset: its id in the plan.
    datasets: Vec<DatasetId>,
    /// By dataset id.
    projections: Vec<Projection>,
    derived: Vec<usize>,
    metrics: Vec<usize>,
}

impl Relink<Declared, Linked> for Linker {
    fn input(&self, input: DatasetPath) -> Op {
        let dataset = self.dataset(input.dataset);
        let resolved = self.projections[dataset.index()].resolve(&input.path);
        let mut op = Op::Input(Slot {
            dataset,
            slot: resolved.slot,
        });
        for name in resolved.rest {
            op = Op::Field(Box::new(op), Arc::from(name.as_str()), input.at);
        }
        op
    }

    fn derived(&self, derived: DeclaredDerived) -> DerivedId {
        DerivedId::new(self.derived[derived.0])
    }

    fn metric(&self, metric: DeclaredMetric) -> MetricId {
        MetricId::new(self.metrics[metric.0])
    }

    fn dataset(&self, dataset: DeclaredDataset) -> DatasetId {
        self.datasets[dataset.0]
    }
}

/// Maps the references of an op that has none: the ops of a params scope.
pub struct NoReferences;

impl Relink<Declared, Linked> for NoReferences {
    fn input(&self, _: DatasetPath) -> Op {
        unreachable!("an op over params reads no dataset")
    }
    fn derived(&self, _: DeclaredDerived) -> DerivedId {
        unreachable!("an op over params reads no per-item value")
    }
    fn metric(&self, _: DeclaredMetric) -> MetricId {
        unreachable!("an op over params reads no metric")
    }
    fn dataset(&self, _: DeclaredDataset) -> DatasetId {
        unreachable!("an op over params reads no dataset")
    }
}

pub fn link(parts: Parts<'_>) -> Plan {
    let spec = parts.spec;
    // Looked-up datasets first, in declaration order, then the items dataset.
    let (items, mut drafts): (Vec<DatasetDraft>, Vec<DatasetDraft>) = parts
        .datasets
        .into_iter()
        .partition(|d| spec.datasets[d.declared.0].name.text == spec.items.text);
    drafts.extend(items);
    let mut dataset_ids = vec![DatasetId::new(0); spec.datasets.len()];
    for (position, draft) in drafts.iter().enumerate() {
        dataset_ids[draft.declared.0] = DatasetId::new(position);
    }
    let ops = parts
        .derived
        .items
        .iter()
        .map(|d| &d.op)
        .chain(
            parts
                .aggregates
                .iter()
                .flat_map(|a| a.arg.iter().chain(&a.filter)),
        )
        .chain(parts.metrics.ordered.items.iter().map(|m| &m.op))
        .chain(parts.slices.iter().map(|s| &s.op))
        .chain(parts.gates.iter().flat_map(|g| g.rule.ops()))
        .chain(parts.offenders.iter().map(|o| &o.when));
    let (projections, reads) = projections(&drafts, &dataset_ids, ops);

    let linker = Linker {
        datasets: dataset_ids,
        projections,
        derived: parts.derived.position,
        metrics: parts.metrics.ordered.position,
    };
    let datasets: Vec<DatasetPlan> = drafts
        .into_iter()
        .zip(reads)
        .map(|(draft, reads)| dataset(draft, reads, &linker))
        .collect();
    let derived: Vec<Derived> = parts
        .derived
        .items
        .into_iter()
        .map(|d| Derived {
            op: d.op.map(&linker),
            name: d.name,
            kind: d.kind,
            ty: d.ty,
            text: d.text,
            at: d.at,
        })
        .collect();
    let item_columns = parts
        .derived_names
        .iter()
        .enumerate()
        .map(|(i, name)| (name, linker.derived(DeclaredDerived(i))))
        .filter(|(_, id)| derived[id.index()].kind != DerivedKind::Label)
        .map(|(name, id)| ItemColumn {
            member: {
                let mut member = String::new();
                push_string(&mut member, name);
                member.push(':');
                member
            },
            kind: derived[id.index()].kind,
            ty: derived[id.index()].ty.clone(),
            slot: id,
        })
        .collect();
    let label_slot = derived
        .iter()
        .position(|d| d.kind == DerivedKind::Label)
        .map(DerivedId::new);
    let offenders = parts.offenders.map(|o| OffendersPlan {
        when: o.when.map(&linker),
        text: o.text,
        at: o.at,
        show: o
            .show
            .into_iter()
            .map(|(name, d)| (name, linker.derived(d)))
            .collect(),
        limit: o.limit,
    });
    let aggregates: Vec<Aggregate> = parts
        .aggregates
        .into_iter()
        .map(|a| aggregate(a, &linker))
        .collect();
    let metrics: Vec<MetricPlan> = (parts.metrics.ordered.items.into_iter())
        .map(|m| metric(m, &linker))
        .collect();
    let mut slices: Vec<SlicePlan> = parts
        .slices
        .into_iter()
        .map(|s| SlicePlan {
            op: s.op.map(&linker),
            name: s.name,
            text: s.text,
            at: s.at,
            values: s.values,
            unexpected: s.unexpected,
            metrics: Vec::new(),
            aggregates: Vec::new(),
        })
        .collect();
    crate::plan::compile::slices::needs(&mut slices, &metrics, &aggregates);
    let stats_columns = stats::value_columns(&metrics, &aggregates);
    let formulas = stats::formulas(&metrics, &aggregates, &stats_columns);
    let shared = shared::shared_exprs(&aggregates);
    let tradeoff = parts.tradeoff.map(|(latency, accuracy)| Tradeoff {
        latency: linker.metric(latency),
        accuracy: accuracy.into_iter().map(|m| linker.metric(m)).collect(),
    });
    Plan {
        spec_name: spec.name.clone(),
        spec_version: spec.version.clone(),
        spec_path: spec.source.path.clone(),
        spec_display: spec.source.display.clone(),
        spec_text: spec.resolved_text.clone(),
        spec_files: spec.files.clone(),
        template_dirs: parts.reports.template_dirs,
        params: parts.params,
        items_dataset: DatasetId::new(datasets.len() - 1),
        datasets,
        derived,
        aggregates,
        metrics,
        slices,
        gates: parts.gates.into_iter().map(|g| gate(g, &linker)).collect(),
        labels: spec.labels.iter().map(|r| r.label.text.clone()).collect(),
        label_slot,
        item_columns,
        offenders,
        reports: parts.reports.reports,
        keep_items: parts.reports.keep_items,
        templates_read_items: parts.reports.templates_read_items,
        baseline: parts.baseline,
        tradeoff,
        shared,
        stats: StatsPlan {
            confidence: parts.confidence.unwrap_or(DEFAULT_CONFIDENCE),
            keep_item_values: spec.keep_item_values,
            columns: stats_columns,
            observed: formulas.observed,
            formulas: formulas.formulas,
            formula_metrics: formulas.metrics,
            across: formulas.across,
        },
        locations: parts.locations,
    }
}

/// Calls `f` on each input `op` reads, unless it is read as an argument of
/// a fallback (`a ?? b`, `truthy_or`, `truthy`, the `is_*` tests) or a
/// matcher's input: a field read there may be missing on purpose
/// (`truthy_or(qid, q_id)`, for files that name it either way).
fn plain_reads(op: &Op<Declared>, fallback: bool, f: &mut impl FnMut(&DatasetPath)) {
    let mut each = |ops: &[&Op<Declared>], fallback: bool| {
        ops.iter().for_each(|op| plain_reads(op, fallback, f));
    };
    match op {
        Op::Input(input) if !fallback => f(input),
        Op::Field(a, ..) | Op::Not(a, _) | Op::Neg(a, _) => each(&[a], fallback),
        Op::Binary(BinaryOp::Coalesce, a, b, _) => each(&[a, b], true),
        Op::Index(a, b, _) | Op::Binary(_, a, b, _) => each(&[a, b], fallback),
        Op::If(a, b, c, _) => each(&[a, b, c], fallback),
        Op::Call(builtin, args, _) => {
            let fallback = fallback
                || builtin.name == "truthy_or"
                || builtin.name == "truthy"
                || builtin.name.starts_with("is_");
            args.iter().for_each(|op| plain_reads(op, fallback, f));
        }
        Op::List(args) => args.iter().for_each(|op| plain_reads(op, fallback, f)),
        // A matcher says what a missing input gives (`when_missing`, an
        // echo of no constraints): its inputs may be missing everywhere.
        Op::Matcher(_, args, _) => args.iter().for_each(|op| plain_reads(op, true, f)),
        _ => {}
    }
}

/// Every path each dataset must provide (its ops' inputs and its schema rules),
/// and the projection that serves them, by dataset id.
/// Also, per dataset (by id), where each path its ops read is first written.
#[allow(clippy::type_complexity)]
fn projections<'o>(
    drafts: &[DatasetDraft],
    dataset_ids: &[DatasetId],
    ops: impl Iterator<Item = &'o Op<Declared>>,
) -> (Vec<Projection>, Vec<BTreeMap<Vec<String>, ExprAt>>) {
    let mut paths: Vec<BTreeSet<Vec<String>>> = vec![BTreeSet::new(); drafts.len()];
    let mut reads: Vec<BTreeMap<Vec<String>, ExprAt>> = vec![BTreeMap::new(); drafts.len()];
    let mut collect = |op: &Op<Declared>| {
        if let Op::Input(input) = op {
            let dataset = dataset_ids[input.dataset.0].index();
            paths[dataset].insert(input.path.clone());
        }
    };
    let mut collect_reads = |op: &Op<Declared>| {
        plain_reads(op, false, &mut |input| {
            let dataset = dataset_ids[input.dataset.0].index();
            let first = reads[dataset].entry(input.path.clone()).or_insert(input.at);
            *first = (*first).min(input.at);
        });
    };
    for draft in drafts {
        draft.key.walk(&mut collect);
        collect_reads(&draft.key);
        for check in draft.checks.iter().chain(&draft.run_name) {
            check.op.walk(&mut collect);
            collect_reads(&check.op);
        }
    }
    ops.for_each(|op| {
        op.walk(&mut collect);
        collect_reads(op);
    });
    for (draft, paths) in drafts.iter().zip(&mut paths) {
        paths.extend(draft.rules.iter().map(|rule| rule.path.clone()));
    }
    let projections = paths
        .iter()
        .map(|paths| Projection::build(paths.iter().map(Vec::as_slice)))
        .collect();
    (projections, reads)
}

fn dataset(
    draft: DatasetDraft,
    reads: BTreeMap<Vec<String>, ExprAt>,
    linker: &Linker,
) -> DatasetPlan {
    let projection = linker.projections[linker.dataset(draft.declared).index()].clone();
    // Fields with a rule are the schema's: a required one missing is an
    // error already, an optional one may be missing everywhere.
    let reads = (reads.into_iter())
        .filter(|(path, _)| !draft.rules.iter().any(|r| r.path == *path))
        .filter_map(|(path, at)| {
            let resolved = projection.resolve(&path);
            resolved.rest.is_empty().then(|| crate::plan::FieldRead {
                path: path.join("."),
                slot: resolved.slot,
                at,
            })
        })
        .collect();
    let check = |c: Check<Declared>| Check {
        op: c.op.map(linker),
        text: c.text,
        message: c.message,
    };
    DatasetPlan {
        name: draft.name,
        format: draft.format,
        csv: draft.csv,
        path: draft.path,
        display_path: draft.display_path,
        key: draft.key.map(linker),
        key_text: draft.key_text,
        key_at: draft.key_at,
        duplicates: draft.duplicates,
        join: draft.join,
        rules: draft
            .rules
            .into_iter()
            .map(|rule| Rule {
                field: rule.field,
                path: projection.resolve(&rule.path),
                each: rule.each,
                ty: rule.ty,
                optional: rule.optional,
                nonempty: rule.nonempty,
                min: rule.min,
                max: rule.max,
            })
            .collect(),
        projection,
        checks: draft.checks.into_iter().map(check).collect(),
        declared_at: draft.declared_at,
        frozen: draft.frozen,
        allow_empty: draft.allow_empty,
        reads,
        runs: draft.runs,
        run_name: draft.run_name.map(check),
        expected_run_name: None,
        table: None,
        events: None,
    }
}

fn aggregate(a: Aggregate<Declared>, linker: &Linker) -> Aggregate {
    Aggregate {
        function: a.function,
        arg: a.arg.map(|op| op.map(linker)),
        filter: a.filter.map(|op| op.map(linker)),
        text: a.text,
        subject: a.subject,
        at: a.at,
        arg_at: a.arg_at,
        filter_at: a.filter_at,
    }
}

fn metric(m: MetricPlan<Declared>, linker: &Linker) -> MetricPlan {
    MetricPlan {
        name: m.name,
        op: m.op.map(linker),
        ty: m.ty,
        empty: m.empty,
        better: m.better,
        text: m.text,
        description: m.description,
        tolerance: m.tolerance,
        declared: m.declared,
        across: m.across,
        by: m.by,
    }
}

fn gate(gate: GatePlan<Declared>, linker: &Linker) -> GatePlan {
    let op = |op: Op<Declared>| op.map(linker);
    let rule = match gate.rule {
        GateRule::Expr {
            op: o,
            value,
            bound,
        } => GateRule::Expr {
            op: op(o),
            value: value.map(op),
            bound: bound.map(op),
        },
        GateRule::Shape(shape) => GateRule::Shape(ShapePlan {
            metric: linker.metric(shape.metric),
            metric_name: shape.metric_name,
            better: shape.better,
            threshold: shape.threshold.map(op),
            warn_threshold: shape.warn_threshold.map(op),
            changes: shape.changes.into_iter().map(|(c, o)| (c, op(o))).collect(),
            when_no_baseline: shape.when_no_baseline,
            threshold_text: shape.threshold_text,
            warn_threshold_text: shape.warn_threshold_text,
            change_texts: shape.change_texts,
            significance: shape.significance,
        }),
        GateRule::SliceValues { slice } => GateRule::SliceValues { slice },
    };
    GatePlan {
        name: gate.name,
        rule,
        per_run: gate.per_run,
        runs: gate.runs,
        value_ty: gate.value_ty,
        severity: gate.severity,
        message: gate.message,
        text: gate.text,
        by: gate.by,
    }
}
