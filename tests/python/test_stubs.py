"""The type stubs that ship in the wheel match the package (mypy's stubtest) and
type-check a program that uses the API."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import evalspec_rs

PACKAGE = Path(evalspec_rs.__file__).parent


def test_the_wheel_ships_stubs_and_py_typed():
    for name in ("__init__.pyi", "_evalspec.pyi", "py.typed"):
        assert (PACKAGE / name).is_file(), name


def test_stubs_match_the_runtime():
    done = subprocess.run([sys.executable, "-m", "mypy.stubtest", "evalspec_rs", "--concise",
                           "--ignore-missing-stub"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_program_using_the_api_type_checks(tmp_path: Path):
    program = tmp_path / "use_evalspec.py"
    program.write_text(
        """
import evalspec_rs
import pandas

report: evalspec_rs.Report = evalspec_rs.run(
    "spec.yaml", datasets={"trace": "t.jsonl", "gold": [{"qid": "q1"}]}, params={"k": 10},
    out="eval-out", formats=["junit"],
)
passed: bool = report.passed
precision: float = report.metrics["precision"]
reasons: list[str] = [r for g in report.gates for r in g.reasons]
plan: evalspec_rs.Plan = evalspec_rs.check("spec.yaml")
changes: evalspec_rs.Diff = evalspec_rs.diff(report, "old-out")
try:
    evalspec_rs.check("spec.yaml")
except evalspec_rs.SpecError as error:
    where: tuple[str | None, int | None, int | None] = (error.file, error.line, error.column)
"""
    )
    bad = tmp_path / "misuse.py"
    bad.write_text('import evalspec_rs\nevalspec_rs.run("spec.yaml", outt="x")\nx: int = evalspec_rs.check("s").text\n')
    mypy = [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--ignore-missing-imports"]
    done = subprocess.run([*mypy, str(program)], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    done = subprocess.run([*mypy, str(bad)], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1
    assert 'Unexpected keyword argument "outt"' in done.stdout
    assert 'Incompatible types in assignment (expression has type "str", variable has type "int")' in done.stdout


def test_the_package_and_the_action_script_pass_mypy_strict():
    """The sources in the repository (the wheel's .py files are these)."""
    repo = Path(__file__).resolve().parents[2]
    sources = sorted(str(p.relative_to(repo)) for p in (repo / "python/evalspec_rs").glob("*.py"))
    sources.append("scripts/action/comment.py")
    assert len(sources) >= 8
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", f"--cache-dir={os.devnull}", *sources],
                          capture_output=True, text=True, cwd=repo)
    assert done.returncode == 0, done.stdout
