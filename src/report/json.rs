//! `report.json` as a [`Report`] of the report model: spec identity (and
//! text), params, dataset fingerprints, metrics, gates, labels, offenders and
//! the comparison with a baseline. The model fixes the keys and their order
//! (declaration order for user names); numbers are
//! unrounded; integer-typed values print without a fraction, float-typed ones
//! with one, and values of unknown type without one when they are whole.

use serde_json::Value as Json;

use crate::base::sha256::sha256_hex;
use crate::base::typed_json::format_typed;
use crate::base::types::Type;
use crate::base::value::Value;
use crate::eval::{per_run_name, GateStatus, Outcome};
use crate::inputs::PriorReport;
use crate::lock::LockStamp;
use crate::plan::{GateRule, Plan};
use crate::report::items::offender;
use crate::report_model::item_values::ITEM_VALUES_FILE;
use crate::report_model::{
    self as model, BaselineSpec, DatasetInfo, Gate, LockInfo, MetricInfo, MetricSinceBaseline,
    MetricValue, NameMap, Offenders, ParamOverride, Report, SinceBaseline, SpecInfo,
};
use crate::spec::{Better, ParamType};

pub fn report_json(plan: &Plan, outcome: &Outcome, lock: Option<&LockStamp>) -> Report {
    let spec_sha = sha256_hex(plan.spec_text.as_bytes());
    let param_ty = |ty: ParamType| {
        if ty == ParamType::Integer {
            Type::Int
        } else {
            Type::Any
        }
    };
    let params: NameMap<Json> = plan
        .params
        .iter()
        .map(|p| (p.name.clone(), format_typed(&p.value, &param_ty(p.ty))))
        .collect();
    let overridden_params: NameMap<ParamOverride> = plan
        .params
        .iter()
        .filter(|p| p.differs())
        .map(|p| {
            let entry = ParamOverride {
                value: format_typed(&p.value, &param_ty(p.ty)),
                default: format_typed(&p.default, &param_ty(p.ty)),
            };
            (p.name.clone(), entry)
        })
        .collect();
    let datasets: NameMap<DatasetInfo> = plan
        .datasets
        .iter()
        .zip(&outcome.datasets)
        .map(|(d, o)| {
            let looked_up = d.name != plan.datasets[plan.items_dataset.index()].name;
            let entry = DatasetInfo {
                path: d.display_path.clone(),
                format: d.format.keyword().to_string(),
                sha256: o.read.sha256.clone(),
                records: o.read.records as u64,
                keyless: o.keyless as u64,
                duplicates: o.duplicates as u64,
                unmatched: looked_up.then_some(o.unmatched as u64),
                missing: looked_up.then_some(o.missing as u64),
                join: looked_up.then(|| d.join.keyword().to_string()),
                runs: None,
            };
            (d.name.clone(), entry)
        })
        .collect();
    let declared = plan.metrics_in_declared_order();
    let metrics: NameMap<MetricValue> = metric_values(plan, outcome)
        .into_iter()
        .map(|(name, value, ty, _)| (name, MetricValue::from_typed(format_typed(&value, ty))))
        .collect();
    let metric_info: NameMap<MetricInfo> = declared
        .iter()
        .map(|(_, m)| {
            let info = MetricInfo {
                expr: m.text.clone(),
                better: m.better.map(better),
                tolerance: m.tolerance,
                description: m.description.as_ref().map(|d| d.trim().to_string()),
                per_run: plan.has_runs().then_some(!m.across),
                by: (!m.by.is_empty())
                    .then(|| m.by.iter().map(|&s| plan.slices[s].name.clone()).collect()),
            };
            (m.name.clone(), info)
        })
        .collect();
    let gates: Vec<Gate> = plan
        .gates
        .iter()
        .zip(&outcome.gates)
        .map(|(g, o)| {
            let per_run = g.per_run && !outcome.runs.is_empty();
            Gate {
                name: g.name.clone(),
                expr: g.text.clone(),
                severity: match g.severity {
                    crate::plan::Severity::Fail => model::Severity::Fail,
                    crate::plan::Severity::Warn => model::Severity::Warn,
                },
                value: format_typed(&o.value, &g.value_ty),
                threshold: o.threshold.as_ref().map(|t| format_typed(t, &Type::Any)),
                warn_threshold: o
                    .warn_threshold
                    .as_ref()
                    .map(|t| format_typed(t, &Type::Any)),
                baseline: (matches!(g.rule, GateRule::Shape(_)) && plan.baseline.is_some())
                    .then(|| format_typed(&o.baseline, &g.value_ty)),
                pass: o.pass,
                status: gate_status(o.status),
                message: g.message.clone(),
                reasons: o.reasons.clone(),
                failed_by: (o.failed_by.iter())
                    .map(|t| model::FailedTestInfo {
                        metric: t.metric.clone(),
                        slice: t.slice.as_ref().map(|(s, _)| plan.slices[*s].name.clone()),
                        value: t.slice.as_ref().map(|(_, v)| v.to_string()),
                        run: t.run.as_deref().map(str::to_string),
                        p_adjusted: t.p_adjusted,
                    })
                    .collect(),
                runs: per_run.then_some(match g.runs {
                    crate::spec::GateRuns::Every => model::GateRuns::Every,
                    crate::spec::GateRuns::Any => model::GateRuns::Any,
                }),
                run: per_run.then(|| o.run.as_deref().map(str::to_string)),
                by: crate::report::slices::gate_by(plan, g, o),
            }
        })
        .collect();
    let labels = (!plan.labels.is_empty()).then(|| {
        plan.labels
            .iter()
            .zip(&outcome.label_counts)
            .map(|(label, count)| (label.clone(), *count as u64))
            .collect::<NameMap<u64>>()
    });
    let labelled: usize = outcome.label_counts.iter().sum();
    let mut report = Report {
        evalspec: env!("CARGO_PKG_VERSION").to_string(),
        spec: SpecInfo {
            name: plan.spec_name.clone(),
            version: plan.spec_version.clone(),
            path: plan.spec_display.clone(),
            sha256: spec_sha,
            text: Some(plan.spec_text.clone()),
            lock: lock.map(|lock| LockInfo {
                path: lock.path.clone(),
                sha256: lock.sha256.clone(),
                version: lock.version.clone(),
                status: lock.status().to_string(),
                drift: lock.drift.clone(),
            }),
        },
        params,
        overridden_params,
        datasets,
        scored: Some(outcome.items as u64),
        metrics,
        metric_info,
        intervals: crate::report::stats::intervals(plan, outcome),
        slices: crate::report::slices::slices(plan, outcome),
        gates,
        unlabelled: labels.as_ref().map(|_| (outcome.items - labelled) as u64),
        labels,
        offenders: plan.offenders.as_ref().map(|offenders| Offenders {
            when: offenders.text.clone(),
            limit: offenders.limit as u64,
            items: outcome
                .offenders
                .iter()
                .map(|row| offender(plan, row))
                .collect(),
        }),
        runs: None,
        spread: None,
        stability: None,
        tradeoff: None,
        agreement: None,
        confusion: None,
        baseline: None,
        baseline_missing: crate::eval::baseline_missing(plan),
        pass: outcome.pass(),
        run_id: None,
    };
    if plan.has_runs() {
        crate::report::runs::add_runs(&mut report, plan, outcome);
    }
    if !outcome.agreements.is_empty() {
        report.agreement = Some(crate::report::runs::agreements(plan, outcome));
    }
    if !outcome.confusions.is_empty() {
        report.confusion = Some(crate::report::confusion::matrices(plan, outcome));
    }
    if let Some(prior) = &plan.baseline {
        report.baseline = Some(since_baseline(plan, outcome, prior));
    }
    if crate::report::writes_item_values(plan) {
        // The digest of everything else the report says: the same inputs give
        // the same id (and the same item values), another run another id.
        let bytes = serde_json::to_vec(&report).expect("a report always serialises");
        report.run_id = Some(sha256_hex(&bytes));
    }
    report
}

