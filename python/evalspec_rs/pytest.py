"""Gates as tests: a failing gate fails the test, its reasons the assertion message.

    from evalspec_rs.pytest import assert_gates

    def test_precision_gate():
        assert_gates("specs/rag-precision.yaml", datasets={"trace": traces})

    @pytest.mark.parametrize("spec", ["specs/a.yaml", "specs/b.yaml"])
    def test_specs(spec):
        assert_gates(spec)

`assert_gates` takes a spec (and `evalspec_rs.run`'s arguments) or a `Report`
already run; it returns the report, so a test can go on to check its metrics.
A spec that does not compile, or data that cannot be scored, is an error of the
test (`SpecError`, `DataError`), not a failure.
"""

from __future__ import annotations

from typing import Any, Union

from ._api import PathLike, Report, run

__all__ = ["assert_gates"]

# pytest shows this frame's caller, not this helper, as where the test failed.
__tracebackhide__ = True


def assert_gates(spec_or_report: Union[PathLike, Report], **run_args: Any) -> Report:
    """Runs the spec (or takes the report) and raises `AssertionError` when a
    `fail` gate failed: one line per failed gate, its reasons below it."""
    __tracebackhide__ = True
    if isinstance(spec_or_report, Report):
        if run_args:
            raise TypeError("assert_gates: a Report takes no run arguments")
        report = spec_or_report
    else:
        report = run(spec_or_report, **run_args)
    if report.exit_code != 0:
        raise AssertionError(failure_message(report))
    return report


def failure_message(report: Report) -> str:
    """What failed, as a test's assertion message: each failed gate with its value
    and threshold, and why."""
    spec = report.to_dict().get("spec") or {}
    failed = report.failed_gates
    lines = [f"{spec.get('name')} {spec.get('version')}: {len(failed)} gate(s) failed"]
    for gate in failed:
        lines.append(f"  {gate.name}: {gate.message or gate.expr} (value {gate.value!r}, threshold {gate.threshold!r})")
        lines.extend(f"    {reason}" for reason in gate.reasons)
    return "\n".join(lines)
