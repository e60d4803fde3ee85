# Type stubs of the public API (the implementation is in _api.py, _errors.py and
# _records.py; `python -m mypy.stubtest evalspec_rs` holds the two together).
import os
from pathlib import Path
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Union

__version__: str

_PathLike = Union[str, os.PathLike[str]]

class Diagnostic(NamedTuple):
    level: str
    message: str
    file: Optional[str]
    line: Optional[int]
    column: Optional[int]
    key_path: Optional[str]
    text: str
    code: str = ...
    help: Optional[str] = ...

class EvalspecError(Exception):
    exit_code: int
    message: str
    diagnostics: List[Diagnostic]
    file: Optional[str]
    line: Optional[int]
    column: Optional[int]
    def __init__(self, message: str, diagnostics: Optional[Sequence[Diagnostic]] = None) -> None: ...

class SpecError(EvalspecError): ...
class DataError(EvalspecError): ...
class GateFailure(EvalspecError): ...
class InternalError(EvalspecError): ...

class Gate:
    def __init__(self, data: Mapping[str, Any]) -> None: ...
    @property
    def name(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def passed(self) -> bool: ...
    @property
    def severity(self) -> str: ...
    @property
    def expr(self) -> Optional[str]: ...
    @property
    def value(self) -> Any: ...
    @property
    def threshold(self) -> Any: ...
    @property
    def message(self) -> Optional[str]: ...
    @property
    def reasons(self) -> List[str]: ...
    @property
    def run(self) -> Optional[str]: ...
    def to_dict(self) -> Dict[str, Any]: ...

class Report:
    exit_code: int
    out: Optional[Path]
    summary: str
    warnings: List[Diagnostic]
    def __init__(
        self,
        text: str,
        exit_code: int,
        out: Optional[Path],
        summary: str,
        warnings: Sequence[Diagnostic] = ...,
    ) -> None: ...
    @property
    def passed(self) -> bool: ...
    @property
    def metrics(self) -> Dict[str, Any]: ...
    @property
    def gates(self) -> List[Gate]: ...
    @property
    def failed_gates(self) -> List[Gate]: ...
    @property
    def labels(self) -> Dict[str, int]: ...
    @property
    def json(self) -> str: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def raise_for_gates(self) -> Report: ...

class Plan:
    text: str
    def __init__(self, text: str, datasets: Optional[Dict[str, Dict[str, str]]] = ...) -> None: ...
    @property
    def datasets(self) -> Dict[str, Dict[str, str]]: ...

class Diff:
    markdown: str
    text: str
    def __init__(self, data: Dict[str, Any], markdown: str, text: str) -> None: ...
    @property
    def regressed(self) -> bool: ...
    @property
    def unchanged(self) -> bool: ...
    def to_dict(self) -> Dict[str, Any]: ...

def run(
    spec: _PathLike,
    *,
    datasets: Optional[Mapping[str, Any]] = None,
    params: Optional[Mapping[str, Any]] = None,
    out: Optional[_PathLike] = None,
    formats: Optional[Sequence[str]] = None,
    baseline: Union[_PathLike, Report, None] = None,
    threads: Optional[int] = None,
    allow_drift: bool = False,
    max_memory: Optional[int] = None,
    join: Optional[str] = None,
    confidence: Optional[float] = None,
) -> Report: ...
def check(
    spec: _PathLike,
    *,
    datasets: Optional[Mapping[str, _PathLike]] = None,
    params: Optional[Mapping[str, Any]] = None,
    baseline: Union[_PathLike, Report, None] = None,
) -> Plan: ...
def explain(spec: _PathLike, *, params: Optional[Mapping[str, Any]] = None) -> str: ...
def diff(
    old: Union[_PathLike, Report],
    new: Union[_PathLike, Report],
    *,
    significance: Optional[float] = None,
) -> Diff: ...
