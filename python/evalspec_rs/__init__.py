"""evalspec_rs: declarative YAML eval specs compiled into deterministic quality gates
for RAG pipelines, from Python.

    import evalspec_rs

    report = evalspec_rs.run("specs/rag-precision.yaml", params={"k": 3})
    report.passed, report.metrics["precision"], report.failed_gates

The engine is the `evalspec` command's, in-process: `run` writes the same reports
and `Report.to_dict()` is the same report.json. Datasets may be paths or records in
memory (a list of dicts, a pandas or polars DataFrame).
"""

from ._api import Diff, Gate, Plan, Report, SliceValue, check, diff, explain, run
from ._errors import (
    DataError,
    Diagnostic,
    EvalspecError,
    GateFailure,
    InternalError,
    SpecError,
)
from ._evalspec import __version__

# Public classes print as `evalspec_rs.Report`, `evalspec_rs.SpecError`, ...
_public: type
for _public in (Diff, Gate, Plan, Report, SliceValue, Diagnostic, EvalspecError, SpecError, DataError,
                GateFailure, InternalError):
    _public.__module__ = __name__
del _public

__all__ = [
    "DataError",
    "Diagnostic",
    "Diff",
    "EvalspecError",
    "Gate",
    "GateFailure",
    "InternalError",
    "Plan",
    "Report",
    "SliceValue",
    "SpecError",
    "__version__",
    "check",
    "diff",
    "explain",
    "run",
]
