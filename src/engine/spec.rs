//! A compiled spec: loaded, its inputs found, type-checked and linked into a
//! plan before any record is read; then evaluated whole, or one bucket of its
//! keys at a time into partial states that merge.

use std::path::Path;

use crate::base::diagnostic::{Diagnostic, Level};
use crate::engine::evaluation::Evaluation;
use crate::engine::options::Options;
use crate::eval::{self, Bucket, Partial, PhysicalPlan, Resources, Roles};
use crate::inputs::streams::Spooled;
use crate::inputs::{self, Templates};
use crate::lock::{self, LockStamp};
use crate::plan::Plan;

/// A spec compiled into its plan, with its report templates and, when it is
/// frozen, its lock's stamp.
pub struct Spec {
    pub(super) plan: Plan,
    pub(super) templates: Templates,
    roles: Roles,
    pub(super) lock: Option<LockStamp>,
    /// What compiling noticed that does not stop it (drift a caller allowed).
    pub(super) warnings: Vec<Diagnostic>,
    /// Streams (standard input, FIFOs) read into temporary copies, kept as
    /// long as the spec.
    _spooled: Spooled,
}

/// The state of some of a spec's items (one bucket of its keys), not yet
/// decided: encoded as bytes to travel, merged with the states of the other
/// buckets, and finished into an [`Evaluation`] once whole.
pub struct PartialState<'s> {
    partial: Partial<'s>,
}

impl Spec {
    /// Loads the spec at `path`, finds its inputs with `options` applied, and
    /// compiles it; a frozen spec's files are checked against its lock.
    /// Every error of the spec is reported, with its place.
    pub fn compile(path: impl AsRef<Path>, options: &Options) -> Result<Spec, Vec<Diagnostic>> {
        let spec = crate::spec::load(path.as_ref())?;
        let (mut found, templates) = inputs::gather(&spec, &options.overrides);
        let spooled = inputs::spool_streams(&mut found, &spec).map_err(|d| vec![d])?;
        let mut plan = crate::plan::compile(&spec, &options.overrides.params, found)?;
        for (name, table) in &options.tables {
            if let Some(dataset) = plan.datasets.iter_mut().find(|d| d.name == *name) {
                dataset.table = Some(table.clone());
            }
        }
        for dataset in &mut plan.datasets {
            dataset.events = options.events.clone();
        }
        let (lock, warnings) = check_lock(&plan, options.allow_drift)?;
        let roles = Roles::of(&plan);
        Ok(Spec {
            plan,
            templates,
            roles,
            lock,
            warnings,
            _spooled: spooled,
        })
    }

    /// The plan, as `evalspec check` prints it.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// What compiling noticed that does not stop it (a frozen spec's drift,
    /// allowed).
    pub fn warnings(&self) -> &[Diagnostic] {
        &self.warnings
    }

    /// How the spec runs with `resources`: the join, partitions, threads,
    /// memory and reading order.
    pub fn physical(&self, resources: Resources) -> Result<PhysicalPlan, Diagnostic> {
        PhysicalPlan::decide(&self.plan, resources)
    }

    /// Evaluates the spec over every item.
    pub fn evaluate(&self, resources: Resources) -> Result<Evaluation<'_>, Vec<Diagnostic>> {
        let physical = self.physical(resources).map_err(|d| vec![d])?;
        self.evaluate_with(&physical)
    }

    /// Evaluates the spec as `physical` says.
    pub fn evaluate_with(
        &self,
        physical: &PhysicalPlan,
    ) -> Result<Evaluation<'_>, Vec<Diagnostic>> {
        let partial = eval::evaluate_partial(&self.plan, &self.roles, physical)?;
        let outcome = eval::finish(partial, physical.threads)?;
        Ok(Evaluation::new(self, outcome, physical.threads))
    }

    /// Evaluates the items (and records) whose keys fall in `bucket` (all,
    /// without one), without deciding anything: a state to merge with the
    /// other buckets'.
    pub fn evaluate_partial(
        &self,
        resources: Resources,
        bucket: Option<Bucket>,
    ) -> Result<PartialState<'_>, Vec<Diagnostic>> {
        let mut physical = self.physical(resources).map_err(|d| vec![d])?;
        physical.bucket = bucket;
        let partial = eval::evaluate_partial(&self.plan, &self.roles, &physical)?;
        Ok(PartialState { partial })
    }

    /// A state another process encoded ([`PartialState::encode`]) for this
    /// spec; refused when its bytes are damaged, or another spec's, params'
    /// or evalspec version's.
    pub fn decode_partial(
        &self,
        bytes: &[u8],
        resources: Resources,
    ) -> Result<PartialState<'_>, Diagnostic> {
        let physical = self.physical(resources)?;
        let partial = Partial::decode(&self.plan, &self.roles, bytes, &physical)?;
        Ok(PartialState { partial })
    }

    /// Decides a state that holds every bucket.
    pub fn finish(
        &self,
        state: PartialState<'_>,
        resources: Resources,
    ) -> Result<Evaluation<'_>, Vec<Diagnostic>> {
        let outcome = eval::finish(state.partial, resources.threads)?;
        Ok(Evaluation::new(self, outcome, resources.threads))
    }

    /// What identifies states of this spec, its params and evalspec's
    /// version: states with another do not merge.
    pub fn fingerprint(&self) -> String {
        Partial::fingerprint(&self.plan)
    }
}

impl<'s> PartialState<'s> {
    /// The state as versioned bytes.
    pub fn encode(&mut self) -> Result<Vec<u8>, Diagnostic> {
        self.partial.encode().map_err(|error| {
            Diagnostic::error(
                "cannot_encode_state",
                format!("cannot encode a partial state: {error}"),
            )
            .help("point TMPDIR at a disk with room for items.jsonl's lines")
        })
    }

    /// Merges the state of other buckets of the same spec.
    pub fn merge(&mut self, other: PartialState<'s>) -> Result<(), Diagnostic> {
        self.partial.merge(other.partial)
    }
}

/// A frozen spec's lock checked: its stamp, and the drift as warnings when
/// `allow_drift`; drift otherwise stops the evaluation with a diagnostic per
/// drifted file.
fn check_lock(
    plan: &Plan,
    allow_drift: bool,
) -> Result<(Option<LockStamp>, Vec<Diagnostic>), Vec<Diagnostic>> {
    match lock::verify(plan).map_err(|d| vec![d])? {
        None => Ok((None, Vec::new())),
        Some((stamp, drift)) if drift.is_empty() => Ok((Some(stamp), Vec::new())),
        Some((stamp, drift)) => {
            let mut diagnostics = lock::drift_diagnostics(plan, &stamp, &drift, !allow_drift);
            if !allow_drift {
                return Err(diagnostics);
            }
            for d in &mut diagnostics {
                d.level = Level::Warning;
            }
            Ok((Some(stamp), diagnostics))
        }
    }
}
