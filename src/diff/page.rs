//! [`Page`]: the text of a diff, written line by line within a budget. A
//! Markdown diff goes into a pull-request comment, which GitHub caps at 65,536
//! characters, so the whole Markdown output is kept within [`MARKDOWN_LIMIT`]:
//! a line that does not fit is left out, and a list stops with `… and N more`.
//! No line is longer than about [`MAX_LINE`] characters: lists wrap, long keys
//! and lines are clipped. The JSON form is never cut.

use std::fmt;

/// The most characters `diff --format md` writes.
pub const MARKDOWN_LIMIT: usize = 60_000;
/// Room kept for what closes a page (notes on what was cut, the verdict).
const RESERVE: usize = 1_000;
/// The most entries of one list in terminal text. (In Markdown the lists share
/// the budget.)
pub const TEXT_LIST: usize = 20;
/// Lists wrap past this many characters.
const WIDTH: usize = 100;
/// A line longer than this is clipped.
pub const MAX_LINE: usize = 1_000;
/// A key longer than this is clipped in lists.
const KEY: usize = 80;
/// The longest `, … and N more`.
const TAIL: usize = ", … and 18446744073709551615 more".len();

pub struct Page {
    text: String,
    /// Characters in `text`.
    chars: usize,
    /// Budget for lines written through [`fmt::Write`] and [`Page::list`].
    limit: usize,
    /// What `fmt::Write` has written since the last newline.
    line: String,
    /// Lines left out since [`Page::dropped`] was last asked.
    dropped: usize,
    /// Whether anything was left out.
    cut: bool,
}

impl Page {
    /// A page of at most `limit` characters; without a limit, long lines are
    /// still clipped.
    pub fn new(limit: Option<usize>) -> Page {
        Page {
            text: String::new(),
            chars: 0,
            limit: limit.map_or(usize::MAX, |l| l.saturating_sub(RESERVE)),
            line: String::new(),
            dropped: 0,
            cut: false,
        }
    }

    /// Whether anything was left out so far.
    pub fn cut(&self) -> bool {
        self.cut
    }

    /// Characters left in the budget.
    pub fn room(&self) -> usize {
        self.limit.saturating_sub(self.chars)
    }

    /// Keeps `n` characters of the budget back (for what comes later) until
    /// [`Page::release`] gives them back.
    pub fn hold(&mut self, n: usize) {
        self.limit = self.limit.saturating_sub(n);
    }

    pub fn release(&mut self, n: usize) {
        self.limit = self.limit.saturating_add(n);
    }

    /// Records that something was left out whole.
    pub fn left_out(&mut self) {
        self.cut = true;
    }

    /// How many lines were left out since the last call.
    pub fn dropped(&mut self) -> usize {
        std::mem::take(&mut self.dropped)
    }

    /// Appends `text` outside the budget: the closing lines, which the reserve
    /// leaves room for. Keep it short.
    pub fn close(&mut self, text: &str) {
        self.flush();
        self.chars += text.chars().count();
        self.text.push_str(text);
    }

    /// Commits what `fmt::Write` left without a newline.
    fn flush(&mut self) {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.commit(&line);
        }
    }

    /// Appends one line (clipped; colours kept) when it fits.
    fn commit(&mut self, line: &str) {
        let line = match line.char_indices().nth(MAX_LINE) {
            Some((at, _)) => format!("{}…", &line[..at]),
            None => line.to_string(),
        };
        let n = line.chars().count() + 1;
        if self.chars.saturating_add(n) <= self.limit {
            self.chars += n;
            self.text.push_str(&line);
            self.text.push('\n');
        } else {
            self.dropped += 1;
            self.cut = true;
        }
    }

    /// Writes `head` followed by `entries` (`total` of them) separated by commas,
    /// wrapping onto lines that start with `indent`; at most `max` entries in at
    /// most `chars` characters, and only as many as the budget allows, then
    /// `… and N more`. When not even the head fits, the list is left out
    /// (counted by [`Page::dropped`]).
    pub fn list(
        &mut self,
        head: &str,
        indent: &str,
        entries: impl Iterator<Item = String>,
        total: usize,
        max: usize,
        chars: usize,
    ) {
        let limit = self.limit.min(self.chars.saturating_add(chars));
        self.flush();
        let mut line = head.to_string();
        let mut width = line.chars().count();
        // Characters of the list committed so far (wrapped lines).
        let mut written = 0;
        let mut lines = Vec::new();
        let mut shown = 0;
        for entry in entries.take(max) {
            let n = entry.chars().count();
            let wrap = shown > 0 && width + 2 + n > WIDTH;
            let grown = if wrap {
                width + 2 + indent.len() + n
            } else {
                width + if shown > 0 { 2 } else { 0 } + n
            };
            if self.chars.saturating_add(written + grown + TAIL + 1) > limit {
                break;
            }
            if wrap {
                line.push(',');
                written += width + 2;
                lines.push(std::mem::replace(&mut line, format!("{indent}{entry}")));
                width = indent.len() + n;
            } else {
                if shown > 0 {
                    line.push_str(", ");
                }
                line.push_str(&entry);
                width += if shown > 0 { 2 } else { 0 } + n;
            }
            shown += 1;
        }
        if shown < total {
            let sep = if shown > 0 { ", " } else { "" };
            line.push_str(&format!("{sep}… and {} more", total - shown));
            self.cut = true;
        }
        // The loop kept room for the tail; only a head too long for what is left fails.
        if self
            .chars
            .saturating_add(written + line.chars().count() + 1)
            > self.limit
        {
            self.dropped += 1;
            self.cut = true;
            return;
        }
        lines.push(line);
        for line in lines {
            self.chars += line.chars().count() + 1;
            self.text.push_str(&line);
            self.text.push('\n');
        }
    }

    pub fn finish(mut self) -> String {
        self.flush();
        self.text
    }
}

