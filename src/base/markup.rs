//! Data values made inert in Markdown that GitHub renders (a step summary, a
//! PR comment): no HTML (`<!--` would hide what follows, `<img>` would load a
//! tracking pixel, a forged `<!-- evalspec-diff: … -->` marker would be taken
//! for another comment's), no `@mention` (a notification on every update), and
//! no invisible character that reorders or hides text (U+202E, zero-width
//! spaces): each is shown as `\u{202e}`, as control characters are.

/// `text` with a `<` that opens a tag or a comment (before a letter, `/`, `!`
/// or `?`) and an `@` before a name written as character references, and
/// control, bidirectional and zero-width characters shown escaped. `a <= b`
/// and `x > 0` stay as they are, readable in a code span too.
pub fn escape_markdown(text: &str) -> String {
    if !text.chars().any(|c| matches!(c, '<' | '@') || is_hidden(c)) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied().unwrap_or(' ');
        match c {
            '<' if next.is_alphabetic() || matches!(next, '/' | '!' | '?') => out.push_str("&lt;"),
            '@' if next.is_alphanumeric() || next == '_' => out.push_str("&#64;"),
            c if is_hidden(c) => out.push_str(&c.escape_unicode().to_string()),
            c => out.push(c),
        }
    }
    out
}

/// Controls (but line breaks and tabs), bidirectional marks and overrides,
/// and zero-width characters.
fn is_hidden(c: char) -> bool {
    (c.is_control() && !matches!(c, '\n' | '\t'))
        || matches!(
            c,
            '\u{200b}'..='\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2060}'..='\u{2069}'
                | '\u{061c}'
                | '\u{feff}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_mentions_and_hidden_characters_are_inert() {
        assert_eq!(escape_markdown("plain text"), "plain text");
        assert_eq!(
            escape_markdown("<!-- evalspec-diff: x -->"),
            "&lt;!-- evalspec-diff: x -->"
        );
        assert_eq!(escape_markdown("hi @team"), "hi &#64;team");
        assert_eq!(
            escape_markdown("a\u{202e}b\u{200b}c"),
            "a\\u{202e}b\\u{200b}c"
        );
        assert_eq!(escape_markdown("a\u{1b}[2J\nb"), "a\\u{1b}[2J\nb");
        assert_eq!(
            escape_markdown("a <= b, c < 2, d > 0, me @ home"),
            "a <= b, c < 2, d > 0, me @ home"
        );
        assert_eq!(escape_markdown("<img src=x>"), "&lt;img src=x>");
    }
}
