"""Locust's CSV statistics (`locust --headless --csv PREFIX ...`): summaries, no per-request rows.

- `PREFIX_stats.csv` (`locust-stats`): one row per request name and an "Aggregated" row, header
  `Type,Name,Request Count,Failure Count,Median Response Time,Average Response Time,Min Response
  Time,Max Response Time,Average Content Size,Requests/s,Failures/s,50%,66%,...,100%` (Locust
  1.x, 2.x). The Aggregated row is the summary; the per-name rows are checked and counted, not
  kept. Locust 0.13.5 to 0.14.x wrote the same file with every field quoted and 0.x names
  (`"# requests"`, `"Requests Failed/s"`, `"99.999"` without its %): read the same way.
- `PREFIX_requests.csv` (`locust-requests`, Locust 0.11 and older, 0.12 to 0.13.0): header
  `"Method","Name","# requests","# failures","Median response time",...,"Requests/s"`, its
  summary row "Total" (0.12 on: "Aggregated") with Method "None". No percentiles but the median:
  the run's `PREFIX_distribution.csv` beside it adds them.
- `PREFIX_distribution.csv` (`locust-distribution`, the same versions): `"Name","# requests",
  "50%",...,"100%"`, the Total row's percentiles; `PREFIX_requests.csv` beside it adds the
  failures, rate, mean, min and max.
- `PREFIX_stats_history.csv` (`locust-history`): a row every CSV_STATS_INTERVAL_SEC (1 s; 2 s in
  1.x) `Timestamp,User Count,Type,Name,Requests/s,Failures/s,50%,...,100%,Total Request Count,
  Total Failure Count,Total Median Response Time,Total Average Response Time,Total Min Response
  Time,Total Max Response Time,Total Average Content Size` (1.x quotes the header and the first
  four fields); with --csv-full-history also one row per name. Each Aggregated row becomes one
  `intervals` entry {t_s (from the first row), timestamp (epoch s), users, rate_rps, errors_rps,
  p50_ms, p66_ms, ..., p99.99_ms, max_ms (the 100% column), requests, errors (running totals)}:
  the rates and percentiles are Locust's "current" ones (a window of the last seconds, not the
  interval alone). "N/A" (no request yet) is None. The summary is the last row's running totals:
  requests, errors, mean, min, max and the total median as `percentiles_ms[50]`. Locust 0.13.5 to
  0.14.x wrote `"Type","Name","Timestamp","# requests",...` with no user count (users None) and 0
  in every percentile where 1.x writes N/A: a row whose percentiles are all 0 reads as None.
- `PREFIX_failures.csv` (`Method,Name,Error,Occurrences`) holds no counts of requests nor times:
  refused, naming the files to give instead (`refuse`).

A response time is Locust's: for HttpUser, from just before the request is handed to `requests`
to the end of the response body, in milliseconds (float), connection set-up included. Locust
keeps only rounded times for its percentiles (whole ms below 100 ms, 2 significant digits
above), so percentiles are approximate; average, min and max are exact. A request is a failure
when its client marks it so: status >= 400, a connection error, a timeout, or the user's own
`response.failure()`. Locust does not count timeouts apart (`timeouts` None).

Locust writes its CSVs in the locale's encoding (open() without one), so a request name can be
in a legacy code page (cp1252 on Windows). Every number is ASCII: such a file is read with the
bytes that are not UTF-8 replaced by U+FFFD (names only; the code page cannot be known), and a
warning says so.

Load model: closed loop. A Locust user runs its tasks one after another and sends the next
request only after the previous response (and its wait_time); even with constant_throughput
or constant_pacing the pacing only adds waiting, it never sends a request before the previous
one has returned. The load is the user count ("User Count" in the history), and latencies leave
out the time a request waited to be sent (coordinated omission). The files do not name the
Locust version.
"""
from __future__ import annotations

import csv
import io
import math
import os
import re

from analysis.errors import ResultsError
from analysis.read.loadtools.results import ResultSummary, ToolInfo
from analysis.read.loadtools.common import SkipLog, binary_line

STATS, HISTORY = "locust-stats", "locust-history"
REQUESTS, DISTRIBUTION = "locust-requests", "locust-distribution"
WHAT = {STATS: "Locust's PREFIX_stats.csv (locust --csv PREFIX)",
        HISTORY: "Locust's PREFIX_stats_history.csv (locust --csv PREFIX)",
        REQUESTS: "Locust 0.x's PREFIX_requests.csv (locust --csv=PREFIX)",
        DISTRIBUTION: "Locust 0.x's PREFIX_distribution.csv (locust --csv=PREFIX)"}
STATS_COLUMNS = ("Type", "Name", "Request Count", "Failure Count", "Median Response Time",
                 "Average Response Time", "Min Response Time", "Max Response Time",
                 "Requests/s")
HISTORY_COLUMNS = ("Timestamp", "Type", "Name", "Requests/s", "Failures/s",
                   "Total Request Count", "Total Failure Count", "Total Median Response Time",
                   "Total Average Response Time", "Total Min Response Time",
                   "Total Max Response Time")
