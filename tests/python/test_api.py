"""`import evalspec_rs`: the API gives what the command gives, for every shipped spec."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

import evalspec_rs
from conftest import ALL_FORMATS, REPO, SPECS, files_of

FORMAT_ARGS = [f"--format={f}" for f in ALL_FORMATS]


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.stem)
def test_run_gives_report_json_and_the_same_reports(spec: Path, tmp_path: Path, rust):
    rust_result = rust(["run", str(spec), "--out", str(tmp_path / "cli"), *FORMAT_ARGS], tmp_path)
    assert rust_result.code in (0, 1), rust_result.stderr
    expected = json.loads((tmp_path / "cli/report.json").read_text())

    report = evalspec_rs.run(spec, out=tmp_path / "api", formats=ALL_FORMATS)

    assert report.to_dict() == expected
    assert report.json == (tmp_path / "cli/report.json").read_text()
    assert files_of(tmp_path / "api") == files_of(tmp_path / "cli")
    assert report.exit_code == rust_result.code
    assert report.passed == (rust_result.code == 0) == expected["pass"]
    assert report.metrics == expected["metrics"]
    assert [g.to_dict() for g in report.gates] == expected["gates"]
    assert [(g.name, g.status, g.passed, g.reasons) for g in report.gates] == [
        (g["name"], g["status"], g["pass"], g["reasons"]) for g in expected["gates"]
    ]
    assert report.labels == expected.get("labels", {})
    assert report.summary == rust_result.stdout.replace(str(tmp_path / "cli"), str(tmp_path / "api"))
    assert report.out == tmp_path / "api"


def test_run_without_out_keeps_only_report_json(tmp_path: Path, rust):
    spec = REPO / "specs/rag-precision.yaml"
    report = evalspec_rs.run(spec, params={"k": 3, "scu_enforced": True})
    assert report.out is None
    assert rust(["run", str(spec), "--out", "o", "--param", "k=3", "--param", "scu_enforced=true"], tmp_path).code == 0
    assert report.to_dict() == json.loads((tmp_path / "o/report.json").read_text())
    assert report.to_dict()["params"]["k"] == 3


def test_params_of_every_type_reach_the_spec(tmp_path: Path):
    spec = REPO / "specs/rag-precision.yaml"
    report = evalspec_rs.run(spec, params={"k": 1, "min_precision": 0.5, "scu_enforced": False})
    assert report.to_dict()["params"]["k"] == 1
    assert report.to_dict()["params"]["min_precision"] == 0.5
    with pytest.raises(evalspec_rs.SpecError) as error:
        evalspec_rs.run(spec, params={"k": 2.5})
    assert "expected an integer" in str(error.value)
    with pytest.raises(TypeError, match="param `k`"):
        evalspec_rs.run(spec, params={"k": object()})
    with pytest.raises(ValueError, match="not a finite number"):
        evalspec_rs.run(spec, params={"min_precision": float("nan")})


def test_a_failed_gate_is_a_report_not_an_exception(tmp_path: Path):
    report = evalspec_rs.run(REPO / "specs/rag-precision.yaml", params={"min_precision": 1.5})
    assert report.exit_code == 1
    assert not report.passed
    failed = report.failed_gates
    assert [g.name for g in failed] == ["precision"]
    assert failed[0].threshold == 1.5
    assert failed[0].reasons, failed[0]
    with pytest.raises(evalspec_rs.GateFailure) as error:
        report.raise_for_gates()
    assert error.value.exit_code == 1
    assert "precision" in str(error.value)
    assert evalspec_rs.run(REPO / "specs/rag-precision.yaml").raise_for_gates().passed


def test_check_returns_the_plan(rust):
    spec = REPO / "specs/rag-quality-report.yaml"
    plan = evalspec_rs.check(spec)
    assert plan.text == rust(["check", str(spec)], REPO).stdout
    assert str(plan) == plan.text
    assert plan.datasets == {
        "qaset": {"format": "json", "path": str(REPO / "specs/data/rag-quality-report/qaset.json")},
        "trace": {"format": "jsonl", "path": str(REPO / "specs/data/rag-quality-report/trace.jsonl")},
    }


def test_explain_is_the_command_s(rust):
    spec = REPO / "specs/trec.yaml"
    assert evalspec_rs.explain(spec, params={"complete": True}) == rust(
        ["explain", str(spec), "--param", "complete=true"], REPO
    ).stdout


def test_diff_of_reports_and_folders(tmp_path: Path, rust):
    spec = REPO / "specs/rag-precision.yaml"
    old = evalspec_rs.run(spec, out=tmp_path / "old", formats=["items"])
    new = evalspec_rs.run(spec, out=tmp_path / "new", formats=["items"], params={"k": 1})
    result = evalspec_rs.diff(old, new)
    assert result.regressed
    assert not result.unchanged
    for fmt, text in (("md", result.markdown), ("text", result.text), ("json", None)):
        expected = rust(["diff", str(tmp_path / "old"), str(tmp_path / "new"), "--format", fmt], tmp_path)
        if text is None:
            assert result.to_dict() == json.loads(expected.stdout)
        else:
            assert text == expected.stdout
    # A report kept only in memory (no `out`) diffs as its report.json.
    in_memory = evalspec_rs.run(spec, params={"k": 1})
    same = evalspec_rs.diff(new.out / "report.json", in_memory)
    assert not same.regressed
    assert [m["direction"] for m in same.to_dict()["metrics"]] == ["unchanged"] * len(new.metrics)


def test_baseline_may_be_a_report(tmp_path: Path):
    spec = REPO / "specs/rag-precision.yaml"
    baseline = evalspec_rs.run(spec)
    report = evalspec_rs.run(spec, baseline=baseline, params={"k": 1})
    metrics = report.to_dict()["baseline"]["metrics"]
    assert metrics["recall_at_k"]["baseline"] == 1.0
    assert metrics["recall_at_k"]["value"] == 0.5


def test_the_gil_is_released_while_scoring(tmp_path: Path):
    """While one thread scores, another keeps running Python: the longest pause it
    sees is far shorter than the run."""
    gold, trace = tmp_path / "gold.jsonl", tmp_path / "trace.jsonl"
    with gold.open("w") as g, trace.open("w") as t:
        for i in range(40_000):
            qid = f"q{i}"
            g.write(json.dumps({"qid": qid, "question": f"question {i}?", "answerable": i % 3 != 0,
                                "gold_claim_substr": ["alpha beta"], "gold_citations": [f"d{i}#1"]}) + "\n")
            t.write(json.dumps({"qid": qid, "retrieved_ids": [f"d{i}#1", f"d{i}#2"],
                                "answer_json": {"claim": "alpha beta gamma", "citations": [f"d{i}#1"]}}) + "\n")
    ticks = []
    done = threading.Event()

    def tick():
        while not done.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    ticker = threading.Thread(target=tick)
    ticker.start()
    time.sleep(0.05)
    start = time.perf_counter()
    report = evalspec_rs.run(REPO / "specs/rag-precision.yaml", datasets={"gold": gold, "trace": trace}, threads=1)
    elapsed = time.perf_counter() - start
    done.set()
    ticker.join()
    assert report.to_dict()["scored"] == 40_000
    during = [t for t in ticks if start <= t <= start + elapsed]
    gaps = [b - a for a, b in zip(during, during[1:])]
    assert elapsed > 0.1, f"the run took {elapsed:.3f}s: too short to tell"
    assert len(during) > 10
    assert max(gaps) < elapsed / 2, (max(gaps), elapsed)


def test_runs_may_go_on_in_several_threads(tmp_path: Path):
    spec = REPO / "specs/rag-precision.yaml"
    expected = evalspec_rs.run(spec).to_dict()
    results = []
    threads = [threading.Thread(target=lambda: results.append(evalspec_rs.run(spec).to_dict())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 4


def test_public_names_and_types():
    assert evalspec_rs.Report.__module__ == "evalspec_rs"
    assert issubclass(evalspec_rs.SpecError, evalspec_rs.EvalspecError)
    assert issubclass(evalspec_rs.DataError, evalspec_rs.EvalspecError)
    assert issubclass(evalspec_rs.InternalError, evalspec_rs.EvalspecError)
    import types

    # Submodules (`evalspec_rs.pytest`) are imported by name, not exported.
    names = [n for n in dir(evalspec_rs) if not isinstance(getattr(evalspec_rs, n), types.ModuleType)]
    assert sorted(evalspec_rs.__all__) == sorted(n for n in names if not n.startswith("_") or n == "__version__")
