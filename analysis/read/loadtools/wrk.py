"""wrk and wrk2 console output: a summary of one run, no per-request rows.

wrk (`wrk -t2 -c8 -d10s [--latency] URL > out.txt`) prints

    Running 10s test @ http://host/
      2 threads and 8 connections
      Thread Stats   Avg      Stdev     Max   +/- Stdev
        Latency     3.13ms    2.07ms  28.77ms   92.58%
        Req/Sec     1.37k   295.17     1.79k    58.33%
      Latency Distribution                        (with --latency: 50, 75, 90, 99%)
         50%    2.38ms
      8211 requests in 3.02s, 1.10MB read
      Socket errors: connect 0, read 0, write 0, timeout 10     (only when one is non-zero)
      Non-2xx or 3xx responses: 640                             (only when non-zero)
    Requests/sec:   2721.25
    Transfer/sec:    372.05KB

Times carry wrk's units (us, ms, s, m, h; wrk picks the largest that keeps the number >= 1)
and are converted to milliseconds. A latency is wrk's: from writing the request to the socket
to parsing the end of the response. wrk is closed loop: each of the M connections sends its
next request only when the previous response is in, so the load is the connection count and the
latencies leave out the time a request waited to be sent (coordinated omission).
`requests` = the "N requests" wrk completed (any status); `errors` = every failure wrk counts
in its own summary.errors: non-2xx/3xx responses plus socket connect, read, write errors and
timeouts; `timeouts` = the socket timeouts alone (requests still unanswered after --timeout,
counted by wrk's timer; they are not in the latency statistics).

wrk2 (`wrk -t2 -c8 -d20s -R1000 --latency [-U] URL`, the binary is also called wrk) prints the
same, and also "Thread calibration: ..." lines (once a thread has calibrated, after about 10 s),
and with --latency "Latency Distribution (HdrHistogram - Recorded Latency)": headline
percentiles 50 .. 100% and the whole "Detailed Percentile spectrum" (read into `spectrum`, with
its #[Mean/Max/Total count] footer). The recorded latency runs from the time the request
should have been sent at the -R rate, so it is corrected for coordinated omission
(`corrected=True`); with -U a second "Uncorrected Latency" distribution follows, timed from the
actual send, read into `uncorrected`. wrk2 is open loop at the -R rate, but its output does not
print -R: wrk2 is recognised by its calibration lines or its HdrHistogram distribution, and the
offered rate must come from run.yml. wrk2 resets its histograms at calibration, so the
latencies and the spectrum cover only the responses after it ("Total count" < "N requests" in a
run longer than about 10 s), while "N requests" covers the whole run. A wrk2 run too short to
calibrate and without --latency prints nothing that tells it from wrk: name it with
`format: wrk2`. Neither tool prints its version.
"""
from __future__ import annotations

import math
import re

from analysis.errors import ResultsError
from analysis.read.loadtools import hgrm
from analysis.read.loadtools.results import ResultSummary, ToolInfo
from analysis.read.loadtools.common import SkipLog, read_text_lines

WRK, WRK2 = "wrk", "wrk2"
WHAT = "the console output of wrk or wrk2"
MS_PER_UNIT = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}
_TIME = r"([-+]?\d+(?:\.\d+)?)(us|ms|s|m|h)"

