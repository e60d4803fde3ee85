"""The `evalspec` console script of the wheel is the Rust binary: for every shipped
spec and every command, the same exit code, stdout, stderr and report bytes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import ALL_FORMATS, REPO, SPECS, files_of

FORMAT_ARGS = [f"--format={f}" for f in ALL_FORMATS]


def test_every_shipped_spec_is_tested():
    names = {p.name for p in SPECS}
    assert {"rag-precision.yaml", "trec.yaml", "operational.yaml"} <= names, names


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.stem)
def test_run_writes_byte_identical_reports(spec: Path, tmp_path: Path, rust, python):
    results = {}
    for name, cli in (("rust", rust), ("python", python)):
        cwd = tmp_path / name
        cwd.mkdir()
        result = cli(["run", str(spec), "--out", "out", *FORMAT_ARGS], cwd)
        results[name] = (result, files_of(cwd / "out"))
    (rust_result, rust_files), (py_result, py_files) = results["rust"], results["python"]
    assert rust_result.code in (0, 1), rust_result.stderr
    assert py_result.code == rust_result.code
    assert py_result.stdout == rust_result.stdout
    assert py_result.stderr == rust_result.stderr
    assert sorted(py_files) == sorted(rust_files)
    assert "report.json" in rust_files and "items.jsonl" in rust_files
    for name in rust_files:
        assert py_files[name] == rust_files[name], name


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.stem)
@pytest.mark.parametrize("command", ["check", "explain", "verify"])
def test_commands_without_data_print_the_same(spec: Path, command: str, rust, python):
    rust_result = rust([command, str(spec)], REPO)
    py_result = python([command, str(spec)], REPO)
    assert rust_result.code == 0, rust_result.stderr
    assert (py_result.code, py_result.stdout, py_result.stderr) == (
        rust_result.code,
        rust_result.stdout,
        rust_result.stderr,
    )


@pytest.mark.parametrize(
    "args",
    [
        ["--version"],
        ["--help"],
        ["run", "--help"],
        ["schema"],
        ["man"],
        ["completions", "bash"],
        ["completions", "zsh"],
        ["completions", "fish"],
        ["completions", "powershell"],
        # errors: exit 2 with the same message
        ["run"],
        ["frobnicate"],
        ["run", "specs/rag-precision.yaml", "--param", "k=many"],
        ["run", "specs/rag-precision.yaml", "--dataset", "gold=tests/fixtures/bad_data/err_line_not_json.jsonl", "--out", "{tmp}"],
        ["check", "tests/fixtures/broken/err_unknown_name_suggests.yaml"],
        ["check", "tests/fixtures/broken/err_many_errors_at_once.yaml"],
        ["check", "no/such/spec.yaml"],
    ],
    ids=lambda a: " ".join(a),
)
def test_the_same_output_and_exit_code(args, tmp_path: Path, rust, python):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    rust_result = rust(args, REPO)
    py_result = python(args, REPO)
    assert (py_result.code, py_result.stdout, py_result.stderr) == (
        rust_result.code,
        rust_result.stdout,
        rust_result.stderr,
    )
    if args[0] in ("run", "frobnicate", "check") and "--help" not in args:
        assert rust_result.code == 2, rust_result


def test_a_failing_gate_exits_1_from_both(tmp_path: Path, rust, python):
    args = ["run", str(REPO / "specs/rag-precision.yaml"), "--param", "k=1", "--param",
            "min_precision=1.1", "--out", str(tmp_path / "out")]
    rust_result, py_result = rust(args, REPO), python(args, REPO)
    assert rust_result.code == 1, rust_result.stderr
    assert (py_result.code, py_result.stdout) == (rust_result.code, rust_result.stdout)


def test_diff_of_two_runs(tmp_path: Path, rust, python):
    spec = str(REPO / "specs/rag-precision.yaml")
    assert rust(["run", spec, "--out", "old", "--format", "items"], tmp_path).code == 0
    assert rust(["run", spec, "--out", "new", "--format", "items", "--param", "k=1"], tmp_path).code == 0
    for fmt in ("text", "md", "json"):
        args = ["diff", "old", "new", "--format", fmt, "--fail-on-regression"]
        rust_result, py_result = rust(args, tmp_path), python(args, tmp_path)
        assert rust_result.code == 1, rust_result
        assert (py_result.code, py_result.stdout, py_result.stderr) == (
            rust_result.code, rust_result.stdout, rust_result.stderr)


def test_python_dash_m_is_the_command(tmp_path: Path, rust, python_cli):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "evalspec_rs", "--version"], capture_output=True, text=True)
    assert done.returncode == 0
    assert done.stdout == rust(["--version"], tmp_path).stdout


def test_a_closed_pipe_is_not_an_error(python_cli):
    """`evalspec schema | head -1` exits 0 with no traceback, as the binary does."""
    import subprocess

    done = subprocess.run(
        f"'{python_cli}' schema | head -c 1; exit ${{PIPESTATUS[0]}}",
        shell=True, executable="/bin/bash", capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "{"
    assert done.stderr == ""


def test_versions_agree(rust, tmp_path: Path):
    import evalspec_rs

    cargo = (REPO / "Cargo.toml").read_text()
    version = re.search(r'^version = "([^"]+)"', cargo, re.MULTILINE).group(1)
    python_cargo = (REPO / "python/Cargo.toml").read_text()
    assert re.search(r'^version = "([^"]+)"', python_cargo, re.MULTILINE).group(1) == version
    assert evalspec_rs.__version__ == version
    assert rust(["--version"], tmp_path).stdout == f"evalspec {version}\n"
    # The action installs its own source, never `evalspec` from PyPI (another project's name).
    action = (REPO / "action.yml").read_text()
    assert "evalspec==" not in action
