"""pre-commit hooks (`.pre-commit-hooks.yaml`): `evalspec check` and `evalspec verify`
on the specs a commit changes.

    python -m evalspec_rs.pre_commit check FILE...
    python -m evalspec_rs.pre_commit verify FILE...

YAML files that are not eval specs (no top-level `datasets:`, `metrics:`, `gates:`,
`items:` or `extends:`) are skipped, so the hooks can watch every YAML file. A changed
`SPEC.lock` stands for its spec. `verify` skips specs without a lock (not frozen).
Nothing is printed for a spec that passes; a failing one prints the command's
diagnostics. Exit status: 0 all passed, 1 otherwise.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

_SPEC_KEY = re.compile(r"^(datasets|metrics|gates|items|extends)\s*:", re.MULTILINE)
_COMMANDS = ("check", "verify")


def is_spec(path: Path) -> bool:
    """A YAML file with one of a spec's top-level keys."""
    if path.suffix not in (".yaml", ".yml") or not path.is_file():
        return False
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return True  # let evalspec say what is wrong with it
    return _SPEC_KEY.search(text) is not None


def specs_of(files: List[str]) -> List[str]:
    """The specs among `files` (a lock stands for its spec), each once, in order."""
    specs: List[str] = []
    for name in files:
        if name.endswith(".lock"):
            name = name[: -len(".lock")]
        if name not in specs and is_spec(Path(name)):
            specs.append(name)
    return specs


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] not in _COMMANDS:
        sys.stderr.write("usage: python -m evalspec_rs.pre_commit check|verify FILE...\n")
        return 2
    command, files = args[0], args[1:]
    failed = 0
    for spec in specs_of(files):
        if command == "verify" and not Path(spec + ".lock").is_file():
            continue
        # A process of its own per spec: what passes prints nothing (its plan, or
        # "matches its lock", is kept), what fails prints the command's diagnostics.
        done = subprocess.run(
            [sys.executable, "-m", "evalspec_rs", command, "--", spec],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            failed += 1
            sys.stderr.write(f"evalspec {command} {spec}: exit {done.returncode}\n")
            sys.stderr.write(done.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
