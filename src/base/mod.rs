//! The foundation every layer stands on: values and their static types, source
//! files and diagnostics, decimal text to floats, drops deferred off the critical
//! path, name suggestions, natural ordering, exact sums, typed JSON, atomic file
//! writes, SHA-256 and statistics. Imports nothing else of the crate.

pub mod atomic;
pub mod codec;
pub mod decimal;
pub mod deferred;
pub mod diagnostic;
pub mod events;
pub mod exact_sum;
pub mod files;
pub mod markup;
pub mod natural;
pub mod parallel;
pub mod python;
pub mod sha256;
pub mod source;
pub mod stats;
pub mod suggest;
pub mod table;
pub mod typed_json;
pub mod types;
pub mod value;
