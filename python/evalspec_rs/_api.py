"""The Python API: the engine of the `evalspec` command, in-process.

Every function calls the native module, a consumer of the engine's Rust API as the
command line is: values go in (paths, params, Arrow streams of DataFrames), values
come back (report.json's text, the summary, the diagnostics as JSON objects), with
the GIL released while evalspec works. Nothing is printed or captured, and calls
share no state: two threads evaluate at once. Reports, plans and diffs are the
command's, byte for byte.
"""

from __future__ import annotations

import contextlib
import json
import math
import numbers
import os
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

from . import _evalspec
from ._errors import (
    DataError,
    Diagnostic,
    EvalspecError,
    GateFailure,
    InternalError,
    SpecError,
    diagnostics_of,
)
from . import _tables, _trackers
from ._records import as_table, is_path, write_dataset

PathLike = Union[str, "os.PathLike[str]"]


# ---------------------------------------------------------------------------- results


class Gate:
    """One gate of a run, as report.json gives it."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any]):
        self._data = dict(data)

    @property
    def name(self) -> str:
        return str(self._data["name"])

    @property
    def status(self) -> str:
        """`pass`, `warn` or `fail`."""
        return str(self._data["status"])

    @property
    def passed(self) -> bool:
        return bool(self._data["pass"])

    @property
    def severity(self) -> str:
        return str(self._data["severity"])

    @property
    def expr(self) -> Optional[str]:
        return self._data.get("expr")

    @property
    def value(self) -> Any:
        """The left side of the gate's comparison (or its boolean value)."""
        return self._data.get("value")

    @property
    def threshold(self) -> Any:
        return self._data.get("threshold")

    @property
    def message(self) -> Optional[str]:
        return self._data.get("message")

    @property
    def failed_by(self) -> List[Dict[str, Any]]:
        """The paired tests that failed the gate (`significance`): each
        `metric`, `slice`, `value`, `run` and Holm-adjusted `p_adjusted`."""
        return [dict(t) for t in self._data.get("failed_by") or []]

    @property
    def reasons(self) -> List[str]:
        """Why a gate did not pass, one sentence each."""
        return list(self._data.get("reasons") or [])

    @property
    def run(self) -> Optional[str]:
        """For a gate decided per run, the run it reports."""
        return self._data.get("run")

    def to_dict(self) -> Dict[str, Any]:
        return _copy(self._data)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Gate) and other._data == self._data

    def __repr__(self) -> str:
        return f"Gate({self.name!r}, status={self.status!r}, value={self.value!r})"


class SliceValue(NamedTuple):
    """One value of a slice: `slice` is the slice's name (`category`), `value` the
    value (`billing`), with its items and its metrics' values and intervals."""

    slice: str
    value: str
    items: Optional[int]
    metrics: Dict[str, Any]
    intervals: Dict[str, Any]


