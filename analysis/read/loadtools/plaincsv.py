"""A plain CSV of requests: a timestamp, a latency and optionally a status or a success flag.

Any tool or script can write one; nothing in it says what its numbers mean, so run.yml does
(`options`):

    timestamp: ts              column name, or 0-based index
    timestamp_unit: ms         s | ms | us | ns (numbers) | iso8601 (text; without an offset: UTC)
    timestamp_marks: start     start (when the request was sent; the default) | end
    latency: elapsed           column name, or 0-based index
    latency_unit: ms           ns | us | ms | s
    status: code               optional: the HTTP status (0 or empty: no response)
    ok: success                optional: a true/false (1/0, yes/no) success flag
    delimiter: ","             optional

Without `timestamp`/`latency`/`status` the header names them: timestamp|time|ts|start|
timeStamp, latency|elapsed|duration|response_time, status|code|status_code|responseCode. The
units are never guessed: without `timestamp_unit` and `latency_unit` the file is refused with
the keys to add. A file without a header line needs the columns by index.

The latency covers whatever span the writer timed (run.yml's description says which); it is
converted to int64 nanoseconds exactly for whole numbers, and rounded to the nanosecond for
fractions. `native_unit` is the coarsest of ns/us/ms that keeps every latency whole. `ok` is the
`ok` column where given, else status in 1..399, else every request. No timeouts are known
(`timed_out` all False). When the timestamp marks the end, the start is end - latency.
Timestamps after the year 2000 in the given unit are taken as Unix epoch times (`epoch`),
smaller ones as offsets from the run's own zero. Load model: unknown (give it in run.yml).
Rows whose latency or timestamp is not a number >= 0 are skipped, counted and listed.
"""
from __future__ import annotations

import csv
import math
from array import array
from datetime import datetime, timezone

import numpy as np

from analysis.errors import ResultsError
from analysis.read.loadtools.results import NS_PER_UNIT, RequestSamples, ToolInfo
from analysis.read.loadtools.common import SkipLog, binary_line

FORMAT = "csv"
NS_PER = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
MS_PER = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}      # ms stays exact: no scaling
TIMESTAMP_UNITS = ("s", "ms", "us", "ns", "iso8601")
HEADER_NAMES = {
    "timestamp": ("timestamp", "time", "ts", "start", "timestamp_ms"),
    "latency": ("latency", "elapsed", "duration", "response_time", "latency_ms"),
    "status": ("status", "code", "status_code", "responsecode"),
}
EPOCH_2000_MS = 946_684_800_000.0
TRUE, FALSE = {"true", "1", "yes", "ok", "y", "t"}, {"false", "0", "no", "ko", "n", "f", ""}
UNITS_HINT = ("say in run.yml what the columns hold: timestamp: NAME, timestamp_unit: "
              "s|ms|us|ns|iso8601, latency: NAME, latency_unit: ns|us|ms|s "
              "(optional: status: NAME, ok: NAME, delimiter)")


def sniff(head: bytes) -> str | None:
    return None      # a plain CSV is named in run.yml: its content does not say what it is


class _Columns:
    """Which field holds what, from the options and the header line."""

    def __init__(self, path: str, options: dict):
        self.path = path
        self.options = options
        self.delimiter = options.get("delimiter", ",")
        if not isinstance(self.delimiter, str) or len(self.delimiter) != 1:
            raise ResultsError(f"delimiter must be one character, not {self.delimiter!r}",
                               path=path, hint=UNITS_HINT)
        self.ts_unit = options.get("timestamp_unit")
        self.lat_unit = options.get("latency_unit")
        if self.ts_unit not in TIMESTAMP_UNITS or self.lat_unit not in NS_PER:
            raise ResultsError("the units of the timestamp and latency columns are not given "
                               f"(timestamp_unit={self.ts_unit!r}, latency_unit="
                               f"{self.lat_unit!r})", path=path, hint=UNITS_HINT)
        self.marks = options.get("timestamp_marks", "start")
        if self.marks not in ("start", "end"):
            raise ResultsError(f"timestamp_marks must be start or end, not {self.marks!r}",
                               path=path, hint=UNITS_HINT)

    def resolve(self, first: list[str]) -> bool:
        """Finds the column indexes; True when `first` is a header line (not data)."""
        names = [name.strip().lower() for name in first]
        header = not any(_is_number(text) for text in first)
        self.ts = self._index("timestamp", names, header, required=True)
        self.lat = self._index("latency", names, header, required=True)
        self.status = self._index("status", names, header, required=False)
        self.ok = self._index("ok", names, header, required=False) \
            if "ok" in self.options else None
        return header

    def _index(self, key: str, names: list[str], header: bool, required: bool) -> int | None:
        given = self.options.get(key)
        if isinstance(given, int) and not isinstance(given, bool):
            if not 0 <= given < len(names):
                raise ResultsError(f"{key}: column {given} does not exist: lines have "
                                   f"{len(names)} fields", path=self.path, line=1,
                                   hint=UNITS_HINT)
            return given
        candidates = (str(given).strip().lower(),) if given is not None else \
            HEADER_NAMES.get(key, ())
        if header:
            for name in candidates:
                if name in names:
                    return names.index(name)
        if required or given is not None:
            what = f"no column {given!r}" if given is not None else \
                f"no {key} column ({'|'.join(candidates)})"
            raise ResultsError(what + (" in the header line" if header else
                                       ": the file has no header line, give the column index"),
                               path=self.path, line=1, hint=UNITS_HINT)
        return None


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def read(path: str, fmt: str, options: dict) -> RequestSamples:
    columns = _Columns(path, options)
    skips = SkipLog(path)
    start, latency, status, ok = array("d"), array("q"), array("i"), array("b")
    try:
        with open(path, newline="", encoding="utf-8") as f:
            nul = binary_line(f.read(65536).encode("utf-8"))
            if nul is not None:
                raise ResultsError("binary data (NUL bytes), not CSV", path=path, line=nul,
                                   hint=UNITS_HINT)
            f.seek(0)
            _read_rows(csv.reader(f, delimiter=columns.delimiter), columns, skips,
                       (start, latency, status, ok))
    except UnicodeDecodeError as e:
        raise ResultsError(f"not UTF-8 text (byte {e.start} of a block)", path=path) from None
    except csv.Error as e:
        raise ResultsError(f"unreadable CSV: {e}", path=path) from None
    except OSError as e:
        raise ResultsError(f"cannot read the file: {e.strerror}", path=path) from None
    if not latency:
        raise ResultsError("no readable request row", path=path,
                           hint="check the columns and units in run.yml: " + UNITS_HINT)
    return _samples(path, columns, skips, start, latency, status, ok)


