//! Errors and warnings as data: where, what, and how to fix it. Rendered in one place.

use std::fmt::{self, Write as _};
use std::sync::Arc;

use crate::base::source::SourceFile;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
}

/// A position in a user's file; `snippet` is present when the file is a spec or
/// template whose text we hold, so the line can be shown with a caret.
#[derive(Debug, Clone)]
pub struct Location {
    pub file: String,
    pub line: usize,
    pub column: Option<usize>,
    pub snippet: Option<Snippet>,
    /// For a spec, the YAML key path of the value (`metrics.precision.expr`).
    pub key_path: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Snippet {
    pub line_text: String,
    /// Width of the caret underline, in characters (at least 1).
    pub width: usize,
}

impl Location {
    /// A location inside a source file we hold, covering `len` bytes from `offset`.
    pub fn in_source(source: &Arc<SourceFile>, offset: usize, len: usize) -> Self {
        let (line, column) = source.line_col(offset);
        let line_text = source.line_text(line).to_string();
        let end = (offset + len).min(source.text.len());
        let (end_line, end_col) = source.line_col(end);
        let width = if end_line == line {
            end_col.saturating_sub(column)
        } else {
            0
        };
        let width = width.clamp(
            1,
            line_text.chars().count().saturating_sub(column - 1).max(1),
        );
        Self {
            file: source.display.clone(),
            line,
            column: Some(column),
            snippet: Some(Snippet { line_text, width }),
            key_path: None,
        }
    }

    /// A location in a data file (no snippet: data lines can be megabytes long).
    pub fn in_data(file: &str, line: usize, column: Option<usize>) -> Self {
        Self {
            file: file.to_string(),
            line,
            column,
            snippet: None,
            key_path: None,
        }
    }

    pub fn with_key_path(mut self, key_path: impl Into<String>) -> Self {
        let key_path = key_path.into();
        if !key_path.is_empty() {
            self.key_path = Some(key_path);
        }
        self
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)?;
        if let Some(column) = self.column {
            write!(f, ":{column}")?;
        }
        Ok(())
    }
}

/// A kind of problem: its data, and its words. Each layer has an enum of the
/// kinds it reports, whose `describe` is the one place their text is written; a
/// diagnostic built from a kind keeps the kind's code, so tests and tools can
/// match kinds rather than rendered text.
pub trait Kind {
    /// A stable name for the kind, e.g. `unknown_name`.
    fn code(&self) -> &'static str;
    fn describe(&self) -> Words;
}

/// What a diagnostic says: its message, a label under the caret, a help line.
#[derive(Debug, Default)]
pub struct Words {
    pub message: String,
    pub label: Option<String>,
    pub help: Option<String>,
}

impl Words {
    pub fn new(message: impl Into<String>) -> Self {
        Words {
            message: message.into(),
            ..Words::default()
        }
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// A help line only when there is one (a did-you-mean that found nothing).
    pub fn maybe_help(mut self, help: Option<String>) -> Self {
        self.help = help;
        self
    }

    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }
}

/// What failed while an expression was evaluated, and where the failing
/// sub-expression is written. Carried as data, not rendered: the message names
/// the declaration that failed, as it always has.
#[derive(Debug, Clone)]
pub struct Cause {
    /// The runtime kind's code, e.g. `not_needs_bool`.
    pub code: &'static str,
    pub at: Option<Location>,
}

#[derive(Debug, Clone)]
pub struct Diagnostic {
    pub level: Level,
    /// What went wrong, as a stable word tools can match on (`invalid_json`):
    /// the kind's code, or the one given with the message.
    pub code: &'static str,
    pub message: String,
    /// Boxed: diagnostics travel in `Result`s, which should stay small.
    pub location: Option<Box<Location>>,
    /// Text printed under the caret.
    pub label: Option<Box<str>>,
    /// Lines shown under the location, as they are (a diff, a list of changes).
    pub note: Option<Box<str>>,
    pub help: Option<String>,
    /// For an evaluation error: what failed, and where (not rendered).
    pub cause: Option<Box<Cause>>,
}

