"""Errors are Python exceptions carrying the command's diagnostics, located; bad
data raises instead of crashing; a Rust panic never reaches the interpreter."""

from __future__ import annotations

import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest

import evalspec_rs
from conftest import REPO

BROKEN = sorted((REPO / "tests/fixtures/broken").glob("err_*.yaml"))
BAD_DATA = sorted((REPO / "tests/fixtures/bad_data").glob("err_*.jsonl"))
PRECISION = REPO / "specs/rag-precision.yaml"


def test_a_located_spec_error():
    spec = REPO / "tests/fixtures/broken/err_unknown_name_suggests.yaml"
    with pytest.raises(evalspec_rs.SpecError) as raised:
        evalspec_rs.check(spec)
    error = raised.value
    assert (error.file, error.line, error.column) == (str(spec), 9, 29)
    assert str(error) == (
        "error: unknown name `shiped`\n"
        f" --> {spec}:9:29 (metrics.rate)\n"
        "  |\n"
        "9 |   rate: ratio(gold.ok where shiped)\n"
        "  |                             ^^^^^^ not a dataset, field, matcher or param\n"
        "  = help: did you mean `shipped`?\n"
        "\n"
        "1 error; nothing was scored\n"
    )
    [diagnostic] = error.diagnostics
    assert diagnostic.level == "error"
    assert diagnostic.message == "unknown name `shiped`"
    assert diagnostic.key_path == "metrics.rate"
    assert diagnostic.text.endswith("did you mean `shipped`?\n")
    assert error.exit_code == 2


@pytest.mark.parametrize("spec", BROKEN, ids=lambda p: p.stem)
def test_every_broken_fixture_raises_the_command_s_diagnostics(spec: Path, rust):
    cli = rust(["check", str(spec)], REPO)
    assert cli.code == 2
    for call in (lambda: evalspec_rs.check(spec), lambda: evalspec_rs.run(spec)):
        with pytest.raises(evalspec_rs.SpecError) as raised:
            call()
        assert str(raised.value) == cli.stderr
        located = re.search(r"--> (.+?):(\d+)(?::(\d+))?(?: \(|$)", cli.stderr, re.MULTILINE)
        if located:
            column = int(located.group(3)) if located.group(3) else None
            assert (raised.value.file, raised.value.line, raised.value.column) == (
                located.group(1), int(located.group(2)), column)
        assert len([d for d in raised.value.diagnostics if d.level == "error"]) == cli.stderr.count("\nerror: ") + cli.stderr.startswith("error: ")


@pytest.mark.parametrize("data", BAD_DATA, ids=lambda p: p.stem)
def test_bad_data_raises_a_data_error(data: Path, tmp_path: Path, rust):
    cli = rust(["run", str(PRECISION), "--dataset", f"gold={data}", "--out", str(tmp_path / "cli")], REPO)
    assert cli.code == 2
    with pytest.raises(evalspec_rs.DataError) as raised:
        evalspec_rs.run(PRECISION, datasets={"gold": data}, out=tmp_path / "api")
    assert str(raised.value) == cli.stderr
    assert raised.value.file == str(data)
    assert raised.value.line is not None
    assert not (tmp_path / "api/report.json").exists()


def test_a_missing_file_is_a_data_error(tmp_path: Path):
    with pytest.raises(evalspec_rs.DataError, match="cannot read dataset `gold`"):
        evalspec_rs.run(PRECISION, datasets={"gold": tmp_path / "missing.jsonl"})


def test_bad_data_does_not_end_the_interpreter():
    """In a fresh interpreter: the error is an exception that can be caught, and the
    interpreter goes on to exit normally."""
    data = REPO / "tests/fixtures/bad_data/err_line_not_json.jsonl"
    program = f"""
import evalspec_rs
try:
    evalspec_rs.run({str(PRECISION)!r}, datasets={{"gold": {str(data)!r}}})
except evalspec_rs.DataError as error:
    print("caught", type(error).__name__, error.line)
print("still here")
"""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "caught DataError 2\nstill here\n"


def test_a_rust_panic_becomes_an_internal_error(monkeypatch):
    from evalspec_rs import _evalspec

    answer = _evalspec._panic_for_test()
    assert answer["stage"] == "panic"
    assert answer["message"] == "a panic raised on purpose by a test"
    monkeypatch.setattr("evalspec_rs._api._evalspec.check", lambda *a, **k: _evalspec._panic_for_test())
    with pytest.raises(evalspec_rs.InternalError) as raised:
        evalspec_rs.check(PRECISION)
    assert "evalspec panicked: a panic raised on purpose by a test" in str(raised.value)
    assert raised.value.exit_code == 101
    monkeypatch.undo()
    # The next call works: nothing was left behind.
    assert evalspec_rs.check(PRECISION).text.startswith("spec rag-precision 1.0.0")


def test_nothing_is_printed(capfd):
    evalspec_rs.run(PRECISION)
    with pytest.raises(evalspec_rs.SpecError):
        evalspec_rs.check(REPO / "tests/fixtures/broken/err_unknown_name_suggests.yaml")
    print("after")
    out, err = capfd.readouterr()
    assert out == "after\n"
    assert err == ""


def test_errors_pickle(tmp_path: Path):
    with pytest.raises(evalspec_rs.SpecError) as raised:
        evalspec_rs.check(REPO / "tests/fixtures/broken/err_unknown_name_suggests.yaml")
    again = pickle.loads(pickle.dumps(raised.value))
    assert type(again) is evalspec_rs.SpecError
    assert (again.file, again.line, again.column, str(again)) == (
        raised.value.file, raised.value.line, raised.value.column, str(raised.value))


def test_wrong_argument_types_are_type_errors():
    with pytest.raises(TypeError, match="spec: expected a path"):
        evalspec_rs.run(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="dataset `gold`: expected a path"):
        evalspec_rs.check(PRECISION, datasets={"gold": [{}]})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="threads: expected a positive integer"):
        evalspec_rs.run(PRECISION, threads=0)
    with pytest.raises(TypeError, match="baseline: expected a path or a Report"):
        evalspec_rs.run(PRECISION, baseline=3)  # type: ignore[arg-type]
