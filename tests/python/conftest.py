"""Shared fixtures for the Python package's tests.

They test the *installed* package (the wheel .ci/run builds and installs into a
fresh virtual environment): `import evalspec_rs` and the `evalspec` console script of
the interpreter running pytest. `EVALSPEC_RUST_BIN` names the Rust binary that the
console script must match (default: target/debug/evalspec, built by `cargo test`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional

import pytest

REPO = Path(__file__).resolve().parents[2]
SPECS = sorted((REPO / "specs").glob("*.yaml"))
# report.md comes from the spec's own `reports:` (rag-quality-report writes its own).
ALL_FORMATS = ["junit", "html", "summary", "items"]


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str


def _run(program: List[str], args: List[str], cwd: Path, env: Optional[Dict[str, str]] = None) -> Result:
    environment = dict(os.environ, NO_COLOR="1")
    environment.update(env or {})
    done = subprocess.run(
        [*program, *args], cwd=cwd, env=environment, capture_output=True, text=True, timeout=300
    )
    return Result(done.returncode, done.stdout, done.stderr)


@pytest.fixture(scope="session")
def rust_bin() -> Path:
    path = Path(os.environ.get("EVALSPEC_RUST_BIN") or REPO / "target/debug/evalspec")
    assert path.is_file(), f"the Rust binary {path} is missing: run `cargo build` first"
    return path


@pytest.fixture(scope="session")
def python_cli() -> Path:
    """The console script pip installed beside this interpreter."""
    path = Path(sys.executable).parent / "evalspec"
    assert path.is_file(), f"{path} is missing: is the evalspec wheel installed?"
    return path


@pytest.fixture(scope="session")
def rust(rust_bin: Path):
    return lambda args, cwd, env=None: _run([str(rust_bin)], args, cwd, env)


@pytest.fixture(scope="session")
def python(python_cli: Path):
    return lambda args, cwd, env=None: _run([str(python_cli)], args, cwd, env)


def files_of(folder: Path) -> Dict[str, bytes]:
    """Every file under `folder`, by relative path."""
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def strip_dataset_files(report: dict) -> dict:
    """report.json without the paths and hashes of its data files (records given in
    memory are a table, `<NAME>`, with no bytes to hash), and without the run id,
    the digest of the report that names them."""
    report.pop("run_id", None)
    for dataset in report["datasets"].values():
        dataset.pop("path")
        dataset.pop("sha256")
        for run in (dataset.get("runs") or {}).values():
            run.pop("path")
            run.pop("sha256")
    for run in report.get("runs") or []:
        run.pop("files")
    return report
