"""JMeter result files (.jtl): `jmeter-jtl` (CSV) and `jmeter-xml` (XML), one row per sample.

What the files carry: one row (CSV) or one top-level `<httpSample>`/`<sample>` element (XML)
per sample, with the columns the `jmeter.save.saveservice.*` properties left on. loadcurve uses

- `timeStamp` / `ts`: ms since the Unix epoch. JMeter's shipped jmeter.properties sets
  `sampleresult.timestamp.start=true`, so it is when the request was SENT; a JMeter whose
  properties set it false writes the END time instead, which the file cannot tell: give
  `options["timestamp"] = "end"` and start = timeStamp - elapsed. A CSV's timeStamp written as a
  date (`timestamp_format` other than ms) is read by jmeter_dates: the common year-first
  patterns from the file, any other from `options["timestamp_format"]`, as UTC unless
  `options["utc_offset"]` says otherwise.
- `elapsed` / `t`: integer ms, from just before the request is sent to the last byte of the
  response (JMeter's "elapsed"; `Latency`/`lt` runs to the first byte and `Connect`/`ct` to the
  connection, neither is used). native_unit is therefore "ms".
- `success` / `s`: JMeter's own verdict (HTTP status >= 400, a connection failure, a timeout or a
  failed assertion make it false) -> `ok`. Without a success column, `ok` is status 1..399.
- `responseCode` / `rc`: the HTTP status -> `status`; a sample that got no response carries
  "Non HTTP response code: <exception>" instead, read as status 0.
- `timed_out`: that exception is a timeout (java.net.SocketTimeoutException "Read timed out"
  for the sampler's response timeout, ConnectTimeoutException / "connect timed out" for its
  connect timeout): the code or message names a timeout.
- `label` / `lb` -> labels.

CSV: with the header line (JMeter 3.0 and later write it by default; 2.x only with
`jmeter.save.saveservice.print_field_names=true`) columns are found by name, in any reduced set,
with any delimiter of `, \\t ; |`. Without it the default column order is assumed: 17 columns
are JMeter 3.0+'s default (timeStamp, elapsed, label, responseCode, responseMessage,
threadName, dataType, success, failureMessage, bytes, sentBytes, grpThreads, allThreads, URL,
Latency, IdleTime, Connect), 12 are 2.x's (without failureMessage, sentBytes, URL, IdleTime,
Connect). Any other count gets a warning: timeStamp and elapsed are read from the first two
columns (JMeter always writes them first), label and responseCode from the next two where
their values fit, and success from the column whose values are all true/false.

XML: streamed with iterparse; a sample element nested in another is a sub-result (a redirect
or an embedded resource, timed inside its parent) and is not counted. A file cut off before
`</testResults>` (a run killed while writing) is read up to its last whole sample, with a
warning.

Version and load model: a .jtl names neither JMeter's version (`<testResults version="1.2">`
is the file format's) nor the thread group's kind. A standard Thread Group is closed loop, but
an arrivals-style thread group or a throughput timer writes the same columns, so load_model is
"unknown"; give `load_generator.model` in run.yml.

Big files stream: CSV is read by pandas in chunks of `CHUNK_ROWS` rows, the few used columns
only, into numpy arrays. A file with an irregular row (wrong field count, a non-numeric time)
is re-read row by row with the csv module, which knows each row's line number for the warning.
"""
from __future__ import annotations

import csv
import re
import xml.etree.ElementTree as ET
from array import array
from typing import Iterator

import numpy as np
import pandas as pd

from analysis.errors import ResultsError
from analysis.read.loadtools.results import MAX_LATENCY_MS, RequestSamples, ToolInfo
from analysis.read.loadtools.common import SkipLog, check_text, read_head
from analysis.read.loadtools.jmeter_dates import DateFormat, date_format

TOOL = "JMeter"
MEASURE = "elapsed: send to last byte (JMeter's elapsed; Latency, to the first byte, not used)"
DEFAULT_COLUMNS_3 = ("timeStamp", "elapsed", "label", "responseCode", "responseMessage",
                     "threadName", "dataType", "success", "failureMessage", "bytes",
                     "sentBytes", "grpThreads", "allThreads", "URL", "Latency", "IdleTime",
                     "Connect")
