"""record.py: request samples -> 1-second HdrHistogram intervals (issue 23).

The reference here is a scalar transcription of what Java does per request (recordValue /
recordValueWithExpectedInterval into the Histogram of the request's second and class), with the
histograms built by the reader's own Histogram.from_values; the Java program itself is the
referee in test_hlog_writer.py.
"""
from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.derive.aggregate import histogram_stats, interval_series, percentile_spectrum
from analysis.errors import ResultsError
from analysis.read.hdr.histogram import Histogram, layout_for
from analysis.read.loadtools import record
from analysis.read.loadtools.record import (JAVA_LAYOUT, java_indices, java_layout,
                                            record_samples)
from analysis.read.loadtools.results import RequestSamples, ToolInfo

T0 = 1_700_000_000_000.0


def samples(start_ms, latency_ns, ok=None, timed_out=None, native_unit="ns", epoch=True):
    n = len(latency_ns)
    return RequestSamples(
        path="results.csv", info=ToolInfo("csv", "test"),
        start_ms=np.asarray(start_ms, np.float64), latency_ns=np.asarray(latency_ns, np.int64),
        ok=np.ones(n, bool) if ok is None else np.asarray(ok, bool),
        timed_out=np.zeros(n, bool) if timed_out is None else np.asarray(timed_out, bool),
        native_unit=native_unit, epoch=epoch)


def reference(start_ms, values, classes, expected=0):
    """{(second, tag): [values recorded]} the way Java records them, one request at a time."""
    recorded = defaultdict(list)
    for start, value, cls in zip(start_ms, values, classes):
        bucket = recorded[(math.floor(start / 1000.0), cls)]
        bucket.append(value)
        if expected > 0:
            missing = value - expected
            while missing >= expected:
                bucket.append(missing)
                missing -= expected
    return recorded