class Report:
    """The result of `evalspec_rs.run`: report.json's content, and how the run ended."""

    def __init__(
        self,
        text: str,
        exit_code: int,
        out: Optional[Path],
        summary: str,
        warnings: Sequence[Diagnostic] = (),
        items: Optional[bytes] = None,
    ):
        self._text = text
        self._items = items
        self._data: Dict[str, Any] = json.loads(text)
        self.exit_code: int = exit_code
        """0: every `fail` gate passed; 1: one failed (as the command's exit status)."""
        self.out: Optional[Path] = out
        """The folder holding the reports, or None when none was written (`out=None`)."""
        self.summary: str = summary
        """The summary the command prints."""
        self.warnings: List[Diagnostic] = list(warnings)
        """What the run noticed that did not stop it (as the command's warnings)."""

    @property
    def passed(self) -> bool:
        return bool(self._data["pass"])

    @property
    def metrics(self) -> Dict[str, Any]:
        return dict(self._data["metrics"])

    @property
    def gates(self) -> List[Gate]:
        return [Gate(g) for g in self._data["gates"]]

    @property
    def failed_gates(self) -> List[Gate]:
        """Gates whose status is `fail` (those that make the exit code 1)."""
        return [g for g in self.gates if g.status == "fail"]

    @property
    def slices(self) -> List["SliceValue"]:
        """Each value of each slice (`by:` category) with its items and metrics."""
        return [
            SliceValue(name, value, entry.get("items"), dict(entry.get("metrics") or {}),
                       dict(entry.get("intervals") or {}))
            for name, values in (self._data.get("slices") or {}).items()
            for value, entry in (values or {}).items()
        ]

    def to_arrow(self, table: str = "metrics") -> Any:
        """A table of the report as a pyarrow Table: `metrics` (value, interval and
        the change against a baseline), `gates`, `slices` (a row per slice value
        and metric), `labels`, `offenders`, or `items` (a row per item: key, line,
        label, `fields` and `matchers` as structs; needs `items=True`, or
        `formats=["items"]` with `out=`)."""
        if table == "items":
            return _tables.items_table(self._items_bytes())
        return _tables.rows_to_arrow(self._rows(table))

    def to_pandas(self, table: str = "metrics") -> Any:
        """`to_arrow(table)` as a pandas DataFrame."""
        if table == "items":
            return self.to_arrow("items").to_pandas()
        return _tables.rows_to_pandas(self._rows(table))

    def to_polars(self, table: str = "metrics") -> Any:
        """`to_arrow(table)` as a polars DataFrame."""
        if table == "items":
            polars = _tables._module("polars", "to_polars()")
            return polars.from_arrow(self.to_arrow("items"))
        return _tables.rows_to_polars(self._rows(table))

    def _rows(self, table: str) -> List[Dict[str, Any]]:
        builders = {
            "metrics": _tables.metric_rows,
            "gates": _tables.gate_rows,
            "slices": _tables.slice_rows,
            "labels": _tables.label_rows,
            "offenders": _tables.offender_rows,
            "items": None,
        }
        if table not in builders or builders[table] is None:
            names = ", ".join(builders)
            raise ValueError(f"a report has no table {table!r}; its tables: {names}")
        rows: List[Dict[str, Any]] = builders[table](self._data)  # type: ignore[misc]
        return rows

    def _items_bytes(self) -> Optional[bytes]:
        if self._items is None:
            self._items = _tables.read_items(self.out)
        return self._items

    @property
    def labels(self) -> Dict[str, int]:
        return dict(self._data.get("labels") or {})

    @property
    def json(self) -> str:
        """report.json, as written."""
        return self._text

    def to_dict(self) -> Dict[str, Any]:
        """report.json's content (a fresh copy each call)."""
        data: Dict[str, Any] = json.loads(self._text)
        return data

    def raise_for_gates(self) -> "Report":
        """Raises `GateFailure` when a `fail` gate failed; returns the report otherwise."""
        if self.exit_code != 0:
            lines = [f"{len(self.failed_gates)} gate(s) failed:"]
            for gate in self.failed_gates:
                lines.append(f"  {gate.name}: {gate.message or gate.expr}")
                lines.extend(f"    {reason}" for reason in gate.reasons)
            raise GateFailure("\n".join(lines) + "\n", diagnostics=[])
        return self

    def __repr__(self) -> str:
        spec = self._data.get("spec", {})
        result = "pass" if self.passed else "FAIL"
        return (
            f"<evalspec_rs.Report {spec.get('name')} {spec.get('version')}: {result}, "
            f"{len(self._data['gates'])} gates, {self._data.get('scored')} items>"
        )

    def _repr_html_(self) -> str:
        """The verdict, the gates that did not pass and why, the metrics with
        their intervals, the slices: what a notebook shows for a report."""
        return _tables.report_html(self._data)

    def flat_metrics(self) -> Dict[str, float]:
        """Every number of the report under a name trackers accept: the metrics,
        `slices/SLICE/VALUE/METRIC`, and `passed` (1 or 0); metrics without a
        value are left out. `wandb.log(report.flat_metrics())` logs them to W&B."""
        return _trackers.flat_metrics(self._data)

    def log_to_mlflow(self, *, artifacts: bool = True) -> Dict[str, Any]:
        """Logs the report to MLflow's active run (one is started when none is):
        `flat_metrics()` as metrics, the spec's params as params, the spec, its
        lock, the datasets' digests, the run id and each gate's status as tags,
        and (with `artifacts`) the reports in `out` (report.json alone without
        it) under `evalspec/`. Returns what was logged."""
        mlflow = _tables._module("mlflow", "log_to_mlflow()")
        metrics = self.flat_metrics()
        params, tags = _trackers.params_and_tags(self._data)
        started = mlflow.active_run() is None
        run = mlflow.start_run() if started else mlflow.active_run()
        try:
            mlflow.log_metrics(metrics)
            if params:
                mlflow.log_params(params)
            mlflow.set_tags(tags)
            if artifacts:
                if self.out is not None:
                    mlflow.log_artifacts(os.fspath(self.out), artifact_path="evalspec")
                else:
                    mlflow.log_text(self._text, "evalspec/report.json")
        finally:
            if started:
                mlflow.end_run()
        return {"run_id": run.info.run_id, "metrics": metrics, "params": params, "tags": tags}


