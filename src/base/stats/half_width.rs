//! How an interval is shown beside its value, in every report and the terminal.

use crate::base::value::format_significant;

/// `± 0.031`: the larger distance from the value to a bound of its interval,
/// to three significant digits.
pub fn plus_minus(value: f64, low: f64, high: f64) -> String {
    let half = (value - low).max(high - value).max(0.0);
    format!("± {}", format_significant(half))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_widths_keep_three_significant_digits() {
        assert_eq!(plus_minus(0.5, 0.45, 0.56), "± 0.0600");
        assert_eq!(plus_minus(120.0, 100.0, 130.0), "± 20.0");
        assert_eq!(plus_minus(1.0, 1.0, 1.0), "± 0");
    }
}
