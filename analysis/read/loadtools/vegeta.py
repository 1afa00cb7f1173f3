"""vegeta's files: `vegeta encode` per request, `vegeta report` as a summary (issue 23).

Formats (vegeta v12; `vegeta attack ... > results.bin` first, then):

- `vegeta-csv`: `vegeta encode --to csv < results.bin`. No header; one row per request, in the
  order requests finished: timestamp (ns since the epoch), HTTP code, latency (ns), bytes out,
  bytes in, error, body (base64), attack name, seq, and from v12.9 on method, URL and the
  response headers (base64).
- `vegeta-json`: `vegeta encode --to json`: the same fields, one JSON object a line
  (`timestamp` as RFC 3339 with nanoseconds, `latency` in ns).
- `vegeta-report`: `vegeta report -type=json`: latencies {total, mean, 50th, 90th, 95th, 99th,
  max, min} in ns, requests, rate, throughput, duration and wait (ns), success (a ratio),
  status_codes, and the set of distinct error messages (no counts).
  Before v12.6 the report had no `min`, `90th` or `throughput`: those stay unknown.
- `vegeta-hdrplot`: `vegeta report -type=hdrplot`: "Value(ms) Percentile TotalCount
  1/(1-Percentile)", a full spectrum (percentiles 0 to 1 on a logarithmic ladder).
- `vegeta-text`: `vegeta report` (the default `-type=text`): aligned lines "Requests [total,
  rate, throughput]", "Duration [total, attack, wait]", "Latencies [min, mean, 50, 90, 95, 99,
  max]", "Bytes In/Out [total, mean]", "Success [ratio]", "Status Codes [code:count]", then
  "Error Set:" and one message a line. Each line names its own fields in the brackets, so the
  older layouts ("Requests [total, rate]", "Latencies [mean, 50, 95, 99, max]" before v12.6)
  read the same way. Durations are Go's (`1.564328ms`, `12.5µs`, `1m2.3s`); from v12.6 on
  vegeta rounds them for printing (`4.983ms`, `1s`), so they are a little coarser than the
  JSON report's nanoseconds. `duration_s` is the attack's span (the JSON report's `duration`),
  as for `vegeta-report`.

What a latency covers: from the moment vegeta stamps the request (just before it builds and
sends it) to the end of reading the response body: `time.Since(res.Timestamp)`, deferred past
`io.ReadAll(body)`. The timestamp is when the request started, so `start_ms` is it as it is
(epoch). Latencies are whole nanoseconds. A request that failed before an answer (a timeout, a
refused connection) still has a latency: the time until vegeta gave up.

`ok`: vegeta's own success rule, 200 <= code < 400 (`metrics.go`); code 0 means no answer.
`timed_out`: code 0 and an error text of Go's HTTP client timeout ("Client.Timeout exceeded",
"context deadline exceeded", "i/o timeout"), i.e. the request outran `vegeta attack -timeout`.

The report's percentiles are vegeta's own estimates (a t-digest), shown as they are; the
hdrplot's spectrum comes from the same estimator. The report lists error messages but not how
many of each, so `timeouts` is None there.

Load model: open, always. `vegeta attack -rate` sends at a constant rate whether or not earlier
requests have answered (it starts more workers as needed), so a slow answer does not hold back
the next request: evidence "vegeta attack (constant rate)". None of these files names vegeta's
version, so `info.version` is None.
"""
from __future__ import annotations

import array
import csv
import io
import json
import re
from decimal import Decimal

import numpy as np
import pandas as pd

from analysis.errors import ResultsError
from analysis.read.loadtools.common import SkipLog, native_unit, read_text
from analysis.read.loadtools.results import (RequestSamples, ResultSummary, SpectrumPoint,
                                             ToolInfo)