DEFAULT_COLUMNS_2 = ("timeStamp", "elapsed", "label", "responseCode", "responseMessage",
                     "threadName", "dataType", "success", "bytes", "grpThreads",
                     "allThreads", "Latency")
DELIMITERS = (",", "\t", ";", "|")
CHUNK_ROWS = 1 << 20
SNIFF_ROWS = 200
_TIMEOUT = re.compile(r"timeout|timed out", re.IGNORECASE)
_CODE = re.compile(r"^(\d{3}|Non HTTP response code.*)$")
_EPOCH_MS = re.compile(r"^\d{12,13}$")
_SAMPLE_TAGS = ("httpSample", "sample")
_HEADER_HINT = ("write the header line (jmeter.save.saveservice.print_field_names=true) "
                "to be sure")


class _Irregular(Exception):
    """A chunk the fast path cannot take as it is; the file is re-read row by row."""


# ---------------------------------------------------------------------------- sniff

def sniff(head: bytes) -> str | None:
    if b"\x00" in head:
        return None
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    if text.startswith(b"<?xml") or text.startswith(b"<testResults"):
        return "jmeter-xml" if b"<testResults" in text[:2000] else None
    first = text.split(b"\n", 1)[0].decode("utf-8", "replace").rstrip("\r")
    for delimiter in DELIMITERS:
        fields = _split(first, delimiter)
        if "timeStamp" in fields and "elapsed" in fields:
            return "jmeter-jtl"
        if (len(fields) >= 3 and _EPOCH_MS.match(fields[0]) and fields[1].isdigit()
                and any(f in ("true", "false") for f in fields[3:])):
            return "jmeter-jtl"
    return None


def _split(line: str, delimiter: str) -> list[str]:
    try:
        return next(csv.reader([line], delimiter=delimiter), [])
    except csv.Error:       # a bare carriage return (boom's progress bar): not a CSV line
        return []


# ---------------------------------------------------------------------------- read

def read(path: str, fmt: str, options: dict) -> RequestSamples:
    timestamp_is_end = options.get("timestamp", "start") == "end"
    if fmt == "jmeter-xml":
        return _read_xml(path, timestamp_is_end)
    return _read_csv(path, timestamp_is_end, options)


def _info(fmt: str) -> ToolInfo:
    return ToolInfo(format=fmt, tool=TOOL, version=None, measure=MEASURE,
                    load_model="unknown", load_model_evidence=None)


def _samples(path, fmt, ts_ms, elapsed_ms, ok, timed_out, status, labels, warnings, skipped,
             first_error, timestamp_is_end) -> RequestSamples:
    if ts_ms.size == 0:
        raise ResultsError("no usable sample in the file", path=path,
                           hint="a .jtl written by a JMeter run (-l FILE) that made requests")
    start = (ts_ms - elapsed_ms if timestamp_is_end else ts_ms).astype(np.float64)
    latency_ns = np.array(elapsed_ms, dtype=np.int64, copy=not elapsed_ms.flags.writeable)
    latency_ns *= 1_000_000     # in place: one array of 10 million fewer at the peak
    return RequestSamples(
        path=path, info=_info(fmt), start_ms=start,
        latency_ns=latency_ns, ok=ok, timed_out=timed_out,
        status=status, native_unit="ms", epoch=True, labels=labels, warnings=warnings,
        skipped=skipped, first_error=first_error)


# ---------------------------------------------------------------------------- CSV

class _Layout:
    """Where the used columns are: by header name, or by the default order."""

    def __init__(self, delimiter: str, header: bool, names: list[str], warnings: list[str],
                 dates: DateFormat | None = None):
        self.delimiter = delimiter
        self.header = header
        self.names = names
        self.warnings = warnings
        self.dates = dates      # the timeStamp's date pattern; None: ms since the epoch

    def has(self, column: str) -> bool:
        return column in self.names

    def used(self) -> list[str]:
        wanted = ["timeStamp", "elapsed", "success", "responseCode", "label"]
        if not self.has("responseCode"):
            wanted.append("responseMessage")
        return [c for c in wanted if self.has(c)]


