"""What a cell's numbers mean under overload: pure functions, one rule each.

Inputs are plain figures (histograms from analysis/read/hdr/, counts, floats); outputs are the
run model's types (analysis/model.py: Percentile, LatencyStats, Saturation, HostHealth,
InFlight, Spread) or the small frozen dataclasses below. No I/O. Every threshold is a named
constant below, and every verdict comes with a sentence a page can print.

The population of a cell is its *window requests*: those whose intended send time falls in the
measured window. Each has one outcome: completed (a 200 within the timeout), timed out, or error.
Latency statistics are over completed + timed out; errors are reported apart (an error has no
latency: a refused connection answers fast and would pull every percentile down). An error is an
answer: the goodput rule counts it as answered, and a high share of errors is its own verdict
(`error_rate`), not saturation.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from analysis.derive import histogram_sums
from analysis.model import (Accounting, HostHealth, InFlight, LatencyStats, Percentile,
                            Repetition, Saturation, Spread)
from analysis.read.hdr.double import DoubleHistogram
from analysis.read.hdr.histogram import LONG_MAX, Histogram, percentile_target_count
from analysis.vocabulary import PERCENTILES

STAT_KEYS = tuple(name for name, _, _ in PERCENTILES) + ("max", "mean")

# Saturation rules (see `saturation`).
GOODPUT_SHARE = 0.95           # goodput: < 95 % of offered (window requests answered, errors
                               #   too), in the cell's median or in any one repetition
QUEUE_MIN_SLOPE_SHARE = 0.005  # queue: in-flight grows by > 0.5 % of the offered rate per second
                               #   (demo: unsaturated cells within +-0.01 %, the pool at its
                               #   ceiling 0.75 %, past it 50-86 %)
QUEUE_SIGNIFICANCE = 3.0       #   and the fitted rise over the window > 3 x the residual std
QUEUE_MIN_POINTS = 4           #   fitted on at least 4 window intervals
LATENCY_FACTOR = 2.0           # latency: p50 > 2 x the system's p50 at its lowest load
UTILISATION_SHARE = 0.95       # utilisation: the server delivered >= 95 % of its predicted
                               #   ceiling (N / S): near 100 % a queue has no steady state and
                               #   its latency depends on how long the load lasts

# Errors (see `error_rate`): above 1 % of the window's requests answered with an error, the
# failures outnumber the requests beyond p99 (1 %), and the percentiles, which leave errors out,
# describe a server that fails that often as if it did not.
ERROR_SHARE = 0.01

# The measured ceiling (see `ceiling_rate`): a repetition's replies above the offered rate by
# more than this share answer requests queued before the window (a backlog draining).
DRAIN_SHARE = 0.01

# Host health (see `host_health`).
HOST_BUSY_MACHINE = 0.80       # the machine's CPU share (all cores) above which it is busy
HOST_UNEXPLAINED = 0.15        # machine - (server + generator) above which something else ran

# In flight (see `in_flight`): Little's law within 10 % of the measured mean.
LITTLE_TOLERANCE = 0.10

# Repetitions (see `repetitions_disagree`): max / min above this, below saturation.
SPREAD_DISAGREE_RATIO = 2.0
SPREAD_CHECKED = ("p50", "p99")


def censored_stats(completed: Histogram | DoubleHistogram, timed_out: int, timeout_ms: float,
                   ms_per_unit: float, errors: int = 0) -> LatencyStats:
    """Percentiles, max and mean of the window population, censored where no answer came.

    Rule: N = completed + timed_out (errors are not in it). A percentile's target count is
    Java's, max(1, ceil(nextAfter(p, -inf) / 100 * N)). When it is above the completed count the
    rank falls among timed-out requests: the value is only known to be at least the timeout.
    Otherwise it is the completed histogram's value at that count, which equals what Java gives
    on the population with each timeout recorded at the timeout value (the `.hlog`'s `timeout`
    tag: completed values are below the timeout, so the walk reaches the target first among
    them). Max and mean are lower bounds whenever timed_out > 0; the mean's bound is the mean of
    the population with the timeouts at the timeout value (Java's getMean on the merged
    histogram for an integer Histogram; for a DoubleHistogram the count-weighted mean).
    `ms_per_unit` converts the histogram's values to ms (0.001 for microseconds).
    """
    if timed_out < 0 or errors < 0:
        raise ValueError("counts cannot be negative")
    n_completed = completed.total_count
    population = n_completed + timed_out
    empty = Percentile()
    if population == 0:
        return LatencyStats(0, {name: empty for name, _, _ in PERCENTILES}, empty, empty,
                            None, 0, 0, errors)
    timeout = Percentile(at_least_ms=float(timeout_ms))
    targets = [percentile_target_count(pct, population) for _, pct, _ in PERCENTILES]
    found = iter(values_at_counts(completed, [t for t in targets if t <= n_completed]))
    values = {name: timeout if target > n_completed else Percentile(next(found) * ms_per_unit)
              for (name, _, _), target in zip(PERCENTILES, targets)}
    completed_mean, completed_stddev = (histogram_sums.mean_and_stddev(completed)
                                        if n_completed else (0.0, 0.0))
    stddev = completed_stddev * ms_per_unit if n_completed else None
    if timed_out == 0:
        top = Percentile(completed.max * ms_per_unit)
        mean = Percentile(completed_mean * ms_per_unit)
    else:
        top = timeout
        mean = Percentile(at_least_ms=_mean_with_timeouts(completed, timed_out, timeout_ms,
                                                          ms_per_unit))
    return LatencyStats(population, values, top, mean, stddev, n_completed, timed_out, errors)


def value_at_count(h: Histogram | DoubleHistogram, target: int) -> float:
    """Java's value for a target count: highest equivalent value of the first bucket whose
    cumulative count reaches it (scaled for a DoubleHistogram)."""
    integer = h.integer if isinstance(h, DoubleHistogram) else h
    pos = int(np.searchsorted(integer.cumulative_counts, target, side="left"))
    value = int(integer.layout.highest_value_at(integer.indices[pos:pos + 1])[0])
    return value * h.ratio if isinstance(h, DoubleHistogram) else float(value)


def values_at_counts(h: Histogram | DoubleHistogram, targets: list[int]) -> list[float]:
    """value_at_count of each target (each at most the histogram's count), in one search: a
    repetition's five percentiles were five searches and five bucket lookups."""
    if not targets:
        return []
    integer = h.integer if isinstance(h, DoubleHistogram) else h
    pos = np.searchsorted(integer.cumulative_counts, targets, side="left")
    values = integer.layout.highest_value_at(integer.indices[pos]).tolist()
    if isinstance(h, DoubleHistogram):
        return [value * h.ratio for value in values]
    return [float(value) for value in values]


def _mean_with_timeouts(h, timed_out: int, timeout_ms: float, ms_per_unit: float) -> float:
    timeout_units = timeout_ms / ms_per_unit
    if isinstance(h, Histogram):
        return _merged_mean(h, int(round(timeout_units)), timed_out) * ms_per_unit
    total = h.total_count + timed_out
    return (h.mean * h.total_count + timeout_units * timed_out) / total * ms_per_unit



def _merged_mean(h: Histogram, value: int, count: int) -> float:
    """getMean of `h` plus `count` values recorded at `value`: `h`'s entries with that one
    bucket's count added in its place, so the mean's running sum meets the same terms in the
    same order as on the sum of `h` and a histogram of those values (which it was: ~0.3 ms a
    cell with timeouts to build and add two histograms for one entry)."""
    if value < 0 or count <= 0 or h.total_count + count > LONG_MAX:
        return (h + Histogram.from_values(h.layout, [value], [count])).mean   # (its errors)
    at = histogram_sums.index_of(h.layout, value)
    pos = int(np.searchsorted(h.indices, at))
    if pos < h.indices.size and h.indices[pos] == at:
        counts = h.counts.copy()
        counts[pos] += count
        return Histogram(h.layout, h.indices, counts).mean
    return Histogram(h.layout, np.insert(h.indices, pos, at),
                     np.insert(h.counts, pos, count)).mean


# -- the window's rates ------------------------------------------------------------------------

@dataclass(frozen=True)
class WindowRates:
    throughput_rps: float          # every reply during the window / window s
    goodput_rps: float             # window requests answered within the timeout / window s


def window_rates(completed: int, window_s: float, server_completions_window: int) -> WindowRates:
    """Two rates, not to be confused (analysis/model.py, "Two rates"). Throughput: every reply
    that arrived during the window (warm-up requests' too), per second - what the server
    delivered; the measured ceiling is the highest of these over the load points. Goodput: the
    window's own requests answered within the timeout, whenever in the window or the drain
    they were answered, per second of window - what the offered load got."""
    if window_s <= 0:
        raise ValueError("window length must be positive")
    return WindowRates(server_completions_window / window_s, completed / window_s)


def measured_ceiling(throughput_rps: list[float | None]) -> float | None:
    """The highest rate over a system's load points (None when none known): of `ceiling_rate`s
    for the measured ceiling."""
    known = [r for r in throughput_rps if r is not None]
    return max(known) if known else None


CEILING_RULE = ("the most replies per second the server kept up in every repetition of one "
                "load point: each repetition's throughput counted up to the offered rate "
                "(replies beyond it answer requests queued before the window, a backlog "
                "draining), and the lowest repetition's taken (so a repetition that collapsed "
                "is not hidden by the others)")


def ceiling_rate(throughput_rps: list[float | None], offered_rate: float | None) -> float | None:
    """What one load point shows the server can keep up (CEILING_RULE): the lowest of its
    repetitions' throughputs, each capped at the offered rate (a closed loop offers none: its
    throughput as it is). The median a table prints can hide a collapsed repetition (WireMock
    at 4,000 req/s: 124, 4,000, 4,000), and a window that starts with a backlog delivers more
    than the offered rate while it drains (1,837 req/s at 1,500 offered) - neither is a rate
    the server sustains."""
    known = [r for r in throughput_rps if r is not None]
    if not known:
        return None
    return min(min(r, offered_rate) if offered_rate else r for r in known)


def ceiling_left_out(repetitions: list[tuple[int, float | None]],
                     offered_rate: float | None) -> str | None:
    """Why a load point's throughput (the median of `repetitions`' (index, throughput)) is not
    what it gives the measured ceiling (`ceiling_rate`), in a sentence; None when it is."""
    known = [(i, r) for i, r in repetitions if r is not None]
    if not known:
        return None
    median = number_spread([r for _, r in known])[1]
    kept = ceiling_rate([r for _, r in known], offered_rate)
    if kept >= median:
        return None
    over = [i for i, r in known if offered_rate and r > (1 + DRAIN_SHARE) * offered_rate]
    if over:
        return (f"more than offered, a backlog from before the window draining "
                f"(repetition{'s' if len(over) > 1 else ''} {', '.join(str(i) for i in over)})")
    low_i, low = min(known, key=lambda x: (x[1], x[0]))
    return f"repetition {low_i} delivered only {low:,.1f} req/s"


# -- saturation -------------------------------------------------------------------------------

@dataclass(frozen=True)
class QueueTest:
    """Least-squares line through per-interval in-flight over the window."""
    slope_per_s: float | None      # requests per second (in-flight equivalent)
    rise: float | None             # slope x (last t - first t)
    residual_std: float | None
    points: int
    grows: bool
    rule: str                      # the rule as printed on the page


QUEUE_RULE = ("the queue grows when a least-squares line through the in-flight count of the "
              "window's 1 s intervals rises by more than {share:g} % of the offered rate per "
              "second and its rise over the window is more than {sig:g} times the scatter of "
              "the points around it")

_QUEUE_RULE_TEXT = QUEUE_RULE.format(share=QUEUE_MIN_SLOPE_SHARE * 100, sig=QUEUE_SIGNIFICANCE)


def queue_growth(t_s: list[float], in_flight: list[float], offered_rate: float) -> QueueTest:
    """The queue rule. Fit in_flight = a + slope * t over the window's intervals; the queue grows
    when slope > QUEUE_MIN_SLOPE_SHARE x offered_rate (per second) AND slope x span >
    QUEUE_SIGNIFICANCE x the residual standard deviation. Fewer than QUEUE_MIN_POINTS intervals:
    not tested (grows False). For a per-interval p50 series use `queue_growth_from_p50`."""
    rule = _QUEUE_RULE_TEXT
    n = len(t_s)
    if n != len(in_flight):
        raise ValueError("t_s and in_flight differ in length")
    if n < QUEUE_MIN_POINTS or offered_rate <= 0:
        return QueueTest(None, None, None, n, False, rule)
    t = np.asarray(t_s, np.float64)
    y = np.asarray(in_flight, np.float64)
    # (a float64 array's mean() is its sum() / n, the same reduction and division: numpy's
    # mean() wrapper cost more than the sums of a window's ~60 points)
    t_mean = t.sum() / n
    sxx = float(((t - t_mean) ** 2).sum())
    if sxx == 0:
        return QueueTest(None, None, None, n, False, rule)
    y_mean = y.sum() / n
    slope = float(((t - t_mean) * (y - y_mean)).sum()) / sxx
    intercept = float(y_mean) - slope * float(t_mean)
    residuals = y - (intercept + slope * t)
    residual_std = float(math.sqrt(float((residuals ** 2).sum()) / (n - 2))) if n > 2 else 0.0
    rise = slope * float(t.max() - t.min())
    return QueueTest(slope, rise, residual_std, n, _grows(slope, rise, residual_std, offered_rate),
                     rule)


def _grows(slope: float, rise: float, residual_std: float, offered_rate: float) -> bool:
    """The queue rule's verdict on a fit: the slope and the rise both past their bars."""
    return bool(slope > QUEUE_MIN_SLOPE_SHARE * offered_rate
                and rise > QUEUE_SIGNIFICANCE * residual_std)


def queue_falls(test: QueueTest, offered_rate: float) -> bool:
    """queue_growth's verdict on the same points negated (a backlog draining is a queue that
    grows when turned round), from `test`, their own fit: negating every value negates the
    means, the slope, the intercept, the residuals and the rise exactly (rounding is symmetric
    about 0) and leaves the residuals' scatter as it is, so no second fit is needed."""
    if test.slope_per_s is None:
        return False
    return _grows(-test.slope_per_s, -test.rise, test.residual_std, offered_rate)


def queue_growth_from_p50(t_s: list[float], p50_ms: list[float],
                          offered_rate: float) -> QueueTest:
    """The queue rule on per-interval p50 when no in-flight series exists: by Little's law a
    latency L (s) at the offered rate means offered_rate x L in flight, so the series is scaled
    to requests and tested as in `queue_growth`. (A slope of 5 ms per second is 0.5 %.)"""
    return queue_growth(t_s, [offered_rate * v / 1000.0 for v in p50_ms], offered_rate)


@dataclass(frozen=True)
class Answered:
    """One repetition's window requests as the goodput rule counts them."""
    repetition: int                # run.yml's index
    asked: int                     # what the offered rate asked for: sent + never sent
    answered: int                  # a reply of any status within the timeout: completed + errors

    @property
    def share(self) -> float:
        return self.answered / self.asked if self.asked else 1.0


def answered_counts(repetitions: list[Repetition]) -> list[Answered] | None:
    """Each repetition's `Answered`, or None when some repetition cannot give it: schema 1 and
    a load tool's summary count no window requests (no goodput), so the rule runs on rates."""
    out = []
    for r in repetitions:
        a = r.accounting
        if r.goodput_rps is None or a.sent is None or a.completed is None:
            return None
        out.append(Answered(r.index, a.sent + (a.not_sent or 0), a.completed + (a.errors or 0)))
    return out


def _unanswered_sentence(answered: list[Answered]) -> str | None:
    """The goodput rule on counts: some repetition got an answer (errors too) to fewer than
    GOODPUT_SHARE of what the offered rate asked for. Each short repetition is named, so a
    collapsed one cannot hide behind the others' median."""
    short = [a for a in answered if a.answered < GOODPUT_SHARE * a.asked]
    if not short:
        return None
    under = f"under {GOODPUT_SHARE * 100:g} %"
    if len(answered) == 1:
        a = short[0]
        return (f"{a.answered:,} of the window's {a.asked:,} requests got an answer (of any "
                f"status) within the timeout ({100 * a.share:.1f} %, {under}): the rest got none")
    total = Answered(0, sum(a.asked for a in answered), sum(a.answered for a in answered))
    each = "; ".join(f"repetition {a.repetition}: {a.answered:,} of {a.asked:,}, "
                     f"{100 * a.share:.1f} %" for a in short)
    return (f"fewer than {GOODPUT_SHARE * 100:g} % of the window's requests got an answer (of "
            f"any status) within the timeout in {len(short)} of {len(answered)} repetitions "
            f"({each}; {100 * total.share:.1f} % over all {len(answered)})")


def saturation(goodput_rps: float, offered_rate: float | None, queue: QueueTest | None,
               p50: Percentile, baseline_p50_ms: float | None,
               throughput_rps: float | None = None,
               predicted_ceiling_rps: float | None = None,
               answered: list[Answered] | None = None) -> Saturation:
    """Saturated when any rule holds, with the reasons in fixed order:
    goodput     - the window's requests went unanswered. With `answered` (counts per
                  repetition): some repetition got an answer of any status - an error is an
                  answer, `error_rate` judges it - to fewer than GOODPUT_SHARE of the requests
                  the offered rate asked for. Without (schema 1, summaries): `goodput_rps`
                  < GOODPUT_SHARE x offered;
    queue       - `queue.grows` (see `queue_growth`);
    latency     - p50 > LATENCY_FACTOR x the same system's p50 at its lowest load (a censored
                  p50 counts as above; no baseline, or a censored one: not tested);
    utilisation - the rate the server delivered >= UTILISATION_SHARE x the system's predicted
                  ceiling (Little's law, N / S; not tested without one)."""
    reasons, sentences = [], []
    # a closed loop (offered_rate None) offers no rate: its throughput is what it achieved
    unanswered = _unanswered_sentence(answered) if offered_rate and answered else None
    if unanswered:
        reasons.append("goodput")
        sentences.append(unanswered)
    elif offered_rate and not answered and goodput_rps < GOODPUT_SHARE * offered_rate:
        reasons.append("goodput")
        sentences.append(f"{goodput_rps:.1f} of {offered_rate:g} req/s offered were answered "
                         f"within the timeout (under {GOODPUT_SHARE:.0%})")
    if queue is not None and queue.grows:
        reasons.append("queue")
        sentences.append(f"requests in flight grew by {queue.slope_per_s:.1f} per second "
                         f"across the window ({queue.rise:.0f} in all)")
    if baseline_p50_ms is not None and baseline_p50_ms > 0 and p50.known:
        limit = LATENCY_FACTOR * baseline_p50_ms
        if p50.censored or p50.value_ms > limit:
            reasons.append("latency")
            shown = f"over {p50.at_least_ms:g}" if p50.censored else f"{p50.value_ms:.3g}"
            sentences.append(f"p50 {shown} ms is more than {LATENCY_FACTOR:g} x the "
                             f"{baseline_p50_ms:.3g} ms at the lowest load")
    if (predicted_ceiling_rps and throughput_rps is not None
            and throughput_rps >= UTILISATION_SHARE * predicted_ceiling_rps):
        reasons.append("utilisation")
        sentences.append(f"the server delivered {throughput_rps:.1f} req/s, "
                         f"{100.0 * throughput_rps / predicted_ceiling_rps:.0f} % of its predicted "
                         f"ceiling of {predicted_ceiling_rps:g} req/s")
    return Saturation(bool(reasons), tuple(reasons), tuple(sentences))


# -- errors -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ErrorRate:
    """The window's requests answered with an error (a status outside success, a refused or
    reset connection): their own verdict, apart from saturation - an error is an answer."""
    errors: int
    sent: int
    share: float
    high: bool                     # share > ERROR_SHARE
    sentence: str


def error_rate(accounting: Accounting) -> ErrorRate | None:
    """The share of the window's sent requests answered with an error (summed over the
    repetitions); high above ERROR_SHARE. None when the errors or the sent count are not
    recorded, or nothing was sent."""
    errors, sent = accounting.errors, accounting.sent
    if errors is None or not sent:
        return None
    share = errors / sent
    high = share > ERROR_SHARE
    sentence = (f"{errors:,} of the window's {sent:,} requests were answered with an error "
                f"({100 * share:.1f} %" + (f", over {ERROR_SHARE * 100:g} %): the latencies "
                                         f"describe the other requests only" if high else ")"))
    return ErrorRate(errors, sent, share, high, sentence)


# -- host health --------------------------------------------------------------------------------

def host_figures(jfr_cpu: dict | None, counts_machine: float | None,
                 counts_server: float | None, counts_generator: float | None) -> tuple:
    """(machine, server, generator) shares, preferring JFR's jdk.CPULoad in the window
    (machineTotal; jvmUser + jvmSystem for the server) and falling back on counts.json."""
    machine, server = counts_machine, counts_server
    if jfr_cpu:
        if jfr_cpu.get("machine") is not None:
            machine = jfr_cpu["machine"]
        if jfr_cpu.get("jvm_user") is not None and jfr_cpu.get("jvm_system") is not None:
            server = jfr_cpu["jvm_user"] + jfr_cpu["jvm_system"]
    return machine, server, counts_generator


def host_health(machine: float | None, server: float | None,
                generator: float | None) -> HostHealth:
    """Host busy when the machine's CPU share > HOST_BUSY_MACHINE, or when it exceeds what the
    server and the generator used together by more than HOST_UNEXPLAINED (something else ran).
    The second test needs all three figures; without the machine's nothing is said."""
    unexplained = None
    if None not in (machine, server, generator):
        unexplained = machine - (server + generator)
    reason = None
    if machine is not None and machine > HOST_BUSY_MACHINE:
        reason = (f"the machine's CPU was {machine:.0%} busy during the window "
                  f"(over {HOST_BUSY_MACHINE:.0%})")
    elif unexplained is not None and unexplained > HOST_UNEXPLAINED:
        reason = (f"the machine's CPU was {machine:.0%} busy while the server ({server:.0%}) and "
                  f"the load generator ({generator:.0%}) explain {server + generator:.0%}: "
                  f"something else ran")
    return HostHealth(machine, server, generator, unexplained, reason is not None, reason)


def repetitions_host(hosts: list[tuple[int, HostHealth]]) -> HostHealth | None:
    """A cell's host health from its repetitions' (index, health): when some repetition's host
    was busy, that repetition's own figures and verdict, the reason naming it (a median beside
    one repetition's verdict would not agree with it); else the medians, quiet."""
    if not hosts:
        return None
    busy = next(((i, h) for i, h in hosts if h.host_busy), None)
    if busy is not None:
        index, health = busy
        reason = health.reason if len(hosts) == 1 else f"repetition {index}: {health.reason}"
        return HostHealth(health.machine_cpu, health.server_cpu, health.generator_cpu,
                          health.unexplained, True, reason, health.send_lag_p99_ms)

    def median(name: str) -> float | None:
        s = number_spread([getattr(h, name) for _, h in hosts])
        return None if s is None else s[1]
    return HostHealth(median("machine_cpu"), median("server_cpu"), median("generator_cpu"),
                      median("unexplained"), False, None, median("send_lag_p99_ms"))


# -- in flight ----------------------------------------------------------------------------------

def in_flight(window_mean: float | None, window_max: int | None, at_window_start: int | None,
              at_window_end: int | None, goodput_rps: float, mean: Percentile,
              saturated: bool) -> InFlight:
    """The measured in-flight figures, with a Little's-law cross-check (L = rate x mean latency)
    that only holds for a steady system: run on cells that are not saturated, consistent when
    within LITTLE_TOLERANCE of the measured mean (relative). The verdict: consistent |
    inconsistent | not checked: saturated | not checked: no measurement | not checked: censored
    mean."""
    measured = (window_mean, window_max, at_window_start, at_window_end)
    if saturated:
        return InFlight(*measured, None, "not checked: saturated")
    if mean.censored or mean.value_ms is None:
        return InFlight(*measured, None, "not checked: censored mean")
    little = goodput_rps * mean.value_ms / 1000.0
    if window_mean is None:
        return InFlight(*measured, little, "not checked: no measurement")
    ok = abs(little - window_mean) <= LITTLE_TOLERANCE * max(window_mean, little)
    return InFlight(*measured, little, "consistent" if ok else "inconsistent")


# -- repetitions --------------------------------------------------------------------------------

def spread(values: list[Percentile]) -> Spread:
    """[min, median, max] of one statistic over repetitions. A censored repetition sorts above
    every value; the median of an odd count is the middle one, of an even count the mean of the
    two middle ones (a lower bound when either is censored); no-data repetitions are left out.
    When any repetition's value is only an upper bound, so are the three."""
    known = sorted((v for v in values if v.known), key=Percentile.sort_key)
    if not known:
        return Spread(Percentile(), Percentile(), Percentile())
    n = len(known)
    if n % 2:
        median = known[n // 2]
    else:
        a, b = known[n // 2 - 1], known[n // 2]
        mid = (a.bound() + b.bound()) / 2.0
        median = Percentile(at_least_ms=mid) if (a.censored or b.censored) else Percentile(mid)
    if any(v.upper_bound for v in known):
        # a repetition's upper bound may hide a value below any of the others: the min, the
        # median and the max of the truths are each at most these, and no more is known
        return Spread(*(_at_most(v) for v in (known[0], median, known[-1])))
    return Spread(known[0], median, known[-1])


def _at_most(p: Percentile) -> Percentile:
    return p if p.censored else Percentile(p.value_ms, upper_bound=True)


def number_spread(values: list[float | None]) -> tuple[float, float, float] | None:
    """(min, median, max) of plain numbers over repetitions (rates, counts); None values left
    out, the median of an even count the mean of the two middle ones; None when nothing is left."""
    known = sorted(v for v in values if v is not None)
    if not known:
        return None
    n = len(known)
    median = known[n // 2] if n % 2 else (known[n // 2 - 1] + known[n // 2]) / 2.0
    return known[0], median, known[-1]


def repetition_spreads(stats: list[LatencyStats]) -> dict[str, Spread]:
    """Per statistic (p50 .. p999, max, mean) the spread over the repetitions' stats."""
    return {k: spread([s.get(k) for s in stats]) for k in STAT_KEYS}


def repetitions_disagree(spreads: dict[str, Spread], saturated: bool) -> bool:
    """Flag a cell below saturation whose repetitions disagree wildly: for p50 or p99, the
    largest repetition (its bound if censored) over the smallest value > SPREAD_DISAGREE_RATIO."""
    if saturated:
        return False
    for key in SPREAD_CHECKED:
        s = spreads.get(key)
        if s is None or s.min.value_ms is None or s.min.value_ms <= 0 or not s.max.known:
            continue
        if s.max.bound() / s.min.value_ms > SPREAD_DISAGREE_RATIO:
            return True
    return False


# -- where the time went ------------------------------------------------------------------------

@dataclass(frozen=True)
class TimeSplit:
    """A latency split into service (the work itself) and waiting (queued, the rest, >= 0)."""
    total_ms: float | None
    service_ms: float
    waiting_ms: float | None       # a lower bound when `lower_bound`
    service_pct: float | None      # of total; None when total is only a bound
    waiting_pct: float | None
    lower_bound: bool
    note: str | None


@dataclass(frozen=True)
class TimeAccount:
    mean: TimeSplit
    p99: TimeSplit


def service_time(service_time_ms: float | None, lowest_load_p50: Percentile) -> float | None:
    """Service time: `service_time_ms` when the run gives it, else the system's p50 at its
    lowest load (None when that is censored or missing)."""
    if service_time_ms is not None:
        return float(service_time_ms)
    return lowest_load_p50.value_ms


def where_the_time_went(mean: Percentile, p99: Percentile, service_ms: float) -> TimeAccount:
    """Mean (and p99) = service + waiting, waiting = max(0, total - service), in ms and as % of
    the total. A censored mean: waiting is at least bound - service, the shares cannot be
    computed. A censored p99: the same for the p99 split (its share of queue wait is at least
    what the bound gives, but the page prints it as not computable)."""
    return TimeAccount(_split(mean, service_ms, "mean"), _split(p99, service_ms, "p99"))


def _split(total: Percentile, service_ms: float, what: str) -> TimeSplit:
    if not total.known:
        return TimeSplit(None, service_ms, None, None, None, False, f"no {what}: no data")
    waiting = max(0.0, total.bound() - service_ms)
    if total.censored:
        return TimeSplit(None, service_ms, waiting, None, None, True,
                         f"the {what} is over {total.at_least_ms:g} ms (requests timed out): "
                         f"waiting is at least {waiting:.0f} ms, its share not computable")
    value = total.value_ms
    if value <= 0:
        return TimeSplit(value, service_ms, waiting, None, None, False, f"{what} is 0")
    return TimeSplit(value, service_ms, waiting, 100.0 * min(service_ms, value) / value,
                     100.0 * waiting / value, False, None)
