//! `evalspec_rs._evalspec`: the native half of the Python package, a consumer of
//! the engine API (`evalspec::Spec`, `Options`, `Evaluation`) as the command
//! line is.
//!
//! - [`main`] is the `evalspec` console script: the binary's entry, argv in,
//!   output on the process's stdout and stderr.
//! - [`run`], [`check`], [`explain`] and [`diff`] are what the Python API
//!   calls: values in (paths, params, Arrow streams), values out (report.json's
//!   text, the summary, the diagnostics as JSON objects and as the text the
//!   command prints). Nothing is printed, no file descriptor is touched and
//!   nothing is shared between calls: two threads evaluate at once.
//!
//! DataFrames arrive through the Arrow C stream interface
//! (`__arrow_c_stream__`, a PyCapsule): their batches are taken over, not
//! copied, and read as a dataset's table. Every call releases the GIL while
//! evalspec works, and none lets a Rust panic cross into Python: a panic
//! becomes the `panic` entry of the result, which the Python side raises as
//! `evalspec_rs.InternalError`.

use std::ffi::OsString;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use arrow_array::ffi_stream::{ArrowArrayStreamReader, FFI_ArrowArrayStream};
use arrow_array::RecordBatchReader;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyDict};

use evalspec::base::diagnostic::{render_all, render_json, render_unwritten};
use evalspec::{Diagnostic, JoinChoice, Options, ReportFormat, Resources, Spec, Table};

// The binary's allocator, for the same performance on large inputs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The exit status of a Rust program that panicked.
const PANIC_EXIT: i32 = 101;

/// Runs `evalspec` with `argv` (`argv[0]` is the program name), writing to the
/// process's stdout and stderr, and returns the exit status.
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<OsString>) -> i32 {
    py.detach(move || catch_unwind(|| evalspec::run(argv)).unwrap_or(PANIC_EXIT))
}