def _first_rows(path: str, count: int) -> list[str]:
    rows = []
    head = read_head(path, 1 << 20)
    check_text(path, head, "a JMeter .jtl (CSV or XML text)")
    whole_lines = head[:head.rfind(b"\n") + 1] or head     # no character cut in two
    text = _utf8(path, whole_lines).lstrip("\ufeff")
    for line in text.splitlines()[:count]:
        if line.strip():
            rows.append(line)
    if not rows:
        raise ResultsError("the file is empty", path=path, hint="a .jtl written by jmeter -l")
    return rows


def _utf8(path: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ResultsError("the file is not UTF-8 text", path=path,
                           line=data.count(b"\n", 0, e.start) + 1,
                           hint="JMeter writes UTF-8 with -Dfile.encoding=UTF-8") from None


def _csv_layout(path: str, options: dict) -> _Layout:
    lines = _first_rows(path, SNIFF_ROWS)
    for delimiter in DELIMITERS:
        fields = _split(lines[0], delimiter)
        if "timeStamp" in fields and "elapsed" in fields:
            first = _split(lines[1], delimiter) if len(lines) > 1 else []
            at = fields.index("timeStamp")
            dates = date_format(first[at], options, path, 2) if len(first) > at else None
            return _Layout(delimiter, True, fields, [], dates)
    for delimiter in DELIMITERS:
        fields = _split(lines[0], delimiter)
        if len(fields) >= 2 and fields[0].isdigit() and fields[1].isdigit():
            rows = [_split(line, delimiter) for line in lines]
            return _headerless_layout(path, delimiter, rows)
    first = lines[0]
    if len(first) > 120:
        first = first[:120] + "..."
    raise ResultsError(f"not a JMeter .jtl: the first line is neither a header with timeStamp "
                       f"and elapsed nor a sample starting with them ({first!r})",
                       path=path, line=1, hint="a .jtl written by jmeter -l FILE")


def _headerless_layout(path: str, delimiter: str, rows: list[list[str]]) -> _Layout:
    width = len(rows[0])
    if width == len(DEFAULT_COLUMNS_3):
        return _Layout(delimiter, False, list(DEFAULT_COLUMNS_3), [])
    if width == len(DEFAULT_COLUMNS_2):
        return _Layout(delimiter, False, list(DEFAULT_COLUMNS_2), [])
    names = [f"column{i + 1}" for i in range(width)]
    names[0], names[1] = "timeStamp", "elapsed"
    found = ["timeStamp", "elapsed"]
    success = _column_where(rows, width, range(2, width), lambda v: v in ("true", "false"))
    if success is not None:
        names[success] = "success"
        found.append(f"success (column {success + 1}, its true/false values)")
    if width > 2 and success != 2:
        names[2] = "label"
        found.append("label")
    if width > 3 and success != 3 and _column_where(rows, width, [3], _CODE.match) == 3:
        names[3] = "responseCode"
        found.append("responseCode")
    warning = (f"{path}: no header line, and {width} columns where JMeter's default has 17 "
               f"(3.0 and later) or 12 (2.x): read {', '.join(found)} by the default column "
               f"order; {_HEADER_HINT}")
    return _Layout(delimiter, False, names, [warning])


def _column_where(rows, width, columns, test) -> int | None:
    for i in columns:
        values = [r[i] for r in rows if len(r) == width]
        if values and all(test(v) for v in values):
            return i
    return None


def _read_csv(path: str, timestamp_is_end: bool, options: dict) -> RequestSamples:
    layout = _csv_layout(path, options)
    try:
        columns = _read_csv_fast(path, layout)
        skips = SkipLog(path)
    except _Irregular:
        columns, skips = _read_csv_rows(path, layout)
    ts, elapsed, ok, timed_out, status, labels, first_error = columns
    return _samples(path, "jmeter-jtl", ts, elapsed, ok, timed_out, status, labels,
                    layout.warnings + skips.warnings(), skips.count, first_error,
                    timestamp_is_end)


def _read_csv_fast(path: str, layout: _Layout):
    """pandas over the used columns, chunk by chunk; _Irregular at the first row that is not
    exactly right (the row-by-row reader then finds and reports it)."""
    used = layout.used()
    # without NA parsing an empty time is a ValueError too; the response code is read as
    # categories, so that its handful of distinct values is converted once
    dtypes = {c: "category" for c in used}
    # labels stay plain strings: pandas' parser already shares one str per distinct value,
    # which is cheaper than categories when every row's value is kept anyway
    dtypes.update(timeStamp=object if layout.dates else "int64", elapsed="int64",
                  success="bool", label=object)
    parts = []
    try:
        reader = pd.read_csv(
            path, sep=layout.delimiter, header=0 if layout.header else None,
            names=None if layout.header else layout.names, usecols=used, dtype=dtypes,
            chunksize=CHUNK_ROWS, engine="c", na_filter=False, on_bad_lines="error",
            encoding="utf-8")
        with reader:
            for chunk in reader:
                parts.append(_chunk_columns(chunk, layout))
    except (ValueError, OverflowError, pd.errors.ParserError) as exc:
        raise _Irregular() from exc
    columns = _concatenate(parts)
    failed = np.flatnonzero(~columns[2])
    if failed.size and layout.has("responseMessage") and layout.has("responseCode"):
        # the message column is not read in bulk (it costs as much as all the others): only
        # the first failed row's, for first_error
        columns = (*columns[:6], _first_error_at(path, layout, int(failed[0])))
    return columns


def _chunk_columns(chunk: pd.DataFrame, layout: _Layout):
    ts = layout.dates.parse_all(chunk["timeStamp"]) if layout.dates else \
        chunk["timeStamp"].to_numpy()
    elapsed = chunk["elapsed"].to_numpy()
    if (elapsed < 0).any() or (ts < 0).any() or (elapsed > MAX_LATENCY_MS).any():
        raise _Irregular()
    n = len(chunk)
    code = chunk["responseCode"] if layout.has("responseCode") else None
    status = _by_category(code, _status_of, np.int32, n, 0)
    message = chunk["responseMessage"] if "responseMessage" in chunk else None
    timed_out = (_by_category(code, _is_timeout, bool, n, False)
                 | _by_category(message, _is_timeout, bool, n, False))
    if layout.has("success"):
        ok = chunk["success"].to_numpy(dtype=bool)
    else:
        ok = (status >= 1) & (status < 400)
    labels = chunk["label"].to_numpy(dtype=object) if layout.has("label") else None
    first_error = None
    failed = np.flatnonzero(~ok)
    if failed.size:
        i = int(failed[0])
        first_error = _error_text(*(str(c.iloc[i]) if c is not None else ""
                                    for c in (code, message)))
    return [ts.astype(np.int64), elapsed.astype(np.int64), ok, timed_out, status, labels,
            first_error]


def _by_category(column, convert, dtype, n, missing):
    """Converts each distinct value once: a column of 10 million samples has a handful."""
    if column is None:
        return np.full(n, missing, dtype=dtype)
    cats = column.cat.categories
    table = np.array([convert(str(v)) for v in cats] + [missing], dtype=dtype)
    codes = column.cat.codes.to_numpy()
    return table[np.where(codes < 0, len(cats), codes)]


def _first_error_at(path: str, layout: _Layout, index: int) -> str:
    """code and message of data row `index`, read up to it with the csv module (the first
    failure is usually among the first rows)."""
    code_at, message_at = layout.names.index("responseCode"), layout.names.index("responseMessage")
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        rows = csv.reader(f, delimiter=layout.delimiter)
        if layout.header:
            next(rows, None)
        data = (row for row in rows if row and row != [""])
        for i, row in enumerate(data):
            if i == index:
                return _error_text(row[code_at], row[message_at])
    return "failed"


def _status_of(code: str) -> int:
    return int(code) if code.isdigit() and len(code) <= 9 else 0


def _is_timeout(text: str) -> bool:
    return bool(_TIMEOUT.search(text))


def _success_of(text: str) -> int:
    return {"true": 1, "false": 0}.get(text.strip().lower(), -1)


def _error_text(code: str, message: str) -> str:
    return " ".join(dict.fromkeys(p for p in (code, message) if p)) or "failed"


def _concatenate(parts):
    if not parts:
        return (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, bool),
                np.empty(0, bool), np.empty(0, np.int32), None, None)
    first_error = next((p[6] for p in parts if p[6] is not None), None)
    joined = []
    for k in range(6):
        column = [p[k] for p in parts]
        for p in parts:
            p[k] = None     # each column's chunks are freed as it is joined: a lower peak
        joined.append(None if column[0] is None else np.concatenate(column))
        del column
    return (*joined, first_error)


