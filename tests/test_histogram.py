"""Java-exact statistics (analysis/read/hdr/histogram.py) against HdrHistogram 2.2.2.

The `.stats.json` / `.intervals.csv` goldens were recorded by tests/golden/hgrm/regen with
../shared/oracle/javastats (HistogramLogReader + Histogram.add + Java's getters). Equality is
exact: same integers, same doubles bit for bit.
"""
from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.read.hdr.distribution import format_percentile_distribution, java_format_fixed
from analysis.read.hdr.double import DoubleHistogram
from analysis.read.hdr.histogram import (Histogram, Layout, LayoutError, layout_for,
                                         percentile_target_count, sum_histograms)
from analysis.read.hdr.log import read_hlog
from tests.conftest import REPO

GOLDEN = REPO / "tests" / "golden" / "hgrm"
FIXTURES = REPO / "tests" / "fixtures" / "hlog"
PERCENTILES = [0, 1, 25, 50, 90, 99, 99.9, 99.99, 99.999, 100]


def _stats_cases():
    for line in (GOLDEN / "stats.tsv").read_text().splitlines():
        if line and not line.startswith("#"):
            name, fixture, tag = line.split("\t")
            yield pytest.param(name, fixture, None if tag == "-" else tag, id=name)


@pytest.mark.parametrize("name,fixture,tag", list(_stats_cases()))
def test_whole_log_statistics_equal_java(name, fixture, tag):
    expected = json.loads((GOLDEN / "expected" / f"{name}.stats.json").read_text())
    log = read_hlog(FIXTURES / fixture)
    chosen = log.select(tag)
    assert len(chosen) == expected["intervals"]
    h = log.merged(tag=tag)
    assert h.total_count == expected["total_count"]
    assert h.max == expected["max"]
    assert h.mean == expected["mean"]
    if expected["type"] == "Histogram":
        assert isinstance(h, Histogram)
        assert h.min == expected["min"]
        assert h.stddev == expected["stddev"]
    else:
        assert isinstance(h, DoubleHistogram)
    got = h.values_at_percentiles(PERCENTILES)
    for p, value in zip(PERCENTILES, got):
        key = {0: "0", 1: "1", 25: "25", 50: "50", 90: "90", 99: "99", 100: "100"}.get(p, str(p))
        assert value == expected["percentiles"][key], f"p{p}"
        assert h.value_at_percentile(p) == expected["percentiles"][key]


@pytest.mark.parametrize("name,fixture,tag", list(_stats_cases()))
def test_per_interval_statistics_equal_java(name, fixture, tag):
    rows = list(csv.reader((GOLDEN / "expected" / f"{name}.intervals.csv").open()))
    chosen = read_hlog(FIXTURES / fixture).select(tag)
    assert len(chosen) == len(rows)
    for iv, row in zip(chosen, rows):
        h = iv.histogram
        is_double = isinstance(h, DoubleHistogram)
        number = float if is_double else int
        assert f"{iv.start_ms / 1000.0:.3f}" == row[1]
        assert h.total_count == int(row[2]) == iv.total_count
        assert (h.min if h.total_count else 0) == number(row[3])
        assert h.max == number(row[4])
        assert h.mean == float(row[5])
        values = h.values_at_percentiles(PERCENTILES)
        assert [number(v) for v in values] == [number(x) for x in row[6:]]


def test_layout_matches_java_bucket_arithmetic():
    # 1 hour in ns at 3 digits: HistogramLogProcessor prints Buckets = 32, SubBuckets = 2048
    layout = layout_for(1, 3_600_000_000_000, 3)
    assert (layout.bucket_count, layout.sub_bucket_count) == (32, 2048)
    assert layout.counts_array_length == 33 * 1024
    # values <-> indices round trip at bucket edges
    values = np.array([0, 1, 2047, 2048, 2049, 4095, 4096, 10**9, 3_600_000_000_000])
    idx = layout.index_of(values)
    assert np.all(layout.lowest_value_at(idx) <= values)
    assert np.all(layout.highest_value_at(idx) >= values)
    assert layout.highest_value_at(layout.index_of(np.array([2049])))[0] == 2049 | 1
    # lowestDiscernibleValue rounds down to a power of two
    assert layout_for(1000, 10**9, 2).unit_magnitude == 9


@pytest.mark.parametrize("args", [(0, 100, 3), (10, 15, 3), (1, 100, 6), (1 << 62, 1 << 63, 2),
                                  (2**45, 2**63 - 1, 5)])
def test_layouts_java_refuses_are_refused(args):
    with pytest.raises(LayoutError):
        Layout(*args)


def test_percentile_target_count_is_javas_rounding():
    # Java: ceil(nextAfter(p, -inf) / 100 * N), at least 1 (the PyPI package rounds half up)
    assert percentile_target_count(50.0, 4) == 2
    assert percentile_target_count(99.9, 1000) == 999
    assert percentile_target_count(0.0, 10) == 1
    assert percentile_target_count(100.0, 7) == 7
    assert percentile_target_count(25.0, 3) == 1


# -- a brute-force reference: Java's algorithms written out over a dense counts array ---------

