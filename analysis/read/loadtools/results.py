"""What every load-tool reader returns: plain data with fixed fields (issue 23).

A reader turns one file of one tool into either

- `RequestSamples`: one row per request, exact (JMeter .jtl, Gatling simulation.log, k6 --out
  json/csv, vegeta encode, hey -o csv, a plain CSV). The import records them into HdrHistogram
  intervals, and from there the pipeline is the `.hlog` one; or
- `ResultSummary`: what a tool printed about the requests (wrk, wrk2, hey's text, vegeta report,
  k6 --summary-export, Locust's stats, an .hgrm): headline percentiles, a percentile spectrum
  where the file has one, per-interval rows where it has them. Shown as they are, never
  re-derived into numbers the file does not hold.

Both carry a `ToolInfo`: which tool and version wrote the file (where the file says), what span
of a request its latency covers, and the load model (open or closed loop) with the evidence for it.

Times are floats in milliseconds; latencies of samples are int64 nanoseconds (every tool's unit
converts to them exactly, except k6's sub-nanosecond float milliseconds, rounded). `native_unit`
is the coarsest of ns/us/ms in which the file's latencies are all whole numbers: the unit the
import records HdrHistogram values in, so that a tool's integer milliseconds stay exact.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# the load model a file shows or a run.yml states
LOAD_MODELS = ("open", "closed", "unknown")
UNITS = ("ns", "us", "ms")
NS_PER_UNIT = {"ns": 1, "us": 1_000, "ms": 1_000_000}
# the longest latency int64 nanoseconds hold (292 years): beyond it a value is damage
MAX_LATENCY_MS = (2**63 - 1) // NS_PER_UNIT["ms"]


@dataclass(frozen=True)
class ToolInfo:
    format: str                      # the format name (FORMATS in analysis.read.loadtools)
    tool: str                        # "JMeter", "Gatling", "k6", "vegeta", "hey", "wrk", ...
    version: str | None = None       # as the file gives it, else None
    measure: str = ""                # the span a latency covers, in a phrase: "send to last byte"
    load_model: str = "unknown"      # open | closed | unknown, as far as the file shows
    load_model_evidence: str | None = None   # what in the file shows it ("executor
                                             # constant-arrival-rate", "-R 2000")


@dataclass
class RequestSamples:
    """One row per request, in file order (not sorted)."""

    path: str
    info: ToolInfo
    start_ms: np.ndarray             # float64: when the request was sent, ms since the Unix
                                     # epoch (`epoch` True) or since the file's own zero
    latency_ns: np.ndarray           # int64 >= 0
    ok: np.ndarray                   # bool: the tool's success flag, else status < 400
    timed_out: np.ndarray            # bool: the tool says this request timed out
    status: np.ndarray | None = None  # int32 HTTP status, 0 where the request got none
    native_unit: str = "ns"          # see the module docstring
    epoch: bool = True
    labels: np.ndarray | None = None  # object array of request names (JMeter label, Gatling
                                      # request name, k6 name tag), None when the file has none
    warnings: list[str] = field(default_factory=list)   # "file:line: what (skipped)"
    skipped: int = 0                  # data lines skipped as unreadable
    first_error: str | None = None    # the first failed request's status/message, as the file
                                      # gives it

    def __len__(self) -> int:
        return int(self.latency_ns.size)


@dataclass
class SpectrumPoint:
    percentile: float                # 0..100
    value_ms: float
    total_count: int | None = None   # requests at or below value_ms, where the file says


def spectrum_upper_bound(spectrum: list[SpectrumPoint] | None, level: float) -> float | None:
    """What a percentile spectrum states the LEVEL percentile is at most: the value of its first
    row at or above the level (at least level % of the requests took that long or less). None
    without a spectrum. A row exactly at the level gives the percentile itself."""
    for point in spectrum or ():
        if point.percentile >= level - 1e-9:
            return point.value_ms
    return None


@dataclass
class ResultSummary:
    """What a tool reported about a run; None wherever the file does not say."""

    path: str
    info: ToolInfo
    requests: int | None = None      # requests completed (answered, any status)
    errors: int | None = None        # of those, failed (non-2xx/3xx or the tool's error count)
    timeouts: int | None = None      # requests the tool counted as timed out
    answered: int | None = None      # of `requests`, those that got an answer (any status); the
                                     # rest failed without one (hey's error distribution)
    duration_s: float | None = None  # the span the tool measured over
    rate_rps: float | None = None    # requests per second as the tool reports it
    percentiles_ms: dict[float, float] = field(default_factory=dict)   # headline: {50.0: 1.2}
    spectrum: list[SpectrumPoint] | None = None   # a full distribution (.hgrm, wrk2, hdrplot)
    corrected: bool | None = None    # the tool corrected for coordinated omission (wrk2)
    mean_ms: float | None = None
    stddev_ms: float | None = None
    min_ms: float | None = None
    max_ms: float | None = None
    # over time (Locust's history): rows of {t_s, rate_rps, errors_rps?, p50_ms, p95_ms, ...}
    intervals: list[dict] | None = None
    warnings: list[str] = field(default_factory=list)
    skipped: int = 0
    # the same run without the correction, where the tool printed both (wrk2 -U): percentiles,
    # spectrum, mean/stddev/max of the latencies timed from the actual send
    uncorrected: ResultSummary | None = None
