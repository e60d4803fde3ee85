"""The `evalspec` console script: the Rust binary's entry, `evalspec::run(argv)`,
so flags, output and exit codes are the binary's."""

from __future__ import annotations

import signal
import sys
from typing import List, Optional

from . import _evalspec


def main(argv: Optional[List[str]] = None) -> None:
    """Runs `evalspec ARGS...` and exits with its status."""
    # Ctrl-C stops evalspec at once, as it stops the binary (Python's own handler
    # would wait for the engine to return to Python).
    if hasattr(signal, "SIGINT"):
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    args = sys.argv[1:] if argv is None else argv
    sys.exit(_evalspec.main(["evalspec", *args]))
