//! Decimal text to a float, as `str::parse::<f64>` reads it, faster for the plain
//! decimals that fill TREC runs and CSV columns (`20.7762`, `-3`, `0.5`).

/// `text.parse::<f64>()`, with a fast path for `[+-]digits[.digits]` whose digits
/// make an integer of at most 2^53 and whose fraction has at most 22 digits. Both
/// that integer and the power of ten are then exact floats, so one division is
/// correctly rounded and equals the full parser's result (Clinger's fast path).
/// Anything else (exponents, `.5`, `inf`, long mantissas) takes the full parser.
pub fn parse_f64(text: &str) -> Option<f64> {
    fast_path(text.as_bytes()).or_else(|| text.parse().ok())
}

fn fast_path(bytes: &[u8]) -> Option<f64> {
    const POWERS: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];
    let (negative, digits) = match bytes.first()? {
        b'-' => (true, &bytes[1..]),
        b'+' => (false, &bytes[1..]),
        _ => (false, bytes),
    };
    // One pass: the digits into the mantissa, the point's place noted. (A
    // search for the point and then a loop over the two parts chained took a
    // tenth of reading a TREC run.)
    let (mut mantissa, mut point) = (0u64, None);
    for (i, &b) in digits.iter().enumerate() {
        let digit = b.wrapping_sub(b'0');
        if digit <= 9 {
            // Wraps past 19 digits, which are refused below.
            mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(digit));
        } else if b == b'.' && point.is_none() {
            point = Some(i);
        } else {
            return None;
        }
    }
    let whole = point.unwrap_or(digits.len());
    let fraction = point.map_or(0, |point| digits.len() - point - 1);
    if whole == 0 || (point.is_some() && fraction == 0) || fraction >= POWERS.len() {
        return None;
    }
    // At most 19 digits cannot overflow a u64; the bound below is the real limit.
    if whole + fraction > 19 {
        return None;
    }
    if mantissa > 1 << 53 {
        return None;
    }
    let value = mantissa as f64 / POWERS[fraction];
    Some(if negative { -value } else { value })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_decimals_and_what_falls_back() {
        assert_eq!(parse_f64("20.7762"), Some(20.7762));
        assert_eq!(parse_f64("-3"), Some(-3.0));
        assert!(parse_f64("-0").unwrap().is_sign_negative());
        assert_eq!(parse_f64("+0.5"), Some(0.5));
        // Not on the fast path, still read as the full parser reads them.
        assert_eq!(parse_f64(".5"), Some(0.5));
        assert_eq!(parse_f64("5."), Some(5.0));
        assert_eq!(parse_f64("1e3"), Some(1000.0));
        assert_eq!(parse_f64("9007199254740993"), Some(9007199254740992.0));
        assert_eq!(parse_f64("inf"), Some(f64::INFINITY));
        assert_eq!(parse_f64(""), None);
        assert_eq!(parse_f64("-"), None);
        assert_eq!(parse_f64("1.2.3"), None);
        assert_eq!(parse_f64("1,5"), None);
    }

    proptest::proptest! {
        #[test]
        fn equals_the_full_parser(text in "[+-]?[0-9]{0,12}(\\.[0-9]{0,12})?") {
            let parsed = parse_f64(&text);
            let full = text.parse::<f64>().ok();
            proptest::prop_assert_eq!(parsed.map(f64::to_bits), full.map(f64::to_bits));
        }

        #[test]
        fn equals_the_full_parser_on_stray_signs_and_points(text in "[+.0-9-]{0,24}") {
            proptest::prop_assert_eq!(
                parse_f64(&text).map(f64::to_bits),
                text.parse::<f64>().ok().map(f64::to_bits)
            );
        }

        #[test]
        fn equals_the_full_parser_near_its_limits(
            whole in 0u64..(1 << 53),
            shift in 0usize..23,
            negative: bool,
        ) {
            // `shift` fraction digits: the point inside the digits, or zeros after it.
            let digits = whole.to_string();
            let text = match shift {
                0 => digits,
                n if n < digits.len() => {
                    format!("{}.{}", &digits[..digits.len() - n], &digits[digits.len() - n..])
                }
                n => format!("0.{digits:0>n$}"),
            };
            let text = if negative { format!("-{text}") } else { text };
            proptest::prop_assert_eq!(
                parse_f64(&text).map(f64::to_bits),
                text.parse::<f64>().ok().map(f64::to_bits)
            );
        }
    }
}
