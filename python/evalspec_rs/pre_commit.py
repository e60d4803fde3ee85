"""pre-commit hooks (`.pre-commit-hooks.yaml`): `evalspec check` and `evalspec verify`
on the specs a commit changes.

    python -m evalspec_rs.pre_commit check [--pattern GLOB]... FILE...
    python -m evalspec_rs.pre_commit verify [--pattern GLOB]... FILE...

Only files named as specs are checked: those matching a `--pattern` (a glob matched
against the end of the path, `*` within one folder: `specs/*.yaml` matches
`specs/rag.yaml` and `eval/specs/rag.yaml`, not `specs/data/x.yaml`), by default
`*.eval.yaml`, `*.eval.yml`, `specs/*.yaml` and `specs/*.yml`. Other files, a Helm
`values.yaml` with a `metrics:` key among them, are skipped. A changed `SPEC.lock`
stands for its spec. `verify` skips specs without a lock (not frozen). Nothing is
printed for a spec that passes; a failing one prints the command's diagnostics.
Exit status: 0 all passed, 1 otherwise, 2 a usage error.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path, PurePosixPath
from typing import List, Optional, Sequence, Tuple

_COMMANDS = ("check", "verify")
DEFAULT_PATTERNS = ("*.eval.yaml", "*.eval.yml", "specs/*.yaml", "specs/*.yml")
_USAGE = "usage: python -m evalspec_rs.pre_commit check|verify [--pattern GLOB]... FILE...\n"


def is_spec(name: str, patterns: Sequence[str] = DEFAULT_PATTERNS) -> bool:
    """Whether the file `name` is named as a spec: it matches one of `patterns`."""
    path = PurePosixPath(name.replace("\\", "/"))
    return any(path.match(pattern) for pattern in patterns)


def specs_of(files: List[str], patterns: Sequence[str] = DEFAULT_PATTERNS) -> List[str]:
    """The specs among `files` (a lock stands for its spec), each once, in order."""
    specs: List[str] = []
    for name in files:
        if name.endswith(".lock"):
            name = name[: -len(".lock")]
        if name not in specs and is_spec(name, patterns) and Path(name).is_file():
            specs.append(name)
    return specs


def _parse(args: List[str]) -> Optional[Tuple[str, List[str], List[str]]]:
    """The command, the patterns and the files; None on a usage error."""
    if not args or args[0] not in _COMMANDS:
        return None
    command, rest = args[0], args[1:]
    patterns: List[str] = []
    files: List[str] = []
    index = 0
    while index < len(rest):
        arg = rest[index]
        if arg == "--":
            files.extend(rest[index + 1:])
            break
        if arg == "--pattern":
            if index + 1 == len(rest):
                return None
            patterns.append(rest[index + 1])
            index += 2
            continue
        if arg.startswith("--pattern="):
            patterns.append(arg[len("--pattern="):])
        elif arg.startswith("-"):
            return None
        else:
            files.append(arg)
        index += 1
    for pattern in patterns:
        try:
            PurePosixPath("spec.yaml").match(pattern)
        except ValueError:  # an empty pattern, or `/` alone
            return None
    return command, patterns or list(DEFAULT_PATTERNS), files


def main(argv: Optional[List[str]] = None) -> int:
    parsed = _parse(sys.argv[1:] if argv is None else argv)
    if parsed is None:
        sys.stderr.write(_USAGE)
        return 2
    command, patterns, files = parsed
    failed = 0
    for spec in specs_of(files, patterns):
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
