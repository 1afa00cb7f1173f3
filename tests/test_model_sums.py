"""The model stage's sums with fewer numpy calls (issue 36): each equal to the form it replaced,
to the bit, and each doing its work in one pass."""
from __future__ import annotations


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.derive import aggregate, analyse, overload
from analysis.read.hdr.double import DoubleHistogram
from analysis.read.hdr.histogram import Histogram, layout_for, sum_histograms
from analysis.read.hdr.log import read_hlog
from tests.conftest import REPO

POOL = REPO / "runs" / "pool-vs-virtual"


def _same(a: Histogram, b: Histogram) -> None:
    assert a == b
    assert a.bucket_count == b.bucket_count
    assert a.indices.dtype == b.indices.dtype and a.counts.dtype == b.counts.dtype


histogram_values = st.lists(st.integers(0, 10**12), min_size=0, max_size=40)


@settings(max_examples=200, deadline=None)
@given(parts=st.lists(st.tuples(histogram_values, st.sampled_from([2, 3_600_000, 10**10])),
                      min_size=1, max_size=12))
def test_the_entries_added_are_sum_histograms(parts):
    # layouts that differ in their highest trackable value only (as a log's intervals do),
    # empty ones among them, values past the first layout's range (the bucket count grows)
    from analysis.derive import histogram_sums
    histograms = [Histogram.from_values(layout_for(1, highest, 3), values)
                  for values, highest in parts]
    entries = histogram_sums.entries_of(histograms)
    assert entries is not None
    _same(histogram_sums.added(entries), sum_histograms(histograms))


def test_a_logs_intervals_are_added_as_log_merged_adds_them():
    for path in sorted(POOL.rglob("*.hlog"))[:6]:
        log = read_hlog(path)
        for tag in log.tags():
            _same(analyse.merged(log, log.select(tag), tag), log.merged(tag=tag))


def test_a_logs_intervals_are_added_in_one_pass(monkeypatch):
    log = read_hlog(sorted(POOL.rglob("*.hlog"))[0])
    expected = log.merged(tag=None)

    def refused(*args, **kwargs):
        raise AssertionError("added one histogram at a time")
    monkeypatch.setattr(analyse, "sum_histograms", refused)
    monkeypatch.setattr(type(log), "merged", refused)
    _same(analyse.merged(log, log.select(None), None), expected)
    _same(analyse.combine([expected, expected]), sum_histograms([expected, expected]))


def test_other_index_schemes_and_double_histograms_are_left_to_sum_histograms():
    from analysis.derive import histogram_sums
    a = Histogram.from_values(layout_for(1, 3_600_000, 3), [5, 70_000])
    coarser = Histogram.from_values(layout_for(1, 3_600_000, 2), [5, 70_000])
    assert histogram_sums.entries_of([a, coarser]) is None
    assert histogram_sums.entries_of([a, DoubleHistogram(a, 2.0 ** -10, 1000)]) is None
    huge = Histogram(a.layout, np.array([3], np.int64), np.array([1 << 60], np.int64))
    assert histogram_sums.entries_of([a, huge]) is None
    assert histogram_sums.entries_of([]) is None
    _same(histogram_sums.sum_of([a, coarser], sum_histograms), sum_histograms([a, coarser]))


@settings(max_examples=300, deadline=None)
@given(value=st.integers(0, (1 << 63) - 1), digits=st.sampled_from([0, 1, 2, 3, 5]),
       lowest=st.sampled_from([1, 2, 1000, 1 << 20]))
def test_one_values_index_is_the_array_forms(value, digits, lowest):
    from analysis.derive import histogram_sums
    layout = layout_for(lowest, (1 << 63) - 1, digits)
    assert histogram_sums.index_of(layout, value) == int(layout.index_of(np.array([value]))[0])


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.integers(0, 10**9), min_size=1, max_size=60),
       counts=st.lists(st.integers(1, 10**6), min_size=60, max_size=60))
def test_the_mean_and_stddev_taken_together_are_the_histograms_to_the_bit(values, counts):
    from analysis.derive import histogram_sums
    h = Histogram.from_values(layout_for(1, 3_600_000_000, 3), values, counts[:len(values)])
    mean, stddev = histogram_sums.mean_and_stddev(h)
    assert mean.hex() == h.mean.hex() and stddev.hex() == h.stddev.hex()


