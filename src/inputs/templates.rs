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

    /// Renders `name` with `context`.
    pub fn render(&self, name: &str, context: Value) -> Result<String, Diagnostic> {
        let template = self
            .env
            .get_template(name)
            .map_err(|e| template_error(&e, name))?;
        template
            .render(context)
            .map_err(|e| template_error(&e, name))
    }
}

fn environment(dirs: Vec<PathBuf>) -> Environment<'static> {
    let mut env = Environment::new();
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
            match std::fs::read_to_string(dir.join(name)) {
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
    env.add_filter("pct", pct);
    env.add_filter("fixed", fixed);
    env.add_filter("num", num);
    env.add_filter("signed", signed);
    env
}

fn as_number(value: &Value) -> Option<f64> {
    match value.kind() {
        minijinja::value::ValueKind::Number => f64::try_from(value.clone()).ok(),
        _ => None,
    }
}

/// `x | pct` → `12.5%`: 100·x with one decimal (Python's `f"{100*x:.1f}%"`,
/// round-half-even on the exact binary value); `pct(2)` for two decimals.
fn pct(value: Value, digits: Option<usize>) -> String {
    match as_number(&value) {
        Some(x) => format!("{:.*}%", digits.unwrap_or(1), 100.0 * x),
        None => "n/a".to_string(),
    }
}

/// `x | fixed(3)` → `0.125`.
fn fixed(value: Value, digits: Option<usize>) -> String {
    match as_number(&value) {
        Some(x) => format!("{:.*}", digits.unwrap_or(3), x),
        None => "n/a".to_string(),
    }
}

/// `x | num`: a number as report.json prints it (integers without a fraction,
/// other numbers in their shortest round trip); `num(4)` gives non-integers
/// four decimals.
fn num(value: Value, digits: Option<usize>) -> String {
    match (as_number(&value), digits) {
        (Some(x), _) if value.is_integer() => crate::base::value::format_number(x),
        (Some(x), Some(digits)) => format!("{x:.digits$}"),
        (Some(x), None) => crate::base::value::format_number(x),
        (None, _) if value.kind() == minijinja::value::ValueKind::Bool => {
            value.is_true().to_string()
        }
        (None, _) => "n/a".to_string(),
    }
}

/// `x | signed(3)` → `+0.020` / `-0.013` / `±0.000`: a change.
fn signed(value: Value, digits: Option<usize>) -> String {
    match as_number(&value) {
        Some(0.0) => format!("±{:.*}", digits.unwrap_or(3), 0.0),
        Some(x) => format!("{x:+.*}", digits.unwrap_or(3)),
        None => "n/a".to_string(),
    }
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
        assert_eq!(pct(Value::from(0.00125), None), "0.1%");
        assert_eq!(pct(Value::from(0.5), None), "50.0%");
        assert_eq!(pct(Value::from(2.0 / 3.0), None), "66.7%");
        assert_eq!(pct(Value::from(0.0125), None), "1.2%");
        assert_eq!(pct(Value::from(()), None), "n/a");
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