impl Diagnostic {
    /// An error with its code and its words (a [`Kind`] gives both: [`Self::of`]).
    pub fn error(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            level: Level::Error,
            code,
            message: message.into(),
            location: None,
            label: None,
            note: None,
            help: None,
            cause: None,
        }
    }

    /// An error of a kind: its words, and its code.
    pub fn of(kind: &impl Kind) -> Self {
        let words = kind.describe();
        Self {
            label: words.label.map(String::into_boxed_str),
            help: words.help,
            ..Self::error(kind.code(), words.message)
        }
    }

    pub fn warning(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            level: Level::Warning,
            ..Self::error(code, message)
        }
    }

    /// A warning of a kind: its words, and its code.
    pub fn warning_of(kind: &impl Kind) -> Self {
        Self {
            level: Level::Warning,
            ..Self::of(kind)
        }
    }

    pub fn at(mut self, location: Location) -> Self {
        self.location = Some(Box::new(location));
        self
    }

    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into().into_boxed_str());
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> Self {
        let note = note.into();
        self.note = (!note.is_empty()).then(|| note.into_boxed_str());
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub fn caused_by(mut self, cause: Cause) -> Self {
        self.cause = Some(Box::new(cause));
        self
    }

    /// Renders the diagnostic the way a compiler does:
    ///
    /// ```text
    /// error: unknown name `shiped`
    ///   --> spec.yaml:12:30 (metrics.precision)
    ///    |
    /// 12 |   precision: ratio(ok where shiped)
    ///    |                             ^^^^^^ not defined here
    ///    = help: did you mean `shipped`?
    /// ```
    pub fn render(&self) -> String {
        escape_controls(&self.render_raw())
    }

    fn render_raw(&self) -> String {
        let mut out = String::new();
        let level = match self.level {
            Level::Error => "error",
            Level::Warning => "warning",
        };
        let _ = writeln!(out, "{level}: {}", self.message);
        let mut gutter = 1;
        if let Some(location) = &self.location {
            gutter = location.line.to_string().len();
            let pad = " ".repeat(gutter);
            let _ = write!(out, "{pad}--> {location}");
            if let Some(key_path) = &location.key_path {
                let _ = write!(out, " ({key_path})");
            }
            out.push('\n');
            if let (Some(snippet), Some(column)) = (&location.snippet, location.column) {
                let (text, column, width) = excerpt(&snippet.line_text, column, snippet.width);
                let _ = writeln!(out, "{pad} |");
                let _ = writeln!(out, "{} | {text}", location.line);
                let _ = write!(
                    out,
                    "{pad} | {}{}",
                    " ".repeat(column - 1),
                    "^".repeat(width)
                );
                if let Some(label) = &self.label {
                    let _ = write!(out, " {label}");
                }
                out.push('\n');
            } else if let Some(label) = &self.label {
                let _ = writeln!(out, "{pad} = {label}");
            }
        } else if let Some(label) = &self.label {
            let _ = writeln!(out, "  = {label}");
        }
        if let Some(note) = &self.note {
            for line in note.lines() {
                let _ = writeln!(out, "{}   {line}", " ".repeat(gutter));
            }
        }
        if let Some(help) = &self.help {
            let _ = writeln!(out, "{} = help: {help}", " ".repeat(gutter));
        }
        out
    }
}

/// The most characters of a source line a diagnostic shows.
const EXCERPT_CHARS: usize = 120;

/// A long source line cut to [`EXCERPT_CHARS`] around the caret at `column`
/// (1-based, in characters), `…` marking each cut; with the caret's column and
/// width in the excerpt. A 100,000-character line is not echoed whole.
fn excerpt(line: &str, column: usize, width: usize) -> (String, usize, usize) {
    let chars: Vec<char> = line.chars().collect();
    if chars.len() <= EXCERPT_CHARS {
        return (line.to_string(), column, width);
    }
    let caret = (column - 1).min(chars.len());
    let start = caret.saturating_sub(EXCERPT_CHARS / 3);
    let end = (start + EXCERPT_CHARS).min(chars.len());
    let mut text: String = if start > 0 {
        "…".into()
    } else {
        String::new()
    };
    text.extend(&chars[start..end]);
    if end < chars.len() {
        text.push('…');
    }
    let column = caret - start + 1 + usize::from(start > 0);
    let width = width.min(end.saturating_sub(caret)).max(1);
    (text, column, width)
}

