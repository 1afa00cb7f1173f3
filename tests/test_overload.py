"""Overload accounting on synthetic request streams, censored percentiles against Java, and each
rule of analysis/derive/overload.py on its own.

The simulator below is independent of the code under test: an open-loop generator sending at a
fixed rate from intended send times, a FIFO server with `workers` workers each holding a request
for `service_s` (it keeps working on requests whose client gave up, as an HTTP server does), a
client timeout, and warm-up / window / drain phases as the harness runs them.
"""
from __future__ import annotations

import heapq
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.read.counts import read_counts
from analysis.read.hdr.histogram import Histogram, layout_for
from analysis.read.hdr.log import read_hlog
from analysis.model import Percentile
from analysis.derive.overload import QUEUE_MIN_POINTS, _merged_mean
from analysis.derive.overload import (
    window_rates, censored_stats, host_figures, host_health, in_flight,
    measured_ceiling, number_spread, queue_growth, queue_growth_from_p50, repetition_spreads,
    repetitions_disagree, saturation, service_time, spread, where_the_time_went)
from tests.conftest import REPO

US = 0.001   # ms per microsecond
LAYOUT = layout_for(1, 3_600_000_000, 3)
FIXTURES = REPO / "tests" / "fixtures" / "overload"
GOLDEN = REPO / "tests" / "golden" / "overload"
# the first demo's pool20 logs (schema 1, recorded before issue 10; commit ac7dcc8)
DEMO_V1 = FIXTURES / "demo-v1"


# -- the simulator ------------------------------------------------------------------------------

def simulate(rate, workers, service_s, timeout_s, warmup_s=5.0, window_s=12.0):
    """-> (counts v2 dict as the harness writes it, completed window latencies in us)."""
    w0, w1 = warmup_s, warmup_s + window_s
    horizon = w1 + timeout_s + 1.0
    n = int(math.ceil(horizon * rate))
    intended = np.arange(n) / rate
    free = [0.0] * workers
    done = np.empty(n)
    for i, t in enumerate(intended):          # FIFO: in arrival order, the first free worker
        start = max(t, heapq.heappop(free))
        done[i] = start + service_s
        heapq.heappush(free, done[i])
    latency = done - intended
    answered = latency <= timeout_s
    resolved = np.where(answered, done, intended + timeout_s)
    in_window = (intended >= w0) & (intended < w1)
    drain_end = float(resolved[in_window].max())
    sent = intended < drain_end               # the generator stops when the drain ends
    intended, done, latency, answered, resolved, in_window = (
        a[sent] for a in (intended, done, latency, answered, resolved, in_window))
    resolved_in_run = resolved <= drain_end

    starts, ends = np.sort(intended), np.sort(np.where(resolved_in_run, resolved, np.inf))

    def flight(t):
        return np.searchsorted(starts, t, "right") - np.searchsorted(ends, t, "right")

    intervals = []
    for k in range(int(math.ceil(drain_end))):
        a, b = float(k), float(min(k + 1, drain_end))
        samples = flight(np.arange(a, b, 0.01))
        phase = "warmup" if a < w0 else "window" if a < w1 else "drain"
        intervals.append({
            "t_s": a, "length_s": b - a, "phase": phase,
            "sent": int(((intended >= a) & (intended < b)).sum()),
            "completed": int((answered & (done >= a) & (done < b)).sum()),
            "timed_out": int((~answered & (resolved >= a) & (resolved < b)).sum()),
            "errors": 0, "in_flight_mean": float(samples.mean()),
            "in_flight_max": int(samples.max())})
    win = [iv for iv in intervals if iv["phase"] == "window"]
    window_samples = flight(np.arange(w0, w1, 0.01))
    counts = {
        "schema_version": 2, "offered_rate": rate, "warmup_s": warmup_s, "duration_s": window_s,
        "timeout_s": timeout_s, "value_unit": "us",
        "window": {"start_s": w0, "end_s": w1, "start_epoch_ms": 1_795_307_129_308,
                   "end_epoch_ms": 1_795_307_129_308 + int(window_s * 1000),
                   "sent": int(in_window.sum()), "completed": int((in_window & answered).sum()),
                   "timed_out": int((in_window & ~answered).sum()), "errors": 0, "not_sent": 0},
        "drain_s": drain_end - w1,
        "in_flight": {"at_window_start": int(flight(w0)), "at_window_end": int(flight(w1)),
                      "window_mean": float(window_samples.mean()),
                      "window_max": int(window_samples.max())},
        "intervals": intervals,
        "generator": {"cpu_s_window": 0.6, "cpu_share_window": 0.025},
        "machine": {"cpu_share_window": 0.12, "cores": 2},
        "server": {"cpu_share_window": 0.05},
        "send_lag_us_window": {"p50": 60, "p99": 900, "p999": 2000, "max": 3000,
                               "count": int(in_window.sum())},
        "host_check": {"busy_share_before": 0.03, "loadavg_1m_before": 0.2, "waited_s": 0,
                       "verdict": "quiet"},
    }
    assert sum(iv["completed"] for iv in win) >= 0
    return counts, np.round(latency[in_window & answered] * 1e6).astype(np.int64)


