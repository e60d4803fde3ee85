"""The native module (Rust, pyo3): a consumer of the engine's API.

Each call but `main` returns a dict: `stage` (`ok`, `spec`, `data` or `panic`),
`diagnostics` (one JSON object a line, as `--message-format json` writes them),
`rendered` (each diagnostic as the command prints it), `message` (what the command
would print on stderr), and the call's own values when `stage` is `ok`.
"""

from typing import Any, Dict, List, Optional, Tuple

__version__: str

def main(argv: List[str]) -> int:
    """Runs `evalspec` with `argv` (argv[0] is the program name) on the process's
    stdout and stderr; returns the exit status (101 if it panicked)."""

def run(
    spec: str,
    *,
    params: List[Tuple[str, str]],
    datasets: List[Tuple[str, str]],
    tables: List[Tuple[str, object]],
    formats: List[str],
    baseline: Optional[str],
    confidence: Optional[float],
    out: Optional[str],
    threads: Optional[int],
    max_memory: Optional[int],
    join: Optional[str],
    allow_drift: bool,
    items: bool = ...,
) -> Dict[str, Any]:
    """Scores the spec: `passed`, `report_json`, `summary`, `written` (paths), and
    with `items` the items' lines (`items`, bytes)."""

def check(
    spec: str,
    *,
    params: List[Tuple[str, str]],
    datasets: List[Tuple[str, str]],
    tables: List[str],
    baseline: Optional[str],
    confidence: Optional[float],
    explain: bool,
) -> Dict[str, Any]:
    """Compiles the spec: `text` (the plan, or the explanation), and the datasets'
    `names`, `formats` and `paths`."""

def diff(old: str, new: str, *, significance: Optional[float]) -> Dict[str, Any]:
    """Compares two runs: `json`, `markdown`, `text`, `regressed`."""

def _panic_for_test() -> Dict[str, Any]: ...