def _reference(layout: Layout, values: list[int]):
    counts = {}
    for v in values:
        i = int(layout.index_of(np.array([v]))[0])
        counts[i] = counts.get(i, 0) + 1
    idx = sorted(counts)
    total = len(values)
    low = [int(layout.lowest_value_at(np.array([i]))[0]) for i in idx]
    high = [int(layout.highest_value_at(np.array([i]))[0]) for i in idx]
    med = [int(layout.median_value_at(np.array([i]))[0]) for i in idx]
    mean_acc = 0.0
    for m, i in zip(med, idx):
        mean_acc += m * float(counts[i])
    mean = mean_acc / total
    dev_acc = 0.0
    for m, i in zip(med, idx):
        d = m * 1.0 - mean
        dev_acc += (d * d) * counts[i]

    def at(p):
        target = percentile_target_count(p, total)
        running = 0
        for k, i in enumerate(idx):
            running += counts[i]
            if running >= target:
                return low[k] if p == 0.0 else high[k]
        return 0

    return {"min": 0 if idx[0] == 0 else low[0], "max": high[-1], "mean": mean,
            "stddev": math.sqrt(dev_acc / total), "at": at}


value_lists = st.lists(st.one_of(st.integers(0, 10**6), st.integers(0, 2**63 - 1)),
                       min_size=1, max_size=60)


edge_percentiles = st.one_of(st.floats(0, 100), st.sampled_from([0.0, 100.0, 50.0, 5e-324]))


@settings(max_examples=60, deadline=None)
@given(values=value_lists, digits=st.integers(0, 5),
       percentiles=st.lists(edge_percentiles, min_size=1, max_size=40))
def test_statistics_equal_the_reference_algorithm(values, digits, percentiles):
    # up to 40 percentiles: both the one-by-one lookup (a few) and the array one (many)
    layout = layout_for(1, 2**63 - 1, digits)
    h = Histogram.from_values(layout, values)
    ref = _reference(layout, values)
    assert h.total_count == len(values)
    assert (h.min, h.max) == (ref["min"], ref["max"])
    assert h.mean == ref["mean"]
    assert h.stddev == ref["stddev"]
    expected = [ref["at"](p) for p in percentiles]
    assert list(h.values_at_percentiles(percentiles)) == expected
    assert list(h.values_at_percentiles(percentiles[:3])) == expected[:3]
    assert [h.value_at_percentile(p) for p in percentiles] == expected


@pytest.mark.parametrize("ldv,digits", [(1, 0), (1, 2), (1, 3), (1, 5), (1000, 3), (2**20, 1)])
def test_scalar_index_values_equal_valuefromindex(ldv, digits):
    # Every bucket's first, second, middle and last sub-bucket, up to the 2^63 range's top
    # bucket and a few buckets beyond it (where the int64 arithmetic wraps, and shifts reach
    # 64): the one-index forms equal the array forms (Java's valueFromIndex and
    # highestEquivalentValue, checked against Java by the goldens).
    layout = layout_for(ldv, 2**63 - 1, digits)
    half = layout.sub_bucket_half_count
    top = layout.counts_array_length
    edges = {0, 1, half - 1, half, top - 1}
    for start in range(half, top + 3 * half, half):
        edges.update({start, start + 1, start + half // 2, start + half - 1})
    indices = sorted(i for i in edges if i >= 0)
    lowest = layout.lowest_value_at(np.array(indices)).tolist()
    highest = layout.highest_value_at(np.array(indices)).tolist()
    assert [layout.lowest_value_of(i) for i in indices] == lowest
    assert [layout.highest_value_of(i) for i in indices] == highest
    assert layout.highest_value_of(int(layout.index_of(np.array([2**63 - 1]))[0])) == 2**63 - 1


def test_one_value_histogram_and_the_largest_value():
    layout = layout_for(1, 2**63 - 1, 3)
    top = Histogram.from_values(layout, [2**63 - 1])
    assert top.total_count == 1 and top.max == 2**63 - 1
    assert top.value_at_percentile(50) == 2**63 - 1
    assert top.min == int(layout.lowest_value_at(layout.index_of(np.array([2**63 - 1])))[0])
    one = Histogram.from_values(layout_for(1, 1000, 2), [7])
    assert (one.min, one.max, one.mean, one.stddev) == (7, 7, 7.0, 0.0)
    assert one.values_at_percentiles([0, 50, 100]).tolist() == [7, 7, 7]


def test_empty_histogram_is_all_zero_like_java():
    h = Histogram.empty(layout_for(1, 10**6, 3))
    assert (h.total_count, h.min, h.max, h.mean, h.stddev) == (0, 0, 0, 0.0, 0.0)
    assert h.value_at_percentile(99) == 0
    text = format_percentile_distribution(h, 5, 1.0, False)
    assert "Total count    =            0" in text


def test_sum_uses_the_first_layout_and_grows_like_javas_auto_resize():
    small = layout_for(1, 1000, 2)
    big = layout_for(1, 10**9, 3)
    a = Histogram.from_values(small, [5, 10, 999])
    b = Histogram.from_values(big, [123456789, 1])
    total = sum_histograms([a, b])
    assert total.layout is small
    assert total.total_count == 5
    assert total.bucket_count == small.buckets_needed(b.max)
    assert total.max == int(small.highest_value_at(small.index_of(np.array([123456789])))[0])


@pytest.mark.parametrize("value,decimals,text", [
    (0.0015, 3, "0.002"),      # Java rounds the shortest decimal half up; C would give 0.001
    (1.0005, 3, "1.001"),      # binary value is below the tie, Java still rounds up
    (2.5, 0, "3"),
    (-0.0015, 3, "-0.002"),
    (0.1234, 3, "0.123"),
    (123456.789, 2, "123456.79"),
    (1e20, 3, "100000000000000000000.000"),
    (5e-324, 3, "0.000"),
    (math.inf, 2, "Infinity"),
])
def test_java_fixed_point_formatting(value, decimals, text):
    assert java_format_fixed(value, decimals) == text


def test_java_fixed_point_pads_like_printf():
    assert java_format_fixed(0.181, 3, 7) == "  0.181"
    assert java_format_fixed(math.inf, 2, 14) == "      Infinity"