def cell(tmp_path, name, *args, baseline_p50_ms=None):
    """Simulate, write and read back the counts file, and derive everything for the cell."""
    doc, latencies_us = simulate(*args)
    path = tmp_path / f"{name}.counts.json"
    path.write_text(json.dumps(doc))
    c = read_counts(path)
    hist = Histogram.from_values(LAYOUT, latencies_us)
    stats = censored_stats(hist, c.window.timed_out, c.timeout_s * 1000, US, c.window.errors)
    rates = window_rates(c.window.completed, c.window.duration_s, c.server_completions_window)
    win = c.window_intervals()
    queue = queue_growth([iv.t_s for iv in win], [iv.in_flight_mean for iv in win],
                         c.offered_rate)
    sat = saturation(rates.goodput_rps, c.offered_rate, queue, stats.get("p50"), baseline_p50_ms)
    return c, stats, rates, queue, sat


# -- whole cells --------------------------------------------------------------------------------

def test_fifo_at_8x_its_ceiling_answers_no_window_request(tmp_path):
    # 2 workers x 200 ms = 10 req/s; offered 80 req/s
    c, stats, rates, queue, sat = cell(tmp_path, "r80", 80, 2, 0.2, 15.0, baseline_p50_ms=200.0)
    w = c.window
    assert (w.sent, w.completed, w.timed_out, w.errors, w.not_sent) == (960, 0, 960, 0, 0)
    assert c.drain_s == pytest.approx(15.0 - 1 / 80)   # the last window request times out
    assert stats.population == 960 and stats.completed == 0
    for key in ("p50", "p90", "p95", "p99", "p999", "max"):
        assert stats.get(key) == Percentile(at_least_ms=15000.0), key
    # Java's getMean with every timeout recorded at 15 s: its bucket's median-equivalent value
    assert stats.mean.censored and stats.mean.at_least_ms == pytest.approx(15003.648)
    assert rates.goodput_rps == 0.0
    data = stats.as_data()
    assert data["p99_ms"] is None and data["p99_at_least_ms"] == 15000.0
    assert data["population"] == 960 and data["timed_out"] == 960
    # the server still completes 10 req/s during the window: warm-up requests
    assert rates.throughput_rps == pytest.approx(10.0, abs=0.2)
    assert sat.saturated and sat.reasons == ("goodput", "queue", "latency")
    assert c.in_flight.at_window_end - c.in_flight.at_window_start > 800
    check = in_flight(c.in_flight.window_mean, c.in_flight.window_max, c.in_flight.at_window_start,
                      c.in_flight.at_window_end, rates.goodput_rps, stats.mean, sat.saturated)
    assert check.verdict == "not checked: saturated" and check.littles_law is None
    split = where_the_time_went(stats.mean, stats.get("p99"), 200.0)
    assert split.mean.lower_bound and split.mean.waiting_ms == pytest.approx(14803.648)
    assert split.mean.waiting_pct is None and split.p99.waiting_pct is None


def test_fifo_at_its_ceiling_with_overhead_queues(tmp_path):
    # 20 workers x 204 ms = 98 req/s of capacity against 100 offered: everything is answered,
    # so throughput holds, but the queue grows by ~2 requests per second
    c, stats, rates, queue, sat = cell(tmp_path, "r100", 100, 20, 0.204, 15.0,
                                       baseline_p50_ms=200.0)
    assert (c.window.completed, c.window.timed_out) == (1200, 0)
    assert rates.goodput_rps == pytest.approx(100.0)
    assert rates.throughput_rps == pytest.approx(98.0, abs=1.5)
    assert queue.grows and queue.slope_per_s == pytest.approx(2.0, rel=0.15)
    assert queue.rise > 3 * queue.residual_std
    assert sat.reasons == ("queue", "latency")
    assert not stats.get("p99").censored and stats.get("p50").value_ms > 400
    assert "least-squares" in queue.rule and "0.5 % of the offered rate" in queue.rule