class Plan:
    """The evaluation plan `evalspec check` prints."""

    def __init__(self, text: str, datasets: Optional[Dict[str, Dict[str, str]]] = None):
        self.text: str = text
        self._datasets: Dict[str, Dict[str, str]] = dict(datasets or {})

    @property
    def datasets(self) -> Dict[str, Dict[str, str]]:
        """Each dataset's `format` and `path`, in the spec's order."""
        return {name: dict(d) for name, d in self._datasets.items()}

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"<evalspec_rs.Plan {self.text.splitlines()[0] if self.text else ''}>"


class Diff:
    """Two runs compared, as `evalspec diff` does: `to_dict()` is `--format json`,
    `markdown` is `--format md` (a PR comment), `text` is the plain text."""

    def __init__(self, data: Dict[str, Any], markdown: str, text: str):
        self._data = data
        self.markdown: str = markdown
        self.text: str = text

    @property
    def regressed(self) -> bool:
        """A gate went from pass to fail or a metric got worse beyond its tolerance
        (what makes `--fail-on-regression` exit 1)."""
        return bool(self._data["regressed"])

    @property
    def failed_by(self) -> List[Dict[str, Any]]:
        """What made the diff regress: each metric test (`metric`, `slice`,
        `value`, `run`, Holm-adjusted `p_adjusted`) and each gate that went from
        pass to fail (`gate`)."""
        return [dict(t) for t in self._data.get("failed_by") or []]

    @property
    def unchanged(self) -> bool:
        return bool(self._data["unchanged"])

    def to_dict(self) -> Dict[str, Any]:
        return _copy(self._data)

    def to_arrow(self, table: str = "metrics") -> Any:
        """A table of the diff as a pyarrow Table: `metrics` (old, new, delta and
        the test of the change), `gates` (old and new status), or `items` (each
        item that changed: a label transition, a flip, a move, added, removed)."""
        return _tables.rows_to_arrow(self._rows(table))

    def to_pandas(self, table: str = "metrics") -> Any:
        return _tables.rows_to_pandas(self._rows(table))

    def to_polars(self, table: str = "metrics") -> Any:
        return _tables.rows_to_polars(self._rows(table))

    def _rows(self, table: str) -> List[Dict[str, Any]]:
        builders = {
            "metrics": _tables.diff_metric_rows,
            "gates": _tables.diff_gate_rows,
            "items": _tables.diff_item_rows,
        }
        if table not in builders:
            raise ValueError(f"a diff has no table {table!r}; its tables: {', '.join(builders)}")
        return builders[table](self._data)

    def _repr_html_(self) -> str:
        return _tables.diff_html(self._data)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"<evalspec_rs.Diff regressed={self.regressed} unchanged={self.unchanged}>"


# -------------------------------------------------------------------------- functions

Datasets = Optional[Mapping[str, Any]]
Params = Optional[Mapping[str, Any]]


