//! Splits a JSON array into the byte ranges of its elements, so that each element
//! can be parsed (and its errors located) on its own.

use std::ops::Range;

use crate::data::error::ArrayProblem;

/// The element ranges of the top-level array in `text`, or the byte offset and
/// the kind of the first structural error.
pub fn split(text: &str) -> Result<Vec<Range<usize>>, (usize, ArrayProblem)> {
    let bytes = text.as_bytes();
    let mut i = skip_ws(bytes, 0);
    if bytes.get(i) != Some(&b'[') {
        return Err((i, ArrayProblem::NoOpeningBracket));
    }
    i += 1;
    let mut elements = Vec::new();
    loop {
        i = skip_ws(bytes, i);
        match bytes.get(i) {
            None => return Err((i, ArrayProblem::NotClosed)),
            Some(b']') if elements.is_empty() => {
                i += 1;
                break;
            }
            _ => {}
        }
        let start = i;
        i = skip_value(bytes, i)?;
        elements.push(start..i);
        i = skip_ws(bytes, i);
        match bytes.get(i) {
            Some(b',') => i += 1,
            Some(b']') => {
                i += 1;
                break;
            }
            Some(_) => return Err((i, ArrayProblem::NoSeparator)),
            None => return Err((i, ArrayProblem::NotClosed)),
        }
    }
    let end = skip_ws(bytes, i);
    if end < bytes.len() {
        return Err((end, ArrayProblem::TextAfter));
    }
    Ok(elements)
}

fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while matches!(bytes.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// The end of the value starting at `i`: brackets are balanced and strings skipped;
/// the value itself is validated later by the JSON parser.
fn skip_value(bytes: &[u8], mut i: usize) -> Result<usize, (usize, ArrayProblem)> {
    let start = i;
    let mut depth = 0usize;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if i >= bytes.len() {
                    return Err((start, ArrayProblem::StringNotClosed));
                }
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' if depth == 0 => return Ok(i),
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Ok(i + 1);
                }
            }
            b',' if depth == 0 => return Ok(i),
            b' ' | b'\t' | b'\n' | b'\r' if depth == 0 => return Ok(i),
            _ => {}
        }
        i += 1;
    }
    if depth > 0 {
        return Err((start, ArrayProblem::ElementNotClosed));
    }
    Ok(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_top_level_elements() {
        let text = " [ {\"a\": [1, \"],\"]}, {\"b\": 2}\n]\n";
        let parts: Vec<&str> = split(text).unwrap().into_iter().map(|r| &text[r]).collect();
        assert_eq!(parts, ["{\"a\": [1, \"],\"]}", "{\"b\": 2}"]);
        assert_eq!(split("[]").unwrap(), Vec::<Range<usize>>::new());
    }

    #[test]
    fn reports_structural_errors() {
        assert_eq!(
            split("{}").unwrap_err().1.to_string(),
            "expected `[` to start the array"
        );
        assert_eq!(
            split("[{}, {}").unwrap_err().1.to_string(),
            "the array is not closed with `]`"
        );
        assert_eq!(split("[{} {}]").unwrap_err().1, ArrayProblem::NoSeparator);
        assert_eq!(split("[{}] x").unwrap_err().0, 5);
    }
}
