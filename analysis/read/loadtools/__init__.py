"""Readers for the files of the load tools people already use (issue 23), one module per tool.

    from analysis.read.loadtools import read_results, detect_format
    result = read_results(path, format=None, options=None)   # RequestSamples | ResultSummary

The format is detected from the file's content, never from its name (`detect_format`); a
`format` forces one. `options` carries what a file cannot say about itself (the plain CSV's
columns and units). Every reader returns the plain data of `results.py` and raises
`ResultsError` naming the file (and line) when nothing usable remains; lines it cannot read are
skipped, counted and listed in `warnings`.

Each reader module has `sniff(head: bytes) -> str | None` (the format name it recognises in the
first bytes of a file, or None) and `read(path, fmt, options) -> RequestSamples | ResultSummary`;
it may have `refuse(head: bytes) -> (what, hint) | None` for a file of its tool that holds no
result (Locust's PREFIX_failures.csv), refused by name rather than as unknown.
"""
from __future__ import annotations

import importlib
import os
from typing import Any, Mapping

from analysis.errors import ResultsError
from analysis.read.loadtools.results import RequestSamples, ResultSummary

# format name -> (reader module, what it is); the order is the order formats are tried in
FORMATS: dict[str, tuple[str, str]] = {
    "jmeter-jtl": ("jmeter", "JMeter .jtl, CSV (with or without the header line)"),
    "jmeter-xml": ("jmeter", "JMeter .jtl, XML"),
    "gatling-log": ("gatling", "Gatling simulation.log (text, 2.x and 3.x)"),
    "k6-json": ("k6", "k6 --out json (NDJSON points)"),
    "k6-csv": ("k6", "k6 --out csv"),
    "k6-summary": ("k6", "k6 --summary-export JSON"),
    "vegeta-csv": ("vegeta", "vegeta encode --to csv"),
    "vegeta-json": ("vegeta", "vegeta encode --to json"),
    "vegeta-report": ("vegeta", "vegeta report -type=json"),
    "vegeta-hdrplot": ("vegeta", "vegeta report -type=hdrplot"),
    "vegeta-text": ("vegeta", "vegeta report (text, the default; every v12 layout)"),
    "hey-csv": ("hey", "hey -o csv"),
    "hey-text": ("hey", "hey's text summary"),
    "boom-text": ("hey", "boom's text summary (before March 2016: a progress bar, \"secs.\")"),
    "wrk": ("wrk", "wrk's console output (with or without --latency)"),
    "wrk2": ("wrk", "wrk2's console output (with --latency: the whole percentile spectrum)"),
    "locust-stats": ("locust", "Locust --csv PREFIX: PREFIX_stats.csv"),
    "locust-history": ("locust", "Locust --csv PREFIX: PREFIX_stats_history.csv"),
    "locust-requests": ("locust", "Locust 0.x --csv=PREFIX: PREFIX_requests.csv"),
    "locust-distribution": ("locust", "Locust 0.x --csv=PREFIX: PREFIX_distribution.csv"),
    "hgrm": ("hgrm", "HdrHistogram percentile distribution (.hgrm)"),
    "csv": ("plaincsv", "a plain CSV: timestamp, latency, optional status (units in run.yml)"),
}
SNIFF_BYTES = 64 * 1024
# What a format leaves out that its numbers would otherwise be taken to include: printed in the
# methodology beside the tool (docs/loadtools.md says more)
CAVEATS = {
    "hey-csv": "hey's CSV leaves out the requests that got no answer (timeouts, refused "
               "connections): they are in no count here; its text summary counts them",
    "wrk2": "wrk2 resets its histogram after its calibration (about 10 s plus 5 ms per "
            "connection): the spectrum leaves out the first seconds of the run",
    "k6-csv": "k6's CSV stamps whole seconds by default: the send times, and so the "
              "intervals, are exact to 1 s only",
    "gatling-log": "Gatling 2.3 logs a timed-out request with end = start (0 ms), as its own "
                   "report shows it",
}
# Per-request formats that leave out the requests that got no answer (issue 32): without the
# tool's summary of the same run (run.yml `summary:`) a failed request looks never sent.
LEAVES_OUT_FAILED = frozenset({"hey-csv"})
# The unit a per-request format's latencies are whole numbers in (None: a summary, never
# recorded into histograms). A plain CSV's is its `latency_unit` (seconds: microseconds).
NATIVE_UNITS = {"jmeter-jtl": "ms", "jmeter-xml": "ms", "gatling-log": "ms", "k6-json": "us",
                "k6-csv": "us", "vegeta-csv": "ns", "vegeta-json": "ns", "hey-csv": "us"}
READER_MODULES = tuple(dict.fromkeys(module for module, _ in FORMATS.values()))


def _module(name: str):
    return importlib.import_module(f"analysis.read.loadtools.{name}")


def detect_format(path: str | os.PathLike) -> str:
    """The format of a file, from its first bytes. Raises ResultsError when it is empty, or
    no reader recognises it."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        head = f.read(SNIFF_BYTES)
    if not head.strip():
        raise ResultsError("the file is empty", path=path)
    for name in READER_MODULES:
        if name == "plaincsv":
            continue     # a plain CSV is named in run.yml (it says what its columns are)
        fmt = _module(name).sniff(head)
        if fmt is not None:
            return fmt
        refusal = getattr(_module(name), "refuse", lambda _: None)(head)
        if refusal is not None:
            raise ResultsError(f"this is {refusal[0]}", path=path, hint=refusal[1])
    raise ResultsError("not a result file of a known load tool",
                       path=path, hint="formats: " + ", ".join(FORMATS)
                       + "; name one with `format:` in run.yml or --format")


def read_results(path: str | os.PathLike, format: str | None = None,
                 options: Mapping[str, Any] | None = None) -> RequestSamples | ResultSummary:
    path = os.fspath(path)
    if format is not None and format not in FORMATS:
        raise ResultsError(f"unknown format {format!r}", path=path,
                           hint="one of " + ", ".join(FORMATS))
    fmt = format or detect_format(path)
    return _module(FORMATS[fmt][0]).read(path, fmt, dict(options or {}))


def native_unit(fmt: str, options: Mapping[str, Any] | None = None) -> str | None:
    """The histogram unit of a per-request format (NATIVE_UNITS), None for a summary."""
    if fmt == "csv":
        unit = (options or {}).get("latency_unit", "ms")
        return {"s": "us"}.get(unit, unit)
    return NATIVE_UNITS.get(fmt)
