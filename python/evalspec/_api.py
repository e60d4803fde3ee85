"""The Python API: the `evalspec` command's engine, in-process.

Every function builds the command line the `evalspec` command would get and runs it
through the native module, which calls the same Rust entry as the binary with the GIL
released and its output captured. Results are read back from what the command writes
(report.json, the plan, the diff as JSON), so they are the command's, byte for byte.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from . import _evalspec
from ._errors import (
    DataError,
    Diagnostic,
    EvalspecError,
    GateFailure,
    InternalError,
    SpecError,
    parse_diagnostics,
)
from ._records import is_path, write_dataset

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


class Report:
    """The result of `evalspec.run`: report.json's content, and how the run ended."""

    def __init__(
        self,
        text: str,
        exit_code: int,
        out: Optional[Path],
        summary: str,
        stderr: str,
    ):
        self._text = text
        self._data: Dict[str, Any] = json.loads(text)
        self.exit_code: int = exit_code
        """0: every `fail` gate passed; 1: one failed (as the command's exit status)."""
        self.out: Optional[Path] = out
        """The folder holding the reports, or None when they were not kept (`out=None`)."""
        self.summary: str = summary
        """The summary the command prints."""
        self.warnings: List[Diagnostic] = [
            d for d in parse_diagnostics(stderr) if d.level == "warning"
        ]
        self.stderr: str = stderr

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
            f"<evalspec.Report {spec.get('name')} {spec.get('version')}: {result}, "
            f"{len(self._data['gates'])} gates, {self._data.get('scored')} items>"
        )

    def _repr_markdown_(self) -> str:
        return "```text\n" + self.summary + "```\n"


class Plan:
    """The evaluation plan `evalspec check` prints."""

    def __init__(self, text: str):
        self.text: str = text

    @property
    def datasets(self) -> Dict[str, Dict[str, str]]:
        """Each dataset's `format` and `path`, in reading order."""
        return _plan_datasets(self.text)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"<evalspec.Plan {self.text.splitlines()[0] if self.text else ''}>"


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
    def unchanged(self) -> bool:
        return bool(self._data["unchanged"])

    def to_dict(self) -> Dict[str, Any]:
        return _copy(self._data)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"<evalspec.Diff regressed={self.regressed} unchanged={self.unchanged}>"


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
) -> Report:
    """Scores `spec` as `evalspec run` does and returns its `Report`.

    `datasets` maps names to paths (as `--dataset NAME=PATH`) or to records in memory
    (a list of dicts, a pandas or polars DataFrame, ...; see `evalspec._records`),
    which are written into `OUT/inputs/` and read from there. `params` maps names to
    values (`--param`), `formats` adds reports (`--format`), `baseline` is a prior
    run (a report.json, its folder, or a `Report`). Without `out`, the reports are
    written into a temporary folder and only report.json is kept (`Report.to_dict()`).

    A failed gate is not an exception: look at `Report.passed`, or call
    `Report.raise_for_gates()`. Raises `SpecError` when the spec does not compile,
    `DataError` when the data cannot be scored.
    """
    with contextlib.ExitStack() as stack:
        scratch = _Scratch(stack)
        out_dir = Path(os.fspath(out)) if out is not None else scratch.path() / "out"
        options = _options(params, formats, _baseline(baseline, scratch))
        path_datasets = {n: v for n, v in (datasets or {}).items() if is_path(v)}
        memory = {n: v for n, v in (datasets or {}).items() if not is_path(v)}
        written: Dict[str, str] = {}
        if memory:
            # The spec must compile before records are written, and it says how
            # each dataset is read.
            plan = check(spec, datasets=path_datasets, params=params)
            formats_by_name = {n: d["format"] for n, d in plan.datasets.items()}
            for name, value in memory.items():
                path = write_dataset(value, name, formats_by_name.get(name), out_dir / "inputs")
                written[name] = str(path)
        dataset_args = [
            f"--dataset={name}={written[name] if name in written else os.fspath(value)}"
            for name, value in (datasets or {}).items()
        ]
        argv = ["run", *dataset_args, *options, f"--out={os.fspath(out_dir)}"]
        if threads is not None:
            argv.append(f"--threads={_positive_int(threads, 'threads')}")
        if allow_drift:
            argv.append("--allow-drift")
        code, stdout, stderr = _invoke([*argv, "--", _spec_path(spec)])
        if code == 2:
            raise _run_error(spec, dataset_args, options, stderr)
        if code not in (0, 1):
            raise InternalError(f"evalspec exited with status {code}\n{stderr}")
        text = (out_dir / "report.json").read_text(encoding="utf-8")
        return Report(text, code, out_dir if out is not None else None, stdout, stderr)


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
        options = _options(params, None, _baseline(baseline, _Scratch(stack)))
        code, stdout, stderr = _invoke(
            ["check", *_path_datasets(datasets), *options, "--", _spec_path(spec)]
        )
    if code != 0:
        raise SpecError(stderr) if code == 2 else InternalError(stderr)
    return Plan(stdout)