MEASURE = "request start to end of response body"
EVIDENCE = "vegeta attack (constant rate)"
TIMEOUT_TEXT = re.compile(r"Client\.Timeout exceeded|context deadline exceeded|i/o timeout")
HDRPLOT_HEADER = re.compile(rb"\AValue\(ms\)\s+Percentile\s+TotalCount\s+1/\(1-Percentile\)")
REPORT_PERCENTILES = {50.0: "50th", 90.0: "90th", 95.0: "95th", 99.0: "99th"}
TEXT_PERCENTILES = {50.0: "50", 90.0: "90", 95.0: "95", 99.0: "99"}
# "Latencies     [min, mean, 50, ...]  1.696ms, ...": a label, its field names, their values
_TEXT_LINE = re.compile(r"^(\S.*?)\s+\[([^\]]*)\]\s+(.*?)\s*$")
_TEXT_FIRST = re.compile(rb"\ARequests\s+\[total, rate[\],]")
# one term of a Go duration ("1h2m3.5s", "12.5\u00b5s"); "ms" before "m", every spelling of micro
_GO_DURATION_TERM = re.compile(r"(\d+(?:\.\d*)?)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)")
_GO_UNIT_MS = {"ns": Decimal("1e-6"), "us": Decimal("1e-3"), "\u00b5s": Decimal("1e-3"),
               "\u03bcs": Decimal("1e-3"), "ms": Decimal(1), "s": Decimal(1000),
               "m": Decimal(60_000), "h": Decimal(3_600_000)}
JSON_FIELDS = ("timestamp", "code", "latency", "bytes_out", "bytes_in", "error")
CSV_MIN_COLUMNS = 9       # v12.0 to v12.8; v12.9 added method, URL and headers (12)
# a nanosecond timestamp from 2001 to 2286 has 19 digits
_CSV_FIRST = re.compile(rb"\A\d{19},\d{1,3},\d+,\d+,\d+,")


def _info(fmt: str) -> ToolInfo:
    return ToolInfo(format=fmt, tool="vegeta", measure=MEASURE, load_model="open",
                    load_model_evidence=EVIDENCE)


def sniff(head: bytes) -> str | None:
    if HDRPLOT_HEADER.match(head):
        return "vegeta-hdrplot"
    if _CSV_FIRST.match(head):
        return "vegeta-csv"
    first = head.split(b"\n", 1)[0].strip()
    if first.startswith(b'{"attack":') and all(b'"%s":' % k.encode() in first
                                                 for k in JSON_FIELDS):
        return "vegeta-json"
    if _TEXT_FIRST.match(head.lstrip()) and b"Latencies" in head:
        return "vegeta-text"
    if head.lstrip().startswith(b"{") and b'"latencies"' in head and b'"50th"' in head \
            and b'"status_codes"' in head:
        return "vegeta-report"
    return None


def read(path: str, fmt: str, options: dict) -> RequestSamples | ResultSummary:
    if fmt == "vegeta-csv":
        return _read_samples(path, fmt, _csv_rows(path))
    if fmt == "vegeta-json":
        return _read_samples(path, fmt, _json_rows(path))
    if fmt == "vegeta-report":
        return _read_report(path)
    if fmt == "vegeta-hdrplot":
        return _read_hdrplot(path)
    if fmt == "vegeta-text":
        return _read_text_report(path)
    raise ResultsError(f"not a vegeta format: {fmt}", path=path)


class _Columns:
    """The per-request columns, kept as flat typed arrays while the file streams."""

    def __init__(self):
        self.start_ns = array.array("q")
        self.latency_ns = array.array("q")
        self.status = array.array("i")
        self.timed_out = array.array("b")
        self.label_index = array.array("i")
        self.labels: dict[str, int] = {}
        self.first_error: str | None = None

    def add(self, start_ns: int, latency_ns: int, code: int, error: str, url: str) -> None:
        if latency_ns < 0 or not 0 <= code <= 999:
            raise ValueError(f"latency {latency_ns} or code {code} out of range")
        self.start_ns.append(start_ns)
        self.latency_ns.append(latency_ns)
        self.status.append(code)
        self.timed_out.append(code == 0 and TIMEOUT_TEXT.search(error) is not None)
        self.label_index.append(self.labels.setdefault(url, len(self.labels)))
        if self.first_error is None and not 200 <= code < 400:
            self.first_error = f"{code} {error}".strip()


def _read_samples(path: str, fmt: str, rows) -> RequestSamples:
    cols = _Columns()
    skips = SkipLog(path)
    for line, row in rows:
        if isinstance(row, str):
            skips.skip(line, row)
            continue
        try:
            cols.add(*row)
        except (ValueError, TypeError) as e:
            skips.skip(line, str(e))
    if not cols.latency_ns:
        raise ResultsError("no request rows could be read", path=path,
                           line=None, hint=_hint(fmt, skips))
    latency = np.frombuffer(cols.latency_ns, dtype=np.int64).copy()
    status = np.frombuffer(cols.status, dtype=np.int32).copy()
    names = np.array(list(cols.labels), dtype=object)
    return RequestSamples(
        path=path, info=_info(fmt),
        start_ms=np.frombuffer(cols.start_ns, dtype=np.int64) / 1e6,
        latency_ns=latency, ok=(status >= 200) & (status < 400),
        timed_out=np.frombuffer(cols.timed_out, dtype=np.int8).astype(bool),
        status=status, native_unit=native_unit(latency), epoch=True,
        labels=names[np.frombuffer(cols.label_index, dtype=np.int32)] if cols.labels else None,
        warnings=skips.warnings(), skipped=skips.count, first_error=cols.first_error)