def test_healthy_server_is_not_saturated(tmp_path):
    c, stats, rates, queue, sat = cell(tmp_path, "r50", 50, 20, 0.2, 15.0, baseline_p50_ms=200.0)
    assert (c.window.sent, c.window.completed, c.window.timed_out) == (600, 600, 0)
    assert not queue.grows and not sat.saturated and sat.reasons == ()
    assert not any(stats.get(k).censored for k in ("p50", "p99", "p999", "max", "mean"))
    assert stats.as_data()["p50_at_least_ms"] is None and stats.as_data()["p50_ms"] > 200
    # 200 ms in the layout's bucket: 200,000 us is exact at 3 digits -> highest equivalent
    assert stats.get("p50").value_ms == pytest.approx(200.063, abs=0.001)
    check = in_flight(c.in_flight.window_mean, c.in_flight.window_max, c.in_flight.at_window_start,
                      c.in_flight.at_window_end, rates.goodput_rps, stats.mean, sat.saturated)
    assert check.verdict == "consistent" and check.littles_law == pytest.approx(10.0, rel=0.01)
    assert c.in_flight.window_mean == pytest.approx(10.0, rel=0.02)
    split = where_the_time_went(stats.mean, stats.get("p99"), 200.0)
    assert split.mean.waiting_ms < 1.0 and split.mean.service_pct == pytest.approx(100, abs=0.5)


# -- censored percentiles against Java ------------------------------------------------------

CASES = ["none", "p999-boundary", "p999-censored", "p99-censored", "p50-censored"]


@pytest.mark.parametrize("name", CASES)
def test_censored_percentiles_match_java_on_the_population(name):
    """Logs written by HdrHistogram's HistogramLogWriter (tests/golden/overload/regen); expected
    values are javastats on the same population with every timeout recorded untagged."""
    log = read_hlog(FIXTURES / f"{name}.hlog")
    completed = log.merged(tag=None)
    timed_out = log.merged(tag="timeout").total_count if "timeout" in log.tags() else 0
    java = json.loads((GOLDEN / f"{name}.json").read_text())
    stats = censored_stats(completed, timed_out, 15000.0, US)
    assert stats.population == java["total_count"]
    n = stats.population
    for key, pct in [("p50", "50"), ("p90", "90"), ("p95", "95"), ("p99", "99"),
                     ("p999", "99.9")]:
        value = stats.get(key)
        target = max(1, math.ceil(math.nextafter(float(pct), -math.inf) / 100 * n))
        if target > completed.total_count:
            assert value == Percentile(at_least_ms=15000.0), key
            # Java's value on the population is the timeout's bucket
            assert java["percentiles"][pct] * US >= 15000.0
        else:
            assert not value.censored
            assert value.value_ms == pytest.approx(java["percentiles"][pct] * US, abs=1e-9), key
    if timed_out:
        assert stats.max == Percentile(at_least_ms=15000.0)
        assert stats.mean.at_least_ms == pytest.approx(java["mean"] * US, rel=1e-12)
    else:
        assert stats.max.value_ms == pytest.approx(java["max"] * US, abs=1e-9)
        assert stats.mean.value_ms == pytest.approx(java["mean"] * US, rel=1e-12)


def test_censoring_boundaries_are_where_the_cases_say():
    def censored(name):
        log = read_hlog(FIXTURES / f"{name}.hlog")
        s = censored_stats(log.merged(), log.merged(tag="timeout").total_count, 15000.0, US)
        return [k for k in ("p50", "p90", "p95", "p99", "p999") if s.get(k).censored]
    assert censored("p999-boundary") == []
    assert censored("p999-censored") == ["p999"]
    assert censored("p99-censored") == ["p99", "p999"]
    assert censored("p50-censored") == ["p50", "p90", "p95", "p99", "p999"]


def test_empty_population_has_no_data_and_errors_stay_apart():
    s = censored_stats(Histogram.empty(LAYOUT), 0, 15000.0, US, errors=7)
    assert s.population == 0 and s.errors == 7 and not s.get("p50").known