def assert_matches(intervals, recorded, tags):
    seconds = sorted({s for s, _ in recorded})
    expected_order = [(s, t) for s in range(seconds[0], seconds[-1] + 1) for t in tags]
    assert [(iv.start_ms // 1000, iv.tag) for iv in intervals] == expected_order
    for iv in intervals:
        values = recorded.get((iv.start_ms // 1000, iv.tag), [])
        want = Histogram.from_values(JAVA_LAYOUT, values)
        assert np.array_equal(iv.histogram.indices, want.indices)
        assert np.array_equal(iv.histogram.counts, want.counts)
        assert iv.total_count == len(values)
        assert iv.length_s == 1.0 and iv.end_ms == iv.start_ms + 1000


def test_java_layout_grows_as_an_auto_resizing_histogram_does():
    # new Histogram(3): highest trackable 2 until a value beyond 2047 makes it resize to the
    # highest value of the buckets that value needs (2048 needs 2 buckets: up to 4095)
    assert java_layout(int(JAVA_LAYOUT.index_of(np.array([2047]))[0])) == layout_for(1, 2, 3)
    assert java_layout(int(JAVA_LAYOUT.index_of(np.array([2048]))[0])) == layout_for(1, 4095, 3)
    assert java_layout(int(JAVA_LAYOUT.index_of(np.array([4096]))[0])) == layout_for(1, 8191, 3)


@given(st.lists(st.integers(0, 2**63 - 1), min_size=1, max_size=200))
def test_java_indices_equal_index_of(values):
    values = np.array(values, np.int64)
    assert np.array_equal(java_indices(values), JAVA_LAYOUT.index_of(values))


def test_java_indices_at_every_bucket_edge():
    edges = np.array(sorted({max(0, (1 << b) + d) for b in range(0, 63) for d in (-1, 0, 1)}),
                     np.int64)
    assert np.array_equal(java_indices(edges), JAVA_LAYOUT.index_of(edges))


def test_classes_counts_and_seconds():
    start = [T0 + 10, T0 + 999.999, T0 + 1000, T0 + 3500, T0 + 3600, T0 + 3700]
    lat = [1_000_000, 2_000_000, 3_000_000, 4_000_000, 5_000_000, 6_000_000]
    ok = [True, True, False, True, False, False]
    timed_out = [False, False, False, False, True, False]  # a timeout that also failed
    rec = record_samples(samples(start, lat, ok, timed_out, native_unit="ms"))
    assert (rec.requests, rec.answered, rec.errors, rec.timed_out) == (6, 3, 2, 1)
    assert rec.unit == "ms" and rec.first_ms == T0 + 10 and rec.last_ms == T0 + 3700
    assert rec.duration_s == pytest.approx(3.69)
    classes = [None, None, "error", None, "timeout", "error"]
    assert_matches(rec.intervals, reference(start, [1, 2, 3, 4, 5, 6], classes),
                   (None, "error", "timeout"))
    # second 2 has no request: every class still has its (empty) interval there
    empty = [iv for iv in rec.intervals if iv.start_ms == T0 + 2000]
    assert [iv.total_count for iv in empty] == [0, 0, 0]
    assert [iv.start_s for iv in rec.intervals[::3]] == [0.0, 1.0, 2.0, 3.0]
    assert {iv.log_start_s for iv in rec.intervals} == {T0 / 1000}


def test_only_the_tags_a_file_has_get_lines():
    rec = record_samples(samples([T0, T0 + 1500], [5, 6]))
    assert [iv.tag for iv in rec.intervals] == [None, None]
    rec = record_samples(samples([T0, T0 + 1500], [5, 6], ok=[False, True]))
    assert [iv.tag for iv in rec.intervals] == [None, "error", None, "error"]


def test_relative_times_use_the_files_own_zero_and_negative_seconds_floor():
    rec = record_samples(samples([-0.5, 0.0, 2999.0], [1, 2, 3], epoch=False))
    assert [iv.start_ms for iv in rec.intervals] == [-1000, 0, 1000, 2000]
    assert rec.epoch is False
    assert [iv.total_count for iv in rec.intervals] == [1, 1, 0, 1]


def test_units_exact_in_the_native_unit_and_finer_half_up_when_coarser():
    lat = [1_000_000, 1_499_000, 1_500_000, 2_500_000, 0]
    rec = record_samples(samples([T0] * 5, lat, native_unit="us"), "ms")
    # 1 ms, 1.499 -> 1, 1.5 -> 2, 2.5 -> 3 (half up, not to even), 0
    assert rec.merged().indices.tolist() == [0, 1, 2, 3]
    assert rec.merged().counts.tolist() == [1, 2, 1, 1]
    rec = record_samples(samples([T0] * 5, lat, native_unit="us"), "ns")
    assert rec.merged().total_count == 5 and rec.unit == "ns"
    with pytest.raises(ResultsError, match="not whole ms"):
        record_samples(samples([T0], [1_500_000], native_unit="ms"))


def test_window_cuts_by_send_time_from_the_first_request():
    start = T0 + np.arange(0, 10_000, 100.0)          # 100 requests over 10 s
    rec = record_samples(samples(start, np.full(100, 7)), skip_s=2, duration_s=5)
    # kept: [T0 + 2000, T0 + 7000): the lower edge in, the upper edge out
    assert (rec.requests, rec.cut_before, rec.cut_after) == (50, 20, 30)
    assert rec.first_ms == T0 + 2000 and rec.last_ms == T0 + 6900
    assert rec.window == (2.0, 5)
    assert rec.intervals[0].start_ms == T0 + 2000 and len(rec.intervals) == 5
    rec = record_samples(samples(start, np.full(100, 7)), skip_s=9.9)
    assert (rec.requests, rec.cut_before, rec.cut_after) == (1, 99, 0)
    with pytest.raises(ResultsError, match="no request inside the window"):
        record_samples(samples(start, np.full(100, 7)), skip_s=10)
    with pytest.raises(ResultsError, match="duration_s > 0"):
        record_samples(samples(start, np.full(100, 7)), duration_s=0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 5000), st.integers(0, 10**12), st.integers(0, 2)),
                min_size=1, max_size=120),
       st.sampled_from([0, 7, 1000, 10**9]), st.sampled_from([5, 7, 1 << 18]))
def test_any_order_any_chunking_equals_the_scalar_reference(rows, expected, chunk):
    if expected:     # (the scalar reference records each extra value: keep them few)
        rows = [(s, v % (expected * 300), c) for s, v, c in rows]
    start = [T0 + s for s, _, _ in rows]
    values = [v for _, v, _ in rows]
    classes = [c for _, _, c in rows]
    tags = [(None, "error", "timeout")[c] for c in classes]
    data = samples(start, values, ok=[c == 0 for c in classes], timed_out=[c == 2 for c in classes])
    old = record.CHUNK, record.CORRECTION_CHUNK
    record.CHUNK = record.CORRECTION_CHUNK = chunk
    try:
        rec = record_samples(data, "ns", expected_interval_ms=expected / 1e6 if expected else None)
    finally:
        record.CHUNK, record.CORRECTION_CHUNK = old
    present = [t for t in (None, "error", "timeout") if t is None or t in tags]
    assert_matches(rec.intervals, reference(start, values, tags), present)
    if expected:
        assert_matches(rec.corrected, reference(start, values, tags, expected), present)
        assert rec.correction_values == sum(max(v // expected - 1, 0) for v in values)
    else:
        assert rec.corrected is None


def test_correction_sits_beside_the_raw_intervals_and_has_a_bound():
    # a 10 s stall at a 1 ms expected interval: 9,999 extra values, in the stalled request's second
    data = samples([T0, T0 + 1000], [10_000_000_000, 1_000_000], native_unit="ms")
    rec = record_samples(data, expected_interval_ms=1)
    assert rec.merged().total_count == 2
    assert rec.merged(corrected=True).total_count == 2 + 9_999
    assert rec.correction_values == 9_999 and rec.expected_interval == 1
    assert [iv.total_count for iv in rec.corrected] == [10_000, 1]
    with pytest.raises(ResultsError, match=r"more than 9,998 extra values.*9,999"):
        record_samples(data, expected_interval_ms=1, max_correction_values=9_998)
    with pytest.raises(ResultsError, match="whole number of ms"):
        record_samples(data, expected_interval_ms=0.5)


def test_bad_arrays_are_errors_not_tracebacks():
    with pytest.raises(ResultsError, match="no request samples"):
        record_samples(samples([], []))
    with pytest.raises(ResultsError, match="finite send time"):
        record_samples(samples([math.nan], [1]))
    with pytest.raises(ResultsError, match="negative latency"):
        record_samples(samples([T0], [-1]))
    with pytest.raises(ResultsError, match="unknown value unit"):
        record_samples(samples([T0], [1]), "s")


def test_the_pipeline_takes_the_intervals_unchanged():
    rng = np.random.default_rng(7)
    start = T0 + np.sort(rng.uniform(0, 5000, 2000))
    lat_us = rng.integers(100, 50_000, 2000)
    rec = record_samples(samples(start, lat_us * 1000, native_unit="us"))
    rows = interval_series(rec.intervals, "us")
    assert [r["count"] for r in rows] == np.bincount(((start - T0) // 1000).astype(int)).tolist()
    merged = rec.merged()
    stats = histogram_stats(merged, "us")
    # below 2048 units HDR buckets are exact; above, the reported value is within 0.1%
    ranked = np.sort(lat_us)
    p99 = ranked[math.ceil(0.99 * ranked.size) - 1] / 1000
    assert stats.percentiles["p99"].value_ms == pytest.approx(p99, rel=1e-3)
    assert percentile_spectrum(merged, "us")[-1][1] == pytest.approx(ranked[-1] / 1000, rel=1e-3)