def _hint(fmt: str, skips: SkipLog) -> str:
    first = skips.warnings()[0] if skips.count else "the file has no data lines"
    return f"first problem: {first}; expected `vegeta encode --to " \
           f"{fmt.split('-')[1]}` output"


def _csv_rows(path: str):
    """(line number, row tuple) per record, or (line, what is wrong) for a bad one."""
    text = read_text(path, "`vegeta encode --to csv` output")
    reader = csv.reader(io.StringIO(text))
    line = 1
    while True:
        try:
            record = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            yield line, f"unreadable CSV ({e})"
            line = reader.line_num + 1
            continue
        if record:
            yield line, _csv_row(record)
        line = reader.line_num + 1


def _csv_row(record: list[str]):
    if len(record) < CSV_MIN_COLUMNS:
        return f"{len(record)} columns, expected {CSV_MIN_COLUMNS} to 12"
    try:
        start_ns, code, latency_ns = int(record[0]), int(record[1]), int(record[2])
    except ValueError:
        return "timestamp, code or latency is not an integer"
    url = record[10] if len(record) > 10 else ""
    return start_ns, latency_ns, code, record[5], url


def _json_rows(path: str):
    text = read_text(path, "`vegeta encode --to json` output")
    starts: list[str] = []
    rows = []
    for line, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
            row = (obj["timestamp"], int(obj["latency"]), int(obj["code"]),
                   str(obj.get("error") or ""), str(obj.get("url") or ""))
        except (ValueError, KeyError, TypeError) as e:
            rows.append((line, f"not a vegeta JSON result ({type(e).__name__}: {e})"))
            continue
        starts.append(row[0])
        rows.append((line, row))
    start_ns = _parse_times(path, starts)
    i = 0
    for line, row in rows:
        if isinstance(row, tuple):
            row = (int(start_ns[i]),) + row[1:]
            i += 1
        yield line, row


def _parse_times(path: str, stamps: list[str]) -> np.ndarray:
    try:
        return pd.DatetimeIndex(pd.to_datetime(pd.Series(stamps, dtype=object),
                                               format="ISO8601", utc=True)).as_unit("ns").asi8
    except (ValueError, TypeError) as e:
        raise ResultsError(f"a timestamp is not RFC 3339 ({e})", path=path,
                           hint="expected `vegeta encode --to json` output") from None


def _read_report(path: str) -> ResultSummary:
    text = read_text(path, "`vegeta report -type=json` output")
    try:
        report = json.loads(text)
        lat = report["latencies"]
        requests = int(report["requests"])
        codes = {int(k): int(v) for k, v in report["status_codes"].items()}
        pct = {p: lat[key] / 1e6 for p, key in REPORT_PERCENTILES.items() if key in lat}
        summary = ResultSummary(
            path=path, info=_info("vegeta-report"), requests=requests,
            errors=sum(n for code, n in codes.items() if not 200 <= code < 400),
            duration_s=report["duration"] / 1e9, rate_rps=float(report["rate"]),
            percentiles_ms=pct, mean_ms=lat["mean"] / 1e6,
            # (`min` came with v12.6, as did `90th` and `throughput`)
            min_ms=lat["min"] / 1e6 if "min" in lat else None, max_ms=lat["max"] / 1e6)
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise ResultsError(f"not a vegeta JSON report ({type(e).__name__}: {e})", path=path,
                           hint="expected `vegeta report -type=json` output") from None
    return summary