# -- the rules one by one ----------------------------------------------------------------------

def test_throughput_rule_boundary():
    assert saturation(95.0, 100.0, None, Percentile(200.0), 200.0).reasons == ()
    assert saturation(94.9, 100.0, None, Percentile(200.0), 200.0).reasons == ("goodput",)


def test_latency_rule():
    assert saturation(100, 100, None, Percentile(400.0), 200.0).reasons == ()
    assert saturation(100, 100, None, Percentile(401.0), 200.0).reasons == ("latency",)
    assert saturation(100, 100, None, Percentile(at_least_ms=15000.0), 200.0).reasons == ("latency",)
    assert saturation(100, 100, None, Percentile(900.0), None).reasons == ()   # no baseline


def test_utilisation_rule():
    """A pool of 20 x 200 ms (ceiling 100 req/s) offered its ceiling: it delivers 99.7 req/s,
    every request answered, p50 well under 2 x the unloaded one - and still it is saturated."""
    at_ceiling = saturation(99.7, 100.0, None, Percentile(253.0), 202.0,
                            throughput_rps=99.7, predicted_ceiling_rps=100.0)
    assert at_ceiling.reasons == ("utilisation",)
    assert "99.7 req/s, 100 % of its predicted ceiling of 100 req/s" in at_ceiling.sentences[0]
    assert saturation(50.0, 50.0, None, Percentile(201.0), 202.0, throughput_rps=94.9,
                      predicted_ceiling_rps=100.0).reasons == ()
    assert saturation(50.0, 50.0, None, Percentile(201.0), 202.0, throughput_rps=95.0,
                      predicted_ceiling_rps=100.0).reasons == ("utilisation",)
    # no predicted ceiling (virtual threads): not tested
    assert saturation(800.0, 800.0, None, Percentile(201.0), 202.0, throughput_rps=800.0,
                      predicted_ceiling_rps=None).reasons == ()


def test_queue_rule_needs_slope_and_significance():
    t = list(range(12))
    flat = [20 + (0.5 if i % 2 else -0.5) for i in t]
    assert not queue_growth(t, flat, 100).grows
    slow = [20 + 0.45 * i for i in t]                # 0.45/s < 0.5 % of 100 req/s
    assert not queue_growth(t, slow, 100).grows
    noisy = [20 + 1.5 * i + (30 if i % 2 else -30) for i in t]   # rise 16.5 < 3 x scatter
    assert not queue_growth(t, noisy, 100).grows
    steady = [20 + 1.5 * i for i in t]
    q = queue_growth(t, steady, 100)
    assert q.grows and q.slope_per_s == pytest.approx(1.5) and q.rise == pytest.approx(16.5)
    assert not queue_growth(t[:3], steady[:3], 100).grows   # too few intervals


def test_demo_pool_at_100_is_saturated_by_queue_and_latency():
    """The issue's case: the first demo's pool20 at 100 req/s (20 threads x 200 ms) queued
    every request. Per-interval p50 of its window (the .hlog) is tested as in-flight by Little's law."""
    log = read_hlog(DEMO_V1 / "pool20-r100.hlog")
    t, p50 = [], []
    for iv in log.select():
        t.append(iv.start_s)
        p50.append(iv.histogram.value_at_percentile(50) * US)
    queue = queue_growth_from_p50(t, p50, 100.0)
    base = read_hlog(DEMO_V1 / "pool20-r25.hlog").merged().value_at_percentile(50) * US
    whole = log.merged()
    stats = censored_stats(whole, 0, 15000.0, US)
    sat = saturation(whole.total_count / 12.0, 100.0, queue, stats.get("p50"), base)
    assert "latency" in sat.reasons and "queue" in sat.reasons, (queue, sat)


def test_host_health():
    quiet = host_health(0.30, 0.10, 0.12)
    assert not quiet.host_busy and quiet.unexplained == pytest.approx(0.08)
    assert host_health(0.81, 0.5, 0.3).host_busy
    other = host_health(0.40, 0.10, 0.12)           # 18 % unexplained
    assert other.host_busy and "something else ran" in other.reason
    assert not host_health(0.40, None, 0.12).host_busy   # cannot tell without the server
    # the demo's case: JFR says machine 0.937 while the server used 3 %
    demo = host_health(*host_figures({"machine": 0.937, "jvm_user": 0.02, "jvm_system": 0.01},
                                     None, None, 0.05))
    assert demo.host_busy and demo.server_cpu == pytest.approx(0.03) and "94%" in demo.reason


