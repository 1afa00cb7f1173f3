"""The reader of the load generator's `<load>.<rep>.counts.json`: one typed, checked object.

    from analysis.read.counts import read_counts
    c = read_counts(path)        # CountsError (naming the file) when unusable
    c.window.sent, c.window.completed, c.in_flight.window_mean, c.intervals[0].phase, ...

Two schema versions are read:

- **2** (bench/README.md, "The format"): the window population (requests whose *intended* send
  time falls in the window) with its outcomes, `sent = completed + timed_out + errors` checked;
  the drain; in-flight figures; 1 s intervals aligned with the `.hlog`; CPU shares of the
  generator, the machine and the server; send lag; the host check before the cell.
- **1** (the first demo, runs/pool-vs-virtual/*/r*.counts.json): there `window.completed` counted
  the 200 replies that *arrived* during the window, whatever request they answered, so it is not
  the window population's outcome. It is mapped to `server_completions_window` (the server's
  completions during the window), and `window.completed / timed_out / errors` are None, as are
  every v2-only field. `window.sent` and `window.not_sent` mean the same in both versions.

Since issue 32 a v2 file may carry `warmup: {mode, min_s, max_s, used_s, reached}`: the warm-up
the generator chose at run time (`auto`: until its last seconds were steady, between min_s and
max_s; `fixed`: min_s) and whether it was steady. `used_s` must be the top-level `warmup_s` and
the window's `start_s`. Older files have none (`Counts.warmup` is None).

Interval counts (v2) are taken as events of *any* request that fall in the interval (sends,
completions, timeouts, errors), so the window-phase intervals' `completed` add up to the server's
completions during the window. Unknown keys are allowed (the generator may add figures).

Nothing here computes a verdict: analysis/derive/overload.py does, from these plain figures.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass

from analysis.errors import CountsError

MAX_BYTES = 16 * 1024 * 1024   # a counts file is a few KB; anything this large is not one
PHASES = ("warmup", "window", "drain")
WARMUP_MODES = ("auto", "fixed")
SCHEMA_VERSIONS = (1, 2)


@dataclass(frozen=True)
class WindowCounts:
    start_s: float | None          # seconds since the .hlog's StartTime (v2)
    end_s: float | None
    start_epoch_ms: int | None
    end_epoch_ms: int | None
    sent: int                      # window requests sent (intended send time in the window)
    completed: int | None          # answered with a 200 within the timeout (v2)
    timed_out: int | None          # no answer within the timeout (v2)
    errors: int | None             # non-200 or connection failure (v2)
    not_sent: int                  # due in the window but never sent (generator behind, cap)

    @property
    def duration_s(self) -> float | None:
        return None if self.start_s is None or self.end_s is None else self.end_s - self.start_s


@dataclass(frozen=True)
class InFlight:
    at_window_start: int | None
    at_window_end: int | None
    window_mean: float | None
    window_max: int | None


@dataclass(frozen=True)
class IntervalCounts:
    t_s: float                     # interval start, seconds since the .hlog's StartTime
    length_s: float
    phase: str                     # warmup | window | drain
    sent: int
    completed: int
    timed_out: int
    errors: int
    in_flight_mean: float
    in_flight_max: int


@dataclass(frozen=True)
class SendLag:
    """How late the generator sent window requests against their schedule, in microseconds."""
    p50: float | None
    p99: float | None
    p999: float | None
    max: float | None
    count: int | None


@dataclass(frozen=True)
class HostCheck:
    busy_share_before: float | None
    loadavg_1m_before: float | None
    waited_s: float | None
    verdict: str | None            # quiet | busy


@dataclass(frozen=True)
class Warmup:
    """The warm-up before the window (issue 32): how it was chosen and what it came to."""
    mode: str                      # auto | fixed
    min_s: float
    max_s: float
    used_s: float                  # whole seconds of warm-up the cell had (= window.start_s)
    reached: bool                  # its last seconds were steady by the generator's rule


@dataclass(frozen=True)
class Counts:
    path: str
    schema_version: int
    offered_rate: float | None
    warmup_s: float | None
    duration_s: float | None
    timeout_s: float | None
    value_unit: str | None
    window: WindowCounts
    drain_s: float | None
    in_flight: InFlight
    intervals: tuple[IntervalCounts, ...]
    server_completions_window: int | None   # all 200 replies that arrived in the window
    generator_cpu_s_window: float | None
    generator_cpu_share_window: float | None   # shares: of the whole machine (all cores), 0..1
    machine_cpu_share_window: float | None
    machine_cores: int | None
    server_cpu_share_window: float | None
    send_lag_us_window: SendLag
    host_check: HostCheck | None
    warmup: Warmup | None = None   # issue 32; None in older files

    def window_intervals(self) -> tuple[IntervalCounts, ...]:
        return tuple(iv for iv in self.intervals if iv.phase == "window")

    def window_epoch_ns(self) -> tuple[int, int] | None:
        """The window as (start, end) epoch nanoseconds, for read_jfr(window=...); None for
        v1 files (there the .hlog covers only the window: use its first interval's start)."""
        w = self.window
        if w.start_epoch_ms is None or w.end_epoch_ms is None:
            return None
        return w.start_epoch_ms * 1_000_000, w.end_epoch_ms * 1_000_000


# -- reading ---------------------------------------------------------------------------------

def read_counts(path: str | os.PathLike) -> Counts:
    """Read and check one counts file; CountsError naming the file (and line:column for bad
    JSON, the key for a wrong value) on any problem."""
    path = os.fspath(path)
    try:
        size = os.path.getsize(path)
        if size > MAX_BYTES:
            raise CountsError(f"file is {size} bytes, more than a counts file can be "
                              f"({MAX_BYTES} bytes)", path=path)
        with open(path, "rb") as f:
            raw = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise CountsError(f"cannot read: {exc.strerror or exc}", path=path) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CountsError("not UTF-8 text", path=path, offset=exc.start) from None
    try:
        doc = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        raise CountsError(f"column {exc.colno}: invalid JSON: {exc.msg}", path=path,
                          line=exc.lineno) from None
    except ValueError as exc:   # from the hooks
        raise CountsError(f"invalid JSON: {exc}", path=path) from None
    return parse_counts(doc, path)


def _reject_constant(name):
    raise ValueError(f"{name} is not a number JSON allows")


def _no_duplicates(pairs):
    # dict() builds the object in C (it is called for every interval row); only an object
    # that came out shorter than its pairs is walked, for the first key given twice
    out = dict(pairs)
    if len(out) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"key {key!r} appears twice in one object")
            seen.add(key)
    return out