/// What a call gives back: `stage` is `ok`, `spec` (the spec did not compile:
/// what `check` rejects), `data` (it compiled but could not be scored) or
/// `panic`; `diagnostics` holds each diagnostic as a JSON object a line,
/// `rendered` each as the command renders it, and `message` the text the
/// command would print on stderr.
struct Answer {
    stage: &'static str,
    diagnostics: Vec<Diagnostic>,
    message: String,
    /// Named values of a call that got through.
    values: Vec<(&'static str, Value)>,
}

enum Value {
    Text(String),
    Bytes(Vec<u8>),
    Texts(Vec<String>),
    Flag(bool),
}

impl Answer {
    fn ok(warnings: Vec<Diagnostic>, values: Vec<(&'static str, Value)>) -> Self {
        let message = warnings.iter().map(|w| w.render()).collect();
        Answer {
            stage: "ok",
            diagnostics: warnings,
            message,
            values,
        }
    }

    fn failed(stage: &'static str, diagnostics: Vec<Diagnostic>) -> Self {
        Answer {
            stage,
            message: render_all(&diagnostics),
            diagnostics,
            values: Vec::new(),
        }
    }

    fn into_dict(self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        let dict = PyDict::new(py);
        dict.set_item("stage", self.stage)?;
        dict.set_item("diagnostics", render_json(&self.diagnostics))?;
        let rendered: Vec<String> = self.diagnostics.iter().map(|d| d.render()).collect();
        dict.set_item("rendered", rendered)?;
        dict.set_item("message", self.message)?;
        for (name, value) in self.values {
            match value {
                Value::Text(text) => dict.set_item(name, text)?,
                Value::Bytes(bytes) => dict.set_item(name, PyBytes::new(py, &bytes))?,
                Value::Texts(texts) => dict.set_item(name, texts)?,
                Value::Flag(flag) => dict.set_item(name, flag)?,
            }
        }
        Ok(dict.unbind())
    }
}

/// Runs `work` without the GIL, a panic turned into a `panic` answer.
fn answer(py: Python<'_>, work: impl FnOnce() -> Answer + Send) -> PyResult<Py<PyDict>> {
    let answered = py.detach(move || catch_unwind(AssertUnwindSafe(work)));
    match answered {
        Ok(answer) => answer.into_dict(py),
        Err(payload) => {
            let dict = PyDict::new(py);
            dict.set_item("stage", "panic")?;
            dict.set_item("diagnostics", "")?;
            dict.set_item("rendered", Vec::<String>::new())?;
            dict.set_item("message", panic_message(payload))?;
            Ok(dict.unbind())
        }
    }
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}

/// The spec's changes, as the engine takes them.
#[allow(clippy::too_many_arguments)]
fn options(
    params: Vec<(String, String)>,
    datasets: Vec<(String, PathBuf)>,
    tables: Vec<(String, Table)>,
    formats: Vec<String>,
    baseline: Option<PathBuf>,
    confidence: Option<f64>,
) -> PyResult<Options> {
    let mut options = Options::new();
    for (name, value) in params {
        options = options.param(name, value);
    }
    for (name, path) in datasets {
        options = options.dataset(name, path);
    }
    for (name, table) in tables {
        options = options.table(name, table);
    }
    for format in formats {
        options = options.format(ReportFormat::parse(&format).map_err(PyValueError::new_err)?);
    }
    if let Some(baseline) = baseline {
        options = options.baseline(baseline);
    }
    if let Some(level) = confidence {
        options = options.confidence(level);
    }
    Ok(options)
}

fn resources(
    threads: Option<usize>,
    max_memory: Option<u64>,
    join: Option<&str>,
) -> PyResult<Resources> {
    let join = match join {
        Some(join) => JoinChoice::parse(join).map_err(PyValueError::new_err)?,
        None => JoinChoice::Auto,
    };
    Ok(Resources::of_machine(threads, max_memory, join))
}

/// A table read from an object with `__arrow_c_stream__` (a pyarrow Table,
/// a polars DataFrame, ...): its stream's batches, taken over.
fn table_of(name: &str, value: &Bound<'_, PyAny>) -> PyResult<Table> {
    let capsule = value.call_method0("__arrow_c_stream__")?;
    let capsule = capsule.cast::<PyCapsule>().map_err(|_| {
        PyTypeError::new_err(format!(
            "dataset `{name}`: __arrow_c_stream__ did not return a PyCapsule"
        ))
    })?;
    let pointer = capsule.pointer_checked(Some(c"arrow_array_stream"))?;
    // SAFETY: the capsule holds an ArrowArrayStream (its name says so, checked
    // above); `from_raw` moves the stream out and leaves a released one
    // behind, which the capsule's destructor then leaves alone (the
    // PyCapsule interface's rule for consumers).
    let stream = unsafe { FFI_ArrowArrayStream::from_raw(pointer.as_ptr().cast()) };
    let reader = ArrowArrayStreamReader::try_new(stream)
        .map_err(|e| PyValueError::new_err(format!("dataset `{name}`: {e}")))?;
    let schema = reader.schema();
    let batches = reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| PyValueError::new_err(format!("dataset `{name}`: {e}")))?;
    Table::new(schema, batches).map_err(|e| PyValueError::new_err(format!("dataset `{name}`: {e}")))
}

/// Scores `spec` as `evalspec run` does. `tables` maps dataset names to
/// objects with `__arrow_c_stream__`; `out` is where the reports are written
/// (none: nothing is written, report.json's text is still returned).
#[pyfunction]
#[pyo3(signature = (spec, *, params, datasets, tables, formats, baseline, confidence, out, threads, max_memory, join, allow_drift, items=false))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    spec: PathBuf,
    params: Vec<(String, String)>,
    datasets: Vec<(String, PathBuf)>,
    tables: Vec<(String, Bound<'_, PyAny>)>,
    formats: Vec<String>,
    baseline: Option<PathBuf>,
    confidence: Option<f64>,
    out: Option<PathBuf>,
    threads: Option<usize>,
    max_memory: Option<u64>,
    join: Option<String>,
    allow_drift: bool,
    items: bool,
) -> PyResult<Py<PyDict>> {
    let tables = (tables.iter())
        .map(|(name, value)| Ok((name.clone(), table_of(name, value)?)))
        .collect::<PyResult<Vec<_>>>()?;
    let mut options =
        options(params, datasets, tables, formats, baseline, confidence)?.allow_drift(allow_drift);
    if items {
        // The items' lines are kept by a plan with an items report.
        options = options.format(ReportFormat::Items);
    }
    let resources = resources(threads, max_memory, join.as_deref())?;
    answer(py, move || {
        evaluate(&spec, &options, resources, out.as_deref(), items)
    })
}

fn evaluate(
    path: &std::path::Path,
    options: &Options,
    resources: Resources,
    out: Option<&std::path::Path>,
    items: bool,
) -> Answer {
    let spec = match Spec::compile(path, options) {
        Ok(spec) => spec,
        Err(diagnostics) => return Answer::failed("spec", diagnostics),
    };
    // Checked before scoring, as the command does: a report that would
    // overwrite an input stops the run.
    let folder = match out.map(|out| evalspec::report::OutputFolder::check(out, spec.plan())) {
        Some(Err(d)) => return Answer::failed("data", vec![d]),
        Some(Ok(folder)) => Some(folder),
        None => None,
    };
    let evaluation = match spec.evaluate(resources) {
        Ok(evaluation) => evaluation,
        Err(diagnostics) => return Answer::failed("data", diagnostics),
    };
    // Before the reports: writing the last items report releases the lines.
    let items = match items.then(|| evaluation.items_jsonl()) {
        None => Vec::new(),
        Some(Ok(bytes)) => vec![("items", Value::Bytes(bytes))],
        Some(Err(error)) => {
            let d = Diagnostic::error(
                "cannot_write_items",
                format!("cannot hold the items' lines: {error}"),
            );
            return Answer::failed("data", vec![d]);
        }
    };
    let written = match &folder {
        None => Vec::new(),
        Some(folder) => match evaluation.write_reports_in(folder) {
            Ok(written) => written,
            Err(d) => {
                let mut answer = Answer::failed("data", vec![d]);
                answer.message = render_unwritten(&answer.diagnostics);
                return answer;
            }
        },
    };
    let warnings: Vec<Diagnostic> = evaluation.warnings().cloned().collect();
    let mut values = vec![
        ("passed", Value::Flag(evaluation.passed())),
        ("report_json", Value::Text(evaluation.report_json())),
        (
            "summary",
            Value::Text(evalspec::base::diagnostic::escape_controls(
                &evaluation.summary(),
            )),
        ),
        (
            "written",
            Value::Texts(written.iter().map(|p| p.display().to_string()).collect()),
        ),
    ];
    values.extend(items);
    Answer::ok(warnings, values)
}

/// Compiles `spec` as `evalspec check` does, reading no data: the plan's
/// text (or, with `explain`, `evalspec explain`'s) and each dataset's name,
/// format and path, in the plan's order. `tables` names the datasets that
/// will be given in memory (no file of theirs is looked for).
#[pyfunction]
#[pyo3(signature = (spec, *, params, datasets, tables, baseline, confidence, explain))]
#[allow(clippy::too_many_arguments)]
fn check(
    py: Python<'_>,
    spec: PathBuf,
    params: Vec<(String, String)>,
    datasets: Vec<(String, PathBuf)>,
    tables: Vec<String>,
    baseline: Option<PathBuf>,
    confidence: Option<f64>,
    explain: bool,
) -> PyResult<Py<PyDict>> {
    let empty = || {
        let schema = std::sync::Arc::new(arrow_schema::Schema::empty());
        Table::new(schema, Vec::new()).expect("an empty table of no columns")
    };
    let tables = tables.into_iter().map(|name| (name, empty())).collect();
    let options = options(params, datasets, tables, Vec::new(), baseline, confidence)?;
    let resources = resources(None, None, None)?;
    answer(py, move || {
        let plan = match evalspec::commands::compile(&spec, options.overrides()) {
            Ok((plan, _)) => plan,
            Err(diagnostics) => return Answer::failed("spec", diagnostics),
        };
        let physical = match evalspec::PhysicalPlan::decide(&plan, resources) {
            Ok(physical) => physical,
            Err(d) => return Answer::failed("spec", vec![d]),
        };
        let text = match explain {
            true => evalspec::commands::explain_text(&plan),
            false => plan.to_string(),
        };
        let datasets = plan.datasets.iter();
        let values = vec![
            (
                "text",
                Value::Text(format!("{text}{}", physical.describe(&plan))),
            ),
            (
                "names",
                Value::Texts(datasets.clone().map(|d| d.name.clone()).collect()),
            ),
            (
                "formats",
                Value::Texts(
                    datasets
                        .clone()
                        .map(|d| d.format.keyword().to_string())
                        .collect(),
                ),
            ),
            (
                "paths",
                Value::Texts(datasets.map(|d| d.display_path.clone()).collect()),
            ),
        ];
        Answer::ok(Vec::new(), values)
    })
}

/// Compares two runs as `evalspec diff` does, in its three formats.
#[pyfunction]
#[pyo3(signature = (old, new, *, significance))]
fn diff(
    py: Python<'_>,
    old: PathBuf,
    new: PathBuf,
    significance: Option<f64>,
) -> PyResult<Py<PyDict>> {
    use evalspec::diff as compare;
    answer(py, move || {
        let (old, new) = match (compare::Side::load(&old), compare::Side::load(&new)) {
            (Ok(old), Ok(new)) => (old, new),
            (old, new) => {
                let errors = [old.err(), new.err()].into_iter().flatten().collect();
                return Answer::failed("data", errors);
            }
        };
        let comparison = compare::compare(&old, &new, significance);
        let values = vec![
            ("json", Value::Text(compare::json(&comparison))),
            ("markdown", Value::Text(compare::markdown(&comparison))),
            ("text", Value::Text(compare::text(&comparison, false))),
            ("regressed", Value::Flag(comparison.regressed())),
        ];
        Answer::ok(Vec::new(), values)
    })
}

/// Panics inside the same guard as [`run`], so that a test can see that a
/// panic becomes a Python exception rather than the end of the interpreter.
#[pyfunction]
fn _panic_for_test(py: Python<'_>) -> PyResult<Py<PyDict>> {
    answer(py, || panic!("a panic raised on purpose by a test"))
}

#[pymodule]
fn _evalspec(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    module.add_function(wrap_pyfunction!(main, module)?)?;
    module.add_function(wrap_pyfunction!(run, module)?)?;
    module.add_function(wrap_pyfunction!(check, module)?)?;
    module.add_function(wrap_pyfunction!(diff, module)?)?;
    module.add_function(wrap_pyfunction!(_panic_for_test, module)?)?;
    Ok(())
}