REQUIRED = {STATS: STATS_COLUMNS, REQUESTS: STATS_COLUMNS, HISTORY: HISTORY_COLUMNS,
            DISTRIBUTION: ("Name", "Request Count")}
# Locust 0.x's column names -> 1.x's (a stats file's; the 0.13.5-0.14 history's running totals
# are its "# requests" ... "Max response time", HISTORY_ALIASES)
_ALIASES = {"method": "Type", "# requests": "Request Count", "# failures": "Failure Count",
            "median response time": "Median Response Time",
            "average response time": "Average Response Time",
            "min response time": "Min Response Time", "max response time": "Max Response Time",
            "average content size": "Average Content Size", "requests failed/s": "Failures/s",
            "99.999": "99.999%"}
_HISTORY_ALIASES = {**_ALIASES, **{k: "Total " + v for k, v in _ALIASES.items()
                                   if v.endswith(("Count", "Time", "Size"))}}
FAILURES_HEADER = ("Method", "Name", "Error", "Occurrences")
# the summary row: "Total" up to Locust 0.11, "Aggregated" since; its Type is "" (1.x) or
# "None" (0.x printed Python's None)
SUMMARY_NAMES, SUMMARY_TYPES = ("Aggregated", "Total"), ("", "None")
_PERCENT = re.compile(r"^(\d+(?:\.\d+)?)%$")
MEASURE = "request handed to the client to end of the response body (Locust response_time)"


def _canonical(header: list[str], fmt: str) -> list[str]:
    aliases = _HISTORY_ALIASES if fmt == HISTORY else _ALIASES
    return [aliases.get(c.strip().lower(), c.strip()) for c in header]


def _header(head: bytes) -> list[str]:
    first = head.split(b"\n", 1)[0].decode("utf-8", "replace")
    try:
        return next(csv.reader([first]), [])
    except csv.Error:
        return []


def sniff(head: bytes) -> str | None:
    header = [c.strip() for c in _header(head)]
    if header[:2] == ["Type", "Name"] and len(header) > 2 and \
            _canonical(header[2:3], STATS) == ["Request Count"]:
        return STATS
    if header[:2] == ["Method", "Name"] and header[2:3] == ["# requests"]:
        return REQUESTS
    if header[:3] == ["Name", "# requests", "50%"]:
        return DISTRIBUTION
    if header[:6] == ["Timestamp", "User Count", "Type", "Name", "Requests/s", "Failures/s"] \
            or header[:4] == ["Type", "Name", "Timestamp", "# requests"]:
        return HISTORY
    return None


def refuse(head: bytes) -> tuple[str, str] | None:
    """(what, hint) for a file of Locust's that holds no result to read, else None."""
    if tuple(c.strip() for c in _header(head)) == FAILURES_HEADER:
        return ("Locust's PREFIX_failures.csv: failures by name and error, no request counts "
                "or response times", "give the same run's PREFIX_stats.csv or "
                "PREFIX_stats_history.csv; Locust 0.13.0 and older: PREFIX_requests.csv")
    return None


def _info(fmt: str, users: int | None = None) -> ToolInfo:
    evidence = "Locust users (closed loop)" + (f": up to {users} users" if users else "")
    return ToolInfo(format=fmt, tool="Locust", measure=MEASURE, load_model="closed",
                    load_model_evidence=evidence)


class _Rows:
    """The data rows of a Locust CSV as {column (1.x's name): text}, with their line numbers."""

    def __init__(self, path: str, fmt: str):
        self.path, self.fmt, self.required = path, fmt, REQUIRED[fmt]
        self.skips = SkipLog(path)
        self.notes: list[str] = []

    def __iter__(self):
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise ResultsError(f"cannot read the file: {e.strerror}", path=self.path) from None
        nul = binary_line(data[:65536])
        if nul is not None:
            raise ResultsError("binary data (NUL bytes), not CSV", path=self.path, line=nul,
                               hint=f"expected {WHAT[self.fmt]}")
        yield from self._rows(io.StringIO(self._decode(data), newline=""))

    def _decode(self, data: bytes) -> str:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            line = data.count(b"\n", 0, e.start) + 1
            self.notes.append(
                f"{self.path}:{line}: not UTF-8 (a legacy code page, as Locust writes in the "
                "locale's encoding): the bytes that are not UTF-8 read as U+FFFD in the names; "
                "every number is ASCII and read as written")
            return data.decode("utf-8", "replace")

    def warnings(self) -> list[str]:
        return self.notes + self.skips.warnings()

    def _rows(self, f):
        reader = csv.reader(f)
        try:
            header = next(reader, None)
            if header is None:
                raise ResultsError("the file is empty", path=self.path,
                                   hint=f"expected {WHAT[self.fmt]}")
            refusal = refuse(",".join(header).encode())
            if refusal:
                raise ResultsError(f"this is {refusal[0]}", path=self.path, hint=refusal[1])
            header = _canonical(header, self.fmt)
            missing = [c for c in self.required if c not in header]
            if missing:
                raise ResultsError("not a Locust CSV of this kind: no column "
                                   + ", ".join(repr(c) for c in missing), path=self.path, line=1,
                                   hint=f"expected {WHAT[self.fmt]}")
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


