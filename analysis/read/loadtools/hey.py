"""hey's files: `-o csv` per request, and its default text summary (issue 23).

Formats (hey 0.1.x):

- `hey-csv`: `hey -o csv ... > requests.csv`: the header
  "response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset",
  then one row per ANSWERED request, in the order they finished. Times are seconds with 4
  decimals (`%4.4f`, so 0.1 ms steps: latencies are whole microseconds, native unit "us" or
  coarser). `offset` is when the request started, in seconds since hey started: `start_ms` is
  offset * 1000 with `epoch` False (the file has no wall-clock time).
- `hey-text`: what hey prints without `-o`: Summary (Total, Slowest, Fastest, Average,
  Requests/sec), a response-time histogram, "Latency distribution" (10% .. 99%, secs), Details,
  "Status code distribution" ([code] N responses) and "Error distribution" ([N] message).
  bench/outside/hey-csv-and-summary.tmpl prints only the Summary lines Total, Slowest and
  Requests/sec and the two distributions, and is read the same way.

What a latency covers: `response-time` runs from just before hey builds and sends the request
(`s := now()`) to the end of reading the body, so it includes getting a connection (DNS+dialup,
when a new connection is made), writing the request, waiting and reading.

`ok`: hey has no success flag; status < 400. A request that got no answer (a timeout of `-t`,
a refused connection) is NOT in the CSV: hey's reporter only keeps rows for answers and counts
the rest in its text's error distribution. So in `hey-csv` `timed_out` is always False, and
failed connections are invisible; the text summary counts them (`timeouts`: the error lines
whose message is Go's client timeout, "Client.Timeout exceeded" / "context deadline exceeded").
In `hey-text`, `requests` counts every request hey finished, answered or not (its Requests/sec
does the same), and `errors` the answers >= 400 plus the requests with an error.

Load model: closed, always. hey runs `-c` workers, each sending its next request only when the
previous one has answered. `-q` limits each worker to a rate, but it stays closed: the limiter
is a ticker per worker that holds one tick, so when an answer takes longer than the interval the
ticks in between are dropped, not queued. The requests that would have been sent during a stall
are never sent, and their waiting time is in no latency: the stall is reported as one slow
request instead of many (coordinated omission). Neither file names hey's version.

`boom-text`: boom (github.com/rakyll/boom), hey's predecessor, printed the same summary until
its output was reformatted in March 2016, with two differences: its progress bar's last line
("400 / 400 ∎∎∎ 100.00 %", after carriage-return redraws) comes before a blank line and
"Summary:", and times end in "secs.". It is read as `hey-text` is, with tool "boom"; like hey,
it counts only answers in its percentiles and a request that got none in its error
distribution. boom from March 2016 on prints what hey prints, and reads as `hey-text`.
"""
from __future__ import annotations

import array
import re

import numpy as np

from analysis.errors import ResultsError
from analysis.read.loadtools.common import SkipLog, native_unit, read_text
from analysis.read.loadtools.results import RequestSamples, ResultSummary, ToolInfo

MEASURE = "request start (incl. connecting) to end of response body"
EVIDENCE = "hey (a fixed number of workers, -c; -q only limits each worker's rate)"
CSV_HEADER = ("response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,"
              "status-code,offset")
CSV_COLUMNS = 8
NS_PER_STEP = 100_000          # hey prints seconds with 4 decimals: 0.1 ms steps
TIMEOUT_TEXT = re.compile(r"Client\.Timeout exceeded|context deadline exceeded|i/o timeout")
# (boom, hey's predecessor, wrote "secs." until March 2016)
_SUMMARY_LINE = re.compile(r"^\s+(Total|Slowest|Fastest|Average|Requests/sec):"
                           r"\s+(\d+(?:\.\d+)?)\s*(?:secs\.?)?\s*$")
_PERCENTILE_LINE = re.compile(r"^\s+(\d+(?:\.\d+)?)% in (\d+(?:\.\d+)?) secs\.?\s*$")
# boom's progress bar (github.com/rakyll/pb) before its summary: "400 / 400 ∎∎∎ 100.00 %",
# redrawn after carriage returns; then a blank line and "Summary:" with "secs." times
_BOOM_PROGRESS = re.compile(rb"\A[\r\s]*\d+ / \d+ [^\n]*%[^\n]*\n\s*\nSummary:\n")
_BOOM_SECS = re.compile(rb"^  Total:\s+\d+\.\d+ secs\.$", re.MULTILINE)
BOOM_EVIDENCE = "boom (a fixed number of workers, -c)"
_STATUS_LINE = re.compile(r"^\s+\[(\d+)\]\s+(\d+) responses\s*$")
_ERROR_LINE = re.compile(r"^\s+\[(\d+)\]\s+(.*)$")


def _info(fmt: str) -> ToolInfo:
    if fmt == "boom-text":
        return ToolInfo(format=fmt, tool="boom", measure=MEASURE, load_model="closed",
                        load_model_evidence=BOOM_EVIDENCE)
    return ToolInfo(format=fmt, tool="hey", measure=MEASURE, load_model="closed",
                    load_model_evidence=EVIDENCE)


