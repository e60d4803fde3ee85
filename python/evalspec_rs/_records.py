"""In-memory datasets, handed to the engine as Arrow tables: nothing is copied to a file.

A dataset may be given as

- a path (`str` or `os.PathLike`): read from there, as on the command line;
- an object with the Arrow C stream interface (`__arrow_c_stream__`: a pyarrow
  Table, a polars DataFrame, a pandas DataFrame with pyarrow installed, ...): its
  batches go to the engine as they are, through the interface;
- a list (or any iterable) of mappings: one record each, made a pyarrow Table;
- an object with `to_dicts()` (polars) or `to_dict("records")` (pandas), when
  pyarrow is missing;
- a mapping of run name to any of the above, for a dataset read as several runs
  (`runs:`): one JSON Lines file per run, named after it, under `OUT/inputs/`.

Values of records become what JSON would hold: numpy scalars and arrays as numbers
and lists, dates and times in ISO 8601, NaN (pandas' missing value) and pandas' NA
and NaT as null. Anything else (an infinite number, bytes, an object) is a
TypeError or ValueError naming the dataset and the record.

Records whose fields mix types (a field that is a bool in one record and a string
in another) have no Arrow table; they, and records given without pyarrow
installed, are written as JSON Lines under `OUT/inputs/` and read from there, so
that the data contract locates each bad value by its line.
"""

from __future__ import annotations

import datetime
import importlib
import decimal
import json
import math
import os
import re
import uuid
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_FORMATS = {"jsonl": ".jsonl", "json": ".json"}


def is_path(value: object) -> bool:
    return isinstance(value, (str, os.PathLike))


def as_table(value: Any, name: str, format: Optional[str]) -> Any:
    """The dataset `name` given in memory, as an object with `__arrow_c_stream__`
    for the engine; or the records, made JSON-ready, when they have no Arrow table
    (then written with `write_dataset`); or None for runs (written as files)."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"dataset name {name!r} is not a name (letters, digits, _)")
    format = format or "jsonl"
    if format.startswith("trec"):
        raise ValueError(
            f"dataset `{name}` is read as {format}: records given in memory need a "
            f"jsonl, json, csv or parquet dataset; pass a path to a {format} file instead"
        )
    if isinstance(value, Mapping):
        return None
    value = _arrow_source(value)
    if hasattr(value, "__arrow_c_stream__") and not _is_pandas(value):
        return value
    pyarrow = _pyarrow()
    if pyarrow is not None and _is_pandas(value):
        try:
            return pyarrow.Table.from_pandas(value, preserve_index=False)
        except (pyarrow.ArrowInvalid, pyarrow.ArrowTypeError, pyarrow.ArrowNotImplementedError):
            # Columns of mixed Python objects: read as records, as a list of
            # dicts would be (and written as JSON Lines when Arrow cannot hold them).
            value = value.to_dict("records")
    records = _plain_records(_records(value, name), name)
    if pyarrow is None:
        return records
    if not records:
        return pyarrow.table({})
    try:
        # A struct array's type has every field of every record (from_pylist
        # would take the first record's fields only).
        rows = pyarrow.array(records)
    except (pyarrow.ArrowInvalid, pyarrow.ArrowTypeError, pyarrow.ArrowNotImplementedError):
        return records
    return pyarrow.Table.from_batches([pyarrow.RecordBatch.from_struct_array(rows)])


def _arrow_source(value: Any) -> Any:
    """What other libraries' data objects are read as: a Hugging Face `Dataset`
    as its Arrow table, an `IterableDataset` as its records, a polars LazyFrame
    collected (in streaming mode), a pyarrow dataset scanned batch by batch."""
    module = type(value).__module__ or ""
    kind = type(value).__name__
    if module.startswith("datasets"):
        data = getattr(value, "data", None)
        table = getattr(data, "table", None)
        if table is not None:  # datasets.Dataset: an Arrow table underneath
            return table
        if kind == "IterableDataset" or hasattr(value, "iter"):
            return list(value)
    if module.startswith("polars") and kind == "LazyFrame":
        try:
            return value.collect(engine="streaming")
        except TypeError:  # polars before `engine=`
            return value.collect(streaming=True)
    if module.startswith("pyarrow") and hasattr(value, "scanner") and hasattr(value, "schema"):
        return value.scanner().to_reader()
    return value


def _pyarrow() -> Any:
    try:
        return importlib.import_module("pyarrow")
    except ImportError:
        return None


def _is_pandas(value: object) -> bool:
    return type(value).__module__.startswith("pandas") and hasattr(value, "to_dict")


def _plain_records(records: Iterable[Any], name: str) -> List[Any]:
    plain = []
    for number, record in enumerate(records, start=1):
        if not isinstance(record, Mapping):
            raise TypeError(
                f"dataset `{name}`: record {number} is {type(record).__name__}, "
                "not a mapping of field names to values"
            )
        plain.append(_plain(record, lambda: f"dataset `{name}`: record {number}", ""))
    return plain


def write_dataset(value: object, name: str, format: Optional[str], directory: Path) -> Path:
    """Writes the dataset `name` given in memory under `directory`; returns the path
    (a file, or a folder of runs) to pass as `--dataset NAME=PATH`."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"dataset name {name!r} is not a name (letters, digits, _)")
    format = format or "jsonl"
    if format not in _FORMATS:
        raise ValueError(
            f"dataset `{name}` is read as {format}: records given in memory need a "
            f"jsonl or json dataset; pass a path to a {format} file instead"
        )
    directory.mkdir(parents=True, exist_ok=True)
    if isinstance(value, Mapping):
        return _write_runs(value, name, format, directory / name)
    path = directory / f"{name}{_FORMATS[format]}"
    _write_records(_records(value, name), name, format, path)
    return path


