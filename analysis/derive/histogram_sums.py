"""The model stage's histogram arithmetic with fewer numpy calls (issue 36): histograms added
from their entries laid end to end, a mean and a standard deviation from one set of bucket
values, one value's bucket index in Python ints. Each result is the Histogram code's own.

A repetition of pool-vs-virtual adds 20-30 interval histograms of a few dozen entries each (its
log's sum), and a cell its repetitions' sums. sum_histograms adds them one by one: a total, a
max, a maximum index and an indexed add each, small numpy calls whose fixed cost is most of the
work. Here the entries are concatenated once and added in one np.bincount. The result is
sum_histograms' own: the same integer sums (exact in float64 below 2^53, checked) and the
same bucket count, grown over the histograms' maxima in their order.

Only integer Histograms whose indices mean the same values take this path; `None` sends the
caller back to sum_histograms (DoubleHistogram, other index schemes, counts too large for
float64's integers).
"""
from __future__ import annotations

import math

import numpy as np

from analysis.read.hdr.histogram import Histogram

# np.bincount adds its weights in float64: every partial sum is an exact integer below this.
EXACT_TOTAL = 1 << 53


class Entries:
    """Every entry of a list of Histograms of one index scheme, in their order: `indices`,
    `counts`, and each histogram's entry count and where its entries end."""

    __slots__ = ("histograms", "layout", "indices", "counts", "sizes", "ends")

    def __init__(self, histograms: list[Histogram]):
        self.histograms = histograms
        self.layout = histograms[0].layout
        self.sizes = np.fromiter((h.indices.size for h in histograms), np.int64,
                                 len(histograms))
        self.ends = np.cumsum(self.sizes)
        self.indices = np.concatenate([h.indices for h in histograms])
        self.counts = np.concatenate([h.counts for h in histograms])


def entries_of(histograms: list) -> Entries | None:
    """The histograms' entries end to end, or None when they are not all integer Histograms
    whose indices mean the same values, or when their counts could reach float64's inexact
    integers."""
    if not histograms:
        return None
    layout = histograms[0].layout
    buckets, unit = layout.sub_bucket_count, layout.unit_magnitude
    for h in histograms:
        # a log's layouts differ in their highest trackable value (each interval's own, as
        # its writer auto-resized); an index means the same values in each when these agree,
        # which is sum_histograms' own test for adding counts index by index
        if type(h) is not Histogram or (h.layout is not layout and (
                h.layout.sub_bucket_count != buckets or h.layout.unit_magnitude != unit)):
            return None
    entries = Entries(histograms)
    if entries.counts.size and float(entries.counts.sum(dtype=np.float64)) >= EXACT_TOTAL / 2:
        return None
    return entries


def added(entries: Entries) -> Histogram:
    """sum_histograms(entries.histograms): the first one's layout, the entries' counts added
    index by index, the bucket count grown as Java's auto-resizing add grows it."""
    layout = entries.layout
    bucket_count = layout.bucket_count
    if not entries.indices.size:
        empty = np.zeros(0, np.int64)
        return Histogram(layout, empty, empty.copy(), bucket_count)
    filled = entries.sizes > 0
    # each non-empty histogram's max, in order: the highest value of its last entry
    maxima = layout.highest_value_at(entries.indices[entries.ends[filled] - 1]).tolist()
    highest = layout.highest_recordable_value(bucket_count)
    for value in maxima:
        if highest < value:
            bucket_count = layout.buckets_needed(value)
            highest = layout.highest_recordable_value(bucket_count)
    dense = np.bincount(entries.indices, weights=entries.counts).astype(np.int64)
    nz = np.flatnonzero(dense)
    return Histogram(layout, nz.astype(np.int64), dense[nz], bucket_count)


def sum_of(histograms: list, fallback):
    """The sum of `histograms` as `fallback` (sum_histograms) gives it, from their entries end
    to end when they allow it."""
    entries = entries_of(histograms)
    return fallback(histograms) if entries is None else added(entries)


def mean_and_stddev(h) -> tuple[float, float]:
    """(h.mean, h.stddev) of a Histogram or DoubleHistogram: for an integer Histogram the bucket
    values and their products taken once for both, with Histogram's operations in its order
    (getStdDeviation takes getMean, which took them a second time)."""
    if type(h) is not Histogram:
        return h.mean, h.stddev
    total = float(h.total_count)
    values = h.layout.median_value_at(h.indices).astype(np.float64)
    counts = h.counts.astype(np.float64)
    # np.cumsum adds left to right, as Java's loops do (np.sum would add pairwise)
    mean = float(np.cumsum(values * counts)[-1]) / total
    deviation = values - mean
    return mean, math.sqrt(float(np.cumsum((deviation * deviation) * counts)[-1]) / total)


def index_of(layout, value: int) -> int:
    """layout.index_of([value])[0] for one value in 0..2^63-1 (Java's countsArrayIndex) in
    Python ints: the array form's bit-length loop is ~25 numpy calls for one value."""
    mask = (layout.sub_bucket_count - 1) << layout.unit_magnitude
    base = 64 - layout.unit_magnitude - (layout.sub_bucket_half_count_magnitude + 1)
    bucket = base - (64 - (value | mask).bit_length())
    sub = value >> (bucket + layout.unit_magnitude)
    return (((bucket + 1) << layout.sub_bucket_half_count_magnitude)
            + (sub - layout.sub_bucket_half_count))