_RUNNING = re.compile(r"^Running (\S+) test @ (.+)$")
_THREADS = re.compile(r"^(\d+) threads and (\d+) connections$")
_CALIBRATION = re.compile(r"^Thread calibration: mean lat\.: .*, rate sampling interval: .*$")
_STATS_HEADER = re.compile(r"^Thread Stats\s+Avg\s+Stdev\s+Max\s+\+/- Stdev$")
_LATENCY_STATS = re.compile(rf"^Latency\s+{_TIME}\s+{_TIME}\s+{_TIME}\s+\S+%$")
_REQ_STATS = re.compile(r"^Req/Sec\s+\S+\s+\S+\s+\S+\s+\S+%$")
_DISTRIBUTION = re.compile(r"^Latency Distribution(?: \(HdrHistogram - (.*)\))?$")
_PERCENTILE = re.compile(rf"^(\d+(?:\.\d+)?)%\s+{_TIME}$")
_SPECTRUM = "Detailed Percentile spectrum:"
_REQUESTS = re.compile(rf"^(\d+) requests in {_TIME}, (\S+) read$")
_SOCKET = re.compile(r"^Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)$")
_NON_2XX = re.compile(r"^Non-2xx or 3xx responses: (\d+)$")
_RATE = re.compile(r"^Requests/sec:\s+(\S+)$")
_TRANSFER = re.compile(r"^Transfer/sec:\s+\S+$")
_RULE = re.compile(r"^-{10,}$")

_WRK2_MARKS = (re.compile(rb"^  Thread calibration: mean lat\.: ", re.M),
               re.compile(rb"^  Latency Distribution \(HdrHistogram - ", re.M),
               re.compile(rb"^  Detailed Percentile spectrum:", re.M))


def sniff(head: bytes) -> str | None:
    lines = head.lstrip().splitlines()
    if len(lines) < 2 or not _RUNNING.match(lines[0].decode("utf-8", "replace").strip()) or \
            not _THREADS.match(lines[1].decode("utf-8", "replace").strip()):
        return None
    return WRK2 if any(mark.search(head) for mark in _WRK2_MARKS) else WRK


def to_ms(number: str, unit: str) -> float:
    return float(number) * MS_PER_UNIT[unit]


class _Run:
    """What the output says, filled in line by line."""

    def __init__(self, path: str, fmt: str):
        self.path = path
        self.fmt = fmt
        self.skips = SkipLog(path)
        self.threads = self.connections = None
        self.calibrated = False
        self.summary = ResultSummary(path=path, info=ToolInfo(format=fmt, tool=fmt))
        self.socket = (0, 0, 0, 0)
        self.non_2xx = 0
        self.current = self.summary   # the distribution the percentile lines belong to


def read(path: str, fmt: str, options: dict) -> ResultSummary:
    lines = read_text_lines(path, WHAT)
    run = _Run(path, fmt)
    number = _read_head(lines, run)
    while number < len(lines):
        number = _read_line(lines, number, run)
    return _finish(run, lines)


def _read_head(lines: list[str], run: _Run) -> int:
    number = 0
    while number < len(lines) and not lines[number].strip():
        number += 1
    running = _RUNNING.match(lines[number].strip()) if number < len(lines) else None
    threads = _THREADS.match(lines[number + 1].strip()) if number + 1 < len(lines) else None
    if running is None or threads is None:
        raise ResultsError("not wrk output: it does not start with 'Running ... test @ URL' "
                           "and 'N threads and M connections'", path=run.path, line=number + 1,
                           hint="save wrk's whole standard output: wrk ... URL > out.txt")
    run.threads, run.connections = int(threads.group(1)), int(threads.group(2))
    return number + 2


def _read_line(lines: list[str], number: int, run: _Run) -> int:
    text = lines[number].strip()
    if text == _SPECTRUM:
        return _read_spectrum(lines, number, run)
    match = _DISTRIBUTION.match(text)
    if match:
        run.current = run.summary if match.group(1) in (None, "Recorded Latency") \
            else _uncorrected(run)
        return number + 1
    for pattern, handle in _HANDLERS:
        match = pattern.match(text)
        if match:
            handle(run, match)
            return number + 1
    if text and not _RULE.match(text) and not _ignored(text):
        run.skips.skip(number + 1, "not a line wrk or wrk2 prints")
    return number + 1


def _ignored(text: str) -> bool:
    return bool(_STATS_HEADER.match(text) or _REQ_STATS.match(text) or _TRANSFER.match(text))


def _uncorrected(run: _Run) -> ResultSummary:
    if run.summary.uncorrected is None:
        run.summary.uncorrected = ResultSummary(path=run.path, info=run.summary.info,
                                                corrected=False)
    return run.summary.uncorrected