fn better(better: Better) -> model::Better {
    match better {
        Better::Higher => model::Better::Higher,
        Better::Lower => model::Better::Lower,
    }
}

pub(crate) fn gate_status(status: GateStatus) -> model::GateStatus {
    match status {
        GateStatus::Pass => model::GateStatus::Pass,
        GateStatus::Warn => model::GateStatus::Warn,
        GateStatus::Fail => model::GateStatus::Fail,
    }
}

/// Every metric value a report lists, in declared order: name, value, type and
/// baseline value. With several runs a per-run metric is listed once per run as
/// `NAME@RUN`, which is also how a later run's baseline finds it.
pub fn metric_values<'p>(
    plan: &'p Plan,
    outcome: &Outcome,
) -> Vec<(String, Value, &'p Type, Value)> {
    let mut values = Vec::new();
    for (i, m) in plan.metrics_in_declared_order() {
        if outcome.runs.is_empty() || m.across {
            let (value, base) = (&outcome.metrics[i.index()], &outcome.baseline[i.index()]);
            values.push((m.name.clone(), value.clone(), &m.ty, base.clone()));
            continue;
        }
        for run in &outcome.runs {
            let name = per_run_name(&m.name, &run.name);
            values.push((
                name,
                run.metrics[i.index()].clone(),
                &m.ty,
                run.baseline[i.index()].clone(),
            ));
        }
    }
    values
}

/// The "since baseline" section: each metric's baseline value and change.
fn since_baseline(plan: &Plan, outcome: &Outcome, prior: &PriorReport) -> SinceBaseline {
    let stats = crate::report::stats::metric_stats(plan, outcome);
    let metrics: NameMap<MetricSinceBaseline> = metric_values(plan, outcome)
        .into_iter()
        .zip(stats)
        .map(|((name, value, ty, base), (_, _, change))| {
            let (delta, relative) = match (&value, &base) {
                (Value::Number(v), Value::Number(b)) => {
                    (Some(v - b), (*b != 0.0).then(|| (v - b) / b.abs()))
                }
                _ => (None, None),
            };
            let entry = MetricSinceBaseline {
                baseline: MetricValue::from_typed(format_typed(&base, ty)),
                value: MetricValue::from_typed(format_typed(&value, ty)),
                delta,
                relative,
                change: change.map(crate::report::stats::change_info),
            };
            (name, entry)
        })
        .collect();
    let spec = &prior.report.spec;
    SinceBaseline {
        path: prior.display.clone(),
        spec: BaselineSpec {
            name: spec.name.clone(),
            version: spec.version.clone(),
            sha256: spec.sha256.clone(),
        },
        note: (prior.values.is_none() && !plan.stats.columns.is_empty()).then(|| {
            format!(
                "the baseline has no {ITEM_VALUES_FILE} (an older evalspec, or `keep_item_values: false`): no paired tests"
            )
        }),
        metrics,
    }
}
