//! evalspec as a library: compile a spec, evaluate it over its datasets
//! (files, or Arrow tables in memory), read the outcome as typed values, write
//! its reports; or evaluate one bucket of its keys on each of several
//! machines, send each partial state as bytes, and merge them into the same
//! outcome. The `evalspec` command, the Python package and the Spark driver
//! are all consumers of this API.
//!
//! ```
//! use evalspec::{Evaluation, Options, Resources, Spec};
//!
//! let spec = Spec::compile("specs/rag-precision.yaml", &Options::new().param("k", "3"))
//!     .expect("a spec that compiles");
//! let resources = Resources::threads(2);
//! let evaluation: Evaluation<'_> = spec.evaluate(resources).expect("data that reads");
//! assert!(evaluation.passed());
//! let precision = evaluation.metric("precision").and_then(|v| v.as_f64());
//! assert!(precision.is_some_and(|p| p > 0.5));
//! // report.json's bytes, as `evalspec run` writes them:
//! assert!(evaluation.report_json().starts_with("{\n"));
//!
//! // The same spec, its keys split into two buckets evaluated apart (on two
//! // machines, say), their states sent as bytes and merged:
//! let mut whole = None;
//! for index in 0..2 {
//!     let bucket = evalspec::Bucket { index, of: 2 };
//!     let bytes = spec.evaluate_partial(resources, Some(bucket)).unwrap().encode().unwrap();
//!     let state = spec.decode_partial(&bytes, resources).unwrap();
//!     match &mut whole {
//!         None => whole = Some(state),
//!         Some(whole) => whole.merge(state).unwrap(),
//!     }
//! }
//! let merged = spec.finish(whole.unwrap(), resources).unwrap();
//! assert_eq!(merged.report_json(), evaluation.report_json());
//! ```

mod evaluation;
mod options;
mod spec;

pub use evaluation::{Evaluation, GateResult};
pub use options::Options;
pub use spec::{PartialState, Spec};