def _read_csv_rows(path: str, layout: _Layout):
    """The exact reader: row by row, each bad row skipped and reported with its line."""
    skips = SkipLog(path)
    where = {name: i for i, name in enumerate(layout.names)}
    need = max(where[c] for c in layout.used()) + 1
    ts, elapsed = array("q"), array("q")
    ok, timed_out, status = bytearray(), bytearray(), array("i")
    labels: list[str] | None = [] if "label" in where else None
    interned: dict[str, str] = {}
    first_error = None
    with open(path, newline="", encoding="utf-8") as f:
        rows = csv.reader(f, delimiter=layout.delimiter)
        guarded = _guarded(rows, path)
        if layout.header:
            next(guarded, None)
        for row in guarded:
            line = rows.line_num
            if not row or row == [""]:
                continue
            if len(row) < need:
                skips.skip(line, f"{len(row)} fields of {len(layout.names)}")
                continue
            sample = _row_sample(row, where, skips, line, layout.dates)
            if sample is None:
                continue
            t, e, good, code, message = sample
            ts.append(t)
            elapsed.append(e)
            status.append(_status_of(code))
            timed_out.append(_is_timeout(code) or _is_timeout(message))
            if good is None:
                good = 1 <= status[-1] < 400
            ok.append(good)
            if not good and first_error is None:
                first_error = _error_text(code, message)
            if labels is not None:
                label = row[where["label"]]
                labels.append(interned.setdefault(label, label))
    columns = (np.frombuffer(ts, np.int64) if ts else np.empty(0, np.int64),
               np.frombuffer(elapsed, np.int64) if elapsed else np.empty(0, np.int64),
               np.frombuffer(bytes(ok), np.uint8).astype(bool),
               np.frombuffer(bytes(timed_out), np.uint8).astype(bool),
               np.array(status, dtype=np.int32),
               np.array(labels, dtype=object) if labels is not None else None,
               first_error)
    return columns, skips


