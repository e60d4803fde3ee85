//! Spec → plan, in phases: one file per phase, each opening with what it reads
//! from the phases before it and what it adds. Phases pass values; the only
//! things they share are the list of errors and the list of aggregates that
//! lowering expressions appends to ([`Lowering`]). Every error of the spec is
//! collected before giving up.
//!
//! 1. `names`: params (with `--param`) and the namespaces they share.
//! 2. `derived`: fields, matchers and labels in dependency order; `offenders`.
//! 3. `metrics`: metrics in dependency order, per run or across runs; `tradeoff`.
//!    `slices`: the per-item values metrics and gates are broken down by (`by:`).
//! 4. `gates`: each gate's rule, severity, slices and whether it is decided per run.
//! 5. `datasets`: keys, record checks, schema rules and the files found for each.
//! 6. `link`: the projection of each dataset, and every declared reference
//!    replaced by its id in the plan.
//!
//! Expressions in every phase go through `expr` (lowering), `resolve` (names),
//! `operators` (their types), `calls` (names against the table of callables)
//! and `aggregates`; `order` sorts declarations by their dependencies.

mod aggregates;
mod calls;
mod datasets;
mod declared;
mod derived;
mod error;
mod expr;
mod gates;
mod link;
mod metrics;
mod names;
mod operators;
mod order;
mod resolve;
mod shared;
mod slices;
mod stats;

use crate::base::diagnostic::Diagnostic;
use crate::inputs::Inputs;
use crate::plan::Plan;
use crate::spec::Spec;

use expr::Lowering;

/// Compiles `spec` with its `--param` values against the inputs found for it.
pub fn compile(
    spec: &Spec,
    params: &[(String, String)],
    inputs: Inputs,
) -> Result<Plan, Vec<Diagnostic>> {
    let mut errors = Vec::new();
    let params = names::params(spec, params, &mut errors);
    names::check(spec, &mut errors);
    let names = names::Names::new(spec, params);
    let mut lowering = Lowering::new(&names, errors);

    let derived = derived::compile(&mut lowering);
    let offenders = derived::offenders(&mut lowering);
    let slices = slices::compile(&mut lowering);
    let mut metrics = metrics::compile(&mut lowering);
    slices::metrics_by(&mut lowering, &mut metrics);
    let mut gates = gates::compile(&mut lowering, &metrics);
    gates.extend(slices::value_checks(&slices));
    let tradeoff = metrics::tradeoff(&mut lowering, &metrics);
    let datasets = datasets::compile(&mut lowering, &inputs);

    let (aggregates, locations, mut errors) = lowering.finish();
    errors.extend(inputs.reports.errors.iter().cloned());
    let baseline = match inputs.baseline {
        Some(Ok(prior)) => Some(prior),
        Some(Err(error)) => {
            errors.push(error);
            None
        }
        None => None,
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(link::link(link::Parts {
        spec,
        params: names.params,
        derived_names: names.derived,
        derived,
        aggregates,
        metrics,
        slices,
        gates,
        offenders,
        tradeoff,
        datasets,
        locations,
        reports: inputs.reports,
        baseline,
        confidence: inputs.confidence.or(spec.confidence),
    }))
}

/// Plans from spec text, for other modules' unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use crate::inputs::{gather, Overrides};

    /// Compiles a spec of `body` (YAML after its name and version).
    pub(crate) fn compile_spec(
        body: &str,
    ) -> Result<Plan, Vec<crate::base::diagnostic::Diagnostic>> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spec.yaml");
        std::fs::write(&path, format!("name: t\nversion: 1.0.0\n{body}")).unwrap();
        let spec = crate::spec::load(&path).unwrap();
        let (inputs, _) = gather(&spec, &Overrides::default());
        compile(&spec, &[], inputs)
    }

    /// The plan of a spec with `metrics` (YAML) over one dataset `j`.
    pub(crate) fn plan(metrics: &str) -> Plan {
        let datasets = "datasets:\n  j: {format: jsonl, path: j.jsonl, key: id}\n";
        compile_spec(&format!("{datasets}metrics:\n{metrics}")).unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{compile_spec, plan};

    #[test]
    fn repeated_filters_and_arguments_are_computed_once() {
        let plan = plan(
            "  precision: ratio(j.gold == 'a' where j.pred == 'a')\n  \
             recall: ratio(j.pred  ==  'a' where j.gold == 'a')\n  \
             predicted: count(j.pred == 'a')\n  \
             other: count(j.pred == 'b')\n",
        );
        // Four aggregates, three distinct expressions: `j.pred == 'a'` is one
        // however it is spaced, and `j.gold == 'a'` is one filter and one argument.
        assert_eq!(plan.aggregates.len(), 4);
        assert_eq!(plan.shared.ops.len(), 3);
        assert_eq!(plan.shared.filter, [Some(0), Some(1), None, None]);
        assert_eq!(plan.shared.arg, [Some(1), Some(0), Some(0), Some(2)]);
    }

    /// The codes of the errors compiling `metrics` (YAML) reports.
    fn codes(metrics: &str) -> Vec<&'static str> {
        let datasets = "datasets:\n  gold: {format: jsonl, path: g.jsonl, key: id}\n";
        match compile_spec(&format!(
            "{datasets}fields:\n  ok: gold.ok\nmetrics:\n{metrics}"
        )) {
            Ok(_) => Vec::new(),
            Err(errors) => errors.iter().map(|e| e.code).collect(),
        }
    }

    #[test]
    fn errors_are_kinds_that_tests_can_match() {
        assert_eq!(codes("  a: ratio(ok)\n"), Vec::<&str>::new());
        assert_eq!(codes("  a: ratio(okk)\n"), ["unknown_name"]);
        assert_eq!(codes("  a: b\n  b: a\n"), ["cycle"]);
        assert_eq!(
            codes("  a: ratio(ok where 1)\n  b: nope(1)\n"),
            ["where_not_bool", "unknown_function"]
        );
        assert_eq!(codes("  a: ok\n"), ["unknown_name"]);
        assert_eq!(
            codes("  a: percentile(gold.x, 101)\n"),
            ["percentile_level"]
        );
    }
}
