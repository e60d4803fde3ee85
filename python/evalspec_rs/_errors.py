"""Exceptions, and the engine's located diagnostics as data."""

from __future__ import annotations

import json
import re
from typing import List, NamedTuple, Optional, Sequence

# `error: unknown name `shiped``, then `  --> spec.yaml:12:30 (metrics.precision)`.
_HEADER = re.compile(r"^(error|warning): (.*)$")
_LOCATION = re.compile(r"^ *--> (.+?):(\d+)(?::(\d+))?(?: \((.*)\))?$")


class Diagnostic(NamedTuple):
    """One error or warning of the engine (as `--message-format json` writes it)."""

    level: str
    """`error` or `warning`."""
    message: str
    file: Optional[str]
    line: Optional[int]
    column: Optional[int]
    key_path: Optional[str]
    """For a spec, the YAML key path of the value (`metrics.precision.expr`)."""
    text: str
    """The whole rendered diagnostic: message, location, snippet with caret, help."""
    code: str = ""
    """What kind of error it is, a stable snake_case name (`unknown_name`)."""
    help: Optional[str] = None
    """How to fix it, when the engine knows."""


def diagnostics_of(lines: str, rendered: Sequence[str]) -> List[Diagnostic]:
    """The diagnostics the native module gives: one JSON object a line, and each
    one's rendered text."""
    diagnostics = []
    for line, text in zip(lines.splitlines(), rendered):
        data = json.loads(line)
        diagnostics.append(
            Diagnostic(
                level=data["level"],
                message=data["message"],
                file=data.get("file"),
                line=data.get("line"),
                column=data.get("column"),
                key_path=data.get("key_path"),
                text=text if text.endswith("\n") else text + "\n",
                code=data.get("code") or "",
                help=data.get("help"),
            )
        )
    return diagnostics


def parse_diagnostics(text: str) -> List[Diagnostic]:
    """Splits what the command line printed on stderr into its diagnostics."""
    blocks: List[List[str]] = []
    for line in text.splitlines():
        if _HEADER.match(line):
            blocks.append([line])
        elif blocks and line.strip():
            blocks[-1].append(line)
    diagnostics = []
    for block in blocks:
        header = _HEADER.match(block[0])
        assert header is not None
        file = line_no = column = key_path = None
        if len(block) > 1:
            location = _LOCATION.match(block[1])
            if location:
                file = location.group(1)
                line_no = int(location.group(2))
                column = int(location.group(3)) if location.group(3) else None
                key_path = location.group(4)
        lines = [line for line in block if not _is_closing_count(line)]
        diagnostics.append(
            Diagnostic(
                level=header.group(1),
                message=header.group(2),
                file=file,
                line=line_no,
                column=column,
                key_path=key_path,
                text="\n".join(lines) + "\n",
            )
        )
    return diagnostics


def _is_closing_count(line: str) -> bool:
    return re.match(r"^\d+ errors?; nothing was scored$", line) is not None


class EvalspecError(Exception):
    """Base of evalspec's errors: nothing could be scored (the command's exit 2).

    `str(error)` is exactly what `evalspec` prints on stderr; `diagnostics` holds
    each error and warning, and `file`, `line`, `column` locate the first error.
    """

    exit_code: int = 2

    def __init__(self, message: str, diagnostics: Optional[Sequence[Diagnostic]] = None):
        super().__init__(message)
        self.message = message
        self.diagnostics: List[Diagnostic] = list(
            parse_diagnostics(message) if diagnostics is None else diagnostics
        )
        first = next(
            (d for d in self.diagnostics if d.level == "error" and d.file is not None),
            None,
        )
        self.file: Optional[str] = first.file if first else None
        self.line: Optional[int] = first.line if first else None
        self.column: Optional[int] = first.column if first else None

    def __str__(self) -> str:
        return self.message


class SpecError(EvalspecError):
    """The spec does not compile with these params, datasets and baseline: what
    `evalspec check` rejects (unknown names, type errors, bad YAML, bad params)."""


class DataError(EvalspecError):
    """The spec compiled but the run could not score: unreadable or malformed
    data, a broken data contract, drift from a frozen spec's lock, unwritable
    reports."""


class GateFailure(EvalspecError):
    """Raised by `Report.raise_for_gates()` when a `fail` gate failed (exit 1)."""

    exit_code = 1


class InternalError(EvalspecError):
    """evalspec itself failed (a bug: a Rust panic, caught before it reached Python).
    Please report it with the message."""

    exit_code = 101
