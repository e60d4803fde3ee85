//! What an op reads of a dataset: one record's projected fields.

use crate::base::value::Value;

/// One record: the projected fields in their slots, and the line it came from.
#[derive(Debug, Clone)]
pub struct Record {
    pub slots: Box<[Value]>,
    pub line: u32,
}
