pub mod baseline;
pub mod generate;