class _Doc:
    """Typed access to the parsed JSON; every problem raises CountsError naming the key."""

    def __init__(self, path: str):
        self.path = path

    def fail(self, key: str, what: str):
        raise CountsError(f"{key}: {what}", path=self.path)

    def _get(self, parent: dict, key: str, prefix: str, required: bool, fits, expected: str):
        """parent[key] when `fits` it; None when absent or null and not required; else fail."""
        v = parent.get(key)
        if v is None and not required:
            return None
        if not fits(v):
            got = _show(v) if type(v) in (int, float, str) else _kind(v)
            self.fail(prefix + key, "missing" if key not in parent else
                      f"expected {expected}, got {got}")
        return v

    def obj(self, parent: dict, key: str, prefix: str = "", required: bool = True):
        return self._get(parent, key, prefix, required, lambda v: isinstance(v, dict),
                         "an object")

    def count(self, parent: dict, key: str, prefix: str = "", required: bool = True):
        return self._get(parent, key, prefix, required, lambda v: type(v) is int and v >= 0,
                         "a whole number >= 0")

    def number(self, parent: dict, key: str, prefix: str = "", required: bool = True):
        v = self._get(parent, key, prefix, required,
                      lambda v: type(v) in (int, float) and math.isfinite(v) and v >= 0,
                      "a number >= 0")
        return None if v is None else float(v)

    def share(self, parent: dict, key: str, prefix: str = "", required: bool = True):
        v = self.number(parent, key, prefix, required)
        if v is not None and v > 1.0:
            self.fail(prefix + key, f"a CPU share of the whole machine is at most 1, got {v:g}")
        return v

    def flag(self, parent: dict, key: str, prefix: str = "", required: bool = True):
        return self._get(parent, key, prefix, required, lambda v: type(v) is bool,
                         "true or false")

    def text(self, parent: dict, key: str, prefix: str = "", required: bool = True):
        return self._get(parent, key, prefix, required, lambda v: isinstance(v, str),
                         "a string")


def _kind(v) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false",
            type(None): "null"}.get(type(v), "a number")


def _show(v) -> str:
    return json.dumps(v)[:40]