def explain(
    spec: PathLike,
    *,
    params: Params = None,
) -> str:
    """Every metric and gate of `spec` in words (`evalspec explain`)."""
    code, stdout, stderr = _invoke(["explain", *_options(params, None, None), "--", _spec_path(spec)])
    if code != 0:
        raise SpecError(stderr) if code == 2 else InternalError(stderr)
    return stdout


def diff(old: Union[PathLike, Report], new: Union[PathLike, Report]) -> Diff:
    """Compares two runs as `evalspec diff` does: each a report.json, the folder
    holding it (with items.jsonl for item changes), or a `Report`."""
    with contextlib.ExitStack() as stack:
        scratch = _Scratch(stack)
        paths = [_run_path(old, scratch, "old"), _run_path(new, scratch, "new")]
        outputs = []
        for format in ("json", "md", "text"):
            code, stdout, stderr = _invoke(["diff", f"--format={format}", "--", *paths])
            if code != 0:
                raise DataError(stderr) if code == 2 else InternalError(stderr)
            outputs.append(stdout)
    return Diff(json.loads(outputs[0]), outputs[1], outputs[2])


# ---------------------------------------------------------------------------- helpers


def _copy(data: Dict[str, Any]) -> Dict[str, Any]:
    copied: Dict[str, Any] = json.loads(json.dumps(data))
    return copied


def _invoke(argv: List[str]) -> Tuple[int, str, str]:
    for stream in (sys.stdout, sys.stderr):
        flush = getattr(stream, "flush", None)
        if flush is not None:
            with contextlib.suppress(Exception):
                flush()
    code, stdout, stderr, panic = _evalspec.run(["evalspec", *argv])
    if panic is not None:
        raise InternalError(
            f"evalspec panicked: {panic}\n{stderr}" if stderr else f"evalspec panicked: {panic}\n",
            diagnostics=[],
        )
    return code, stdout, stderr


def _run_error(
    spec: PathLike, dataset_args: List[str], options: List[str], stderr: str
) -> EvalspecError:
    """A failed run: a `SpecError` when `check` rejects the same spec and arguments,
    otherwise a `DataError`. Either way the message is what `run` printed."""
    code, _, _ = _invoke(["check", *dataset_args, *options, "--", _spec_path(spec)])
    return SpecError(stderr) if code == 2 else DataError(stderr)


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


def _path_datasets(datasets: Optional[Mapping[str, PathLike]]) -> List[str]:
    args = []
    for name, value in (datasets or {}).items():
        if not is_path(value):
            raise TypeError(f"dataset `{name}`: expected a path, found {type(value).__name__}")
        args.append(f"--dataset={name}={os.fspath(value)}")
    return args


def _options(
    params: Params, formats: Optional[Sequence[str]], baseline: Optional[str]
) -> List[str]:
    args = [f"--param={name}={_param_text(name, value)}" for name, value in (params or {}).items()]
    if isinstance(formats, str):
        formats = [formats]
    args.extend(f"--format={format}" for format in formats or [])
    if baseline is not None:
        args.append(f"--baseline={baseline}")
    return args


def _param_text(name: str, value: Any) -> str:
    """A param value as `--param NAME=VALUE` reads it for the param's declared type."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
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
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what}: expected a positive integer, found {value!r}")
    return value


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


# `  1. gold (jsonl specs/data/gold.jsonl): looked up by key, ...` in `check`'s plan.
_PLAN_DATASET = re.compile(r"^ +\d+\. (\S+) \((\S+) (.*)\): ")


def _plan_datasets(text: str) -> Dict[str, Dict[str, str]]:
    datasets: Dict[str, Dict[str, str]] = {}
    lines: Iterator[str] = iter(text.splitlines())
    for line in lines:
        if line.startswith("datasets"):
            break
    for line in lines:
        if not line.strip():
            break
        match = _PLAN_DATASET.match(line)
        if match:
            datasets[match.group(1)] = {"format": match.group(2), "path": match.group(3)}
    return datasets
