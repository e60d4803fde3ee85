//! "Did you mean …?" suggestions for misspelled names and keys.

/// The candidate closest to `name` by edit distance, if it is close enough to be a
/// plausible typo (at most a third of the name's length, and at least one edit allowed).
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|candidate| (edit_distance(name, candidate), candidate))
        .filter(|&(distance, _)| distance <= limit)
        .min_by_key(|&(distance, candidate)| (distance, candidate))
        .map(|(_, candidate)| candidate)
}

/// The help line "did you mean `X`?" for the closest candidate, if one is close.
pub fn suggestion<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    did_you_mean(name, candidates).map(|s| format!("did you mean `{s}`?"))
}

/// As [`suggestion`], else `otherwise` (the names there are to choose from).
pub fn suggestion_or<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    otherwise: impl FnOnce() -> String,
) -> String {
    suggestion(name, candidates).unwrap_or_else(otherwise)
}

/// Levenshtein distance over characters, with adjacent transpositions costing one.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev2 = vec![0usize; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut row = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (prev[j] + 1).min(row[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(prev2[j - 2] + 1);
            }
        }
        prev2 = std::mem::replace(&mut prev, row);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        let names = ["shipped", "answerable", "precision"];
        assert_eq!(did_you_mean("shiped", names), Some("shipped"));
        assert_eq!(did_you_mean("precison", names), Some("precision"));
        assert_eq!(did_you_mean("answreable", names), Some("answerable"));
        assert_eq!(did_you_mean("latency", names), None);
    }
}
