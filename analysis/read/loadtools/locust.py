"""Locust's CSV statistics (`locust --headless --csv PREFIX ...`): summaries, no per-request rows.

- `PREFIX_stats.csv` (`locust-stats`): one row per request name and an "Aggregated" row, header
  `Type,Name,Request Count,Failure Count,Median Response Time,Average Response Time,Min Response
  Time,Max Response Time,Average Content Size,Requests/s,Failures/s,50%,66%,...,100%` (Locust
  2.x). The Aggregated row is the summary; the per-name rows are checked and counted, not kept.
- `PREFIX_stats_history.csv` (`locust-history`): a row every CSV_STATS_INTERVAL_SEC (1 s)
  `Timestamp,User Count,Type,Name,Requests/s,Failures/s,50%,...,100%,Total Request Count,Total
  Failure Count,Total Median Response Time,Total Average Response Time,Total Min Response Time,
  Total Max Response Time,Total Average Content Size`; with --csv-full-history also one row per
  name. Each Aggregated row becomes one `intervals` entry {t_s (from the first row), timestamp
  (epoch s), users, rate_rps, errors_rps, p50_ms, p66_ms, ..., p99.99_ms, max_ms (the 100%
  column), requests, errors (running totals)}: the rates and percentiles are Locust's "current"
  ones (a window of the last seconds, not the interval alone). "N/A" (no request yet) is None.
  The summary is the last row's running totals: requests, errors, mean, min, max and the total
  median as `percentiles_ms[50]`.

A response time is Locust's: for HttpUser, from just before the request is handed to `requests`
to the end of the response body, in milliseconds (float), connection set-up included. Locust
keeps only rounded times for its percentiles (whole ms below 100 ms, 2 significant digits
above), so percentiles are approximate; average, min and max are exact. A request is a failure
when its client marks it so: status >= 400, a connection error, a timeout, or the user's own
`response.failure()`. Locust does not count timeouts apart (`timeouts` None).

Load model: closed loop. A Locust user runs its tasks one after another and sends the next
request only after the previous response (and its wait_time); even with constant_throughput
or constant_pacing the pacing only adds waiting, it never sends a request before the previous
one has returned. The load is the user count ("User Count" in the history), and latencies leave
out the time a request waited to be sent (coordinated omission). The files do not name the
Locust version.
"""
from __future__ import annotations

import csv
import math
import re

from analysis.errors import ResultsError
from analysis.read.loadtools.results import ResultSummary, ToolInfo
from analysis.read.loadtools.common import SkipLog, binary_line

STATS, HISTORY = "locust-stats", "locust-history"
WHAT = {STATS: "Locust's PREFIX_stats.csv (locust --csv PREFIX)",
        HISTORY: "Locust's PREFIX_stats_history.csv (locust --csv PREFIX)"}
STATS_COLUMNS = ("Type", "Name", "Request Count", "Failure Count", "Median Response Time",
                 "Average Response Time", "Min Response Time", "Max Response Time",
                 "Requests/s", "Failures/s")
HISTORY_COLUMNS = ("Timestamp", "User Count", "Type", "Name", "Requests/s", "Failures/s",
                   "Total Request Count", "Total Failure Count", "Total Median Response Time",
                   "Total Average Response Time", "Total Min Response Time",
                   "Total Max Response Time")
AGGREGATED = "Aggregated"
_PERCENT = re.compile(r"^(\d+(?:\.\d+)?)%$")
MEASURE = "request handed to the client to end of the response body (Locust response_time)"


def sniff(head: bytes) -> str | None:
    first = head.split(b"\n", 1)[0].strip().decode("utf-8", "replace")
    if first.startswith("Type,Name,Request Count,Failure Count,"):
        return STATS
    if first.startswith("Timestamp,User Count,Type,Name,Requests/s,Failures/s,"):
        return HISTORY
    return None


def _info(fmt: str, users: int | None = None) -> ToolInfo:
    evidence = "Locust users (closed loop)" + (f": up to {users} users" if users else "")
    return ToolInfo(format=fmt, tool="Locust", measure=MEASURE, load_model="closed",
                    load_model_evidence=evidence)


