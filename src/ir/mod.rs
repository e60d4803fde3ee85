//! The evaluation IR: typed operations over resolved slots, and the interpreter
//! that evaluates them against a frame. No names and no syntax survive here.

mod error;
pub mod formula;
pub mod ids;
mod interp;
mod op;
mod record;

pub use error::RuntimeError;
pub use ids::{AggregateId, DatasetId, DerivedId, ExprAt, ExprLocations, MetricId, Slot, SlotId};
pub use interp::{
    evaluate, evaluate_constant, evaluate_into, evaluate_on_record, Frame, TextTest, TextTests,
};
pub use op::{Linked, Op, Relink, Stage};
pub use record::Record;
