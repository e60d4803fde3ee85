//! The evaluation IR: typed operations over resolved slots, and the interpreter
//! that evaluates them against a frame. No names and no syntax survive here.

mod interp;
mod op;
mod record;

pub use interp::{evaluate, evaluate_constant, evaluate_on_record, Frame};
pub use op::{Op, RunStat};
pub use record::Record;
