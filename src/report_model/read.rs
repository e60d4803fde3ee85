//! Reading a report or an item back. What is not JSON says so where the JSON
//! breaks; a value of the wrong shape is named by its key path (`gates[1].status`)
//! at its line and column, in plain words: what it must be and what was found.

use serde::de::DeserializeOwned;

use crate::base::diagnostic::{Diagnostic, Location};
use crate::report_model::{Item, Report};

const REPORT_HELP: &str = "pass a report.json written by `evalspec run`, or its --out folder";
const FIELD_HELP: &str =
    "report.json is written by `evalspec run`; re-run it instead of editing the file";
const ITEMS_HELP: &str = "items.jsonl is written by `evalspec run`; re-run to regenerate it";

impl Report {
    /// Reads the text of a report.json; `file` names it in errors.
    pub fn from_json(text: &str, file: &str) -> Result<Report, Diagnostic> {
        parse::<Report>(text).map_err(|error| match error {
            Failure::Syntax(e) => Diagnostic::error(
                "report_not_json",
                format!("`{file}` is not JSON: {}", syntax_message(&e)),
            )
            .at(Location::in_data(file, e.line(), Some(e.column())))
            .help("pass a report.json written by `evalspec run`"),
            Failure::Shape(shape) => {
                let not_a_report = shape.path.is_empty()
                    && match &shape.problem {
                        Problem::Missing(field) => field == "evalspec",
                        Problem::Invalid { .. } => true,
                        Problem::Other(_) => false,
                    };
                if not_a_report {
                    let why = match &shape.problem {
                        Problem::Invalid { found, .. } => {
                            format!("it holds {found}, not an object")
                        }
                        _ => "no `evalspec` key".into(),
                    };
                    return Diagnostic::error(
                        "not_a_report",
                        format!("`{file}` is not an evalspec report ({why})"),
                    )
                    .at(shape.location(file, 0))
                    .help(REPORT_HELP);
                }
                Diagnostic::error(
                    "invalid_report",
                    format!("`{file}`: {}", shape.sentence("the report")),
                )
                .at(shape.location(file, 0))
                .help(FIELD_HELP)
            }
        })
    }
}

impl Item {
    /// Reads line `number` (from 1) of an items.jsonl; `file` names it in errors.
    pub fn from_json_line(text: &str, file: &str, number: usize) -> Result<Item, Diagnostic> {
        parse::<Item>(text).map_err(|error| {
            let (message, location) = match error {
                Failure::Syntax(e) => (
                    format!("line {number} is not JSON: {}", syntax_message(&e)),
                    Location::in_data(file, number, Some(e.column().max(1))),
                ),
                Failure::Shape(shape) => {
                    (shape.sentence("the item"), shape.location(file, number - 1))
                }
            };
            Diagnostic::error("invalid_items", format!("`{file}`: {message}"))
                .at(location)
                .help(ITEMS_HELP)
        })
    }
}

/// Reads `text` as another file evalspec writes in JSON (a lock), in the same
/// plain words: on failure, what is wrong (`the lock must be an object, found a
/// list`; `root` names the whole) and where.
pub fn read_json<T: DeserializeOwned>(
    text: &str,
    file: &str,
    root: &str,
) -> Result<T, Box<ReadProblem>> {
    parse::<T>(text).map_err(|error| {
        let (message, at) = match error {
            Failure::Syntax(e) => (
                format!("it is not JSON: {}", syntax_message(&e)),
                Location::in_data(file, e.line(), Some(e.column().max(1))),
            ),
            Failure::Shape(shape) => (shape.sentence(root), shape.location(file, 0)),
        };
        Box::new(ReadProblem { message, at })
    })
}

/// What [`read_json`] found wrong, and where.
pub struct ReadProblem {
    pub message: String,
    pub at: Location,
}

enum Failure {
    /// Not JSON (or cut short).
    Syntax(serde_json::Error),
    /// JSON, but not of the model's shape.
    Shape(Shape),
}