def _write_runs(runs: Mapping[Any, Any], name: str, format: str, folder: Path) -> Path:
    if not runs:
        raise ValueError(f"dataset `{name}`: no runs given")
    suffix = _FORMATS[format]
    if folder.exists():
        # Only files this function wrote before are replaced.
        stale = list(folder.iterdir())
        strangers = [p for p in stale if not (p.is_file() and p.suffix == suffix)]
        if strangers:
            raise ValueError(
                f"dataset `{name}`: {folder} holds other files ({strangers[0].name}); "
                "choose another `out` folder"
            )
        for path in stale:
            path.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    for run, records in runs.items():
        if (
            not isinstance(run, str)
            or not run
            or run.startswith(".")
            or any(c in run for c in "/\\\0")
        ):
            raise ValueError(
                f"dataset `{name}`: run name {run!r} cannot be a file name "
                "(a non-empty string without / or \\, not starting with .)"
            )
        label = f"{name}[{run!r}]"
        _write_records(_records(records, label), label, format, folder / f"{run}{suffix}")
    return folder


def _records(value: object, name: str) -> Iterable[Any]:
    if is_path(value) or isinstance(value, (bytes, bytearray, Mapping)):
        raise TypeError(
            f"dataset `{name}`: expected records (a list of dicts, a DataFrame), "
            f"found {type(value).__name__}"
        )
    if isinstance(value, list):
        return value
    if hasattr(value, "__arrow_c_stream__") and not _is_pandas(value):
        rows = _arrow_rows(value)
        if rows is not None:
            return rows
    to_dicts = getattr(value, "to_dicts", None)
    if callable(to_dicts):
        return _list_of(to_dicts(), name, "to_dicts()")
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return _list_of(to_dict("records"), name, 'to_dict("records")')
    if isinstance(value, Iterable):
        return value
    raise TypeError(
        f"dataset `{name}`: expected a path or records (a list of dicts, a DataFrame), "
        f"found {type(value).__name__}"
    )


def _arrow_rows(value: object) -> Optional[Iterator[Dict[str, Any]]]:
    """Rows through the Arrow C stream interface, a batch at a time; None without pyarrow."""
    try:
        pyarrow = importlib.import_module("pyarrow")
    except ImportError:
        return None
    from_stream = getattr(pyarrow.RecordBatchReader, "from_stream", None)
    if from_stream is not None:
        reader = from_stream(value)

        def batches() -> Iterator[Dict[str, Any]]:
            for batch in reader:
                yield from batch.to_pylist()

        return batches()
    rows: List[Dict[str, Any]] = pyarrow.table(value).to_pylist()
    return iter(rows)


def _list_of(records: object, name: str, how: str) -> Iterable[Any]:
    if not isinstance(records, list):
        raise TypeError(
            f"dataset `{name}`: {how} gave {type(records).__name__}, not a list of records"
        )
    return records


def _write_records(records: Iterable[Any], name: str, format: str, path: Path) -> None:
    def encoded() -> Iterator[str]:
        for number, record in enumerate(records, start=1):
            if not isinstance(record, Mapping):
                raise TypeError(
                    f"dataset `{name}`: record {number} is {type(record).__name__}, "
                    "not a mapping of field names to values"
                )
            yield _encode(record, lambda: f"dataset `{name}`: record {number}")

    with open(path, "w", encoding="utf-8", newline="\n") as file:
        if format == "jsonl":
            for line in encoded():
                file.write(line)
                file.write("\n")
        else:
            # One record per line, so that an error's line number finds it.
            file.write("[")
            for number, line in enumerate(encoded()):
                file.write(",\n" if number else "\n")
                file.write(line)
            file.write("\n]\n")


def _encode(record: Mapping[Any, Any], where: Callable[[], str]) -> str:
    try:
        return json.dumps(
            record, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_plain_one
        )
    except (ValueError, TypeError):
        # NaN, or a value JSON cannot hold: convert it field by field, to say which.
        return json.dumps(
            _plain(record, where, ""),
            ensure_ascii=False,
            separators=(",", ":"),
            allow_nan=False,
        )


def _plain(value: Any, where: Callable[[], str], field: str) -> Any:
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            raise ValueError(f"{where()}: `{field}` is {value}, which JSON cannot hold")
        return value
    if isinstance(value, Mapping):
        plain = {}
        for key, item in value.items():
            if isinstance(key, (int, float)) or key is None:
                key = json.dumps(key)  # as `json` writes such keys: 1 -> "1"
            if not isinstance(key, str):
                raise TypeError(
                    f"{where()}: field name {key!r} is {type(key).__name__}, not a string"
                )
            plain[key] = _plain(item, where, f"{field}.{key}" if field else key)
        return plain
    if isinstance(value, (list, tuple)):
        return [_plain(item, where, f"{field}[{i}]") for i, item in enumerate(value)]
    try:
        converted = _plain_one(value)
    except TypeError as error:
        raise TypeError(f"{where()}: `{field}`: {error}") from None
    return _plain(converted, where, field)


def _plain_one(value: Any) -> Any:
    """A JSON-ready value for one that `json` does not know (its `default=`)."""
    kind = type(value)
    if kind.__name__ in ("NAType", "NaTType"):  # pandas' missing values
        return None
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    module = kind.__module__ or ""
    if module.startswith("numpy"):
        if hasattr(value, "tolist"):  # arrays and scalars alike
            return value.tolist()
    if module.startswith("pandas") and hasattr(value, "isoformat"):
        return value.isoformat()
    raise TypeError(f"{kind.__name__} values cannot be written as JSON")