def test_in_flight_check_verdicts():
    assert in_flight(10.0, 14, 9, 10, 50.0, Percentile(260.0), False).verdict == "inconsistent"
    assert in_flight(None, None, None, None, 50.0, Percentile(200.0), False).verdict == \
        "not checked: no measurement"
    assert in_flight(10.0, 14, 9, 10, 50.0, Percentile(at_least_ms=15000.0), False).verdict == \
        "not checked: censored mean"


def test_spread_with_censored_repetitions():
    s = spread([Percentile(204.0), Percentile(199.0), Percentile(201.0)])
    assert (s.min.value_ms, s.median.value_ms, s.max.value_ms) == (199.0, 201.0, 204.0)
    s = spread([Percentile(at_least_ms=15000.0), Percentile(9000.0), Percentile(at_least_ms=15000.0)])
    assert s.min == Percentile(9000.0) and s.median == Percentile(at_least_ms=15000.0)
    s = spread([Percentile(100.0), Percentile(at_least_ms=15000.0)])
    assert s.median == Percentile(at_least_ms=7550.0)
    s = spread([Percentile(100.0), Percentile(300.0)])
    assert s.median == Percentile(200.0)


def test_repetitions_disagree_only_below_saturation():
    stats = [censored_stats(Histogram.from_values(LAYOUT, [v * 1000] * 10), 0, 15000.0, US)
             for v in (100, 150, 250)]
    spreads = repetition_spreads(stats)
    assert spreads["p50"].median.value_ms == pytest.approx(150.0, rel=1e-3)
    assert repetitions_disagree(spreads, saturated=False)
    assert not repetitions_disagree(spreads, saturated=True)
    close = repetition_spreads(stats[:2])
    assert not repetitions_disagree(close, saturated=False)


def test_where_the_time_went():
    split = where_the_time_went(Percentile(500.0), Percentile(900.0), service_time(None, Percentile(200.0)))
    assert split.mean.waiting_ms == 300.0 and split.mean.waiting_pct == 60.0
    assert split.p99.waiting_ms == 700.0 and split.p99.service_pct == pytest.approx(22.222, 1e-3)
    assert service_time(200, Percentile(at_least_ms=15000.0)) == 200.0
    assert service_time(None, Percentile(at_least_ms=15000.0)) is None
    faster = where_the_time_went(Percentile(150.0), Percentile(190.0), 200.0)
    assert faster.mean.waiting_ms == 0.0 and faster.mean.service_pct == 100.0


def test_measured_ceiling_is_the_highest_throughput():
    assert measured_ceiling([24.9, 49.8, 97.1, None, 98.4]) == 98.4
    assert measured_ceiling([None]) is None
    with pytest.raises(ValueError):
        window_rates(1, 0.0, 1)


def test_double_histogram_without_timeouts_is_javas():
    """A DoubleHistogram log (GenHlog) against javastats' golden for it (tests/golden/hgrm)."""
    h = read_hlog(REPO / "tests" / "fixtures" / "hlog" / "gen-ms-double.hlog").merged()
    java = json.loads((REPO / "tests" / "golden" / "hgrm" / "expected" /
                       "gen-double.stats.json").read_text())
    s = censored_stats(h, 0, 30.0, 1.0)
    for key, pct in [("p50", "50"), ("p90", "90"), ("p99", "99"), ("p999", "99.9")]:
        assert s.get(key).value_ms == java["percentiles"][pct], key
    assert s.max.value_ms == java["max"] and s.mean.value_ms == java["mean"]
    censored = censored_stats(h, 40, 30.0, 1.0)     # N = 20,040: p99.9's rank is 20,020
    assert censored.get("p999") == Percentile(at_least_ms=30.0) and not censored.get("p99").censored
    assert censored.mean.at_least_ms == pytest.approx((java["mean"] * 20000 + 30 * 40) / 20040)


def test_number_spread():
    assert number_spread([99.1, None, 97.0, 98.4]) == (97.0, 98.4, 99.1)
    assert number_spread([3.0, 1.0]) == (1.0, 2.0, 3.0)
    assert number_spread([None]) is None


