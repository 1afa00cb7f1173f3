"""Gatling's simulation.log (`gatling-log`), in the text layouts of Gatling 2.0 to 3.12; one
sample per REQUEST record.

The layouts (tab-separated; from Gatling's LogFileDataWriter at each release):

    2.0, 2.1   <scenario> <userId> REQUEST <groups> <name> <requestStart> <requestEnd>
               <responseStart> <responseEnd> OK|KO <message> [extra...]
               RUN line: <class> <id> RUN <start> <description> 2.0
    2.2, 2.3   REQUEST <scenario> <userId> <groups> <name> <start> <end> OK|KO <message> [extra...]
               RUN <class> <userDefinedId> <defaultId> <start> <description> 2.0
    3.0 - 3.3  REQUEST <userId> <groups> <name> <start> <end> OK|KO <message>
    3.4 - 3.12 REQUEST <groups> <name> <start> <end> OK|KO <message>
               RUN <class> <simulationId> <start> <description> <Gatling version>

A request without a message has " " there; a log whose trailing whitespace was trimmed ends
such a record right after OK/KO: read with an empty message (any layout).

`<groups>` is the comma-separated group path (empty outside a group); the label is Gatling's
own "group / name". GROUP records (a group's cumulated time) and ERROR records are not
requests; ASSERTION records hold Gatling's assertions, base64.

What a latency is: end - start, integer ms (Gatling's response time: from just before the
request is written to the last byte of the response; 2.0/2.1: responseEnd - requestStart).
native_unit "ms". start_ms = start, ms since the epoch. `ok`: the record's OK/KO, Gatling's
verdict after its checks (by default status 2xx/304). `timed_out`: a KO whose message names a
timeout (3.x "Request timeout to <host> after N ms", 2.x "j.u.c.TimeoutException: Request
timeout ..."); Gatling 2.3 logs such a request with end = start, so its latency reads 0. The
log carries no HTTP status (only a status check's KO message names one): `status` is None.

Version: the RUN record's last field is Gatling's version from 3.0 on; 2.x wrote the log
format's "2.0" there, so version is None and the layout names the release range.

Load model: "unknown". The injection profile (open `injectOpen`/`inject(rampUsers...)` or
closed `injectClosed(constantConcurrentUsers...)`) lives in the simulation's code, not in the
log. USER records give each virtual user's START and END time (with a user id before 3.4),
so arrivals and the number of active users over time can be counted; but a closed injection
(a new user starts when one ends) and an open one at the same arrival rate write the same kind
of records, and a user may send many requests, so the file does not tell which it was.

Gatling 3.13.0 and later write simulation.log in a binary format that only the same Gatling
version reads back: such a file gets one ResultsError naming the version from its header.
"""
from __future__ import annotations

import re
from array import array

import numpy as np

from analysis.errors import ResultsError
from analysis.read.loadtools.results import MAX_LATENCY_MS, RequestSamples, ToolInfo
from analysis.read.loadtools.common import SkipLog, check_text, read_head

TOOL = "Gatling"
MEASURE = "response time: end - start, request sent to last byte of the response"
RECORDS = ("RUN", "USER", "REQUEST", "GROUP", "ERROR", "ASSERTION")
LAST_TEXT_VERSION = "3.12.0"
FIRST_BINARY_VERSION = "3.13.0"
_TIMEOUT = re.compile(r"timeout|timed out", re.IGNORECASE)
_VERSION = re.compile(rb"\d+\.\d+(?:\.\d+)?[-.\w]*")

# the fields of a REQUEST line, by layout: (groups, name, start, end, status, message, width);
# width is the least number of fields (2.x may add extra-info fields after the message)
_REQUEST_FIELDS = {
    "2.0": (3, 4, 5, 8, 9, 10, 11),
    "2.2": (3, 4, 5, 6, 7, 8, 9),
    "3.0": (2, 3, 4, 5, 6, 7, 8),
    "3.4": (1, 2, 3, 4, 5, 6, 7),
}
_RANGES = {"2.0": "2.0-2.1", "2.2": "2.2-2.3", "3.0": "3.0-3.3", "3.4": "3.4-3.12"}


def sniff(head: bytes) -> str | None:
    if _binary_version(head) is not None:
        return "gatling-log"     # so that read() names it, rather than "not a known format"
    if b"\x00" in head:
        return None
    for raw in head.split(b"\n")[:50]:
        fields = raw.rstrip(b"\r").split(b"\t")
        if fields[0] == b"ASSERTION":
            continue
        # the RUN record's start time: 3rd from the end (2.2 and later), 4th field (2.0, 2.1)
        if fields[0] == b"RUN" and len(fields) in (6, 7) and fields[-3].isdigit():
            return "gatling-log"
        if len(fields) == 6 and fields[2] == b"RUN" and fields[3].isdigit():
            return "gatling-log"
        return None
    return None


def _binary_version(head: bytes) -> str | None:
    """The Gatling version at the start of a binary simulation.log: a Run record (0), then the
    version as an int32 length, Latin-1 bytes and a coder byte."""
    if len(head) < 6 or head[0] != 0:
        return None
    size = int.from_bytes(head[1:5], "big")
    if not 1 <= size <= 40 or len(head) < 6 + size:
        return None
    text = head[5:5 + size]
    if not _VERSION.fullmatch(text) or head[5 + size] not in (0, 1):
        return None
    return text.decode("ascii")


