"""The native module (Rust, pyo3): the `evalspec` command's entry."""

from typing import List, Optional, Tuple

__version__: str

def main(argv: List[str]) -> int:
    """Runs `evalspec` with `argv` (argv[0] is the program name) on the process's
    stdout and stderr; returns the exit status (101 if it panicked)."""

def run(argv: List[str]) -> Tuple[int, str, str, Optional[str]]:
    """Runs `evalspec` with `argv`, capturing its output: (exit status, stdout,
    stderr, the panic message if it panicked)."""

def _panic_for_test() -> Tuple[int, str, str, Optional[str]]: ...
