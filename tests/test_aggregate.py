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

from analysis import aggregate


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
    us = aggregate.histogram_stats(h, "us")
    assert us["count"] == 1000
    assert us["p50_ms"] == 0.5 and us["p99_ms"] == 0.99 and us["p999_ms"] == 0.999
    assert us["max_ms"] == 1.0 and us["mean_ms"] == pytest.approx(0.5005)
    ns = aggregate.histogram_stats(h, "ns")
    assert ns["p90_ms"] == 900 / 1e6
    ms = aggregate.histogram_stats(h, "ms")
    assert ms["p95_ms"] == 950 and ms["stddev_ms"] == pytest.approx(288.6749, rel=1e-6)


def test_empty_histogram_has_no_latencies():
    stats = aggregate.histogram_stats(Exact([]), "us")
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


def stats(values, **extra):
    s = aggregate.histogram_stats(Exact(values), "ms")
    s.update({"sent": None, "errors": None, "timeouts": None})
    s.update(extra)
    return s


def test_cell_summary_rates_saturation_and_drops():
    values = list(range(1, 751))
    cell = aggregate.cell_summary(offered_rate=25, duration_s=30,
                                  merged=stats(values), repetitions=[stats(values, sent=760,
                                                                           errors=2, timeouts=8)])
    assert cell["count"] == 750 and cell["achieved_rate"] == 25.0
    assert cell["saturated"] is False
    assert cell["sent"] == 760 and cell["drops"] == 10 and cell["drop_pct"] == pytest.approx(10 / 7.6)
    assert cell["errors"] == 2 and cell["timeouts"] == 8 and cell["repetitions"] == 1
    assert "p99_ms_min" not in cell


def test_saturation_threshold_is_90_percent_of_offered():
    assert aggregate.is_saturated(89.99, 100) is True
    assert aggregate.is_saturated(90.0, 100) is False


def test_cell_without_sent_has_no_drops():
    cell = aggregate.cell_summary(offered_rate=10, duration_s=1, merged=stats([1, 2]),
                                  repetitions=[stats([1, 2])])
    assert "drops" not in cell and "sent" not in cell and "errors" not in cell
    assert cell["saturated"] is True  # 2/s against 10/s offered


def test_repetitions_give_spread_and_rate_over_total_duration():
    reps = [stats(list(range(1, 101))), stats(list(range(1, 201))), stats(list(range(1, 151)))]
    merged = stats(list(range(1, 101)) + list(range(1, 201)) + list(range(1, 151)))
    cell = aggregate.cell_summary(offered_rate=150, duration_s=1, merged=merged, repetitions=reps)
    assert cell["repetitions"] == 3
    assert cell["achieved_rate"] == 450 / 3
    assert (cell["p99_ms_min"], cell["p99_ms_median"], cell["p99_ms_max"]) == (99, 149, 198)
    assert (cell["achieved_rate_min"], cell["achieved_rate_median"],
            cell["achieved_rate_max"]) == (100, 150, 200)


def test_repetition_counts_sum_only_when_all_known():
    reps = [stats([1], sent=5), stats([1], sent=None)]
    cell = aggregate.cell_summary(offered_rate=1, duration_s=1, merged=stats([1, 1]), repetitions=reps)
    assert "sent" not in cell


@pytest.mark.parametrize("limit,service_ms,ceiling", [
    (20, 200, 100.0), (200, 300, 200 / 0.3), (None, 200, None), (20, None, None)])
def test_predicted_ceiling_is_workers_over_service_time(limit, service_ms, ceiling):
    got = aggregate.predicted_ceiling(limit, service_ms)
    assert got == (pytest.approx(ceiling) if ceiling else None)


def test_system_summary_measured_vs_predicted():
    s = aggregate.system_summary(concurrency_limit=20, service_time_ms=200,
                                 achieved_rates=[25.0, 50.0, 98.7])
    assert s["predicted_ceiling_rps"] == 100.0 and s["measured_peak_rps"] == 98.7
    assert s["peak_vs_predicted_pct"] == pytest.approx(-1.3)
    none = aggregate.system_summary(concurrency_limit=None, service_time_ms=200, achieved_rates=[])
    assert none == {"predicted_ceiling_rps": None, "measured_peak_rps": None,
                    "peak_vs_predicted_pct": None}


def test_littles_law_catches_an_impossible_row():
    # credibility.md: 2,500 msg/s at a 2 s mean is 5,000 in flight; a 400 cap rules it out.
    bad = aggregate.littles_law(achieved=2500, mean_ms=2000, in_flight_cap=400)
    assert bad == {"in_flight": 5000.0, "cap": 400, "consistent": False}
    ok = aggregate.littles_law(achieved=100, mean_ms=200, in_flight_cap=400)
    assert ok["in_flight"] == 20.0 and ok["consistent"] is True
    assert aggregate.littles_law(achieved=1, mean_ms=None, in_flight_cap=4) is None
    assert "consistent" not in aggregate.littles_law(achieved=1, mean_ms=1, in_flight_cap=None)


def test_interval_series_relative_time_rate_and_empty_intervals():
    ivs = [Interval(100.0, 1.0, Exact([1000, 2000, 3000])),
           Interval(101.0, 1.0, Exact([])),
           Interval(102.0, 0.5, Exact([5000]))]
    rows = aggregate.interval_series(ivs, "us")
    assert [r["t_s"] for r in rows] == [0.0, 1.0, 2.0]
    assert [r["count"] for r in rows] == [3, 0, 1]
    assert [r["achieved_rate"] for r in rows] == [3.0, 0.0, 2.0]
    assert rows[0]["p99_ms"] == 3.0 and rows[0]["max_ms"] == 3.0 and rows[0]["p50_ms"] == 2.0
    assert rows[1]["p99_ms"] is None and rows[1]["max_ms"] is None


def test_spectrum_percentiles_stop_where_samples_run_out():
    ps = aggregate.spectrum_percentiles(1000)
    assert ps[0] == 0.0 and ps == sorted(ps)
    assert 1.0 / (1.0 - ps[-1] / 100.0) == pytest.approx(1000)
    assert aggregate.spectrum_percentiles(1) == [0.0]


def test_percentile_spectrum_ends_at_max():
    points = aggregate.percentile_spectrum(Exact(range(1, 10_001)), "us")
    assert points[0] == (0.0, 0.001)
    assert points[-1] == (100.0, 10.0)
    values = [v for _, v in points]
    assert values == sorted(values)
    assert aggregate.percentile_spectrum(Exact([]), "us") == []


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.integers(min_value=0, max_value=2**40), min_size=1, max_size=300),
       unit=st.sampled_from(["ns", "us", "ms"]))
def test_percentiles_are_ordered(values, unit):
    s = aggregate.histogram_stats(Exact(values), unit)
    chain = [s["p50_ms"], s["p90_ms"], s["p95_ms"], s["p99_ms"], s["p999_ms"], s["max_ms"]]
    assert chain == sorted(chain)