/// Line by line: each line is committed when its newline is written.
impl fmt::Write for Page {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let mut rest = s;
        while let Some(at) = rest.find('\n') {
            self.line.push_str(&rest[..at]);
            let line = std::mem::take(&mut self.line);
            self.commit(&line);
            rest = &rest[at + 1..];
        }
        self.line.push_str(rest);
        Ok(())
    }
}

/// `text` on one line of at most `max` characters: control characters
/// escaped, the rest clipped with `…`.
pub fn clip(text: &str, max: usize) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    match out.char_indices().nth(max) {
        None => out,
        Some(_) => {
            let mut clipped: String = out.chars().take(max - 1).collect();
            clipped.push('…');
            clipped
        }
    }
}

/// A key as listed: on one line, clipped.
pub fn key(key: &str) -> String {
    clip(key, KEY)
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;

    fn keys(n: usize) -> impl Iterator<Item = String> {
        (1..=n).map(|i| format!("q{i}"))
    }

    #[test]
    fn a_short_list_is_one_line() {
        let mut page = Page::new(None);
        page.list("- a (2): ", "  ", keys(2), 2, TEXT_LIST, usize::MAX);
        assert!(!page.cut());
        assert_eq!(page.finish(), "- a (2): q1, q2\n");
    }

    #[test]
    fn a_long_list_wraps_and_stops_at_its_cap() {
        let mut page = Page::new(None);
        page.list("- a (500): ", "  ", keys(500), 500, 40, usize::MAX);
        assert!(page.cut());
        let text = page.finish();
        assert!(
            text.lines().all(|l| l.chars().count() <= WIDTH + TAIL),
            "{text}"
        );
        assert!(text.starts_with("- a (500): q1, q2, "), "{text}");
        assert!(text.contains("\n  q"), "{text}");
        assert!(text.ends_with(", q40, … and 460 more\n"), "{text}");
    }

    #[test]
    fn a_page_never_passes_its_limit() {
        let mut page = Page::new(Some(RESERVE + 500));
        for i in 0..40 {
            let _ = writeln!(page, "line {i} of a table");
        }
        assert!(page.dropped() > 0);
        page.list("- a: ", "  ", keys(1000), 1000, 1000, usize::MAX);
        page.list("- b: ", "  ", keys(1000), 1000, 1000, usize::MAX);
        assert_eq!(page.dropped(), 2, "no room left for either list");
        page.close("closing\n");
        let text = page.finish();
        assert!(text.chars().count() <= 500 + "closing\n".len(), "{text}");
        assert!(text.ends_with("closing\n"));
    }

    #[test]
    fn a_list_fills_what_is_left_then_says_how_many_more() {
        let mut page = Page::new(Some(RESERVE + 300));
        page.list("- a: ", "  ", keys(1000), 1000, 1000, usize::MAX);
        let text = page.finish();
        assert!(text.chars().count() <= 300, "{}", text.chars().count());
        assert!(text.trim_end().ends_with(" more"), "{text}");
        let shown = text.matches('q').count();
        assert!(
            text.contains(&format!("… and {} more", 1000 - shown)),
            "{text}"
        );
    }

    #[test]
    fn a_list_keeps_to_its_share() {
        let mut page = Page::new(None);
        page.list("- a: ", "  ", keys(1000), 1000, 1000, 250);
        let text = page.finish();
        let n = text.chars().count();
        assert!((200..=250).contains(&n), "{n}: {text}");
    }

    #[test]
    fn keys_and_lines_are_clipped_to_one_line() {
        assert_eq!(key("a\nb"), "a\\nb");
        let long = "x".repeat(200);
        let clipped = key(&long);
        assert_eq!(clipped.chars().count(), KEY);
        assert!(clipped.ends_with('…'));
        assert_eq!(key("short"), "short");
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("abcd", 3), "ab…");
    }

    proptest::proptest! {
        #[test]
        fn no_page_passes_its_limit(
            limit in 0usize..3_000,
            lists in proptest::collection::vec((0usize..300, 1usize..60, 0usize..2_000), 0..6),
            rows in 0usize..100,
        ) {
            let mut page = Page::new(Some(RESERVE + limit));
            for i in 0..rows {
                let _ = writeln!(page, "| row {i} |");
            }
            for (n, width, share) in lists {
                let entries = (0..n).map(|i| format!("{i:0width$}"));
                page.list("- a list: ", "  ", entries, n, usize::MAX, share);
            }
            let text = page.finish();
            proptest::prop_assert!(text.chars().count() <= limit);
            proptest::prop_assert!(text.lines().all(|l| l.chars().count() <= WIDTH + 60 + TAIL));
        }
    }
}
