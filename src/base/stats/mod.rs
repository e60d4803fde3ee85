//! Statistics for intervals and paired tests: a seeded generator, the normal
//! distribution, Wilson score intervals, exact binomial (McNemar) tests and a
//! weighted bootstrap over items. Pure functions of their inputs (data in item
//! order, label, seed): no clock, no thread count, no hash-map order. The
//! formulas are stated in grammar/README.md ("Statistics").

pub mod binomial;
pub mod bootstrap;
pub mod half_width;
pub mod normal;
#[cfg(test)]
mod permutation;
pub mod rng;
pub mod wilson;