def _is_summary(row: dict) -> bool:
    return row["Name"] in SUMMARY_NAMES and row.get("Type", "") in SUMMARY_TYPES


def _number(row: dict, column: str, kind=float, optional: bool = True):
    """A Locust number; None for "N/A" (or a column the file has not) where `optional`;
    ValueError naming the column for anything else that is not one."""
    text = row.get(column, "N/A")
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
    if fmt == HISTORY:
        return _read_history(path)
    summary, warnings, skipped = _read_stats(path, fmt)
    partner = {REQUESTS: ("_requests.csv", "_distribution.csv", DISTRIBUTION),
               DISTRIBUTION: ("_distribution.csv", "_requests.csv", REQUESTS)}.get(fmt)
    if partner and path.endswith(partner[0]):
        other = path[:-len(partner[0])] + partner[1]
        if os.path.isfile(other):
            warnings += _join(summary, other, partner[2])
    label = "'Aggregated'" if fmt == STATS else "'Total' or 'Aggregated'"
    if summary is None:
        raise ResultsError(f"no {label} row", path=path,
                           hint=f"the file ends early, or is not {WHAT[fmt]}")
    return ResultSummary(path=path, info=_info(fmt), warnings=warnings, skipped=skipped,
                         **summary)


def _join(summary: dict | None, other: str, fmt: str) -> list[str]:
    """Completes a Locust 0.x summary with the same run's other file (PREFIX_requests.csv has
    the failures and rate, PREFIX_distribution.csv the percentiles) when both count the same
    requests; a warning otherwise."""
    found, _, _ = _read_stats(other, fmt)
    if summary is None or found is None or found["requests"] != summary["requests"]:
        return [f"{other}: not joined: its summary row does not count the same requests"]
    for key, value in found.items():
        if key == "percentiles_ms":
            summary[key] = {**value, **summary[key]}
        elif summary.get(key) is None:
            summary[key] = value
    return []


def _read_stats(path: str, fmt: str) -> tuple[dict | None, list[str], int]:
    rows = _Rows(path, fmt)
    summary = None
    for number, row in rows:
        try:
            values = _stats_values(row, rows.percent_columns)
        except ValueError as e:
            rows.skips.skip(number, f"not a number: {e}")
            continue
        if _is_summary(row):
            summary = values
    return summary, rows.warnings(), rows.skips.count


def _stats_values(row: dict, percent_columns) -> dict:
    percentiles = {level: _number(row, c) for level, c in percent_columns}
    median = _number(row, "Median Response Time")
    if median is not None and 50.0 not in percentiles:
        percentiles[50.0] = median
    return dict(requests=_number(row, "Request Count", int, False),
                errors=_number(row, "Failure Count", int),
                rate_rps=_number(row, "Requests/s"),
                mean_ms=_number(row, "Average Response Time"),
                min_ms=_number(row, "Min Response Time"),
                max_ms=_number(row, "Max Response Time"),
                percentiles_ms={k: v for k, v in percentiles.items() if v is not None})


def _read_history(path: str) -> ResultSummary:
    rows = _Rows(path, HISTORY)
    intervals, last = [], None
    for number, row in rows:
        if not _is_summary(row):
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
    users = [i["users"] for i in intervals if i["users"] is not None]
    return ResultSummary(
        path=path, info=_info(HISTORY, max(users, default=None)),
        requests=intervals[-1]["requests"], errors=intervals[-1]["errors"],
        duration_s=intervals[-1]["t_s"],
        mean_ms=_number(last, "Total Average Response Time"),
        min_ms=_number(last, "Total Min Response Time"),
        max_ms=_number(last, "Total Max Response Time"),
        percentiles_ms={} if median is None else {50.0: median},
        intervals=intervals, warnings=rows.warnings(), skipped=rows.skips.count)


def _interval(row: dict, percent_columns) -> dict:
    interval = {"t_s": 0.0, "timestamp": _number(row, "Timestamp", int, False),
                "users": _number(row, "User Count", int),
                "rate_rps": _number(row, "Requests/s"),
                "errors_rps": _number(row, "Failures/s")}
    levels = {level: _number(row, column) for level, column in percent_columns}
    if "User Count" not in row and not any(levels.values()):
        # Locust 0.13.5-0.14 writes 0 for "no request in the window" (1.x: N/A)
        levels = dict.fromkeys(levels)
    for level, value in levels.items():
        interval["max_ms" if level == 100.0 else f"p{level:g}_ms"] = value
    interval["requests"] = _number(row, "Total Request Count", int, False)
    interval["errors"] = _number(row, "Total Failure Count", int, False)
    return interval