def run(
    spec: PathLike,
    *,
    datasets: Datasets = None,
    params: Params = None,
    out: Optional[PathLike] = None,
    formats: Optional[Sequence[str]] = None,
    baseline: Union[PathLike, Report, None] = None,
    threads: Optional[int] = None,
    allow_drift: bool = False,
    max_memory: Optional[int] = None,
    join: Optional[str] = None,
    confidence: Optional[float] = None,
    items: bool = False,
) -> Report:
    """Scores `spec` as `evalspec run` does and returns its `Report`.

    `datasets` maps names to paths (as `--dataset NAME=PATH`) or to data in memory:
    a pyarrow Table, a pandas or polars DataFrame, anything with
    `__arrow_c_stream__`, a list of dicts (see `evalspec_rs._records`). DataFrames go to
    the engine through the Arrow C stream interface, without a copy to a file.
    `params` maps names to values (`--param`), `formats` adds reports (`--format`),
    `baseline` is a prior run (a report.json, its folder, or a `Report`); `threads`,
    `max_memory` (bytes), `join` and `confidence` are the command's options. The
    reports are written into `out`; without it none is written (report.json's
    content is still `Report.to_dict()`). `items=True` keeps the per-item rows in
    memory for `Report.to_pandas("items")`.

    A failed gate is not an exception: look at `Report.passed`, or call
    `Report.raise_for_gates()`. Raises `SpecError` when the spec does not compile,
    `DataError` when the data cannot be scored.
    """
    with contextlib.ExitStack() as stack:
        scratch = _Scratch(stack)
        out_dir = Path(os.fspath(out)) if out is not None else None
        given = dict(datasets or {})
        paths: List[Tuple[str, str]] = [
            (name, os.fspath(value)) for name, value in given.items() if is_path(value)
        ]
        tables: List[Tuple[str, object]] = []
        memory = {name: value for name, value in given.items() if not is_path(value)}
        if memory:
            # How each dataset is read decides how records in memory are handed over.
            tabled = [name for name, value in memory.items() if not isinstance(value, Mapping)]
            formats_by_name = _dataset_formats(spec, paths, tabled, params)
            for name, value in memory.items():
                table = as_table(value, name, formats_by_name.get(name))
                if table is None or isinstance(table, list):
                    # Runs, and records without an Arrow table: files the engine reads.
                    inputs = (out_dir or scratch.path() / "out") / "inputs"
                    source = value if table is None else table
                    path = write_dataset(source, name, formats_by_name.get(name), inputs)
                    paths.append((name, str(path)))
                else:
                    tables.append((name, table))
        answer = _call(
            _evalspec.run,
            _spec_path(spec),
            params=_params(params),
            datasets=paths,
            tables=tables,
            formats=_formats(formats),
            baseline=_baseline(baseline, scratch),
            confidence=_probability(confidence, "confidence"),
            out=os.fspath(out_dir) if out_dir is not None else None,
            threads=None if threads is None else _positive_int(threads, "threads"),
            max_memory=None if max_memory is None else _positive_int(max_memory, "max_memory"),
            join=join,
            allow_drift=bool(allow_drift),
            items=bool(items),
        )
        summary = answer["summary"]
        if answer["written"]:
            summary += f"reports: {', '.join(answer['written'])}\n"
        warnings = [d for d in answer["parsed"] if d.level == "warning"]
        code = 0 if answer["passed"] else 1
        return Report(answer["report_json"], code, out_dir, summary, warnings, answer.get("items"))


def check(
    spec: PathLike,
    *,
    datasets: Optional[Mapping[str, PathLike]] = None,
    params: Params = None,
    baseline: Union[PathLike, Report, None] = None,
) -> Plan:
    """Compiles `spec` as `evalspec check` does, without reading data, and returns
    the plan. Raises `SpecError`, located (`.file`, `.line`, `.column`), with the
    diagnostics the command prints as its message."""
    with contextlib.ExitStack() as stack:
        answer = _check(spec, _path_datasets(datasets), params, _baseline(baseline, _Scratch(stack)))
    described = zip(answer["names"], answer["formats"], answer["paths"])
    datasets_of = {name: {"format": f, "path": path} for name, f, path in described}
    return Plan(answer["text"], datasets_of)


def explain(
    spec: PathLike,
    *,
    params: Params = None,
) -> str:
    """Every metric and gate of `spec` in words (`evalspec explain`)."""
    answer = _check(spec, [], params, None, explain=True)
    text: str = answer["text"]
    return text


def diff(
    old: Union[PathLike, Report],
    new: Union[PathLike, Report],
    *,
    significance: Optional[float] = None,
) -> Diff:
    """Compares two runs as `evalspec diff` does: each a report.json, the folder
    holding it (with items.jsonl for item changes), or a `Report`."""
    with contextlib.ExitStack() as stack:
        scratch = _Scratch(stack)
        answer = _call(
            _evalspec.diff,
            _run_path(old, scratch, "old"),
            _run_path(new, scratch, "new"),
            significance=_probability(significance, "significance"),
        )
    return Diff(json.loads(answer["json"]), answer["markdown"], answer["text"])


# ---------------------------------------------------------------------------- helpers


def _copy(data: Dict[str, Any]) -> Dict[str, Any]:
    copied: Dict[str, Any] = json.loads(json.dumps(data))
    return copied