def _read_spectrum(lines: list[str], number: int, run: _Run) -> int:
    header = number + 1
    while header < len(lines) and not lines[header].strip():
        header += 1
    if header >= len(lines) or not hgrm.TEXT_HEADER.match(lines[header]):
        raise ResultsError("'Detailed Percentile spectrum:' is not followed by its "
                           "'Value Percentile TotalCount 1/(1-Percentile)' header",
                           path=run.path, line=number + 1,
                           hint="the output ends early or was edited")
    spectrum = hgrm.parse_spectrum(lines, header, run.path, 1.0, run.skips)
    target = run.current
    target.spectrum = spectrum.points
    target.mean_ms, target.stddev_ms = spectrum.mean_ms, spectrum.stddev_ms
    target.max_ms = spectrum.max_ms
    return spectrum.end


def _latency_stats(run: _Run, m: re.Match) -> None:
    values = [to_ms(m.group(i), m.group(i + 1)) for i in (1, 3, 5)]
    if all(math.isfinite(v) for v in values):
        run.summary.mean_ms, run.summary.stddev_ms, run.summary.max_ms = values


def _percentile(run: _Run, m: re.Match) -> None:
    run.current.percentiles_ms[float(m.group(1))] = to_ms(m.group(2), m.group(3))


def _requests(run: _Run, m: re.Match) -> None:
    run.summary.requests = int(m.group(1))
    run.summary.duration_s = to_ms(m.group(2), m.group(3)) / 1000.0


def _socket(run: _Run, m: re.Match) -> None:
    run.socket = tuple(int(m.group(i)) for i in (1, 2, 3, 4))


def _non_2xx(run: _Run, m: re.Match) -> None:
    run.non_2xx = int(m.group(1))


def _rate(run: _Run, m: re.Match) -> None:
    try:
        run.summary.rate_rps = float(m.group(1))
    except ValueError:
        run.summary.rate_rps = None


def _calibration(run: _Run, m: re.Match) -> None:
    run.calibrated = True


_HANDLERS = ((_LATENCY_STATS, _latency_stats), (_PERCENTILE, _percentile),
             (_REQUESTS, _requests), (_SOCKET, _socket), (_NON_2XX, _non_2xx), (_RATE, _rate),
             (_CALIBRATION, _calibration))


def _finish(run: _Run, lines: list[str]) -> ResultSummary:
    summary = run.summary
    if summary.requests is None:
        raise ResultsError("no 'N requests in T, B read' line: the output ends early",
                           path=run.path, line=len(lines),
                           hint="save wrk's whole standard output, up to Transfer/sec")
    summary.timeouts = run.socket[3]
    summary.errors = run.non_2xx + sum(run.socket)
    wrk2 = run.fmt == WRK2
    summary.info = _info(run, wrk2)
    # wrk2 times every latency it prints from the intended send; wrk from the actual one
    summary.corrected = wrk2
    if summary.uncorrected is not None:
        summary.uncorrected.info = summary.info
    summary.warnings, summary.skipped = run.skips.warnings(), run.skips.count
    return summary


def _info(run: _Run, wrk2: bool) -> ToolInfo:
    if not wrk2:
        return ToolInfo(format=WRK, tool="wrk", measure="request written to response parsed",
                        load_model="closed",
                        load_model_evidence=f"wrk -c {run.connections} (closed loop: "
                                            f"{run.connections} connections)")
    shown = "by its calibration lines" if run.calibrated else \
        "by its HdrHistogram distribution" if run.summary.spectrum is not None else \
        "as format: wrk2 was given"
    return ToolInfo(format=WRK2, tool="wrk2",
                    measure="intended send time at the -R rate to response parsed "
                            "(corrected for coordinated omission)",
                    load_model="open",
                    load_model_evidence=f"wrk2 -R (open loop; wrk2 shown {shown}; "
                                        "the -R rate is not printed: give it in run.yml)")