def test_censored_stats_takes_the_bucket_values_once(monkeypatch):
    h = Histogram.from_values(layout_for(1, 3_600_000_000, 3), [1200, 5300, 5300, 9000, 70_000])
    expected = overload.censored_stats(h, 0, 15.0, 0.001)
    calls = []
    layout_type = type(h.layout)
    inner = layout_type.median_value_at
    monkeypatch.setattr(layout_type, "median_value_at",
                        lambda self, index: calls.append(1) or inner(self, index))
    assert overload.censored_stats(h, 0, 15.0, 0.001) == expected
    assert len(calls) == 1


def _spectrum_one_by_one(h, unit, timed_out, timeout_ms):
    population = int(h.total_count) + timed_out
    points = []
    for p in aggregate.spectrum_percentiles(population):
        target = aggregate.percentile_target_count(p, population)
        if target > h.total_count:
            points.append((p, float(timeout_ms), True))
        else:
            points.append((p, aggregate.to_ms(overload.value_at_count(h, target), unit), False))
    return points + [(100.0, float(timeout_ms), True)]


@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.integers(0, 10**8), min_size=0, max_size=80),
       timed_out=st.integers(1, 500), double=st.booleans())
def test_a_censored_spectrum_is_the_value_at_each_count(values, timed_out, double):
    h = Histogram.from_values(layout_for(1, 3_600_000_000, 3), values)
    if double:
        h = DoubleHistogram(h, 2.0 ** -10, 1000)
    assert aggregate.percentile_spectrum(h, "us", timed_out, 2000.0) == \
        _spectrum_one_by_one(h, "us", timed_out, 2000.0)


def test_a_censored_spectrum_searches_the_counts_once(monkeypatch):
    h = Histogram.from_values(layout_for(1, 3_600_000_000, 3), list(range(100, 50_000, 7)))

    def refused(*args, **kwargs):
        raise AssertionError("one search a percentile")
    monkeypatch.setattr(overload, "value_at_count", refused)
    points = aggregate.percentile_spectrum(h, "us", 40, 2000.0)
    assert points[-1] == (100.0, 2000.0, True) and not points[0][2]


def _rounded_by_isinstance(value):
    if isinstance(value, float):
        return round(value, 3)
    if isinstance(value, dict):
        return {k: _rounded_by_isinstance(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded_by_isinstance(v) for v in value]
    return value


leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=3),
                   st.floats(allow_nan=False), st.floats(allow_nan=False).map(np.float64),
                   st.tuples(st.floats(allow_nan=False)))


@settings(max_examples=300, deadline=None)
@given(value=st.recursive(leaves, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=2), inner, max_size=4)),
    max_leaves=20))
def test_rounding_for_the_data_is_the_isinstance_walk(value):
    out, expected = analyse._rounded(value), _rounded_by_isinstance(value)
    assert repr(out) == repr(expected)
    assert [type(x) for x in _flat(out)] == [type(x) for x in _flat(expected)]


def _flat(value):
    if isinstance(value, dict):
        return [y for v in value.values() for y in _flat(v)]
    if isinstance(value, list):
        return [y for v in value for y in _flat(v)]
    return [value]


def test_rounding_a_summary_calls_itself_only_for_containers(monkeypatch):
    summary = {"gc": {"count": 3, "pause_max_ms": 1.23456, "pauses": [[1.0, 2.0]]},
               "jdk": "21", "cpu": {"machine": 0.5, "jvm_user": None}}
    calls = []
    inner = analyse._rounded
    monkeypatch.setattr(analyse, "_rounded", lambda v: calls.append(v) or inner(v))
    assert analyse._rounded(summary) == _rounded_by_isinstance(summary)
    assert len(calls) == 1 + 2 + 1 + 1          # the summary, its two dicts, a list, a pair


