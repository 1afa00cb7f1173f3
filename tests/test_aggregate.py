"""aggregate.py: pure functions from histograms to load-curve cells, rows and series.

`Exact` below is a stand-in histogram over exact values that follows Java's percentile rule
(target count = max(1, ceil(nextAfter(p, -inf) / 100 * N)), the value of the sample reaching
it), so these tests check aggregate's own arithmetic independently of the HDR layer. The numbers
from real .hlog files are checked against Java in test_build.py's golden test.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.derive import aggregate, overload
from analysis.model import Accounting, Percentile, Repetition, Spread, System

KEYS = ("p50_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms", "mean_ms", "stddev_ms")


def stats_dict(h, unit):
    """histogram_stats as {data key: value}, count included."""
    s = aggregate.histogram_stats(h, unit)
    return {"count": s.count, **{k: s.value(k) for k in KEYS}}


class Exact:
    def __init__(self, values):
        self.values = sorted(values)

    @property
    def total_count(self):
        return len(self.values)

    @property
    def max(self):
        return self.values[-1] if self.values else 0

    @property
    def mean(self):
        return sum(self.values) / len(self.values) if self.values else 0.0

    @property
    def stddev(self):
        if not self.values:
            return 0.0
        m = self.mean
        return math.sqrt(sum((v - m) ** 2 for v in self.values) / len(self.values))

    def value_at_percentile(self, p):
        n = len(self.values)
        if n == 0:
            return 0
        target = max(1, math.ceil(math.nextafter(p, -math.inf) / 100 * n))
        return self.values[min(target, n) - 1]


@dataclass
class Interval:
    start_s: float
    length_s: float
    histogram: Exact
    tag: str | None = None


def test_histogram_stats_converts_units_once():
    h = Exact(range(1, 1001))  # 1..1000 in the recorded unit
    us = stats_dict(h, "us")
    assert us["count"] == 1000
    assert us["p50_ms"] == 0.5 and us["p99_ms"] == 0.99 and us["p999_ms"] == 0.999
    assert us["max_ms"] == 1.0 and us["mean_ms"] == pytest.approx(0.5005)
    ns = stats_dict(h, "ns")
    assert ns["p90_ms"] == 900 / 1e6
    ms = stats_dict(h, "ms")
    assert ms["p95_ms"] == 950 and ms["stddev_ms"] == pytest.approx(288.6749, rel=1e-6)


def test_empty_histogram_has_no_latencies():
    stats = stats_dict(Exact([]), "us")
    assert stats["count"] == 0
    assert all(stats[k] is None for k in ("p50_ms", "p999_ms", "max_ms", "mean_ms", "stddev_ms"))


@pytest.mark.parametrize("count,flags", [
    (288, ["p99", "p999"]),          # the async.java post's 10 msg/s row
    (1000, ["p999"]),                # 10 beyond p99: enough; 1 beyond p99.9: not
    (10_000, []),
    (100, ["p95", "p99", "p999"]),
    (0, ["p50", "p90", "p95", "p99", "p999"]),
])
def test_low_sample_flags(count, flags):
    assert aggregate.low_sample_percentiles(count) == flags


def rep(values, sent=None, errors=None, timeouts=None, duration_s=1):
    st = aggregate.histogram_stats(Exact(values), "ms")
    return Repetition(1, "x.hlog", st, aggregate.recorded_rate(st.count, duration_s),
                      Accounting(sent=sent, errors=errors, timed_out=timeouts), [])


def cell(offered_rate, reps, baseline_p50_ms=None):
    return aggregate.build_cell(scenario=None, system="s", load="l", offered_rate=offered_rate,
                                repetitions=reps, spectrum=[], baseline_p50_ms=baseline_p50_ms,
                                service_time_ms=None)


def test_cell_rates_saturation_and_drops():
    values = list(range(1, 751))
    c = cell(25, [rep(values, sent=760, errors=2, timeouts=8, duration_s=30)])
    assert c.stats.count == 750 and c.throughput_rps == 25.0 and c.goodput_rps is None
    assert c.saturation.saturated is False and c.saturation.reasons == ()
    assert c.accounting.sent == 760 and c.drops == 10 and c.drop_pct == pytest.approx(10 / 7.6)
    assert c.accounting.errors == 2 and c.accounting.timed_out == 8 and len(c.repetitions) == 1
    assert c.spread == {} and c.throughput_spread is None and c.goodput_spread is None


def test_goodput_rule_is_95_percent_of_offered():
    assert cell(100, [rep(list(range(1, 95)))]).saturation.reasons == ("goodput",)
    assert not cell(100, [rep(list(range(1, 96)))]).saturation.saturated


def test_latency_rule_against_the_lowest_load_p50():
    values = [500] * 10
    assert cell(10, [rep(values)], baseline_p50_ms=200).saturation.reasons == ("latency",)
    assert not cell(10, [rep(values)], baseline_p50_ms=250).saturation.saturated


def test_cell_without_sent_has_no_drops():
    c = cell(10, [rep([1, 2])])
    assert c.drops is None and c.accounting.sent is None and c.accounting.errors is None
    assert c.saturation.saturated is True and c.saturation.reasons == ("goodput",)  # 2 of 10/s


def test_repetitions_give_medians_and_spread():
    reps = [rep(list(range(1, 101))), rep(list(range(1, 201))), rep(list(range(1, 151)))]
    c = cell(150, reps)
    assert len(c.repetitions) == 3 and c.stats.count == 450
    assert c.throughput_rps == 150 and c.throughput_spread == (100, 150, 200)
    assert c.spread["p99"] == Spread(Percentile(99), Percentile(149), Percentile(198))
    assert c.stats.value("p99_ms") == 149 and c.stats.value("max_ms") == 150
    assert c.low_sample == aggregate.low_sample_percentiles(100)


def test_repetition_counts_sum_only_when_all_known():
    c = cell(1, [rep([1], sent=5), rep([1], sent=None)])
    assert c.accounting.sent is None


@pytest.mark.parametrize("limit,service_ms,ceiling", [
    (20, 200, 100.0), (200, 300, 200 / 0.3), (None, 200, None), (20, None, None)])
def test_predicted_ceiling_is_workers_over_service_time(limit, service_ms, ceiling):
    got = aggregate.predicted_ceiling(limit, service_ms)
    assert got == (pytest.approx(ceiling) if ceiling else None)


def test_system_measured_vs_predicted():
    s = System("pool", "Pool", 0, concurrency_limit=20)
    aggregate.fill_system(s, service_time_ms=200, throughput_rps=[25.0, 50.0, 98.7])
    assert s.predicted_ceiling_rps == 100.0 and s.measured_peak_rps == 98.7
    assert s.peak_vs_predicted_pct == pytest.approx(-1.3)
    none = System("virt", "Virtual", 1)
    aggregate.fill_system(none, service_time_ms=200, throughput_rps=[])
    assert (none.predicted_ceiling_rps, none.measured_peak_rps, none.peak_vs_predicted_pct) == (
        None, None, None)


def test_littles_law_only_when_not_saturated():
    values = [200] * 100
    c = cell(100, [rep(values)])                  # 100/s at 200 ms: 20 in flight
    assert c.in_flight.littles_law == pytest.approx(20.0) and c.in_flight.measured_mean is None
    assert c.in_flight.verdict == "not checked: no measurement"
    sat = cell(1000, [rep(values)])
    assert sat.in_flight.littles_law is None and sat.in_flight.verdict == "not checked: saturated"


def test_interval_series_relative_time_rate_and_empty_intervals():
    ivs = [Interval(100.0, 1.0, Exact([1000, 2000, 3000])),
           Interval(101.0, 1.0, Exact([])),
           Interval(102.0, 0.5, Exact([5000]))]
    rows = aggregate.interval_series(ivs, "us")
    assert [r["t_s"] for r in rows] == [0.0, 1.0, 2.0]
    assert [r["count"] for r in rows] == [3, 0, 1]
    assert [r["throughput_rps"] for r in rows] == [3.0, 0.0, 2.0]
    assert rows[0]["p99_ms"] == 3.0 and rows[0]["max_ms"] == 3.0 and rows[0]["p50_ms"] == 2.0
    assert rows[1]["p99_ms"] is None and rows[1]["max_ms"] is None


def test_spectrum_percentiles_stop_where_samples_run_out():
    ps = aggregate.spectrum_percentiles(1000)
    assert ps[0] == 0.0 and ps == sorted(ps)
    assert 1.0 / (1.0 - ps[-1] / 100.0) == pytest.approx(1000)
    assert aggregate.spectrum_percentiles(1) == [0.0]


def test_percentile_spectrum_ends_at_max():
    points = aggregate.percentile_spectrum(Exact(range(1, 10_001)), "us")
    assert points[0] == (0.0, 0.001, False)
    assert points[-1] == (100.0, 10.0, False)
    values = [v for _, v, _ in points]
    assert values == sorted(values)
    assert aggregate.percentile_spectrum(Exact([]), "us") == []


def test_percentile_spectrum_draws_ranks_among_timeouts_at_the_timeout():
    from analysis.read.hdr.histogram import Histogram, layout_for
    h = Histogram.from_values(layout_for(1, 3_600_000_000, 3), list(range(1000, 1090)))
    points = aggregate.percentile_spectrum(h, "us", timed_out=10, timeout_ms=2000.0)
    # 90 answered, 10 timed out: p90's rank (90) is the last answered, p91 on at the timeout
    assert all(not censored for p, _, censored in points if p <= 90.0)
    assert points[0][:2] == (0.0, 1.0)
    assert all(v == 2000.0 and censored for p, v, censored in points if p > 90.0)
    assert points[-1] == (100.0, 2000.0, True)


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.integers(min_value=0, max_value=2**40), min_size=1, max_size=300),
       unit=st.sampled_from(["ns", "us", "ms"]))
def test_percentiles_are_ordered(values, unit):
    s = stats_dict(Exact(values), unit)
    chain = [s["p50_ms"], s["p90_ms"], s["p95_ms"], s["p99_ms"], s["p999_ms"], s["max_ms"]]
    assert chain == sorted(chain)


def test_a_cells_spreads_are_taken_once_for_its_medians_and_its_spread(monkeypatch):
    reps = [rep(list(range(1, 200 + 40 * i))) for i in range(3)]
    expected = cell(25, reps)
    calls = []
    inner = overload.repetition_spreads
    monkeypatch.setattr(overload, "repetition_spreads",
                        lambda stats: calls.append(stats) or inner(stats))
    c = cell(25, reps)
    assert len(calls) == 1
    assert c.stats == expected.stats and c.spread == expected.spread
    assert aggregate.cell_stats(reps) == expected.stats
