"""Results as data: the tables of a report or a diff as rows, and those rows as a
pyarrow Table, a pandas DataFrame or a polars DataFrame.

One row builder per table, over report.json's (or the diff's JSON) content, so that
every output format shows the same columns: nested values are flattened one level
(`interval_low`, `change_p_value`), lists and objects deeper than that stay lists
and dicts (struct columns in Arrow).
"""

from __future__ import annotations

import html
import importlib
import io
import json
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

Row = Dict[str, Any]

REPORT_TABLES = ("metrics", "gates", "slices", "labels", "offenders", "items")
DIFF_TABLES = ("metrics", "gates", "items")


def _flat(prefix: str, value: Optional[Mapping[str, Any]], row: Row, keys: Sequence[str]) -> None:
    for key in keys:
        row[f"{prefix}_{key}"] = (value or {}).get(key)


_INTERVAL = ("low", "high", "level", "method")
_CHANGE = ("delta", "low", "high", "alternative", "p_value", "p_adjusted", "test", "items")


def metric_rows(data: Mapping[str, Any]) -> List[Row]:
    """One row per metric: its value, interval and, with a baseline, its change."""
    intervals = data.get("intervals") or {}
    baseline = ((data.get("baseline") or {}).get("metrics")) or {}
    rows = []
    for name, value in (data.get("metrics") or {}).items():
        row: Row = {"metric": name, "value": value}
        _flat("interval", intervals.get(name), row, _INTERVAL)
        if baseline:
            against = baseline.get(name) or {}
            row["baseline"] = against.get("baseline")
            row["delta"] = against.get("delta")
            _flat("change", against.get("change"), row, _CHANGE)
        rows.append(row)
    return rows


def gate_rows(data: Mapping[str, Any]) -> List[Row]:
    """One row per gate: its status, value, threshold and reasons (one text)."""
    rows = []
    for gate in data.get("gates") or []:
        rows.append(
            {
                "gate": gate.get("name"),
                "status": gate.get("status"),
                "passed": gate.get("pass"),
                "severity": gate.get("severity"),
                "value": gate.get("value"),
                "threshold": gate.get("threshold"),
                "rule": gate.get("expr") or gate.get("message"),
                "reasons": "\n".join(gate.get("reasons") or []),
                "run": gate.get("run"),
            }
        )
    return rows


def slice_rows(data: Mapping[str, Any]) -> List[Row]:
    """One row per slice value and metric: `slice`, `value` (the slice's value),
    `items`, `metric`, the metric's value and interval."""
    rows = []
    for slice_name, values in (data.get("slices") or {}).items():
        for slice_value, entry in (values or {}).items():
            intervals = entry.get("intervals") or {}
            for metric, value in (entry.get("metrics") or {}).items():
                row: Row = {
                    "slice": slice_name,
                    "slice_value": slice_value,
                    "items": entry.get("items"),
                    "metric": metric,
                    "value": value,
                }
                _flat("interval", intervals.get(metric), row, _INTERVAL)
                rows.append(row)
    return rows


def label_rows(data: Mapping[str, Any]) -> List[Row]:
    return [{"label": label, "items": count} for label, count in (data.get("labels") or {}).items()]


def offender_rows(data: Mapping[str, Any]) -> List[Row]:
    """The offenders report.json lists: key, line, label and each shown field."""
    rows = []
    for item in ((data.get("offenders") or {}).get("items")) or []:
        row: Row = {"key": item.get("key"), "line": item.get("line"), "label": item.get("label")}
        for name, value in (item.get("fields") or {}).items():
            row[f"fields.{name}"] = value
        rows.append(row)
    return rows


def diff_metric_rows(data: Mapping[str, Any]) -> List[Row]:
    """One row per metric of a diff: old, new, delta and the test of the change."""
    rows = []
    for metric in data.get("metrics") or []:
        row: Row = {key: metric.get(key) for key in
                    ("name", "old", "new", "delta", "relative", "better", "tolerance", "direction")}
        row["metric"] = row.pop("name")
        _flat("change", metric.get("change"), row, _CHANGE)
        rows.append(row)
    return rows


def diff_gate_rows(data: Mapping[str, Any]) -> List[Row]:
    return [
        {"gate": g.get("name"), "old": g.get("old"), "new": g.get("new"),
         "changed": g.get("changed"), "regressed": g.get("regressed")}
        for g in data.get("gates") or []
    ]


def diff_item_rows(data: Mapping[str, Any]) -> List[Row]:
    """Each item that changed: `change` (transition, flip, move, added, removed)
    and what the diff says of it."""
    rows = []
    items = data.get("items") or {}
    for change, kind in (("transitions", "transition"), ("flips", "flip"), ("moves", "move"),
                         ("added", "added"), ("removed", "removed")):
        for entry in items.get(change) or []:
            row: Row = {"change": kind}
            if isinstance(entry, Mapping):
                row.update(entry)
            else:
                row["key"] = entry
            rows.append(row)
    return rows


# ------------------------------------------------------------------------ conversions


