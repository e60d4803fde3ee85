//! Ids are types: each index space has its own, so an index of one kind can never
//! be used for another. These are the ids of a linked plan; the compiler refers to
//! declarations with ids of its own until it links them (see `plan::compile`).

use crate::base::diagnostic::Location;

macro_rules! id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(usize);

        impl $name {
            pub const fn new(index: usize) -> Self {
                Self(index)
            }

            pub fn index(self) -> usize {
                self.0
            }
        }
    };
}

id!(
    /// A per-item value (field, matcher or label): its place in the plan's
    /// `derived`, which is in dependency order.
    DerivedId
);
id!(
    /// A metric: its place in the plan's `metrics`, in dependency order.
    MetricId
);
id!(
    /// An aggregate folded over the items: its place in the plan's `aggregates`.
    AggregateId
);
id!(
    /// A dataset: its place in the plan's `datasets` (looked-up datasets first,
    /// the items dataset last).
    DatasetId
);
id!(
    /// A projected field of a dataset's records: its place in each record's slots.
    SlotId
);

/// A projected field of one dataset's record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub dataset: DatasetId,
    pub slot: SlotId,
}

/// Where an expression, or a part of one, is written: its place in the plan's
/// table of locations ([`crate::ir::ExprLocations`]). The ops that can fail carry
/// one, so an error can name the failing sub-expression; it is looked up only
/// when an error is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ExprAt(u32);

impl ExprAt {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The table [`ExprAt`] indexes: filled by the compiler, kept in the plan.
#[derive(Debug, Clone, Default)]
pub struct ExprLocations(Vec<Location>);

impl ExprLocations {
    /// Adds a location and returns its id.
    pub fn add(&mut self, location: Location) -> ExprAt {
        let id = u32::try_from(self.0.len()).expect("fewer than 2^32 expressions");
        self.0.push(location);
        ExprAt(id)
    }

    pub fn get(&self, at: ExprAt) -> &Location {
        &self.0[at.index()]
    }
}