def parse_counts(doc, path: str) -> Counts:
    """Check a parsed counts document (see the module docstring) and type it."""
    d = _Doc(path)
    if not isinstance(doc, dict):
        raise CountsError(f"expected a JSON object at the top, got {_kind(doc)}", path=path)
    version = doc.get("schema_version")
    if type(version) is not int or version not in SCHEMA_VERSIONS:
        d.fail("schema_version", f"expected one of {', '.join(map(str, SCHEMA_VERSIONS))}, "
               f"got {_show(version)}")
    common = dict(
        path=path, schema_version=version,
        offered_rate=d.number(doc, "offered_rate", required=False),
        warmup_s=d.number(doc, "warmup_s", required=False),
        duration_s=d.number(doc, "duration_s", required=False),
        timeout_s=d.number(doc, "timeout_s", required=False),
        value_unit=d.text(doc, "value_unit", required=False),
        send_lag_us_window=_send_lag(d, doc),
    )
    if version == 1:
        return _v1(d, doc, common)
    return _v2(d, doc, common)


def _send_lag(d: _Doc, doc: dict) -> SendLag:
    lag = d.obj(doc, "send_lag_us_window", required=doc.get("schema_version") == 2)
    if lag is None:
        return SendLag(None, None, None, None, None)
    p = "send_lag_us_window."
    return SendLag(*(d.number(lag, k, p, required=False) for k in ("p50", "p99", "p999", "max")),
                   d.count(lag, "count", p, required=False))


def _v1(d: _Doc, doc: dict, common: dict) -> Counts:
    w = d.obj(doc, "window")
    sent = d.count(w, "sent", "window.")
    replies = d.count(w, "completed", "window.")
    window = WindowCounts(None, None, None, None, sent, None, None, None,
                          d.count(doc, "not_sent", required=False) or 0)
    return Counts(**common, window=window, drain_s=None,
                  in_flight=InFlight(None, None, None, None), intervals=(),
                  server_completions_window=replies,
                  generator_cpu_s_window=None, generator_cpu_share_window=None,
                  machine_cpu_share_window=None, machine_cores=None,
                  server_cpu_share_window=None, host_check=None)


def _v2(d: _Doc, doc: dict, common: dict) -> Counts:
    w = d.obj(doc, "window")
    p = "window."
    window = WindowCounts(
        start_s=d.number(w, "start_s", p), end_s=d.number(w, "end_s", p),
        start_epoch_ms=d.count(w, "start_epoch_ms", p), end_epoch_ms=d.count(w, "end_epoch_ms", p),
        sent=d.count(w, "sent", p), completed=d.count(w, "completed", p),
        timed_out=d.count(w, "timed_out", p), errors=d.count(w, "errors", p),
        not_sent=d.count(w, "not_sent", p))
    if window.end_s <= window.start_s:
        d.fail("window", f"end_s {window.end_s:g} is not after start_s {window.start_s:g}")
    if window.end_epoch_ms <= window.start_epoch_ms:
        d.fail("window", "end_epoch_ms is not after start_epoch_ms")
    outcomes = window.completed + window.timed_out + window.errors
    if window.sent != outcomes:
        d.fail("window", f"sent {window.sent} != completed {window.completed} + timed_out "
               f"{window.timed_out} + errors {window.errors} (= {outcomes}): every window "
               f"request must have one outcome")
    fl = d.obj(doc, "in_flight")
    p = "in_flight."
    in_flight = InFlight(d.count(fl, "at_window_start", p), d.count(fl, "at_window_end", p),
                         d.number(fl, "window_mean", p), d.count(fl, "window_max", p))
    if in_flight.window_mean > in_flight.window_max:
        d.fail("in_flight", f"window_mean {in_flight.window_mean:g} is above window_max "
               f"{in_flight.window_max}")
    intervals = _intervals(d, doc, window)
    gen = d.obj(doc, "generator")
    machine = d.obj(doc, "machine")
    # null when the generator was not told the server's pid (a server given by URL, issue 24)
    server = d.obj(doc, "server", required=False) or {}
    return Counts(
        **common, window=window, drain_s=d.number(doc, "drain_s"), in_flight=in_flight,
        intervals=intervals,
        server_completions_window=sum(iv.completed for iv in intervals if iv.phase == "window"),
        generator_cpu_s_window=d.number(gen, "cpu_s_window", "generator."),
        generator_cpu_share_window=d.share(gen, "cpu_share_window", "generator."),
        machine_cpu_share_window=d.share(machine, "cpu_share_window", "machine."),
        machine_cores=d.count(machine, "cores", "machine.", required=False),
        server_cpu_share_window=d.share(server, "cpu_share_window", "server.", required=False),
        host_check=_host_check(d, doc), warmup=_warmup(d, doc, window))