def _running_median_by_views(y, width=5):
    y = np.asarray(y, dtype=np.float64)
    n = y.shape[-1]
    windows = np.lib.stride_tricks.sliding_window_view(y, width, axis=-1)
    medians = np.sort(windows, axis=-1)[..., width // 2]
    return medians[..., np.clip(np.arange(n) - width // 2, 0, n - width)]


@settings(max_examples=200, deadline=None)
@given(rows=st.integers(1, 4), n=st.integers(6, 80), width=st.sampled_from([3, 5, 7]),
       seed=st.integers(0, 2**32 - 1))
def test_the_running_median_is_the_sliding_windows_one(rows, n, width, seed):
    from analysis.derive.steady import running_median
    y = np.random.default_rng(seed).normal(size=(rows, n)).round(2)   # ties too
    for series in (y, y[0]):
        if series.shape[-1] > width:
            assert np.array_equal(running_median(series, width),
                                  _running_median_by_views(series, width))


def test_the_running_median_takes_its_window_positions_once(monkeypatch):
    from analysis.derive import steady
    y = np.random.default_rng(1).normal(size=(3, 40))
    expected = _running_median_by_views(y)

    def refused(*args, **kwargs):
        raise AssertionError("a strided view made for each series")
    monkeypatch.setattr(np.lib.stride_tricks, "sliding_window_view", refused)
    assert np.array_equal(steady.running_median(y), expected)


def _series_as_before(intervals, unit):
    rows, t0 = [], None
    for iv in intervals:
        t0 = iv.start_s if t0 is None else t0
        h = iv.histogram
        count = int(h.total_count)
        rows.append({
            "t_s": iv.start_s - t0, "length_s": iv.length_s, "count": count,
            "throughput_rps": count / iv.length_s if iv.length_s > 0 else None,
            **{f"{name}_ms": None if not count else aggregate.to_ms(h.value_at_percentile(p), unit)
               for name, p in aggregate.SERIES_PERCENTILES},
            "max_ms": None if not count else aggregate.to_ms(h.max, unit)})
    return rows


@pytest.mark.parametrize("unit", ["us", "ms", "ns"])
def test_the_interval_rows_are_those_of_before_key_order_too(unit):
    for path in sorted(POOL.rglob("*.hlog"))[:4]:
        log = read_hlog(path)
        for tag in log.tags():
            rows = aggregate.interval_series(log.select(tag), unit)
            expected = _series_as_before(log.select(tag), unit)
            assert [list(r.items()) for r in rows] == [list(r.items()) for r in expected]


def test_the_interval_rows_make_no_call_a_figure(monkeypatch):
    log = read_hlog(sorted(POOL.rglob("*.hlog"))[0])
    expected = _series_as_before(log.select(None), "us")

    def refused(*args, **kwargs):
        raise AssertionError("a call a figure of a row")
    monkeypatch.setattr(aggregate, "to_ms", refused)
    assert aggregate.interval_series(log.select(None), "us") == expected


@settings(max_examples=300, deadline=None)
@given(points=st.lists(st.tuples(st.floats(0, 1e4), st.floats(-1e6, 1e6)), min_size=0,
                       max_size=70),
       rate=st.floats(0.5, 1e5), p50=st.booleans())
def test_the_turned_queue_rule_is_the_fit_of_the_negated_points(points, rate, p50):
    fit = overload.queue_growth_from_p50 if p50 else overload.queue_growth
    t, y = [x for x, _ in points], [v for _, v in points]
    assert overload.queue_falls(fit(t, y, rate), rate) == fit(t, [-v for v in y], rate).grows


def test_a_window_is_fitted_once_for_its_queue_and_its_drain(monkeypatch):
    from analysis.derive import steady
    n = 30
    series = steady.Series(t_s=[float(i) for i in range(n)], p50_ms=[200.0] * n,
                           p99_ms=[250.0] * n, in_flight=[20.0 + (i % 3) for i in range(n)],
                           timed_out=[0] * n, answered=[100] * n,
                           throughput_rps=[100.0] * n)
    expected = steady.classify(series, window_s=n, offered_rate=100.0, timeout_ms=2000.0)
    fits = []
    inner = overload.queue_growth
    monkeypatch.setattr(overload, "queue_growth", lambda *a: fits.append(a) or inner(*a))
    assert steady.classify(series, window_s=n, offered_rate=100.0, timeout_ms=2000.0) == expected
    assert expected.cls == "flat" and len(fits) == 1