class _Rows:
    """The data rows of a Locust CSV as {column: text}, with their line numbers."""

    def __init__(self, path: str, fmt: str, required: tuple[str, ...]):
        self.path, self.fmt, self.required = path, fmt, required
        self.skips = SkipLog(path)

    def __iter__(self):
        try:
            with open(self.path, newline="", encoding="utf-8") as f:
                yield from self._rows(f)
        except UnicodeDecodeError as e:
            raise ResultsError(f"not UTF-8 text (byte {e.start} of a block)", path=self.path,
                               hint=f"expected {WHAT[self.fmt]}") from None
        except OSError as e:
            raise ResultsError(f"cannot read the file: {e.strerror}", path=self.path) from None

    def _rows(self, f):
        head = f.read(65536)
        nul = binary_line(head.encode("utf-8"))
        if nul is not None:
            raise ResultsError("binary data (NUL bytes), not CSV", path=self.path, line=nul,
                               hint=f"expected {WHAT[self.fmt]}")
        f.seek(0)
        reader = csv.reader(f)
        try:
            header = next(reader, None)
            if header is None:
                raise ResultsError("the file is empty", path=self.path,
                                   hint=f"expected {WHAT[self.fmt]}")
            missing = [c for c in self.required if c not in header]
            if missing:
                raise ResultsError("not a Locust CSV of this kind: no column "
                                   + ", ".join(repr(c) for c in missing), path=self.path, line=1,
                                   hint=f"expected {WHAT[self.fmt]}, Locust 1.0 or later")
            self.header = header
            self.percent_columns = [(float(m.group(1)), c) for c in header
                                    if (m := _PERCENT.match(c))]
            for fields in reader:
                if not fields:
                    continue
                if len(fields) != len(header):
                    self.skips.skip(reader.line_num, f"{len(fields)} fields, the header has "
                                                     f"{len(header)}")
                    continue
                yield reader.line_num, dict(zip(header, fields))
        except csv.Error as e:
            raise ResultsError(f"unreadable CSV: {e}", path=self.path, line=reader.line_num,
                               hint=f"expected {WHAT[self.fmt]}") from None


def _number(row: dict, column: str, kind=float, optional: bool = True):
    """A Locust number; None for "N/A" where `optional`; ValueError naming the column for
    anything else that is not one."""
    text = row[column]
    if text == "N/A" and optional:
        return None
    try:
        value = kind(text)
    except ValueError:
        value = math.nan
    if value != value or value in (math.inf, -math.inf) or value < 0:
        raise ValueError(f"{column} is {text!r}")
    return value


def read(path: str, fmt: str, options: dict) -> ResultSummary:
    if fmt == STATS:
        return _read_stats(path)
    return _read_history(path)


def _read_stats(path: str) -> ResultSummary:
    rows = _Rows(path, STATS, STATS_COLUMNS)
    aggregated = None
    names = 0
    for number, row in rows:
        try:
            values = _stats_values(row, rows.percent_columns)
        except ValueError as e:
            rows.skips.skip(number, f"not a number: {e}")
            continue
        if row["Name"] == AGGREGATED and not row["Type"]:
            aggregated = values
        else:
            names += 1
    if aggregated is None:
        raise ResultsError("no 'Aggregated' row", path=path,
                           hint="the file ends early, or is not Locust's PREFIX_stats.csv")
    return ResultSummary(path=path, info=_info(STATS), warnings=rows.skips.warnings(),
                         skipped=rows.skips.count, **aggregated)


def _stats_values(row: dict, percent_columns) -> dict:
    percentiles = {level: _number(row, c) for level, c in percent_columns}
    return dict(requests=_number(row, "Request Count", int, False),
                errors=_number(row, "Failure Count", int, False),
                rate_rps=_number(row, "Requests/s"),
                mean_ms=_number(row, "Average Response Time"),
                min_ms=_number(row, "Min Response Time"),
                max_ms=_number(row, "Max Response Time"),
                percentiles_ms={k: v for k, v in percentiles.items() if v is not None})


def _read_history(path: str) -> ResultSummary:
    rows = _Rows(path, HISTORY, HISTORY_COLUMNS)
    intervals, last = [], None
    for number, row in rows:
        if row["Name"] != AGGREGATED or row["Type"]:
            continue
        try:
            interval = _interval(row, rows.percent_columns)
        except ValueError as e:
            rows.skips.skip(number, f"not a number: {e}")
            continue
        if intervals and interval["timestamp"] < intervals[-1]["timestamp"]:
            rows.skips.skip(number, "its Timestamp is before the row above")
            continue
        intervals.append(interval)
        last = row
    if not intervals:
        raise ResultsError("no readable 'Aggregated' row", path=path,
                           hint="the file ends early, or is not Locust's "
                                "PREFIX_stats_history.csv")
    first_ts = intervals[0]["timestamp"]
    for interval in intervals:
        interval["t_s"] = float(interval["timestamp"] - first_ts)
    median = _number(last, "Total Median Response Time")
    return ResultSummary(
        path=path, info=_info(HISTORY, max(i["users"] for i in intervals)),
        requests=intervals[-1]["requests"], errors=intervals[-1]["errors"],
        duration_s=intervals[-1]["t_s"],
        mean_ms=_number(last, "Total Average Response Time"),
        min_ms=_number(last, "Total Min Response Time"),
        max_ms=_number(last, "Total Max Response Time"),
        percentiles_ms={} if median is None else {50.0: median},
        intervals=intervals, warnings=rows.skips.warnings(), skipped=rows.skips.count)


def _interval(row: dict, percent_columns) -> dict:
    interval = {"t_s": 0.0, "timestamp": _number(row, "Timestamp", int, False),
                "users": _number(row, "User Count", int, False),
                "rate_rps": _number(row, "Requests/s"),
                "errors_rps": _number(row, "Failures/s")}
    for level, column in percent_columns:
        key = "max_ms" if level == 100.0 else f"p{level:g}_ms"
        interval[key] = _number(row, column)
    interval["requests"] = _number(row, "Total Request Count", int, False)
    interval["errors"] = _number(row, "Total Failure Count", int, False)
    return interval