def _guarded(rows, path) -> Iterator[list[str]]:
    try:
        yield from rows
    except csv.Error as exc:
        raise ResultsError(f"unreadable CSV: {exc}", path=path, line=rows.line_num,
                           hint="a .jtl as JMeter writes it") from None
    except UnicodeDecodeError:
        raise ResultsError("the file is not UTF-8 text", path=path, line=rows.line_num + 1,
                           hint="JMeter writes UTF-8 with -Dfile.encoding=UTF-8") from None


def _row_sample(row, where, skips, line, dates: DateFormat | None):
    t_text, e_text = row[where["timeStamp"]], row[where["elapsed"]]
    if dates is not None and e_text.isdigit():
        t = dates.parse(t_text)
        if t is None:
            skips.skip(line, f"timeStamp {t_text[:40]!r} is not a date of the pattern "
                             f"{dates.pattern!r}")
            return None
        t_text = str(t) if t >= 0 else t_text
    if not (t_text.isdigit() and e_text.isdigit()):
        what = "timeStamp" if not t_text.isdigit() else "elapsed"
        value = t_text if what == "timeStamp" else e_text
        skips.skip(line, f"{what} {value[:40]!r} is not a whole number of ms")
        return None
    if int(e_text) > MAX_LATENCY_MS or int(t_text) >= 2**63:
        skips.skip(line, f"elapsed {e_text[:40]} or timeStamp {t_text[:40]} is out of range")
        return None
    good = None
    if "success" in where:
        verdict = _success_of(row[where["success"]])
        if verdict < 0:
            skips.skip(line, f"success {row[where['success']][:40]!r} is not true/false")
            return None
        good = bool(verdict)
    code = row[where["responseCode"]] if "responseCode" in where else ""
    # the message is not among the columns a row must reach (used() reads the code instead)
    at = where.get("responseMessage", len(row))
    message = row[at] if at < len(row) else ""
    return int(t_text), int(e_text), good, code, message