def sniff(head: bytes) -> str | None:
    if head.lstrip(b"\xef\xbb\xbf").startswith(CSV_HEADER.encode()):
        return "hey-csv"
    if (_BOOM_PROGRESS.match(head) or head.lstrip().startswith(b"Summary:")) \
            and _BOOM_SECS.search(head) and b"Requests/sec:" in head:
        return "boom-text"
    text = head.lstrip()
    if text.startswith(b"Summary:") and b"Requests/sec:" in text and b"Slowest:" in text:
        return "hey-text"
    return None


def read(path: str, fmt: str, options: dict) -> RequestSamples | ResultSummary:
    if fmt == "hey-csv":
        return _read_csv(path)
    if fmt in ("hey-text", "boom-text"):
        return _read_text(path, fmt)
    raise ResultsError(f"not a hey format: {fmt}", path=path)


def _steps(field: str) -> int:
    """Seconds with up to 4 decimals, as whole 0.1 ms steps (exactly: no float)."""
    whole, _, frac = field.strip().partition(".")
    if not whole.isdigit() or (frac and not frac.isdigit()) or len(frac) > 4:
        raise ValueError(f"{field!r} is not seconds with up to 4 decimals")
    return int(whole) * 10_000 + int((frac + "0000")[:4])


def _read_csv(path: str) -> RequestSamples:
    text = read_text(path, "`hey -o csv` output")
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != CSV_HEADER:
        raise ResultsError("the first line is not hey's CSV header", path=path, line=1,
                           hint=f"expected {CSV_HEADER!r} (`hey -o csv`)")
    latency, offset, status = array.array("q"), array.array("q"), array.array("i")
    skips = SkipLog(path)
    for line, raw in enumerate(lines[1:], 2):
        if not raw.strip():
            continue
        fields = raw.split(",")
        try:
            if len(fields) != CSV_COLUMNS:
                raise ValueError(f"{len(fields)} fields, expected {CSV_COLUMNS}")
            code = int(fields[6])
            if not 0 <= code <= 999:
                raise ValueError(f"status {code} out of range")
            row = (_steps(fields[0]), _steps(fields[7]), code)
        except ValueError as e:
            skips.skip(line, str(e))
            continue
        latency.append(row[0])
        offset.append(row[1])
        status.append(row[2])
    if not latency:
        raise ResultsError("no request rows could be read", path=path,
                           hint=(skips.warnings() or ["the file has only the header"])[0])
    latency_ns = np.frombuffer(latency, dtype=np.int64) * NS_PER_STEP
    codes = np.frombuffer(status, dtype=np.int32).copy()
    failed = np.flatnonzero(codes >= 400)
    return RequestSamples(
        path=path, info=_info("hey-csv"),
        start_ms=np.frombuffer(offset, dtype=np.int64) / 10.0,
        latency_ns=latency_ns, ok=codes < 400, timed_out=np.zeros(codes.size, dtype=bool),
        status=codes, native_unit=native_unit(latency_ns), epoch=False,
        warnings=skips.warnings(), skipped=skips.count,
        first_error=f"status {codes[failed[0]]}" if failed.size else None)


def _read_text(path: str, fmt: str) -> ResultSummary:
    text = read_text(path, f"{_info(fmt).tool}'s text summary")
    values: dict[str, str] = {}
    percentiles: dict[float, float] = {}
    status: dict[int, int] = {}
    errors: dict[str, int] = {}
    section = ""
    for raw in text.splitlines():
        if raw and not raw[0].isspace():
            section = raw.strip().rstrip(":")
            continue
        if section == "Summary" and (m := _SUMMARY_LINE.match(raw)):
            values[m[1]] = m[2]
        elif section == "Latency distribution" and (m := _PERCENTILE_LINE.match(raw)):
            percentiles[float(m[1])] = _ms(m[2])
        elif section == "Status code distribution" and (m := _STATUS_LINE.match(raw)):
            status[int(m[1])] = int(m[2])
        elif section == "Error distribution" and (m := _ERROR_LINE.match(raw)):
            errors[m[2]] = errors.get(m[2], 0) + int(m[1])
    if "Total" not in values or not (status or errors):
        raise ResultsError("no Summary with a status code or error distribution found",
                           path=path, hint="expected what `hey URL` prints (without -o csv)")
    failed = sum(errors.values())
    return ResultSummary(
        path=path, info=_info(fmt),
        requests=sum(status.values()) + failed,
        answered=sum(status.values()),
        errors=sum(n for code, n in status.items() if code >= 400) + failed,
        timeouts=sum(n for msg, n in errors.items() if TIMEOUT_TEXT.search(msg)),
        duration_s=float(values["Total"]), rate_rps=_float(values.get("Requests/sec")),
        percentiles_ms=percentiles, mean_ms=_ms(values.get("Average")),
        min_ms=_ms(values.get("Fastest")), max_ms=_ms(values.get("Slowest")))


def _ms(secs: str | None) -> float | None:
    """hey's seconds as milliseconds, without float noise (0.0138 s is 13.8 ms, not
    13.799999999999999)."""
    return None if secs is None else _steps(secs) / 10


def _float(text: str | None) -> float | None:
    return None if text is None else float(text)
