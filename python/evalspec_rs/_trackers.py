"""A report in an experiment tracker: its numbers under names the tracker
accepts, what it was run with as params and tags, its files as artifacts.

MLflow's names may hold letters, digits, `_ - . : /` and spaces; evalspec's may
hold more (`precision@seed-1`, a slice value with `=`), so every other character
becomes `_`. Metrics without a value (`None`), or not finite, are left out: a
tracker has no null. Slice metrics are `slices/SLICE/VALUE/METRIC`.
"""

from __future__ import annotations

import math
import re
from typing import Any, Dict, Mapping, Optional

_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_\-.:/ ]")


def name(text: str) -> str:
    """`text` as a tracker accepts it as a metric, param or tag name."""
    return _NOT_ALLOWED.sub("_", text) or "_"


def _number(value: Any) -> Optional[float]:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


def flat_metrics(data: Mapping[str, Any]) -> Dict[str, float]:
    """Every number of a report, one flat name each: the metrics, each slice
    value's metrics, and `passed` (1 or 0)."""
    flat: Dict[str, float] = {}
    for metric, value in (data.get("metrics") or {}).items():
        number = _number(value)
        if number is not None:
            flat[name(metric)] = number
    for slice_name, values in (data.get("slices") or {}).items():
        for slice_value, entry in (values or {}).items():
            for metric, value in (entry.get("metrics") or {}).items():
                number = _number(value)
                if number is not None:
                    flat[name(f"slices/{slice_name}/{slice_value}/{metric}")] = number
    flat["passed"] = 1.0 if data.get("pass") else 0.0
    return flat


def params_and_tags(data: Mapping[str, Any]) -> "tuple[Dict[str, str], Dict[str, str]]":
    """The spec's params as params; the spec, its lock, the datasets' digests,
    the run's id and each gate's status as tags."""
    params = {name(k): _text(v) for k, v in (data.get("params") or {}).items()}
    spec = data.get("spec") or {}
    lock = spec.get("lock") or {}
    tags = {
        "evalspec.spec": str(spec.get("name")),
        "evalspec.version": str(spec.get("version")),
        "evalspec.spec_sha256": str(spec.get("sha256")),
        "evalspec.lock": str(lock.get("status") or "not frozen"),
        "evalspec.passed": "true" if data.get("pass") else "false",
    }
    if data.get("run_id"):
        tags["evalspec.run_id"] = str(data["run_id"])
    for dataset, info in (data.get("datasets") or {}).items():
        if info.get("sha256"):
            tags[name(f"evalspec.dataset.{dataset}.sha256")] = str(info["sha256"])
    for gate in data.get("gates") or []:
        tags[name(f"evalspec.gate.{gate.get('name')}")] = str(gate.get("status"))
    return params, tags


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
