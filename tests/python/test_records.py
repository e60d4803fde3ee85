"""Records in memory are scored exactly as the same records in files: lists of
dicts, pyarrow Tables, pandas and polars DataFrames, runs, and `format: json`
datasets. They reach the engine as Arrow tables: no file is written for them."""

from __future__ import annotations

import datetime
import decimal
import json
from pathlib import Path

import pandas as pd
import polars as pl
import pytest

import evalspec_rs
from conftest import REPO, strip_dataset_files

PRECISION = REPO / "specs/rag-precision.yaml"
PRECISION_DATA = REPO / "specs/data/rag-precision"


def records(path: Path) -> list:
    if path.suffix == ".json":
        return json.loads(path.read_text())
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def by_file(spec: Path, tmp_path: Path, **kwargs) -> dict:
    report = evalspec_rs.run(spec, out=tmp_path / "from-files", formats=["items"], **kwargs)
    return strip_dataset_files(report.to_dict())


def test_lists_of_dicts_equal_files(tmp_path: Path):
    gold, trace = records(PRECISION_DATA / "gold.jsonl"), records(PRECISION_DATA / "trace.jsonl")
    report = evalspec_rs.run(PRECISION, datasets={"gold": gold, "trace": trace}, out=tmp_path / "mem", formats=["items"])
    assert strip_dataset_files(report.to_dict()) == by_file(PRECISION, tmp_path)
    assert (tmp_path / "mem/items.jsonl").read_bytes() == (tmp_path / "from-files/items.jsonl").read_bytes()
    # The records went to the engine as a table, named by the dataset: no copy.
    datasets = report.to_dict()["datasets"]
    assert datasets["gold"]["path"] == "<gold>"
    assert datasets["gold"]["records"] == len(gold)
    assert not (tmp_path / "mem/inputs").exists()


def test_a_pyarrow_table_equals_files(tmp_path: Path):
    import pyarrow as pa

    gold = pa.Table.from_pylist(records(PRECISION_DATA / "gold.jsonl"))
    trace = pa.array(records(PRECISION_DATA / "trace.jsonl"))
    trace = pa.Table.from_batches([pa.RecordBatch.from_struct_array(trace)])
    report = evalspec_rs.run(PRECISION, datasets={"gold": gold, "trace": trace}, out=tmp_path / "mem", formats=["items"])
    assert strip_dataset_files(report.to_dict()) == by_file(PRECISION, tmp_path)
    assert (tmp_path / "mem/items.jsonl").read_bytes() == (tmp_path / "from-files/items.jsonl").read_bytes()
    # The table was taken through its stream, not consumed: it scores again.
    again = evalspec_rs.run(PRECISION, datasets={"gold": gold, "trace": trace})
    assert again.to_dict()["metrics"] == report.to_dict()["metrics"]


def test_no_file_is_written_anywhere(tmp_path: Path, monkeypatch):
    """DataFrames go in without a copy: a read-only TMPDIR does not stop a run, and
    `out` holds the reports only."""
    read_only = tmp_path / "tmp"
    read_only.mkdir()
    read_only.chmod(0o555)
    monkeypatch.setenv("TMPDIR", str(read_only))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    gold = pd.DataFrame(records(PRECISION_DATA / "gold.jsonl"))
    trace = pl.DataFrame(records(PRECISION_DATA / "trace.jsonl"))
    try:
        report = evalspec_rs.run(PRECISION, datasets={"gold": gold, "trace": trace}, out=tmp_path / "out")
        in_memory_only = evalspec_rs.run(PRECISION, datasets={"gold": gold, "trace": trace})
    finally:
        read_only.chmod(0o755)
    assert report.to_dict()["metrics"] == in_memory_only.to_dict()["metrics"]
    assert in_memory_only.out is None
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "item-values.jsonl", "report.json", "report.md"
    ]
    assert list(read_only.iterdir()) == []