def _call(function: Any, *args: Any, **kwargs: Any) -> Dict[str, Any]:
    """Calls a native function; its diagnostics become an exception, or
    `answer["parsed"]` (the warnings of a call that got through)."""
    answer: Dict[str, Any] = function(*args, **kwargs)
    stage = answer["stage"]
    if stage == "panic":
        raise InternalError(f"evalspec panicked: {answer['message']}\n", diagnostics=[])
    parsed = diagnostics_of(answer["diagnostics"], answer["rendered"])
    if stage == "spec":
        raise SpecError(answer["message"], diagnostics=parsed)
    if stage == "data":
        raise DataError(answer["message"], diagnostics=parsed)
    answer["parsed"] = parsed
    return answer


def _check(
    spec: PathLike,
    datasets: List[Tuple[str, str]],
    params: Params,
    baseline: Optional[str],
    explain: bool = False,
    tables: Sequence[str] = (),
) -> Dict[str, Any]:
    return _call(
        _evalspec.check,
        _spec_path(spec),
        params=_params(params),
        datasets=datasets,
        tables=list(tables),
        baseline=baseline,
        confidence=None,
        explain=explain,
    )


def _dataset_formats(
    spec: PathLike, paths: List[Tuple[str, str]], memory: Sequence[str], params: Params
) -> Dict[str, str]:
    """Each dataset's format, from the compiled spec (which must compile first)."""
    answer = _check(spec, paths, params, None, tables=memory)
    return dict(zip(answer["names"], answer["formats"]))


class _Scratch:
    """A temporary folder, made on first use and removed with the stack."""

    def __init__(self, stack: contextlib.ExitStack):
        self._stack = stack
        self._path: Optional[Path] = None

    def path(self) -> Path:
        if self._path is None:
            self._path = Path(
                self._stack.enter_context(tempfile.TemporaryDirectory(prefix="evalspec-"))
            )
        return self._path


def _spec_path(spec: PathLike) -> str:
    if not isinstance(spec, (str, os.PathLike)):
        raise TypeError(f"spec: expected a path, found {type(spec).__name__}")
    return os.fspath(spec)


def _path_datasets(datasets: Optional[Mapping[str, PathLike]]) -> List[Tuple[str, str]]:
    paths = []
    for name, value in (datasets or {}).items():
        if not is_path(value):
            raise TypeError(f"dataset `{name}`: expected a path, found {type(value).__name__}")
        paths.append((name, os.fspath(value)))
    return paths


def _params(params: Params) -> List[Tuple[str, str]]:
    return [(str(name), _param_text(name, value)) for name, value in (params or {}).items()]


def _formats(formats: Optional[Sequence[str]]) -> List[str]:
    if isinstance(formats, str):
        formats = [formats]
    for format in formats or []:
        if not isinstance(format, str):
            raise TypeError(f"formats: expected names of formats, found {type(format).__name__}")
    return list(formats or [])


def _probability(value: Optional[float], what: str) -> Optional[float]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value < 1:
        raise ValueError(f"{what}: expected a number between 0 and 1 (exclusive), found {value!r}")
    return float(value)


def _param_text(name: str, value: Any) -> str:
    """A param value as `--param NAME=VALUE` reads it for the param's declared type."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"param `{name}`: {value} is not a finite number")
        return repr(value)
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return json.dumps(list(value), ensure_ascii=False, allow_nan=False)
    raise TypeError(
        f"param `{name}`: expected a number, string, bool or list, found {type(value).__name__}"
    )


def _positive_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{what}: expected a positive integer, found {value!r}")
    return int(value)


def _baseline(baseline: Union[PathLike, Report, None], scratch: _Scratch) -> Optional[str]:
    if baseline is None:
        return None
    return _run_path(baseline, scratch, "baseline")


def _run_path(run: Union[PathLike, Report], scratch: _Scratch, name: str) -> str:
    """A path to a run: as given, a Report's folder, or its report.json written out."""
    if isinstance(run, Report):
        if run.out is not None:
            return os.fspath(run.out)
        folder = scratch.path() / name
        folder.mkdir()
        (folder / "report.json").write_text(run.json, encoding="utf-8")
        return os.fspath(folder)
    if is_path(run):
        return os.fspath(run)
    raise TypeError(f"{name}: expected a path or a Report, found {type(run).__name__}")
