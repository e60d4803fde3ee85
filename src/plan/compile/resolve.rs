//! Names: what a name, `params.NAME`, `baseline.NAME` or a dataset path refers
//! to in the scope it is written in. Reads [`Names`]; adds the op that reads it,
//! its type, and (for fields, matchers and metrics) the dependency.

use crate::base::types::Type;
use crate::base::value::Value;
use crate::ir::Op;
use crate::library::matchers;
use crate::plan::compile::declared::{
    DatasetPath, DeclaredDataset, DeclaredDerived, DeclaredMetric,
};
use crate::plan::compile::error::{CompileError as E, NameScope};
use crate::plan::compile::expr::{name_dot_name, DeclaredOp, ExprCtx, Lowering, Scope};
use crate::spec::{DataType, ParamType};
use crate::syntax::{Expr, ExprKind, Span};

impl Lowering<'_> {
    /// `params.NAME`, `baseline.NAME` or a dataset path such as `gold.answer_json.claim`;
    /// `None` for any other member or index expression.
    pub(super) fn dotted(
        &mut self,
        expr: &Expr,
        scope: Scope<'_>,
        ctx: &mut ExprCtx<'_>,
    ) -> Option<Option<(DeclaredOp, Type)>> {
        if let Some(result) = self.explicit_param(expr, ctx) {
            return Some(result);
        }
        if let Some(result) = self.baseline_metric(expr, scope, ctx) {
            return Some(result);
        }
        self.dataset_path(expr, scope, ctx).map(|op| {
            let ty = match &op {
                Op::Input(input) => self.schema_type(input.dataset, &input.path),
                _ => Type::Any,
            };
            Some((op, ty))
        })
    }

    /// The type a dataset's schema declares for the field at `path` (`any` when
    /// no rule names it, or only its list's elements). Every record is checked
    /// against its rules before it is used, so the type holds at run time; null
    /// (an optional field, or a lookup that found nothing) passes any type.
    pub(super) fn schema_type(&self, dataset: DeclaredDataset, path: &[String]) -> Type {
        let rules = &self.names.spec.datasets[dataset.0].schema;
        rules
            .iter()
            .find(|rule| rule.each.is_none() && rule.path == path)
            .map_or(Type::Any, |rule| static_type(&rule.ty))
    }

    /// `params.NAME`: a param, named explicitly (the only way to reach one from a
    /// dataset's key or checks, where bare names are the record's fields).
    pub(super) fn explicit_param(
        &mut self,
        expr: &Expr,
        ctx: &mut ExprCtx<'_>,
    ) -> Option<Option<(DeclaredOp, Type)>> {
        let (root, name) = name_dot_name(expr)?;
        if root != "params" {
            return None;
        }
        if self.names.param(name).is_some() {
            return Some(self.name(name, expr.span, Scope::Params, ctx));
        }
        let kind = E::UnknownExplicitParam {
            name: name.clone(),
            params: self.names.params.iter().map(|p| p.name.clone()).collect(),
        };
        self.error_at(ctx, expr.span, kind);
        Some(None)
    }

    /// `baseline.NAME` in a gate: the metric's value in the `--baseline` report.
    pub(super) fn baseline_metric(
        &mut self,
        expr: &Expr,
        scope: Scope<'_>,
        ctx: &mut ExprCtx<'_>,
    ) -> Option<Option<(DeclaredOp, Type)>> {
        let (root, name) = name_dot_name(expr)?;
        let metrics = &self.names.spec.metrics;
        if root != "baseline" {
            return None;
        }
        if !scope.is_gate() {
            self.error_at(ctx, expr.span, E::BaselineOutsideGate);
            return Some(None);
        }
        if let Some(index) = self.names.metric(name) {
            let metric = DeclaredMetric(index);
            return Some(Some((Op::Baseline(metric), scope.metric_type(metric))));
        }
        let kind = E::UnknownBaselineMetric {
            name: name.clone(),
            metrics: metrics.iter().map(|m| m.name.text.clone()).collect(),
        };
        self.error_at(ctx, expr.span, kind);
        Some(None)
    }

    /// `gold.answer_json.claim` (or, in a key, `answer_json.claim`) as a static path.
    pub(super) fn dataset_path(
        &mut self,
        expr: &Expr,
        scope: Scope<'_>,
        ctx: &ExprCtx<'_>,
    ) -> Option<DeclaredOp> {
        let mut segments = Vec::new();
        let mut cursor = expr;
        loop {
            match &cursor.kind {
                ExprKind::Member(base, name) => {
                    segments.push(name.clone());
                    cursor = base;
                }
                ExprKind::Index(base, index) => match &index.kind {
                    ExprKind::String(name) => {
                        segments.push(name.clone());
                        cursor = base;
                    }
                    _ => return None,
                },
                ExprKind::Name(root) => {
                    segments.reverse();
                    let dataset = match scope {
                        Scope::Record(dataset) => {
                            segments.insert(0, root.clone());
                            dataset
                        }
                        Scope::Item { .. } => DeclaredDataset(self.dataset_index(root)?),
                        _ => return None,
                    };
                    return Some(Op::Input(DatasetPath {
                        dataset,
                        path: segments,
                        at: self.at(ctx, expr.span),
                    }));
                }
                _ => return None,
            }
        }
    }

    pub(super) fn dataset_index(&self, name: &str) -> Option<usize> {
        self.names.dataset(name)
    }

    pub(super) fn name(
        &mut self,
        name: &str,
        span: Span,
        scope: Scope<'_>,
        ctx: &mut ExprCtx<'_>,
    ) -> Option<(DeclaredOp, Type)> {
        let spec = self.names.spec;
        if let Scope::Record(dataset) = scope {
            let path = vec![name.to_string()];
            let ty = self.schema_type(dataset, &path);
            let at = self.at(ctx, span);
            return Some((Op::Input(DatasetPath { dataset, path, at }), ty));
        }
        if let (
            "k",
            Scope::Metric { cutoff: Some(k) }
            | Scope::Item {
                in_aggregate: true,
                cutoff: Some(k),
            },
        ) = (name, scope)
        {
            return Some((Op::Const(Value::Number(f64::from(k))), Type::Int));
        }
        if let Some(param) = self.names.param(name) {
            let ty = match param.ty {
                ParamType::Number => Type::Float,
                ParamType::Integer => Type::Int,
                ParamType::String => Type::Str,
                ParamType::Bool => Type::Bool,
                ParamType::List => Type::list_of(Type::Any),
            };
            return Some((Op::Const(param.value.clone()), ty));
        }
        let derived = &self.names.derived;
        match scope {
            Scope::Item { in_aggregate, .. } => {
                if let Some(dataset) = self.dataset_index(name) {
                    let path = Vec::new();
                    let dataset = DeclaredDataset(dataset);
                    let at = self.at(ctx, span);
                    return Some((Op::Input(DatasetPath { dataset, path, at }), Type::Any));
                }
                if let Some(index) = self.names.derived(name) {
                    // Inside a metric's aggregate this is not a dependency between metrics.
                    if !in_aggregate {
                        ctx.deps.push(index);
                    }
                    let ty = self.derived_type_hint(index);
                    return Some((Op::Derived(DeclaredDerived(index)), ty));
                }
            }
            Scope::Metric { .. } | Scope::Gate { .. } => {
                if let Some(index) = self.names.metric(name) {
                    if scope.is_metric() {
                        ctx.deps.push(index);
                    }
                    let metric = DeclaredMetric(index);
                    return Some((Op::Metric(metric), scope.metric_type(metric)));
                }
            }
            Scope::Params | Scope::Record(_) => {}
        }
        // Unknown: what could have been meant.
        let params = self.names.params.iter().map(|p| p.name.as_str());
        let datasets = spec.datasets.iter().map(|d| d.name.text.as_str());
        let metrics = spec.metrics.iter().map(|m| m.name.text.as_str());
        let candidates: Vec<&str> = match scope {
            Scope::Item { .. } => params
                .chain(datasets)
                .chain(derived.iter().map(String::as_str))
                .collect(),
            Scope::Metric { .. } | Scope::Gate { .. } => params.chain(metrics).collect(),
            Scope::Params | Scope::Record(_) => params.collect(),
        };
        let is_item_name = self.names.dataset(name).is_some() || self.names.derived(name).is_some();
        let is_metric = self.names.metric(name).is_some();
        let kind = E::UnknownName {
            name: name.to_string(),
            scope: match scope {
                Scope::Item { .. } => NameScope::Item,
                Scope::Metric { .. } => NameScope::Metric,
                Scope::Gate { .. } => NameScope::Gate,
                Scope::Params | Scope::Record(_) => NameScope::Params,
            },
            is_item_name,
            is_metric,
            candidates: candidates.into_iter().map(str::to_string).collect(),
        };
        self.error_at(ctx, span, kind);
        None
    }

    /// The type of a derived value, when it can be known without ordering:
    /// matchers have fixed types; a field's is known once the fields are lowered
    /// (until then, fields reading fields see `any` and are checked at run time).
    pub(super) fn derived_type_hint(&self, index: usize) -> Type {
        let spec = self.names.spec;
        if let Some(ty) = self.field_types.get(index) {
            return ty.clone();
        }
        let fields = spec.fields.len();
        if index >= fields + spec.matchers.len() {
            return Type::Str; // the label
        }
        if index >= fields {
            if let Some(kind) = matchers::kind(&spec.matchers[index - fields].kind.text) {
                return (kind.returns)();
            }
        }
        Type::Any
    }
}

/// A schema's data type as the type checker sees it.
fn static_type(ty: &DataType) -> Type {
    match ty {
        DataType::Any => Type::Any,
        DataType::String => Type::Str,
        DataType::Bool => Type::Bool,
        DataType::Number => Type::Float,
        DataType::Integer => Type::Int,
        DataType::Object => Type::Object,
        DataType::List(None) => Type::list_of(Type::Any),
        DataType::List(Some(element)) => Type::list_of(static_type(element)),
    }
}