def _read_hdrplot(path: str) -> ResultSummary:
    text = read_text(path, "`vegeta report -type=hdrplot` output")
    skips = SkipLog(path)
    spectrum: list[SpectrumPoint] = []
    for line, raw in enumerate(text.splitlines()[1:], 2):
        if not raw.strip():
            continue
        fields = raw.split()
        try:
            value_ms, quantile, count = float(fields[0]), float(fields[1]), int(fields[2])
            if len(fields) != 4 or not 0 <= quantile <= 1:
                raise ValueError
        except (ValueError, IndexError):
            skips.skip(line, "not 'Value(ms) Percentile TotalCount 1/(1-Percentile)'")
            continue
        spectrum.append(SpectrumPoint(quantile * 100, value_ms, count))
    if not spectrum:
        raise ResultsError("no percentile rows could be read", path=path,
                           hint="expected `vegeta report -type=hdrplot` output")
    at = {round(p.percentile, 4): p.value_ms for p in spectrum}
    return ResultSummary(
        path=path, info=_info("vegeta-hdrplot"), requests=spectrum[-1].total_count,
        percentiles_ms={p: at[p] for p in (50.0, 90.0, 95.0, 99.0, 99.9) if p in at},
        spectrum=spectrum, min_ms=at.get(0.0), max_ms=at.get(100.0),
        warnings=skips.warnings(), skipped=skips.count)


def _read_text_report(path: str) -> ResultSummary:
    text = read_text(path, "`vegeta report` (text) output")
    lines = text.splitlines()
    fields: dict[str, dict[str, str]] = {}
    codes: dict[int, int] = {}
    for number, raw in enumerate(lines, 1):
        if raw.strip() == "Error Set:":
            break
        match = _TEXT_LINE.match(raw)
        if match is None:
            if raw.strip():
                raise ResultsError("not a line of vegeta's text report", path=path,
                                   line=number, hint="expected `vegeta report` output whole")
            continue
        label, names = match[1].strip(), [n.strip() for n in match[2].split(",")]
        if label == "Status Codes":
            codes = _status_codes(match[3], path, number)
            continue
        values = [v.strip() for v in match[3].split(",")]
        if len(values) != len(names):
            raise ResultsError(f"{label} names {len(names)} fields and gives {len(values)}",
                               path=path, line=number, hint="expected `vegeta report` output")
        fields[label] = dict(zip(names, values))
        fields[label]["_line"] = str(number)
    for label, field in (("Requests", "total"), ("Latencies", "50")):
        if field not in fields.get(label, {}):
            raise ResultsError(f"no {label} line with a {field!r} field", path=path,
                               hint="expected `vegeta report` output whole")
    lat = fields["Latencies"]
    requests = _text_number(path, fields["Requests"], "total", int)
    duration = fields.get("Duration", {}).get("attack")
    return ResultSummary(
        path=path, info=_info("vegeta-text"), requests=requests,
        errors=sum(n for code, n in codes.items() if not 200 <= code < 400) if codes else None,
        duration_s=None if duration is None else _go_ms(path, fields["Duration"], "attack",
                                                        per=1000),
        rate_rps=_text_number(path, fields["Requests"], "rate", float),
        percentiles_ms={p: _go_ms(path, lat, key) for p, key in TEXT_PERCENTILES.items()
                        if key in lat},
        mean_ms=_go_ms(path, lat, "mean") if "mean" in lat else None,
        min_ms=_go_ms(path, lat, "min") if "min" in lat else None,
        max_ms=_go_ms(path, lat, "max") if "max" in lat else None)


def _status_codes(text: str, path: str, line: int) -> dict[int, int]:
    codes = {}
    for pair in text.split():
        code, _, count = pair.partition(":")
        if not (code.isdigit() and count.isdigit()):
            raise ResultsError(f"status code count {pair!r} is not CODE:COUNT", path=path,
                               line=line, hint="expected `vegeta report` output")
        codes[int(code)] = int(count)
    return codes


def _text_number(path: str, fields: dict[str, str], name: str, kind):
    if name not in fields:
        return None
    try:
        return kind(fields[name])
    except ValueError:
        raise ResultsError(f"{name} {fields[name]!r} is not a number", path=path,
                           line=int(fields["_line"]),
                           hint="expected `vegeta report` output") from None


def _go_ms(path: str, fields: dict[str, str], name: str, per: int = 1) -> float:
    """A Go duration ("1.564328ms", "12.5\u00b5s", "1m2.3s", "0s") as milliseconds (seconds
    with per=1000), summed exactly in decimal so that "4.983ms" is 4.983."""
    text = fields[name]
    terms = _GO_DURATION_TERM.findall(text)
    if not terms or "".join(n + u for n, u in terms) != text:
        raise ResultsError(f"{name} {text!r} is not a Go duration", path=path,
                           line=int(fields["_line"]), hint="expected `vegeta report` output")
    return float(sum(Decimal(n) * _GO_UNIT_MS[u] for n, u in terms) / per)