/// Control characters from data or a spec (an escape sequence in a record's key)
/// are shown as `\u{1b}` rather than sent to the terminal; line breaks and tabs
/// stay.
pub fn escape_controls(text: &str) -> String {
    if !text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return text.to_string();
    }
    text.chars()
        .map(|c| match c {
            '\n' | '\t' => c.to_string(),
            c if c.is_control() => c.escape_unicode().to_string(),
            c => c.to_string(),
        })
        .collect()
}

impl Diagnostic {
    /// The diagnostic as one JSON object on one line, for tools that read
    /// them (`--message-format json`): its level, code, message, place
    /// (file, line, column, the spec's key path), help, note and label, each
    /// null when it has none. Text is kept as it is, control characters
    /// escaped by JSON.
    pub fn to_json(&self) -> String {
        let location = self.location.as_deref();
        let object = serde_json::json!({
            "level": match self.level {
                Level::Error => "error",
                Level::Warning => "warning",
            },
            "code": self.code,
            "message": self.message,
            "file": location.map(|l| l.file.as_str()),
            "line": location.map(|l| l.line),
            "column": location.and_then(|l| l.column),
            "key_path": location.and_then(|l| l.key_path.as_deref()),
            "help": self.help,
            "note": self.note.as_deref(),
            "label": self.label.as_deref(),
        });
        object.to_string()
    }
}

/// Diagnostics as JSON lines ([`Diagnostic::to_json`]), one object a line.
pub fn render_json(diagnostics: &[Diagnostic]) -> String {
    let mut out = String::new();
    for diagnostic in diagnostics {
        out.push_str(&diagnostic.to_json());
        out.push('\n');
    }
    out
}

/// Renders several diagnostics, separated by blank lines, with a closing count of errors.
pub fn render_all(diagnostics: &[Diagnostic]) -> String {
    render_all_then(diagnostics, "nothing was scored")
}

/// As [`render_all`], for errors met after the data was scored, while writing
/// the reports: none was replaced.
pub fn render_unwritten(diagnostics: &[Diagnostic]) -> String {
    render_all_then(
        diagnostics,
        "the data was scored, but no report was written (earlier reports are as they were)",
    )
}

/// Renders several diagnostics with a closing count of errors that says what
/// follows from them (`1 error; nothing was frozen`).
pub fn render_all_then(diagnostics: &[Diagnostic], consequence: &str) -> String {
    let mut out = String::new();
    for diagnostic in diagnostics {
        out.push_str(&diagnostic.render());
        out.push('\n');
    }
    let errors = diagnostics
        .iter()
        .filter(|d| d.level == Level::Error)
        .count();
    if errors > 0 {
        let noun = if errors == 1 { "error" } else { "errors" };
        let _ = writeln!(out, "{errors} {noun}; {consequence}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_is_cut_around_the_caret() {
        let line = format!("{}X{}", "a".repeat(5000), "b".repeat(5000));
        let (text, column, width) = excerpt(&line, 5001, 3);
        assert_eq!(text.chars().count(), EXCERPT_CHARS + 2);
        assert!(text.starts_with('…') && text.ends_with('…'));
        assert_eq!(text.chars().nth(column - 1), Some('X'));
        assert_eq!(width, 3);
        assert_eq!(excerpt("short", 2, 1), ("short".to_string(), 2, 1));
    }

    #[test]
    fn control_characters_are_shown_not_sent_to_the_terminal() {
        let d = Diagnostic::error("test", "duplicate key `k\u{1b}[2J\rFAKE PASS`");
        assert_eq!(
            d.render(),
            "error: duplicate key `k\\u{1b}[2J\\u{d}FAKE PASS`\n"
        );
        assert_eq!(escape_controls("a\tb\nc"), "a\tb\nc");
    }
    use std::path::Path;

    #[test]
    fn renders_snippet_with_caret_label_and_help() {
        let source = Arc::new(SourceFile::new(
            Path::new("spec.yaml"),
            "a: 1\nb: count(x)\n".into(),
        ));
        let offset = source.text.find('x').unwrap();
        let d = Diagnostic::error("unknown_name", "unknown name `x`")
            .at(Location::in_source(&source, offset, 1).with_key_path("metrics.b"))
            .label("not defined")
            .help("did you mean `y`?");
        assert_eq!(
            d.render(),
            "error: unknown name `x`\n --> spec.yaml:2:10 (metrics.b)\n  |\n2 | b: count(x)\n  |          ^ not defined\n  = help: did you mean `y`?\n"
        );
    }
}
