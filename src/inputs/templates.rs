//! The report templates, through minijinja. Built-in templates are embedded under
//! `evalspec/…`; a spec's own templates load only from the folders of the
//! templates it names. Templates see the report (the context documented in
//! `templates/README.md`) and a few formatting filters; nothing else: no
//! filesystem beyond those folders, no environment, no clock.

use std::path::{Component, Path, PathBuf};

use minijinja::{Environment, ErrorKind, UndefinedBehavior, Value};

use crate::base::diagnostic::{Diagnostic, Location};
use crate::inputs::error::{InputError, TemplateLoadProblem};
use crate::spec::ReportFormat;

/// The work one report's rendering may do, in minijinja's fuel: one unit per
/// instruction, and one per 64 bytes of data built or written. Ten million
/// instructions (about a second), or 640 MB of strings: far beyond any report
/// of the built-in templates, and a bound on a template that loops or doubles
/// a string forever.
pub const TEMPLATE_FUEL: u64 = 10_000_000;

/// The largest report a template may render: 128 MiB.
pub const MAX_RENDERED_BYTES: usize = 128 << 20;

/// The most decimal digits a formatting filter prints.
const MAX_DIGITS: usize = 100;

/// Built-in templates: name, source.
const BUILTIN: &[(&str, &str)] = &[
    (
        "evalspec/report.md.j2",
        include_str!("../../templates/report.md.j2"),
    ),
    (
        "evalspec/junit.xml.j2",
        include_str!("../../templates/junit.xml.j2"),
    ),
    (
        "evalspec/report.html.j2",
        include_str!("../../templates/report.html.j2"),
    ),
    (
        "evalspec/summary.md.j2",
        include_str!("../../templates/summary.md.j2"),
    ),
];

/// The source of a built-in template, by name (`evalspec/report.md.j2`).
pub fn builtin_source(name: &str) -> Option<&'static str> {
    BUILTIN
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

/// The built-in template of a format, if it has one.
pub fn builtin_template(format: ReportFormat) -> Option<&'static str> {
    match format {
        ReportFormat::Markdown => Some("evalspec/report.md.j2"),
        ReportFormat::Junit => Some("evalspec/junit.xml.j2"),
        ReportFormat::Html => Some("evalspec/report.html.j2"),
        ReportFormat::Summary => Some("evalspec/summary.md.j2"),
        ReportFormat::Json | ReportFormat::Items => None,
    }
}

/// Whether `path` is a regular file inside `folder`, symbolic links resolved
/// (a file of `/proc`, a link out of the folder or a FIFO is not).
pub fn is_inside(path: &Path, folder: &Path) -> bool {
    let folder = match folder.as_os_str().is_empty() {
        true => Path::new("."),
        false => folder,
    };
    let (Ok(path), Ok(folder)) = (std::fs::canonicalize(path), std::fs::canonicalize(folder))
    else {
        return false;
    };
    path.starts_with(&folder) && std::fs::metadata(&path).is_ok_and(|m| m.is_file())
}

/// Whether a loaded name stays inside its folder: relative, no `..`.
fn is_contained(name: &str) -> bool {
    Path::new(name)
        .components()
        .all(|c| matches!(c, Component::Normal(_)))
}

/// The environment every report renders in: the built-in templates plus the
/// spec's own, loaded from their folders when first used and parsed once.
pub struct Templates {
    env: Environment<'static>,
}

impl std::fmt::Debug for Templates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Templates")
    }
}

impl Templates {
    /// Built-ins plus the templates in `dirs`.
    pub fn new(dirs: Vec<PathBuf>) -> Self {
        Templates {
            env: environment(dirs),
        }
    }

    /// Checks that `name` loads and parses; returns whether it reads `items`.
    pub fn check(&self, name: &str) -> Result<bool, Diagnostic> {
        let template = self
            .env
            .get_template(name)
            .map_err(|e| template_error(&e, name))?;
        Ok(template.undeclared_variables(false).contains("items"))
    }