def _read_rows(reader, columns: _Columns, skips: SkipLog, out) -> None:
    start, latency, status, ok = out
    first = next(reader, None)
    if first is None:
        raise ResultsError("the file is empty", path=columns.path, hint=UNITS_HINT)
    rows = reader if columns.resolve(first) else _chain(first, reader)
    width = max(i for i in (columns.ts, columns.lat, columns.status, columns.ok)
                if i is not None) + 1
    for fields in rows:
        if not fields or fields == [""]:
            continue
        if len(fields) < width:
            skips.skip(reader.line_num, f"{len(fields)} fields, needs {width}")
            continue
        try:
            lat_ns = _latency_ns(fields[columns.lat], columns.lat_unit)
            ts_ms = _timestamp_ms(fields[columns.ts], columns.ts_unit)
            code = _status(fields[columns.status]) if columns.status is not None else None
            flag = _flag(fields[columns.ok]) if columns.ok is not None else None
        except ValueError as e:
            skips.skip(reader.line_num, str(e))
            continue
        start.append(ts_ms - lat_ns / 1e6 if columns.marks == "end" else ts_ms)
        latency.append(lat_ns)
        status.append(code if code is not None else 0)
        ok.append(flag if flag is not None else (1 <= code < 400 if code is not None else 1))


def _chain(first, reader):
    yield first
    yield from reader


def _latency_ns(text: str, unit: str) -> int:
    text = text.strip()
    try:
        value = int(text) * NS_PER[unit]
    except ValueError:
        number = float(text) if _is_number(text) else math.nan
        if number != number:
            raise ValueError(f"latency {text!r} is not a number") from None
        value = round(number * NS_PER[unit])
    if value < 0:
        raise ValueError(f"latency {text!r} is negative")
    return value


def _timestamp_ms(text: str, unit: str) -> float:
    text = text.strip()
    if unit == "iso8601":
        try:
            when = datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(f"timestamp {text!r} is not an ISO 8601 time") from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        return when.timestamp() * 1000.0
    if not _is_number(text):
        raise ValueError(f"timestamp {text!r} is not a number")
    return float(text) * MS_PER[unit]


def _status(text: str) -> int | None:
    text = text.strip()
    if not text:
        return 0
    if not text.isdigit():
        raise ValueError(f"status {text!r} is not a number")
    return int(text)


def _flag(text: str) -> bool:
    text = text.strip().lower()
    if text in TRUE:
        return True
    if text in FALSE:
        return False
    raise ValueError(f"ok {text!r} is not true/false")


def _samples(path, columns, skips, start, latency, status, ok) -> RequestSamples:
    latency_ns = np.frombuffer(latency, np.int64).copy()
    start_ms = np.frombuffer(start, np.float64).copy()
    native = next(unit for unit in ("ms", "us", "ns")
                  if not np.any(latency_ns % NS_PER_UNIT[unit]))
    ok_flags = np.frombuffer(ok, np.int8).astype(bool)
    status_codes = np.frombuffer(status, np.int32).copy() if columns.status is not None else None
    first_error = None
    if not ok_flags.all():
        bad = int(np.argmin(ok_flags))
        first_error = f"status {status_codes[bad]}" if status_codes is not None else "not ok"
    return RequestSamples(
        path=path,
        info=ToolInfo(format=FORMAT, tool="CSV",
                      measure="as the writer timed it (run.yml describes it)"),
        start_ms=start_ms, latency_ns=latency_ns, ok=ok_flags,
        timed_out=np.zeros(latency_ns.size, bool), status=status_codes, native_unit=native,
        epoch=bool(start_ms.min() >= EPOCH_2000_MS), warnings=skips.warnings(),
        skipped=skips.count, first_error=first_error)