def read(path: str, fmt: str, options: dict) -> RequestSamples:
    head = read_head(path)
    version = _binary_version(head)
    if version is not None:
        raise ResultsError(
            f"a binary simulation.log (Gatling {version}): Gatling writes it in binary from "
            f"{FIRST_BINARY_VERSION} on, and only Gatling {version} itself reads it back",
            path=path,
            hint=f"run the simulation with Gatling {LAST_TEXT_VERSION} or older, which write "
                 "the text log loadcurve reads; the HTML report's js/global_stats.json and "
                 "stats.json hold only Gatling's own summary statistics, not the requests")
    check_text(path, head, "a simulation.log from Gatling's results folder")
    return _read_text(path)


class _Run:
    layout: str | None = None
    version: str | None = None


def _read_text(path: str) -> RequestSamples:
    skips = SkipLog(path)
    run = _Run()
    start, latency = array("q"), array("q")
    ok, timed_out = bytearray(), bytearray()
    labels: list[str] = []
    interned: dict[str, str] = {}
    first_error = None
    with open(path, "rb") as f:
        for number, data in enumerate(f, 1):
            try:
                raw = data.decode("utf-8")
            except UnicodeDecodeError:
                raise ResultsError("the file is not UTF-8 text", path=path, line=number,
                                   hint="a simulation.log as Gatling writes it") from None
            line = raw.rstrip("\r\n")
            if not line:
                continue
            fields = line.split("\t")
            kind = fields[0] if fields[0] in RECORDS else (
                fields[2] if len(fields) > 2 and fields[2] in RECORDS else None)
            if kind is None:
                skips.skip(number, f"not a Gatling record ({line[:40]!r})")
                continue
            if kind == "RUN":
                _read_run(run, fields)
                continue
            if kind != "REQUEST":
                continue
            sample = _request(run, fields, raw.endswith("\n"))
            if isinstance(sample, str):
                skips.skip(number, sample)
                continue
            begin, end, good, name, message = sample
            start.append(begin)
            latency.append(end - begin)
            ok.append(good)
            timed_out.append(not good and bool(_TIMEOUT.search(message)))
            if not good and first_error is None:
                first_error = message
            labels.append(interned.setdefault(name, name))
    if not start:
        raise ResultsError("no usable REQUEST record in the file", path=path,
                           hint="a simulation.log of a Gatling run that sent requests")
    layout = run.layout or "3.4"
    return RequestSamples(
        path=path,
        info=ToolInfo(format="gatling-log", tool=TOOL, version=run.version,
                      measure=MEASURE + f" (log layout of Gatling {_RANGES[layout]})",
                      load_model="unknown", load_model_evidence=None),
        start_ms=np.frombuffer(start, np.int64).astype(np.float64),
        latency_ns=np.frombuffer(latency, np.int64) * 1_000_000,
        ok=np.frombuffer(bytes(ok), np.uint8).astype(bool),
        timed_out=np.frombuffer(bytes(timed_out), np.uint8).astype(bool),
        status=None, native_unit="ms", epoch=True, labels=np.array(labels, dtype=object),
        warnings=skips.warnings(), skipped=skips.count, first_error=first_error)


def _read_run(run: _Run, fields: list[str]) -> None:
    if fields[0] != "RUN":
        run.layout = "2.0"
    elif fields[-1] == "2.0" and len(fields) == 7:
        run.layout = "2.2"
    else:
        run.version = fields[-1].strip() or None
        major_minor = re.match(r"(\d+)\.(\d+)", run.version or "")
        old_3 = major_minor and (int(major_minor[1]), int(major_minor[2])) < (3, 4)
        run.layout = "3.0" if old_3 else "3.4"


def _request(run: _Run, fields: list[str], whole: bool):
    """(start, end, ok, label, message) of a REQUEST record, or what is wrong with it."""
    layout = run.layout = run.layout or _layout_of(fields)    # one log, one layout
    groups, name, begin, end, status, message, width = _REQUEST_FIELDS[layout]
    if len(fields) == width - 1:
        # Gatling writes " " where a request has no message: a log whose trailing whitespace
        # was trimmed (an editor, a commit hook) ends such records right after OK/KO
        fields = fields + [""]
    if len(fields) < width or (layout in ("3.0", "3.4") and len(fields) != width):
        cut = "" if whole else ", the line is cut off"
        return (f"REQUEST record with {len(fields)} fields, Gatling {_RANGES[layout]} writes "
                f"{width}{cut}")
    if not (fields[begin].isdigit() and fields[end].isdigit()):
        return f"REQUEST times {fields[begin][:20]!r}, {fields[end][:20]!r} are not whole ms"
    if fields[status] not in ("OK", "KO"):
        return f"REQUEST status {fields[status][:20]!r} is neither OK nor KO"
    t0, t1 = int(fields[begin]), int(fields[end])
    if t1 < t0:
        return f"REQUEST ends ({t1}) before it starts ({t0})"
    if t1 - t0 > MAX_LATENCY_MS:
        return f"REQUEST lasts {t1 - t0} ms, more than any latency can"
    label = " / ".join([g for g in fields[groups].split(",") if g] + [fields[name]])
    return t0, t1, fields[status] == "OK", label, fields[message].strip()


def _layout_of(fields: list[str]) -> str:
    """A log without its RUN record: the layout from where the REQUEST record's OK/KO sits
    after its two times (its message may be missing, so not from its field count)."""
    if fields[0] != "REQUEST":
        return "2.0"
    for layout in ("3.4", "3.0", "2.2"):
        status = _REQUEST_FIELDS[layout][4]
        if len(fields) > status and fields[status] in ("OK", "KO") and \
                fields[status - 1].isdigit() and fields[status - 2].isdigit():
            return layout
    return "2.2" if len(fields) >= 9 else "3.0" if len(fields) == 8 else "3.4"