struct Shape {
    /// Where the value is, from the start of the text.
    line: usize,
    column: usize,
    path: Vec<Segment>,
    problem: Problem,
}

enum Segment {
    Key(String),
    Index(usize),
}

enum Problem {
    /// The object at the path lacks this key.
    Missing(String),
    /// The value at the path is not what it must be.
    Invalid { expected: String, found: String },
    /// Anything else the model refuses, as serde said it.
    Other(String),
}

fn parse<T: DeserializeOwned>(text: &str) -> Result<T, Failure> {
    let body = text.trim_start();
    if body.starts_with('[') {
        // serde would read a list's elements as the object's fields, by
        // position: `[1, 2]` would be an item with key 1 on line 2.
        let blank = &text[..text.len() - body.len()];
        return Err(Failure::Shape(Shape {
            line: 1 + blank.matches('\n').count(),
            column: 1 + blank.len() - blank.rfind('\n').map_or(0, |at| at + 1),
            path: Vec::new(),
            problem: Problem::Invalid {
                expected: "an object".into(),
                found: "a list".into(),
            },
        }));
    }
    serde_json::from_str(text).map_err(|e| {
        if !e.is_data() {
            return Failure::Syntax(e);
        }
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let message = e.to_string();
        let message = message.strip_suffix(&suffix).unwrap_or(&message);
        Failure::Shape(Shape {
            line: e.line(),
            column: e.column(),
            path: path_at(text, e.line(), e.column()),
            problem: Problem::from_serde(message),
        })
    })
}

/// serde_json's account of text that is not JSON, without its own position.
fn syntax_message(error: &serde_json::Error) -> String {
    let message = error.to_string();
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    message
        .strip_suffix(&suffix)
        .unwrap_or(&message)
        .to_string()
}

impl Shape {
    /// `lines_before`: lines of the file before the text that was parsed.
    fn location(&self, file: &str, lines_before: usize) -> Location {
        let key_path = self
            .path
            .iter()
            .map(|segment| match segment {
                Segment::Key(key) => format!(".{key}"),
                Segment::Index(i) => format!("[{i}]"),
            })
            .collect::<String>();
        Location::in_data(file, lines_before + self.line, Some(self.column))
            .with_key_path(key_path.trim_start_matches('.'))
    }

    fn sentence(&self, root: &str) -> String {
        let what = match self.path.as_slice() {
            [] => root.to_string(),
            [Segment::Key(metrics), Segment::Key(name)] if metrics == "metrics" => {
                format!("metric `{name}`")
            }
            _ => {
                let mut path = String::new();
                for segment in &self.path {
                    match segment {
                        Segment::Key(key) if path.is_empty() => path.push_str(key),
                        Segment::Key(key) => {
                            path.push('.');
                            path.push_str(key);
                        }
                        Segment::Index(i) => path.push_str(&format!("[{i}]")),
                    }
                }
                format!("`{path}`")
            }
        };
        match &self.problem {
            Problem::Missing(field) => format!("{what} has no `{field}`"),
            Problem::Invalid { expected, found } => {
                format!("{what} must be {expected}, found {found}")
            }
            Problem::Other(message) => format!("{what}: {message}"),
        }
    }
}

impl Problem {
    /// Serde's messages (`invalid type: string "x", expected a boolean`) in our words.
    fn from_serde(message: &str) -> Problem {
        let quoted = |s: &str| {
            s.strip_prefix('`')
                .and_then(|s| s.split_once('`'))
                .map(|(name, _)| name.to_string())
        };
        if let Some(field) = message.strip_prefix("missing field ").and_then(quoted) {
            return Problem::Missing(field);
        }
        if let Some((found, expected)) = message
            .strip_prefix("invalid type: ")
            .and_then(|rest| rest.split_once(", expected "))
        {
            return Problem::Invalid {
                expected: expected_words(expected),
                found: kind_of(found),
            };
        }
        if let Some((found, expected)) = message
            .strip_prefix("invalid value: ")
            .and_then(|rest| rest.split_once(", expected "))
        {
            return Problem::Invalid {
                expected: expected_words(expected),
                found: value_of(found),
            };
        }
        if message.starts_with("invalid length ") {
            // A list where an object belongs: serde would read the fields by position.
            return Problem::Invalid {
                expected: "an object".into(),
                found: "a list".into(),
            };
        }
        if let Some(field) = message.strip_prefix("duplicate field ").and_then(quoted) {
            return Problem::Other(format!("`{field}` is given twice"));
        }
        Problem::Other(message.to_string())
    }
}

