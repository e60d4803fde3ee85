"""Results as data: a report's and a diff's tables as pyarrow, pandas and polars
frames, the notebook view, the pytest helper, and the inputs data scientists have
(Hugging Face datasets, polars lazy frames, pyarrow datasets, messy pandas)."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import evalspec_rs
from evalspec_rs.pytest import assert_gates
from conftest import REPO

PRECISION = REPO / "specs/rag-precision.yaml"
PRECISION_DATA = REPO / "specs/data/rag-precision"
JUDGE = REPO / "specs/llm-judge.yaml"


def records(path: Path) -> list:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def wrong_citations() -> list:
    traces = records(PRECISION_DATA / "trace.jsonl")
    traces[0]["answer_json"]["citations"] = ["p9#9"]
    return traces


def test_metrics_as_frames_in_each_library():
    report = evalspec_rs.run(PRECISION)
    frame = report.to_pandas()
    assert list(frame["metric"]) == list(report.metrics)
    assert frame.set_index("metric")["value"].to_dict() == pytest.approx(report.metrics)
    precision = frame.set_index("metric").loc["precision"]
    interval = report.to_dict()["intervals"]["precision"]
    assert (precision["interval_low"], precision["interval_high"]) == (interval["low"], interval["high"])
    assert report.to_polars().equals(pl.from_pandas(frame))
    assert report.to_arrow().num_rows == len(report.metrics)


def test_gates_slices_and_labels_tables():
    report = evalspec_rs.run(JUDGE)
    gates = report.to_pandas("gates")
    assert list(gates["gate"]) == [g.name for g in report.gates]
    failed = gates[gates["status"] == "fail"]
    assert set(failed["gate"]) == {g.name for g in report.failed_gates}
    assert all(failed["reasons"].str.len() > 0)
    slices = report.to_pandas("slices")
    categories = {s.value for s in report.slices}
    assert set(slices["slice_value"]) == categories
    billing = next(s for s in report.slices if s.value == "billing")
    row = slices[(slices.slice_value == "billing") & (slices.metric == "pass_rate")].iloc[0]
    assert row["value"] == billing.metrics["pass_rate"] and row["items"] == billing.items
    with pytest.raises(ValueError, match="no table 'nope'; its tables: metrics, gates"):
        report.to_pandas("nope")


def test_items_rows_with_fields_and_matchers(tmp_path: Path):
    in_memory = evalspec_rs.run(PRECISION, datasets={"trace": wrong_citations()}, items=True)
    items = in_memory.to_pandas("items")
    assert len(items) == in_memory.to_dict()["scored"]
    assert {"key", "line", "fields", "matchers"} <= set(items.columns)
    # The same rows as items.jsonl written by the command's --format items.
    written = evalspec_rs.run(PRECISION, datasets={"trace": wrong_citations()}, out=tmp_path / "out",
                           formats=["items"])
    assert written.to_arrow("items").equals(in_memory.to_arrow("items"))
    assert in_memory.to_polars("items").height == len(items)
    with pytest.raises(ValueError, match="items=True"):
        evalspec_rs.run(PRECISION).to_pandas("items")


def test_offenders_table():
    report = evalspec_rs.run(PRECISION, datasets={"trace": wrong_citations()})
    offenders = report.to_pandas("offenders")
    listed = report.to_dict()["offenders"]["items"]
    assert list(offenders["key"]) == [o["key"] for o in listed] and len(listed) >= 1
    assert "fields.citations" in offenders.columns


def test_a_diff_as_frames(tmp_path: Path):
    old = evalspec_rs.run(PRECISION, out=tmp_path / "old", formats=["items"])
    new = evalspec_rs.run(PRECISION, datasets={"trace": wrong_citations()}, out=tmp_path / "new",
                       formats=["items"])
    changed = evalspec_rs.diff(old, new)
    metrics = changed.to_pandas().set_index("metric")
    assert metrics.loc["precision", "old"] == 1.0 and metrics.loc["precision", "new"] < 1.0
    assert "change_p_value" in metrics.columns
    gates = changed.to_polars("gates")
    assert gates.filter(pl.col("gate") == "precision")["new"].to_list() == ["fail"]
    assert len(changed.to_pandas("items")) >= 1


class _Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.text: list = []
        self.tags: list = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def test_the_notebook_view_is_html_with_the_verdict_and_reasons():
    report = evalspec_rs.run(PRECISION, datasets={"trace": wrong_citations()})
    html = report._repr_html_()
    cells = _Cells()
    cells.feed(html)
    text = " ".join(cells.text)
    assert "FAIL" in text and "precision" in text
    for reason in report.failed_gates[0].reasons:
        assert reason in text
    assert cells.tags.count("table") >= 2 and "script" not in cells.tags
    # Data is escaped: a claim cannot inject markup.
    traces = wrong_citations()
    traces[0]["qid"] = traces[0]["qid"]  # keys stay; the spec's name is the only free text
    diff_html = evalspec_rs.diff(evalspec_rs.run(PRECISION), report)._repr_html_()
    parsed = _Cells()
    parsed.feed(diff_html)
    assert "regressed" in " ".join(parsed.text)


def test_assert_gates_fails_a_test_with_the_reasons():
    assert assert_gates(PRECISION).passed
    with pytest.raises(AssertionError) as failed:
        assert_gates(PRECISION, datasets={"trace": wrong_citations()})
    message = str(failed.value)
    assert message.startswith("rag-precision 1.0.0: ")
    assert "precision: too many shipped answers are wrong or badly cited" in message
    assert "against 0.8" in message
    with pytest.raises(evalspec_rs.SpecError):
        assert_gates(REPO / "tests/fixtures/broken/err_unknown_name_suggests.yaml")


def test_inputs_data_scientists_have():
    import datasets
    import pyarrow.dataset as ds

    gold = records(PRECISION_DATA / "gold.jsonl")
    trace = records(PRECISION_DATA / "trace.jsonl")
    expected = evalspec_rs.run(PRECISION).to_dict()["metrics"]
    hf = evalspec_rs.run(PRECISION, datasets={"gold": datasets.Dataset.from_list(gold),
                                           "trace": datasets.Dataset.from_list(trace)})
    assert hf.to_dict()["metrics"] == expected
    lazy = evalspec_rs.run(PRECISION, datasets={"trace": pl.DataFrame(trace).lazy()})
    assert lazy.to_dict()["metrics"] == expected
    scanned = evalspec_rs.run(PRECISION, datasets={"trace": ds.dataset(pa.Table.from_pylist(trace))})
    assert scanned.to_dict()["metrics"] == expected


def test_a_messy_pandas_frame_is_a_data_error_located_by_row(tmp_path: Path):
    gold = records(PRECISION_DATA / "gold.jsonl")
    gold[1]["answerable"] = "yes"  # a bool column with a string: no Arrow column holds both
    with pytest.raises(evalspec_rs.DataError) as error:
        evalspec_rs.run(PRECISION, datasets={"gold": pd.DataFrame(gold)}, out=tmp_path / "out")
    assert error.value.line == 2
    assert "answerable" in str(error.value)


def test_flat_metrics_have_names_trackers_accept():
    report = evalspec_rs.run(REPO / "specs/operational.yaml")
    flat = report.flat_metrics()
    assert flat["passed"] in (0.0, 1.0)
    names_ok = __import__("re").compile(r"^[A-Za-z0-9_\-.:/ ]+$")
    assert all(names_ok.match(name) for name in flat), list(flat)
    assert all(isinstance(v, float) for v in flat.values())
    # Per-run metric names (`…@seed-1`) keep their run, in allowed characters.
    assert any("seed-1" in name for name in flat), list(flat)
    judge = evalspec_rs.run(JUDGE).flat_metrics()
    billing = next(s for s in evalspec_rs.run(JUDGE).slices if s.value == "billing")
    assert judge["slices/category/billing/pass_rate"] == billing.metrics["pass_rate"]


def test_log_to_mlflow_in_a_local_file_store(tmp_path: Path, monkeypatch):
    mlflow = pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    mlflow.set_tracking_uri((tmp_path / "mlruns").as_uri())
    report = evalspec_rs.run(JUDGE, out=tmp_path / "out")
    logged = report.log_to_mlflow()
    run = mlflow.get_run(logged["run_id"])
    assert run.data.metrics == pytest.approx(report.flat_metrics())
    assert run.data.params == {k: str(v) for k, v in report.to_dict()["params"].items()}
    assert run.data.tags["evalspec.spec"] == "llm-judge"
    assert run.data.tags["evalspec.passed"] == ("true" if report.passed else "false")
    for gate in report.gates:
        assert run.data.tags[f"evalspec.gate.{gate.name}"] == gate.status
    client = mlflow.tracking.MlflowClient()
    artifacts = {a.path for a in client.list_artifacts(logged["run_id"], "evalspec")}
    assert "evalspec/report.json" in artifacts
    assert mlflow.active_run() is None  # the run it started is ended


def test_a_diff_and_a_gate_name_the_tests_that_failed_the_build(tmp_path: Path):
    old = evalspec_rs.run(PRECISION, out=tmp_path / "old", formats=["items"])
    new = evalspec_rs.run(PRECISION, datasets={"trace": wrong_citations()}, out=tmp_path / "new",
                          formats=["items"])
    changed = evalspec_rs.diff(old, new)
    assert changed.regressed
    assert changed.failed_by == changed.to_dict()["failed_by"] and changed.failed_by
    assert {"gate": "precision"} in changed.failed_by
    # A gate that passed was failed by no test.
    assert all(g.failed_by == [] for g in new.gates if g.status == "pass")