    /// Renders `name` with `context`, within [`TEMPLATE_FUEL`] and
    /// [`MAX_RENDERED_BYTES`].
    pub fn render(&self, name: &str, context: Value) -> Result<String, Diagnostic> {
        let template = self
            .env
            .get_template(name)
            .map_err(|e| template_error(&e, name))?;
        let mut out = CappedOutput::default();
        match template.render_captured_to(context, &mut out) {
            Ok(_) => Ok(String::from_utf8(out.bytes).expect("templates render UTF-8 text")),
            Err(_) if out.overflowed => Err(Diagnostic::of(&InputError::TemplateTooLarge {
                name: name.to_string(),
                limit: MAX_RENDERED_BYTES,
            })),
            Err(e) if e.kind() == ErrorKind::OutOfFuel => {
                Err(template_error(&e, name).note(InputError::template_fuel_note(TEMPLATE_FUEL)))
            }
            Err(e) => Err(template_error(&e, name)),
        }
    }
}

/// A rendering's output, refused past [`MAX_RENDERED_BYTES`].
#[derive(Default)]
struct CappedOutput {
    bytes: Vec<u8>,
    overflowed: bool,
}

impl std::io::Write for CappedOutput {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len() + buf.len() > MAX_RENDERED_BYTES {
            self.overflowed = true;
            return Err(std::io::Error::other("the report is too large"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn environment(dirs: Vec<PathBuf>) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_fuel(Some(TEMPLATE_FUEL));
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // Block tags on their own lines leave no blank lines, and a template's final
    // newline is kept: what a template shows is what is written.
    env.set_syntax(
        minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .keep_trailing_newline(true)
            .build()
            .expect("the default delimiters are valid"),
    );
    env.set_loader(move |name| {
        if let Some((_, source)) = BUILTIN.iter().find(|(n, _)| *n == name) {
            return Ok(Some((*source).to_string()));
        }
        if !is_contained(name) {
            let problem = TemplateLoadProblem::Outside { name: name.into() };
            return Err(minijinja::Error::new(
                ErrorKind::InvalidOperation,
                problem.text(),
            ));
        }
        for dir in &dirs {
            let path = dir.join(name);
            // An include that a link leads out of the folder is refused.
            if path.exists() && !is_inside(&path, dir) {
                let problem = TemplateLoadProblem::Outside { name: name.into() };
                return Err(minijinja::Error::new(
                    ErrorKind::InvalidOperation,
                    problem.text(),
                ));
            }
            match std::fs::read_to_string(&path) {
                Ok(source) => return Ok(Some(source)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => {
                    let problem = TemplateLoadProblem::Unreadable {
                        name: name.into(),
                        error: e.to_string(),
                    };
                    return Err(minijinja::Error::new(
                        ErrorKind::InvalidOperation,
                        problem.text(),
                    ));
                }
            }
        }
        Ok(None)
    });
    env.set_formatter(markup_formatter);
    env.add_filter("md", md);
    env.add_filter("pct", pct);
    env.add_filter("fixed", fixed);
    env.add_filter("num", num);
    env.add_filter("signed", signed);
    env.add_filter("pm", plus_minus);
    env
}

/// Values in HTML and XML templates (escaped by minijinja, by extension) also
/// have the characters XML 1.0 forbids (C0 controls other than tab and line
/// breaks, U+FFFE, U+FFFF) shown as `\u{1b}`, so junit.xml stays valid XML
/// whatever the data holds.
fn markup_formatter(
    out: &mut minijinja::Output,
    state: &mut minijinja::State,
    value: &Value,
) -> Result<(), minijinja::Error> {
    let forbidden = |c: char| {
        (c.is_control() && !matches!(c, '\t' | '\n' | '\r')) || matches!(c, '\u{fffe}' | '\u{ffff}')
    };
    // Markdown (no auto-escaping, a `.md` template): every value that is not
    // marked safe is made inert there (no HTML, no @mention, no hidden
    // character), so data cannot hide gates or notify anyone.
    let markdown = *state.auto_escape() == minijinja::AutoEscape::None
        && (state.name().ends_with(".md") || state.name().ends_with(".md.j2"));
    if markdown && !value.is_safe() {
        if let Some(text) = value.as_str() {
            let text = crate::base::markup::escape_markdown(text);
            return minijinja::escape_formatter(out, state, &Value::from(text));
        }
    }
    match value.as_str() {
        Some(text)
            if *state.auto_escape() != minijinja::AutoEscape::None && text.contains(forbidden) =>
        {
            let shown: String = text
                .chars()
                .map(|c| match c {
                    c if forbidden(c) => c.escape_unicode().to_string(),
                    c => c.to_string(),
                })
                .collect();
            let shown = match value.is_safe() {
                true => Value::from_safe_string(shown),
                false => Value::from(shown),
            };
            minijinja::escape_formatter(out, state, &shown)
        }
        _ => minijinja::escape_formatter(out, state, value),
    }
}

/// `x | md`: text from the data made safe inside a Markdown table cell or list
/// item: `|` is escaped, a line break becomes a space (it would end the row or
/// start a heading), control characters are shown as `\u{1b}`.
fn md(value: Value) -> String {
    let text = match value.as_str() {
        Some(text) => text.to_string(),
        None => value.to_string(),
    };
    let text = text.replace("\r\n", " ").replace(['\n', '\r'], " ");
    crate::base::diagnostic::escape_controls(&text).replace('|', "\\|")
}

fn as_number(value: &Value) -> Option<f64> {
    match value.kind() {
        minijinja::value::ValueKind::Number => f64::try_from(value.clone()).ok(),
        _ => None,
    }
}

/// The digits a filter was asked for; more than [`MAX_DIGITS`] is an error of
/// the template (a huge count cannot even be formatted).
fn digits_or(digits: Option<usize>, default: usize) -> Result<usize, minijinja::Error> {
    match digits.unwrap_or(default) {
        n if n <= MAX_DIGITS => Ok(n),
        n => Err(minijinja::Error::new(
            ErrorKind::InvalidOperation,
            format!("{n} digits asked for; a filter prints at most {MAX_DIGITS}"),
        )),
    }
}

/// `x | pct` → `12.5%`: 100·x with one decimal (Python's `f"{100*x:.1f}%"`,
/// round-half-even on the exact binary value); `pct(2)` for two decimals.
fn pct(value: Value, digits: Option<usize>) -> Result<String, minijinja::Error> {
    let digits = digits_or(digits, 1)?;
    Ok(match as_number(&value) {
        Some(x) => format!("{:.*}%", digits, 100.0 * x),
        None => "n/a".to_string(),
    })
}

/// `x | fixed(3)` → `0.125`.
fn fixed(value: Value, digits: Option<usize>) -> Result<String, minijinja::Error> {
    let digits = digits_or(digits, 3)?;
    Ok(match as_number(&value) {
        Some(x) => format!("{x:.digits$}"),
        None => "n/a".to_string(),
    })
}

/// `x | num`: a number as report.json prints it (integers without a fraction,
/// other numbers in their shortest round trip); `num(4)` gives non-integers
/// four decimals.
fn num(value: Value, digits: Option<usize>) -> Result<String, minijinja::Error> {
    if digits.is_some() {
        digits_or(digits, 0)?;
    }
    Ok(match (as_number(&value), digits) {
        (Some(x), _) if value.is_integer() => crate::base::value::format_number(x),
        (Some(x), Some(digits)) => format!("{x:.digits$}"),
        (Some(x), None) => crate::base::value::format_number(x),
        (None, _) if value.kind() == minijinja::value::ValueKind::Bool => {
            value.is_true().to_string()
        }
        (None, _) => "n/a".to_string(),
    })
}

/// `x | signed(3)` → `+0.020` / `-0.013` / `±0.000`: a change.
fn signed(value: Value, digits: Option<usize>) -> Result<String, minijinja::Error> {
    let digits = digits_or(digits, 3)?;
    Ok(match as_number(&value) {
        Some(0.0) => format!("±{:.digits$}", 0.0),
        Some(x) => format!("{x:+.digits$}"),
        None => "n/a".to_string(),
    })
}

/// `value | pm(intervals, name)` → ` ± 0.0312`: the larger distance from the
/// value to a bound of its interval (report.json's `intervals[name]`), to three
/// significant digits; empty when the metric has no interval (or `intervals`
/// is none, as in a report without any).
fn plus_minus(value: Value, intervals: Value, name: &str) -> Result<String, minijinja::Error> {
    let interval = match intervals.kind() {
        minijinja::value::ValueKind::Map => intervals.get_attr(name)?,
        _ => return Ok(String::new()),
    };
    let bound = |key: &str| interval.get_attr(key).ok().and_then(|v| as_number(&v));
    Ok(match (as_number(&value), bound("low"), bound("high")) {
        (Some(x), Some(low), Some(high)) => {
            format!(
                " {}",
                crate::base::stats::half_width::plus_minus(x, low, high)
            )
        }
        _ => String::new(),
    })
}

/// A template error with the template's name, line and column.
fn template_error(error: &minijinja::Error, name: &str) -> Diagnostic {
    let file = error.name().unwrap_or(name).to_string();
    let line = error.line().unwrap_or(1);
    let column = error.range().and_then(|range| {
        let source = error.template_source()?;
        let start = range.start.min(source.len());
        let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
        Some(source[line_start..start].chars().count() + 1)
    });
    let mut causes = Vec::new();
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        causes.push(inner.to_string());
        source = inner.source();
    }
    let at = Location::in_data(&file, line, column);
    let kind = InputError::Template {
        file,
        kind: error.kind().to_string(),
        detail: error.detail().map(str::to_string),
        causes,
    };
    Diagnostic::of(&kind).at(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_round_half_even_like_python() {
        // 0.125 and 0.375 are exact in binary: ties go to the even digit.
        assert_eq!(pct(Value::from(0.00125), None).unwrap(), "0.1%");
        assert_eq!(pct(Value::from(0.5), None).unwrap(), "50.0%");
        assert_eq!(pct(Value::from(2.0 / 3.0), None).unwrap(), "66.7%");
        assert_eq!(pct(Value::from(0.0125), None).unwrap(), "1.2%");
        assert_eq!(pct(Value::from(()), None).unwrap(), "n/a");
    }

    #[test]
    fn markdown_cells_cannot_split_a_row_or_start_a_heading() {
        assert_eq!(
            md(Value::from("a|b\n# FAKE\r\nx\u{1b}")),
            "a\\|b # FAKE x\\u{1b}"
        );
        assert_eq!(md(Value::from(3)), "3");
    }

    #[test]
    fn markdown_templates_make_data_inert() {
        let mut env = environment(Vec::new());
        env.add_template("t.md.j2", "{{ x }}|{{ x | md }}|{{ '<b>' | safe }}")
            .unwrap();
        let out = env
            .get_template("t.md.j2")
            .unwrap()
            .render(minijinja::context! { x => "<!-- @all \u{202e}" })
            .unwrap();
        let inert = "&lt;!-- &#64;all \\u{202e}";
        assert_eq!(out, format!("{inert}|{inert}|<b>"));
    }

    #[test]
    fn xml_templates_show_the_characters_xml_forbids() {
        let mut env = environment(Vec::new());
        env.add_template("t.xml", "<a b=\"{{ x }}\">{{ x }}</a>")
            .unwrap();
        let out = env
            .get_template("t.xml")
            .unwrap()
            .render(minijinja::context! { x => "<\u{1}\u{1b}\t\u{ffff}>" })
            .unwrap();
        assert_eq!(
            out,
            "<a b=\"&lt;\\u{1}\\u{1b}\t\\u{ffff}&gt;\">&lt;\\u{1}\\u{1b}\t\\u{ffff}&gt;</a>"
        );
    }

    #[test]
    fn loads_only_inside_the_template_folders() {
        assert!(is_contained("report.md.j2"));
        assert!(is_contained("parts/table.j2"));
        assert!(!is_contained("../secret.txt"));
        assert!(!is_contained("/etc/passwd"));
        let env = environment(vec![PathBuf::from("templates")]);
        let error = env.get_template("../Cargo.toml").unwrap_err();
        assert!(error.to_string().contains("outside"), "{error}");
    }
}