def _intervals(d: _Doc, doc: dict, window: WindowCounts) -> tuple[IntervalCounts, ...]:
    rows = doc.get("intervals")
    if not isinstance(rows, list):
        d.fail("intervals", "missing" if "intervals" not in doc else
               f"expected a list, got {_kind(rows)}")
    out = []
    for i, row in enumerate(rows):
        iv = _well_formed_interval(row)
        if iv is not None and not (out and iv.t_s < out[-1].t_s):
            out.append(iv)
            continue
        p = f"intervals[{i}]."
        if not isinstance(row, dict):
            d.fail(f"intervals[{i}]", f"expected an object, got {_kind(row)}")
        phase = d.text(row, "phase", p)
        if phase not in PHASES:
            d.fail(p + "phase", f"expected one of {', '.join(PHASES)}, got {_show(phase)}")
        iv = IntervalCounts(
            t_s=d.number(row, "t_s", p), length_s=d.number(row, "length_s", p), phase=phase,
            sent=d.count(row, "sent", p), completed=d.count(row, "completed", p),
            timed_out=d.count(row, "timed_out", p), errors=d.count(row, "errors", p),
            in_flight_mean=d.number(row, "in_flight_mean", p),
            in_flight_max=d.count(row, "in_flight_max", p))
        if out and iv.t_s < out[-1].t_s:
            d.fail(p + "t_s", f"{iv.t_s:g} comes before the previous interval's {out[-1].t_s:g}")
        out.append(iv)
    return tuple(out)


def _well_formed_interval(row) -> IntervalCounts | None:
    """An interval row whose every field has its type and range, checked in one expression
    (a counts file has one row a second, and typed access key by key was most of reading it);
    None for any other row, which _intervals then reads key by key to name what is wrong."""
    if type(row) is not dict:
        return None
    get = row.get
    t_s, length_s, mean = get("t_s"), get("length_s"), get("in_flight_mean")
    sent, completed, timed_out = get("sent"), get("completed"), get("timed_out")
    errors, top, phase = get("errors"), get("in_flight_max"), get("phase")
    if not (type(t_s) in _NUMBER and type(length_s) in _NUMBER and type(mean) in _NUMBER
            and type(sent) is int and type(completed) is int and type(timed_out) is int
            and type(errors) is int and type(top) is int and type(phase) is str
            and phase in PHASES and sent >= 0 and completed >= 0 and timed_out >= 0
            and errors >= 0 and top >= 0 and t_s >= 0 and length_s >= 0 and mean >= 0
            and math.isfinite(t_s) and math.isfinite(length_s) and math.isfinite(mean)):
        return None
    return IntervalCounts(
        t_s=float(t_s), length_s=float(length_s), phase=phase, sent=sent, completed=completed,
        timed_out=timed_out, errors=errors, in_flight_mean=float(mean), in_flight_max=top)


_NUMBER = (int, float)


def _warmup(d: _Doc, doc: dict, window: WindowCounts) -> Warmup | None:
    w = d.obj(doc, "warmup", required=False)
    if w is None:
        return None
    p = "warmup."
    mode = d.text(w, "mode", p)
    if mode not in WARMUP_MODES:
        d.fail(p + "mode", f"expected auto or fixed, got {_show(mode)}")
    warmup = Warmup(mode, d.number(w, "min_s", p), d.number(w, "max_s", p),
                    d.number(w, "used_s", p), d.flag(w, "reached", p))
    if not warmup.min_s <= warmup.max_s:
        d.fail("warmup", f"min_s {warmup.min_s:g} is above max_s {warmup.max_s:g}")
    if not warmup.used_s <= warmup.max_s:
        d.fail("warmup", f"used_s {warmup.used_s:g} is above max_s {warmup.max_s:g}")
    if warmup.used_s < warmup.min_s:
        d.fail("warmup", f"used_s {warmup.used_s:g} is below min_s {warmup.min_s:g}")
    top = d.number(doc, "warmup_s", required=False)
    for name, value in (("warmup_s", top), ("window.start_s", window.start_s)):
        if value is not None and value != warmup.used_s:
            d.fail("warmup", f"used_s {warmup.used_s:g} is not {name} {value:g}: the window starts "
                   f"where the warm-up ends")
    return warmup


def _host_check(d: _Doc, doc: dict) -> HostCheck:
    h = d.obj(doc, "host_check")
    p = "host_check."
    verdict = d.text(h, "verdict", p)
    if verdict not in ("quiet", "busy"):
        d.fail(p + "verdict", f"expected quiet or busy, got {_show(verdict)}")
    return HostCheck(d.share(h, "busy_share_before", p, required=False),
                     d.number(h, "loadavg_1m_before", p, required=False),
                     d.number(h, "waited_s", p, required=False), verdict)