def _module(name: str, what: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        raise ImportError(f"{what} needs {name}: pip install {name}") from None


def items_table(items_jsonl: Optional[bytes]) -> Any:
    """items.jsonl as a pyarrow Table: one row per item, `fields` and `matchers` as
    struct columns (pyarrow's JSON reader, on all cores)."""
    pyarrow = _module("pyarrow", "per-item rows")
    if items_jsonl is None:
        raise ValueError(
            "this report has no per-item rows: run with `items=True`, or with "
            "`out=` and `formats=[\"items\"]`"
        )
    if not items_jsonl.strip():
        return pyarrow.table({})
    arrow_json = _module("pyarrow.json", "per-item rows")
    return arrow_json.read_json(io.BytesIO(items_jsonl))


def rows_to_arrow(rows: List[Row]) -> Any:
    pyarrow = _module("pyarrow", "to_arrow()")
    if not rows:
        return pyarrow.table({})
    # Every key of every row, in first-seen order: a column each.
    columns: Dict[str, List[Any]] = {}
    for row in rows:
        for key in row:
            columns.setdefault(key, [])
    for row in rows:
        for key, values in columns.items():
            values.append(row.get(key))
    arrays = {}
    for key, values in columns.items():
        try:
            arrays[key] = pyarrow.array(values)
        except (pyarrow.ArrowInvalid, pyarrow.ArrowTypeError):
            # Values of several types (a metric that is a count and one that is
            # a ratio): JSON text keeps each exactly.
            arrays[key] = pyarrow.array([None if v is None else json.dumps(v) for v in values])
    return pyarrow.table(arrays)


def rows_to_pandas(rows: List[Row]) -> Any:
    pandas = _module("pandas", "to_pandas()")
    try:
        return rows_to_arrow(rows).to_pandas()
    except ImportError:
        return pandas.DataFrame(rows)


def rows_to_polars(rows: List[Row]) -> Any:
    polars = _module("polars", "to_polars()")
    try:
        return polars.from_arrow(rows_to_arrow(rows))
    except ImportError:
        return polars.DataFrame(rows)


def table_of(
    which: str,
    builders: Mapping[str, Callable[[], Any]],
    kind: str,
) -> Any:
    """The rows (or, for items, the Arrow table) of table `which`."""
    if which not in builders:
        names = ", ".join(builders)
        raise ValueError(f"{kind} has no table {which!r}; its tables: {names}")
    return builders[which]()


# ---------------------------------------------------------------------------- notebooks

_STYLE = (
    "<style>.evalspec table{border-collapse:collapse;margin:.3em 0}"
    ".evalspec td,.evalspec th{padding:.15em .6em;border-bottom:1px solid #ddd;"
    "text-align:left;font-family:monospace}.evalspec .pass{color:#1a7f37}"
    ".evalspec .fail{color:#cf222e;font-weight:bold}.evalspec .warn{color:#9a6700}</style>"
)


def _e(value: Any) -> str:
    if isinstance(value, float):
        return html.escape(f"{value:.4g}")
    return html.escape("" if value is None else str(value))


def _table(header: Sequence[str], rows: List[Sequence[Any]], classes: Optional[List[str]] = None) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = []
    for i, row in enumerate(rows):
        css = f' class="{classes[i]}"' if classes else ""
        body.append(f"<tr{css}>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def report_html(data: Mapping[str, Any]) -> str:
    """A report for a notebook: the verdict, the gates that did not pass with
    their reasons, the metrics with intervals, the slices. Self-contained."""
    spec = data.get("spec") or {}
    verdict = "PASS" if data.get("pass") else "FAIL"
    parts = [
        _STYLE,
        '<div class="evalspec">',
        f"<p><b>{_e(spec.get('name'))} {_e(spec.get('version'))}</b>: "
        f'<span class="{verdict.lower()}">{verdict}</span>, {_e(data.get("scored"))} items</p>',
    ]
    gates = [g for g in gate_rows(data) if g["status"] != "pass"]
    if gates:
        parts.append(_table(
            ["gate", "status", "value", "threshold", "why"],
            [[_e(g["gate"]), _e(g["status"]), _e(g["value"]), _e(g["threshold"]),
              "<br>".join(_e(r) for r in (g["reasons"] or "").splitlines())] for g in gates],
            [g["status"] for g in gates],
        ))
    else:
        parts.append(f"<p>every gate passed ({len(data.get('gates') or [])})</p>")
    metrics = metric_rows(data)
    parts.append(_table(
        ["metric", "value", "interval"],
        [[_e(m["metric"]), _e(m["value"]),
          "" if m["interval_low"] is None else f"[{_e(m['interval_low'])}, {_e(m['interval_high'])}]"]
         for m in metrics],
    ))
    slices = slice_rows(data)
    if slices:
        parts.append(_table(
            ["slice", "value", "items", "metric", "metric value"],
            [[_e(s["slice"]), _e(s["slice_value"]), _e(s["items"]), _e(s["metric"]), _e(s["value"])]
             for s in slices],
        ))
    parts.append("</div>")
    return "".join(parts)


def diff_html(data: Mapping[str, Any]) -> str:
    """A diff for a notebook: whether it regressed, the gates and metrics that moved."""
    verdict = "regressed" if data.get("regressed") else ("unchanged" if data.get("unchanged") else "changed")
    css = "fail" if data.get("regressed") else "pass"
    parts = [_STYLE, '<div class="evalspec">', f'<p><b>diff</b>: <span class="{css}">{verdict}</span></p>']
    gates = [g for g in diff_gate_rows(data) if g["changed"]]
    if gates:
        parts.append(_table(["gate", "old", "new"], [[_e(g["gate"]), _e(g["old"]), _e(g["new"])] for g in gates],
                            ["fail" if g["regressed"] else "pass" for g in gates]))
    moved = [m for m in diff_metric_rows(data) if m["direction"] != "unchanged"]
    if moved:
        parts.append(_table(
            ["metric", "old", "new", "delta", "p"],
            [[_e(m["metric"]), _e(m["old"]), _e(m["new"]), _e(m["delta"]), _e(m["change_p_value"])] for m in moved],
        ))
    else:
        parts.append("<p>no metric moved</p>")
    parts.append("</div>")
    return "".join(parts)


def read_items(out: Optional[Path]) -> Optional[bytes]:
    if out is None:
        return None
    path = out / "items.jsonl"
    return path.read_bytes() if path.is_file() else None
