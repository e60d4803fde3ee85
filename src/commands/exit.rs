//! Exit statuses: the exit code is the gate.

pub const PASS: i32 = 0;
pub const GATE_FAILED: i32 = 1;
pub const ERROR: i32 = 2;
