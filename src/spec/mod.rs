//! The spec: what the user declares in YAML, loaded and validated structurally.
//! Expressions are kept as located text here; `plan` parses and type-checks them.

pub mod error;
mod extends;
pub mod json_schema;
mod load;
mod mapping;
mod model;
pub mod params;
mod remove;
pub mod yaml;

pub use load::{check_param_range, load, KEY_TABLES};
pub use model::*;
