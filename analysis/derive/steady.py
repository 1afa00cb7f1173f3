"""Is a window the system's steady state, or a transient? One class per cell repetition (issue 32).

Every percentile of a window that starts with a backlog and ends without one is exact, and none
of them describes the server: the window measured the queue draining. Load tools average over
whatever the window holds; this module looks at the window second by second first, the way
Barrett et al. ("Virtual Machine Warmup Blows Hot and Cold", OOPSLA 2017) look at a VM's
in-process iterations, and gives their classes:

    flat             no change that matters
    warmup           the window starts in a transient that ends inside it
    slowdown         the last segment is worse than an earlier one
    no-steady-state  it changes to the end (the last segment is too short, or it trends:
                     a queue that grows through the window)

The method (docs/data-format.md, "Steady state", gives the reasons for each number):

1. Signals, one value per 1 s interval inside the window (never the drain): log p50 and log
   p99 of the requests answered in it, and log(1 + requests in flight) where the generator
   counted them (the strongest evidence: by Little's law a steady system holds about rate x
   latency in flight; thousands at the start and a handful at the end is a backlog draining).
   An interval with requests that timed out in it counts at the timeout where they are at least
   1 % of its requests; an interval with no answer takes the next answered one's latency (a
   stall is as slow as the first answer after it).
2. A running median of MEDIAN_WIDTH intervals: a periodic GC pause or a single slow second is
   not a change (a median keeps a step where it is and removes a burst of up to
   (MEDIAN_WIDTH - 1) / 2 intervals).
3. PELT (derive/changepoints.py) on the filtered signals together, each in units of its noise
   (the robust spread of successive differences of the raw signal, at least NOISE_FLOOR), with a
   penalty of PENALTY_PER_LOG_N x ln(intervals) a change, segments at least MIN_SEGMENT_S long.
4. Levels: each segment's median of the raw signals. A segment differs from another when some
   signal differs by more than its factor and its absolute floor (MATTERS); then the final
   segment is grown backwards over the segments that do not differ from it: that is the steady
   part, and its first second is `steady_from_s`.
5. The class: flat when the steady part is the whole window; no-steady-state when it is shorter
   than the last TAIL_SHARE of the window (a change that late leaves nothing to call steady),
   or when the queue rule (overload.queue_growth) holds inside it; slowdown when an earlier
   segment is better than the steady part; else warmup.

Headline figures: a warmup repetition whose steady part is at least HEADLINE_SHARE of the
window reports its steady part's figures (analyse.py selects its intervals); a shorter one is
not steady. A no-steady-state repetition is not steady too, unless its queue grows: that one is
saturated, which its saturation verdict says already (one mark, not two alarms).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from analysis.derive import overload
from analysis.derive.changepoints import pelt
from analysis.model import SteadyState

MEDIAN_WIDTH = 5          # removes bursts of 1-2 slow seconds (a GC pause, a spike)
MIN_SEGMENT_S = 3         # a level must last 3 s to count (longer than the filter's reach)
PENALTY_PER_LOG_N = 6.0   # as corpus/history.py: BIC-like, strict; the filtered series is smooth
NOISE_FLOOR = math.log(1.10)   # 10 %: per-second percentiles are never steadier than that
TIMEOUT_SHARE = 0.01      # timeouts in an interval at >= 1 % of it put its p99 at the timeout
TAIL_SHARE = 0.25         # a steady part shorter than the last quarter of the window: none
HEADLINE_SHARE = 0.5      # a warm-up's steady part gives the headline when >= half the window

# A difference that matters, per signal: (factor, absolute floor in the signal's unit).
# p50 1.5x and 1 ms; p99 2x (a tail is noisier) and 2 ms; in flight 2x and 10 requests.
# Throughput is "worse" when higher too: above the offered rate it is a backlog draining.
# Replies per second 1.5x and 5/s: a server answering nothing, or a backlog at twice the rate.
MATTERS = {"p50": (1.5, 1.0), "p99": (2.0, 2.0), "in_flight": (2.0, 10.0),
           "throughput": (1.5, 5.0)}

DRIFT_SIGNALS = ("p50", "in_flight", "throughput")
# A longer window is judged on blocks of several seconds (each the median of its seconds), so
# that a 24-hour log costs what a 10-minute one does; a change then lasts 3 blocks.
MAX_POINTS = 600

METHOD_TEXT = (
    "each 1 s interval of the window: p50, p99, requests in flight (where counted) and how far "
    "the replies per second are from the offered rate, an interval's p99 at the timeout when "
    f"{TIMEOUT_SHARE:.0%} of its requests timed out and its p50 when half did; a running median "
    f"of {MEDIAN_WIDTH} intervals (a 1-2 s burst such as a GC pause is no change); PELT change "
    f"points (penalty {PENALTY_PER_LOG_N:g} x ln(intervals), segments of at least "
    f"{MIN_SEGMENT_S} s); a change matters when p50 moves by over 1.5x and 1 ms, p99 by over 2x "
    "and 2 ms, requests in flight by over 2x and 10, or the replies' distance from the offered "
    "rate by over 1.5x and 5/s; the steady part is the last segment grown back over the "
    "segments that do not differ from it; no steady state when it is shorter than the window's "
    f"last {TAIL_SHARE:.0%}, drifts (its last third against its first), drains, times out, or "
    "its queue grows; a warm-up's steady part gives the figures when it is at least "
    f"{HEADLINE_SHARE:.0%} of the window")


@dataclass(frozen=True)
class Series:
    """A window's per-second signals (seconds from the window's start)."""
    t_s: list[float]
    p50_ms: list[float | None]
    p99_ms: list[float | None]
    in_flight: list[float | None] | None = None
    timed_out: list[int | None] | None = None
    answered: list[int] | None = None
    throughput_rps: list[float | None] | None = None   # every reply in the interval


def window_series(rows: list[dict], window_s: float | None) -> Series:
    """The window's part of aggregate.interval_series rows (t_s from the window's start): the
    intervals that start inside it and are whole seconds (the drain's short tail is not in it)."""
    keep = [r for r in rows
            if r["t_s"] >= -1e-9 and (window_s is None or r["t_s"] < window_s - 1e-9)
            and r.get("length_s", 1.0) >= 0.999]
    have_flight = any(r.get("in_flight_mean") is not None for r in keep)
    have_timeouts = any(r.get("timed_out") is not None for r in keep)
    return Series(
        t_s=[r["t_s"] for r in keep], p50_ms=[r.get("p50_ms") for r in keep],
        p99_ms=[r.get("p99_ms") for r in keep],
        in_flight=[r.get("in_flight_mean") for r in keep] if have_flight else None,
        timed_out=[r.get("timed_out") for r in keep] if have_timeouts else None,
        answered=[r.get("count", 0) for r in keep],
        throughput_rps=[r.get("throughput_rps") for r in keep])


def binned(series: Series, size: int) -> Series:
    """The series in blocks of `size` intervals: each block's start, and the median of its
    known values per signal (None where it has none); answered and timed out are summed."""
    def med(values):
        if values is None:
            return None
        out = []
        for a in range(0, len(values), size):
            known = [v for v in values[a:a + size] if v is not None]
            out.append(float(np.median(known)) if known else None)
        return out

    def total(values):
        if values is None:
            return None
        return [sum(v or 0 for v in values[a:a + size]) for a in range(0, len(values), size)]
    return Series(series.t_s[::size], med(series.p50_ms), med(series.p99_ms),
                  med(series.in_flight), total(series.timed_out), total(series.answered),
                  med(series.throughput_rps))


def running_median(y: np.ndarray, width: int = MEDIAN_WIDTH) -> np.ndarray:
    """Running median of `width` (odd) values, the window kept whole and inside the series at its
    ends (the first values take the median of the first `width`): a burst of up to
    (width - 1) / 2 values is removed wherever it is, at the window's start too, and a step
    stays where it is."""
    y = np.asarray(y, dtype=np.float64)
    n = y.shape[-1]
    if n <= width:
        return np.broadcast_to(np.median(y, axis=-1, keepdims=True), y.shape).copy() if n else y
    # an odd width: the middle of each sorted window is its median (np.median's checks cost
    # more than the sort at this size); rows of a 2-D array are smoothed each on its own
    windows, starts = _window_positions(n, width)
    medians = np.sort(y[..., windows], axis=-1)[..., width // 2]
    return medians[..., starts]


@lru_cache(maxsize=64)
def _window_positions(n: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """For a series of n values: the positions of each window of `width` (a row each, as
    sliding_window_view lays them out, whose checks and strides cost more than the sort), and
    the window each value takes its median from (the first and last windows at the ends)."""
    windows = np.arange(n - width + 1)[:, None] + np.arange(width)
    starts = np.clip(np.arange(n) - width // 2, 0, n - width)
    windows.flags.writeable = False
    starts.flags.writeable = False
    return windows, starts


def robust_noise(y: np.ndarray) -> float:
    """The spread of one value around its level: the median absolute successive difference x
    1.4826 / sqrt 2 (a few steps or spikes do not move it), at least NOISE_FLOOR."""
    if len(y) < 2:
        return NOISE_FLOOR
    d = np.abs(np.diff(y))
    return max(float(np.median(d)) * 1.4826 / math.sqrt(2.0), NOISE_FLOOR)


def _filled(values: list[float | None]) -> list[float] | None:
    """None (no answer that second) takes the next known value, or the last one at the end."""
    out: list[float | None] = list(values)
    nxt = None
    for i in range(len(out) - 1, -1, -1):
        if out[i] is None:
            out[i] = nxt
        else:
            nxt = out[i]
    prev = None
    for i, v in enumerate(out):
        if v is None:
            out[i] = prev
        else:
            prev = v
    return None if any(v is None for v in out) else [float(v) for v in out]


def _signals(series: Series, timeout_ms: float | None,
             offered_rate: float | None) -> dict[str, np.ndarray]:
    p50, p99 = list(series.p50_ms), list(series.p99_ms)
    for i in _censored(series, timeout_ms, TIMEOUT_SHARE):
        p99[i] = float(timeout_ms)
    for i in _censored(series, timeout_ms, 0.5):
        p50[i] = float(timeout_ms)
    out = {}
    for name, values in (("p50", p50), ("p99", p99)):
        filled = _filled(values)
        if filled is not None:
            out[name] = np.log(np.maximum(np.asarray(filled), 1e-6))
    filled = None if series.in_flight is None else _filled(series.in_flight)
    if filled is not None:
        out["in_flight"] = np.log1p(np.maximum(np.asarray(filled), 0.0))
    filled = None if series.throughput_rps is None else _filled(series.throughput_rps)
    if filled is not None and offered_rate:
        # how far the replies per second are from the offered rate, either way: a server that
        # answers nothing and one that drains a backlog at twice the rate are both off it
        out["throughput"] = np.abs(np.log1p(np.maximum(np.asarray(filled), 0.0))
                                   - math.log1p(offered_rate))
    return out


def _censored(series: Series, timeout_ms: float | None, share: float) -> list[int]:
    """The intervals whose timed-out requests are at least `share` of them: a percentile at or
    above 1 - share is then the timeout (a lower bound)."""
    if series.timed_out is None or not timeout_ms:
        return []
    answered = series.answered or [0] * len(series.timed_out)
    return [i for i, (t, a) in enumerate(zip(series.timed_out, answered))
            if t and t >= share * (t + (a or 0))]


def _level(raw: np.ndarray, a: int, b: int) -> float:
    return float(np.median(raw[a:b]))


def _linear(name: str, log_value: float, offered_rate: float | None) -> float:
    if name == "throughput":     # about this many replies per second off the offered rate
        return (offered_rate or 0.0) * math.expm1(log_value)
    return math.expm1(log_value) if name == "in_flight" else math.exp(log_value)


def _matters(name: str, la: float, lb: float, offered_rate: float | None) -> bool:
    """Whether two levels of a signal (its log scale) differ by MATTERS' factor and floor."""
    factor, floor = MATTERS[name]
    return (abs(la - lb) > math.log(factor)
            and abs(_linear(name, la, offered_rate) - _linear(name, lb, offered_rate)) > floor)


def difference(signals: dict[str, np.ndarray], a: tuple[int, int], b: tuple[int, int],
               offered_rate: float | None = None, names=None) -> int:
    """+1 when segment a is worse (higher) than segment b in a way that matters, -1 when it is
    better, 0 when they do not differ; levels are the segments' medians of the filtered signals
    (so that a burst the filter removes moves no level). Signals that disagree in direction: the
    largest relative difference decides. `names`: only these signals."""
    return _vote({name: (_level(raw, *a), _level(raw, *b)) for name, raw in signals.items()
                  if names is None or name in names}, offered_rate)


def _vote(levels: dict[str, tuple[float, float]], offered_rate: float | None) -> int:
    """difference() on given (a, b) levels per signal: +1 a worse, -1 a better, 0 the same."""
    votes = [la - lb for name, (la, lb) in levels.items()
             if _matters(name, la, lb, offered_rate)]
    if not votes:
        return 0
    return 1 if max(votes, key=abs) > 0 else -1


def classify(series: Series, *, window_s: float, offered_rate: float | None = None,
             timeout_ms: float | None = None) -> SteadyState:
    """The window's class and where its steady part starts (see the module docstring)."""
    if len(series.t_s) > MAX_POINTS:
        series = binned(series, math.ceil(len(series.t_s) / MAX_POINTS))
    n = len(series.t_s)
    signals = _signals(series, timeout_ms, offered_rate)
    if n < 2 * MIN_SEGMENT_S or not signals:
        return SteadyState(None, None, window_s, sentence=(
            f"not known: {n} whole seconds in the window, too few to tell a transient from a "
            f"steady state" if signals else "not known: no interval of the window was answered"))
    names = list(signals)
    smoothed = running_median(np.vstack([signals[k] for k in names]))
    smooth = dict(zip(names, smoothed))
    found = []
    # Segment levels are medians of the smoothed signals, so they lie within each signal's
    # range: when no signal's whole range is a difference that matters, no two segments can
    # differ, and the change points would change nothing (most windows: it saves PELT's cost).
    bounded = not any(_matters(k, high, low, offered_rate) for k, high, low in zip(
        names, smoothed.max(axis=-1).tolist(), smoothed.min(axis=-1).tolist()))
    if not bounded:
        noise = [robust_noise(signals[k]) for k in names]
        found = pelt(np.vstack([smooth[k] for k in names]), noise,
                     PENALTY_PER_LOG_N * math.log(n), MIN_SEGMENT_S)
    bounds = [0, *found, n]
    segments = list(zip(bounds[:-1], bounds[1:]))
    # the steady part: the last segment, grown back over those that do not differ from it
    start = segments[-1][0]
    k = len(segments) - 2
    while k >= 0 and difference(smooth, segments[k], (start, n), offered_rate) == 0:
        start = segments[k][0]
        k -= 1
    changes = tuple(float(series.t_s[b[0]]) for a, b in zip(segments, segments[1:])
                    if difference(smooth, a, b, offered_rate) != 0)
    if start > 0:
        start = _first_steady_second(signals, start, n, offered_rate)
    steady_from = float(series.t_s[start])
    steady_len = n - start
    queue = _queue_test(series, _tail_start(start, n), offered_rate)
    if queue is not None and queue.grows:
        return SteadyState("no-steady-state", None, window_s, changes, not_steady=False,
                           saturated_queue=True, sentence=(
                               f"no steady state: requests in flight grew by "
                               f"{queue.slope_per_s:.1f} per second to the window's end "
                               f"(saturated)"))
    timing_out = set(_censored(series, timeout_ms, 0.5))
    if 2 * sum(1 for i in range(start, n) if i in timing_out) > n - start:
        # the latency is only known to be over the timeout: no level can be seen
        return SteadyState("no-steady-state", None, window_s, changes, saturated_queue=True,
                           sentence=("no steady state: most requests timed out to the window's "
                                     "end (saturated)"))
    drift = 0 if bounded else _drift(smooth, start, n, offered_rate)
    if drift < 0 or _drains(queue, offered_rate):
        return SteadyState("no-steady-state", None, window_s, changes, not_steady=True,
                           sentence=("no steady state: the backlog was still draining at the "
                                     "window's end"))
    if drift > 0:
        return SteadyState("no-steady-state", None, window_s, changes, not_steady=True,
                           sentence="no steady state: it kept getting slower to the window's end")
    if start == 0:
        return SteadyState("flat", None, window_s, changes,
                           sentence="flat: no change that matters in the window")
    if steady_len < max(MIN_SEGMENT_S, TAIL_SHARE * n):
        return SteadyState("no-steady-state", None, window_s, changes, not_steady=True,
                           sentence=(f"no steady state: it still changed {steady_from:g} s into "
                                     f"the {window_s:g} s window"))
    earlier = [difference(smooth, seg, (start, n), offered_rate)
               for seg in segments if seg[1] <= start]
    if any(d < 0 for d in earlier):
        return SteadyState("slowdown", steady_from, window_s, changes, sentence=(
            f"slowdown: worse from {steady_from:g} s of the {window_s:g} s window on than "
            f"before it"))
    headline = steady_len >= HEADLINE_SHARE * n
    if headline:
        sentence = (f"warm-up: steady from {steady_from:g} s of the {window_s:g} s window; the "
                    f"figures are the steady part's")
    else:
        sentence = (f"not steady: a transient until {steady_from:g} s of the {window_s:g} s "
                    f"window leaves under {HEADLINE_SHARE:.0%} of it steady")
    return SteadyState("warmup", steady_from, window_s, changes, from_steady_part=headline,
                       not_steady=not headline, sentence=sentence)


def _first_steady_second(signals: dict[str, np.ndarray], start: int, n: int,
                         offered_rate: float | None) -> int:
    """A change point is placed on filtered signals, segments at least MIN_SEGMENT_S long, so
    the transient's last second can fall inside the steady part: skip seconds at its start
    whose raw values are worse than the steady level by a difference that matters (at most
    MIN_SEGMENT_S - 1 of them, and never below TAIL_SHARE of the window left)."""
    limit = min(start + MIN_SEGMENT_S - 1, n - max(MIN_SEGMENT_S, math.ceil(TAIL_SHARE * n)))
    steady = {k: _level(v, start, n) for k, v in signals.items()}
    while start < limit and _vote({k: (float(v[start]), steady[k]) for k, v in signals.items()},
                                  offered_rate) > 0:
        start += 1
    return start


def _tail_start(start: int, n: int) -> int:
    """Where the queue tests begin: the steady part, and never fewer intervals than the
    window's last quarter (nor than the queue rule needs)."""
    return min(start, n - max(overload.QUEUE_MIN_POINTS, math.ceil(TAIL_SHARE * n)))


def _queue_test(series: Series, start: int, offered_rate: float | None):
    """overload's queue rule from interval `start` on: in flight where counted, else p50."""
    if not offered_rate:
        return None
    t = series.t_s[start:]
    values = series.in_flight if series.in_flight is not None else series.p50_ms
    pairs = [(x, v) for x, v in zip(t, values[start:]) if v is not None]
    test = overload.queue_growth if series.in_flight is not None else \
        overload.queue_growth_from_p50
    return test([x for x, _ in pairs], [v for _, v in pairs], offered_rate)


def _drift(smooth: dict[str, np.ndarray], start: int, n: int,
           offered_rate: float | None) -> int:
    """Within the steady part, its last third against its first (difference() on DRIFT_SIGNALS):
    +1 slower at the end, -1 faster, 0 the same. A drift that no single change point shows,
    such as a backlog draining through the whole window, is caught here (fio's steady-state test
    looks at a trailing window's slope the same way). Not on p99: one second's p99 rests on a
    few requests, and a tail that settles over the window as the JIT finishes is no queue."""
    m = n - start
    if m < 2 * MIN_SEGMENT_S:
        return 0
    third = max(MIN_SEGMENT_S, m // 3)
    return difference(smooth, (n - third, n), (start, start + third), offered_rate,
                      DRIFT_SIGNALS)


def _drains(queue, offered_rate: float | None) -> bool:
    """The queue rule turned round: in flight (else p50 x rate) falls through the steady part
    by more than the rule's slope and scatter. A backlog still draining is no steady state.
    `queue`: the rule's own test over the same intervals (_queue_test), whose fit of the
    negated points is its fit negated (overload.queue_falls)."""
    return queue is not None and overload.queue_falls(queue, offered_rate)


def not_known(reason: str) -> SteadyState:
    """A repetition whose data cannot show its course (a load tool's summary)."""
    return SteadyState(None, None, None, sentence=f"not known: {reason}")
