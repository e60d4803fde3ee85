//! The library of callables an expression can name: scalar built-ins, matchers,
//! and the ranking and page-span measures they are built from.

pub mod builtins;
pub mod matchers;
pub mod page_spans;
pub mod ranking;
