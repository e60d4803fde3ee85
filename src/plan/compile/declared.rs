//! The compiler's own references, before linking: positions of declarations in
//! the spec, and dataset paths not yet assigned to slots. They are a stage of
//! their own ([`Declared`]), so an op before linking cannot be mistaken for one
//! the evaluator runs; `link` maps every one to its id in the plan.

use crate::ir::{ExprAt, Stage};

macro_rules! declared {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
        pub struct $name(pub usize);
    };
}

declared!(
    /// A field, matcher or the label, by declaration position (fields, then
    /// matchers, then the label).
    DeclaredDerived
);
declared!(
    /// A metric, by declaration position.
    DeclaredMetric
);
declared!(
    /// A dataset, by declaration position.
    DeclaredDataset
);

/// A value read from a dataset's record, by its path from the record's root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatasetPath {
    pub dataset: DeclaredDataset,
    pub path: Vec<String>,
    /// Where the path is written: linking may read its last fields from a value
    /// read whole, which fails when that value is not an object.
    pub at: ExprAt,
}

/// Ops as the compiler builds them.
#[derive(Debug, Clone)]
pub struct Declared;

impl Stage for Declared {
    type Input = DatasetPath;
    type Derived = DeclaredDerived;
    type Metric = DeclaredMetric;
    type Dataset = DeclaredDataset;
}