/// Serde's name for what a visitor expects, in words.
fn expected_words(expected: &str) -> String {
    match expected {
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number, 0 or more".into(),
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number".into(),
        "f32" | "f64" => "a number".into(),
        "a boolean" => "true or false".into(),
        "a sequence" => "a list".into(),
        "a map" => "an object".into(),
        other => other.to_string(),
    }
}

/// Serde's `Unexpected` (`string "x"`, `integer `3``, `map`) as a kind of JSON value.
fn kind_of(found: &str) -> String {
    if found.starts_with("string ") {
        "a string".into()
    } else if found.starts_with("integer ") || found.starts_with("floating point ") {
        "a number".into()
    } else if let Some(b) = found.strip_prefix("boolean ") {
        b.to_string()
    } else {
        match found {
            "unit value" | "null" => "null".into(),
            "map" => "an object".into(),
            "sequence" => "a list".into(),
            other => other.to_string(),
        }
    }
}

/// Serde's `Unexpected` as the value itself: `` `banana` ``, `-1`.
fn value_of(found: &str) -> String {
    if let Some(s) = found.strip_prefix("string ") {
        let text: String = serde_json::from_str(s).unwrap_or_else(|_| s.to_string());
        return format!("`{text}`");
    }
    for prefix in ["integer ", "floating point ", "boolean "] {
        if let Some(n) = found.strip_prefix(prefix) {
            return n.trim_matches('`').to_string();
        }
    }
    kind_of(found)
}

/// The key path of the value at `line`:`column` (serde_json's position: the last
/// byte it read, 1-based) of a JSON text: the keys and indices of the objects and
/// lists open there.
fn path_at(text: &str, line: usize, column: usize) -> Vec<Segment> {
    enum Open {
        Object { key: Option<String>, in_key: bool },
        List { index: usize },
    }
    let line_start = if line <= 1 {
        0
    } else {
        text.match_indices('\n')
            .nth(line - 2)
            .map_or(text.len(), |(at, _)| at + 1)
    };
    let end = (line_start + column).min(text.len());
    let bytes = &text.as_bytes()[..end];
    let mut open: Vec<Open> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => open.push(Open::Object {
                key: None,
                in_key: true,
            }),
            b'[' => open.push(Open::List { index: 0 }),
            b'}' | b']' => {
                open.pop();
            }
            b',' => match open.last_mut() {
                Some(Open::Object { key, in_key }) => {
                    *key = None;
                    *in_key = true;
                }
                Some(Open::List { index }) => *index += 1,
                None => {}
            },
            b':' => {
                if let Some(Open::Object { in_key, .. }) = open.last_mut() {
                    *in_key = false;
                }
            }
            b'"' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if let Some(Open::Object { key, in_key: true }) = open.last_mut() {
                    let raw = text.get(start..(i + 1).min(end)).unwrap_or_default();
                    *key = Some(
                        serde_json::from_str(raw)
                            .unwrap_or_else(|_| raw.trim_matches('"').to_string()),
                    );
                }
            }
            _ => {}
        }
        i += 1;
    }
    open.into_iter()
        .filter_map(|frame| match frame {
            Open::Object { key, .. } => key.map(Segment::Key),
            Open::List { index } => Some(Segment::Index(index)),
        })
        .collect()
}