def test_one_repetitions_upper_bound_makes_the_spread_upper_bounds():
    """An upper bound (a spectrum's first row above the level, issue 33) may hide a value below
    every other repetition's: with exact 3 and 5 and "<= 7" the truths may be 3, 5, 1, whose
    median is 3, not 5. So min, median and max are each only upper bounds; a censored value
    stays a lower bound."""
    s = spread([Percentile(3.0), Percentile(7.0, upper_bound=True), Percentile(5.0)])
    assert [(p.value_ms, p.upper_bound) for p in (s.min, s.median, s.max)] == \
        [(3.0, True), (5.0, True), (7.0, True)]
    s = spread([Percentile(3.0), Percentile(5.0)])
    assert not s.median.upper_bound and s.median.value_ms == 4.0
    s = spread([Percentile(3.0, upper_bound=True), Percentile(at_least_ms=9.0),
                         Percentile(at_least_ms=11.0)])
    assert s.median.censored and s.max.censored and not s.max.upper_bound


def test_percentiles_found_in_one_search_equal_each_found_alone():
    """censored_stats looks its percentiles up together (values_at_counts): the same value for
    every target as the one-at-a-time lookup, for an integer and a double histogram."""
    from analysis.derive.overload import value_at_count, values_at_counts
    from analysis.read.hdr.double import DoubleHistogram
    rng = np.random.default_rng(36)
    values = (rng.lognormal(8, 1.5, 5000)).astype(np.int64) + 1
    h = Histogram.from_values(LAYOUT, values.tolist())
    targets = sorted({1, 2, h.total_count // 2, h.total_count - 1, h.total_count,
                      *rng.integers(1, h.total_count, 50).tolist()})
    for hist in (h, DoubleHistogram(h, 2.0 ** -10, 1000)):
        assert values_at_counts(hist, targets) == [value_at_count(hist, t) for t in targets]
    assert values_at_counts(h, []) == []


@settings(max_examples=300, deadline=None)
@given(values=st.lists(st.integers(0, 5_000_000_000), max_size=40),
       timeout=st.integers(0, 8_000_000_000), timed_out=st.integers(1, 10**12),
       digits=st.sampled_from([2, 3]))
def test_the_mean_with_timeouts_is_that_of_the_summed_histograms(values, timeout, timed_out,
                                                                   digits):
    # _merged_mean adds the timeouts' one entry in place: the same mean to the bit as building
    # a histogram of them and adding it (timeouts in an occupied bucket, a new one, beyond the
    # layout's range, at 0)
    layout = layout_for(1, 3_600_000_000, digits)
    h = Histogram.from_values(layout, values + [timeout][:len(values) % 2])
    summed = (h + Histogram.from_values(layout, [timeout], [timed_out])).mean
    assert _merged_mean(h, timeout, timed_out).hex() == summed.hex()


def test_the_mean_with_timeouts_builds_no_histogram(monkeypatch):
    h = Histogram.from_values(LAYOUT, [1200, 5300, 5300, 9000])
    expected = (h + Histogram.from_values(LAYOUT, [15000], [3])).mean * US

    def refused(*args, **kwargs):
        raise AssertionError("a histogram built for one entry")
    monkeypatch.setattr(Histogram, "from_values", refused)
    assert censored_stats(h, 3, 15.0, US).mean.at_least_ms == expected


@settings(max_examples=200, deadline=None)
@given(points=st.lists(st.tuples(st.floats(0, 1e4), st.floats(-1e6, 1e6)), min_size=0,
                       max_size=90),
       rate=st.floats(1, 1e5))
def test_the_queue_fit_is_the_least_squares_line_to_the_bit(points, rate):
    # queue_growth takes the means as sum / n: numpy's mean() of the same float64 arrays
    t = [x for x, _ in points]
    y = [v for _, v in points]
    got = queue_growth(t, y, rate)
    n = len(t)
    if n < QUEUE_MIN_POINTS:
        assert got.slope_per_s is None
        return
    ta, ya = np.asarray(t, np.float64), np.asarray(y, np.float64)
    sxx = float(((ta - ta.mean()) ** 2).sum())
    if sxx == 0:
        assert got.slope_per_s is None
        return
    slope = float(((ta - ta.mean()) * (ya - ya.mean())).sum()) / sxx
    residuals = ya - ((float(ya.mean()) - slope * float(ta.mean())) + slope * ta)
    assert (got.slope_per_s, got.rise) == (slope, slope * float(ta.max() - ta.min()))
    assert got.residual_std == math.sqrt(float((residuals ** 2).sum()) / (n - 2))