def test_two_threads_evaluate_at_once(tmp_path: Path):
    import threading

    trace = pl.DataFrame(records(PRECISION_DATA / "trace.jsonl"))
    expected = {
        "precision": by_file(PRECISION, tmp_path)["metrics"],
        "quality": evalspec_rs.run(REPO / "specs/rag-quality-report.yaml").to_dict()["metrics"],
    }
    results: dict = {}
    started = threading.Barrier(2)

    def work(name: str, call) -> None:
        started.wait()
        results[name] = [call().to_dict()["metrics"] for _ in range(5)]

    threads = [
        threading.Thread(target=work, args=("precision", lambda: evalspec_rs.run(PRECISION, datasets={"trace": trace}))),
        threading.Thread(target=work, args=("quality", lambda: evalspec_rs.run(REPO / "specs/rag-quality-report.yaml"))),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {name: [metrics] * 5 for name, metrics in expected.items()}


def test_paths_and_records_mix(tmp_path: Path):
    trace = records(PRECISION_DATA / "trace.jsonl")
    report = evalspec_rs.run(
        PRECISION,
        datasets={"gold": PRECISION_DATA / "gold.jsonl", "trace": trace},
        out=tmp_path / "mem",
        formats=["items"],
    )
    assert strip_dataset_files(report.to_dict()) == by_file(PRECISION, tmp_path)
    assert report.to_dict()["datasets"]["gold"]["path"] == str(PRECISION_DATA / "gold.jsonl")


@pytest.mark.parametrize("frame", ["pandas", "polars"])
def test_dataframes_equal_files(frame: str, tmp_path: Path):
    make = pd.DataFrame if frame == "pandas" else pl.DataFrame
    gold = make(records(PRECISION_DATA / "gold.jsonl"))
    trace = make(records(PRECISION_DATA / "trace.jsonl"))
    report = evalspec_rs.run(PRECISION, datasets={"gold": gold, "trace": trace}, out=tmp_path / "mem", formats=["items"])
    assert strip_dataset_files(report.to_dict()) == by_file(PRECISION, tmp_path)


@pytest.mark.parametrize("frame", ["pandas", "polars"])
def test_dataframes_without_pyarrow(frame: str, tmp_path: Path, monkeypatch):
    """Without pyarrow, pandas is read with to_dict("records"), polars with to_dicts()."""
    import builtins

    real_import = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name == "pyarrow":
            raise ImportError("no pyarrow here")
        return real_import(name, *args, **kwargs)

    make = pd.DataFrame if frame == "pandas" else pl.DataFrame
    gold = make(records(PRECISION_DATA / "gold.jsonl"))
    trace = make(records(PRECISION_DATA / "trace.jsonl"))
    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    report = evalspec_rs.run(PRECISION, datasets={"gold": gold, "trace": trace}, out=tmp_path / "mem", formats=["items"])
    monkeypatch.undo()
    assert strip_dataset_files(report.to_dict()) == by_file(PRECISION, tmp_path)


def test_a_json_array_dataset_in_memory(tmp_path: Path):
    spec = REPO / "specs/rag-quality-report.yaml"
    data = REPO / "specs/data/rag-quality-report"
    qaset = pd.DataFrame(records(data / "qaset.json"))
    report = evalspec_rs.run(spec, datasets={"qaset": qaset, "trace": records(data / "trace.jsonl")}, out=tmp_path / "mem", formats=["items"])
    assert strip_dataset_files(report.to_dict()) == by_file(spec, tmp_path)
    assert report.to_dict()["datasets"]["qaset"]["format"] == "json"
    assert (tmp_path / "mem/report.md").read_bytes() == (tmp_path / "from-files/report.md").read_bytes()


def test_runs_in_memory(tmp_path: Path):
    spec = REPO / "specs/operational.yaml"
    runs_dir = REPO / "specs/data/operational/runs"
    runs = {p.stem: pl.DataFrame(records(p)) for p in sorted(runs_dir.glob("*.jsonl"))}
    assert list(runs) == ["seed-1", "seed-2", "seed-3"]
    report = evalspec_rs.run(spec, datasets={"trace": runs}, out=tmp_path / "mem", formats=["items"])
    assert strip_dataset_files(report.to_dict()) == by_file(spec, tmp_path)
    # Running again with other runs replaces the files written before.
    two = {k: runs[k] for k in ("seed-1", "seed-2")}
    again = evalspec_rs.run(spec, datasets={"trace": two}, out=tmp_path / "mem")
    assert list(again.to_dict()["datasets"]["trace"]["runs"]) == ["seed-1", "seed-2"]


def test_values_are_read_as_json_would_hold_them(tmp_path: Path):
    import numpy as np

    gold = records(PRECISION_DATA / "gold.jsonl")
    gold[0]["extra"] = {
        "when": datetime.date(2024, 5, 1),
        "at": datetime.datetime(2024, 5, 1, 12, 30),
        "count": np.int64(3),
        "share": np.float32(0.5),
        "price": decimal.Decimal("2.50"),
        "whole": decimal.Decimal("7"),
        "vector": np.array([1, 2]),
        "missing": float("nan"),
        "na": pd.NA,
    }
    from evalspec_rs._records import as_table

    table = as_table(gold, "gold", "jsonl")
    assert table.to_pylist()[0]["extra"] == {  # type: ignore[union-attr]
        "when": "2024-05-01",
        "at": "2024-05-01T12:30:00",
        "count": 3,
        "share": 0.5,
        "price": 2.5,
        "whole": 7,
        "vector": [1, 2],
        "missing": None,
        "na": None,
    }


@pytest.mark.parametrize(
    "value, error, message",
    [
        ([1, 2], TypeError, "dataset `gold`: record 1 is int, not a mapping"),
        ([{"qid": float("inf")}], ValueError, "dataset `gold`: record 1: `qid` is inf"),
        ([{"qid": b"bytes"}], TypeError, "dataset `gold`: record 1: `qid`: bytes values cannot be written as JSON"),
        ([{(1, 2): "x", "y": float("nan")}], TypeError, "field name (1, 2) is tuple"),
        (42, TypeError, "dataset `gold`: expected a path or records"),
        ({"../x": []}, ValueError, "run name '../x' cannot be a file name"),
        ({}, ValueError, "no runs given"),
    ],
)
def test_records_that_cannot_be_json_raise_before_scoring(value, error, message, tmp_path: Path):
    with pytest.raises(error) as raised:
        evalspec_rs.run(PRECISION, datasets={"gold": value}, out=tmp_path / "out")
    assert message in str(raised.value)


def test_trec_datasets_need_a_path(tmp_path: Path):
    with pytest.raises(ValueError, match="dataset `qrels` is read as trec_qrels"):
        evalspec_rs.run(REPO / "specs/trec.yaml", datasets={"qrels": [{"query": "1"}]})


def test_records_break_the_data_contract_like_files(tmp_path: Path):
    gold = records(PRECISION_DATA / "gold.jsonl")
    gold[1]["answerable"] = "yes"
    with pytest.raises(evalspec_rs.DataError) as error:
        evalspec_rs.run(PRECISION, datasets={"gold": gold}, out=tmp_path / "out")
    assert error.value.file == str(tmp_path / "out/inputs/gold.jsonl")
    assert error.value.line == 2
    assert "answerable" in str(error.value)