# ---------------------------------------------------------------------------- XML

def _read_xml(path: str, timestamp_is_end: bool) -> RequestSamples:
    _first_rows(path, 1)     # empty / binary: the one clear error
    skips = SkipLog(path)
    warnings: list[str] = []
    ts, elapsed = array("q"), array("q")
    ok, timed_out, status = bytearray(), bytearray(), array("i")
    labels: list[str] = []
    interned: dict[str, str] = {}
    first_error = None
    for attrs, line in _top_samples(path, warnings):
        t_text, ts_text = attrs.get("t", ""), attrs.get("ts", "")
        if not (t_text.isdigit() and ts_text.isdigit()):
            skips.skip(line, f"sample without whole-ms t and ts (t={t_text[:20]!r}, "
                             f"ts={ts_text[:20]!r})")
            continue
        if int(t_text) > MAX_LATENCY_MS or int(ts_text) >= 2**63:
            skips.skip(line, f"t {t_text[:40]} or ts {ts_text[:40]} is out of range")
            continue
        code = attrs.get("rc", "")
        message = attrs.get("rm", "")
        verdict = _success_of(attrs["s"]) if "s" in attrs else -1
        good = bool(verdict) if verdict >= 0 else 1 <= _status_of(code) < 400
        ts.append(int(ts_text))
        elapsed.append(int(t_text))
        status.append(_status_of(code))
        timed_out.append(_is_timeout(code) or _is_timeout(message))
        ok.append(good)
        if not good and first_error is None:
            first_error = _error_text(code, message)
        label = attrs.get("lb", "")
        labels.append(interned.setdefault(label, label))
    return _samples(path, "jmeter-xml", np.frombuffer(ts, np.int64) if ts else
                    np.empty(0, np.int64),
                    np.frombuffer(elapsed, np.int64) if elapsed else np.empty(0, np.int64),
                    np.frombuffer(bytes(ok), np.uint8).astype(bool),
                    np.frombuffer(bytes(timed_out), np.uint8).astype(bool),
                    np.array(status, dtype=np.int32), np.array(labels, dtype=object),
                    warnings + skips.warnings(), skips.count, first_error, timestamp_is_end)


def _top_samples(path: str, warnings: list[str]) -> Iterator[tuple[dict, int]]:
    """The attributes and line of each sample element directly under <testResults>; nested
    ones are sub-results of their parent. The file is fed line by line (so each sample's line
    is known) and each element cleared once read, so memory stays flat."""
    parser = ET.XMLPullParser(events=("start", "end"))
    depth = 0
    root = None
    number = 0
    with open(path, "rb") as f:
        try:
            for number, line in enumerate(f, 1):
                parser.feed(line)
                for event, elem in parser.read_events():
                    if event == "start":
                        depth += 1
                        if depth == 1:
                            root = _root(path, elem)
                        continue
                    depth -= 1
                    if depth == 1 and elem.tag in _SAMPLE_TAGS:
                        yield dict(elem.attrib), number
                    if depth == 1:
                        root.clear()
        except ET.ParseError as exc:
            raise ResultsError(f"unreadable XML ({exc})", path=path, line=exc.position[0],
                               hint="a .jtl as JMeter writes it") from None
        except (LookupError, ValueError) as exc:     # an unknown encoding in <?xml ...?>
            raise ResultsError(f"unreadable XML ({exc})", path=path, line=number,
                               hint="a .jtl as JMeter writes it") from None
    try:
        parser.close()
    except ET.ParseError:
        if root is None:
            raise ResultsError("XML without a <testResults> element", path=path,
                               hint="a .jtl as JMeter writes it") from None
        # the data is whole up to here: a run killed while writing leaves such a file
        warnings.append(f"{path}:{number}: the file ends before </testResults> (a run cut "
                        "short?); read up to the last whole sample")


def _root(path: str, elem) -> ET.Element:
    if elem.tag != "testResults":
        raise ResultsError(f"XML whose root is <{elem.tag}>, not <testResults>", path=path,
                           hint="a .jtl written with "
                                "jmeter.save.saveservice.output_format=xml")
    return elem
