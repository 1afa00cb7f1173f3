"""DoubleHistogram: HdrHistogram's floating-point histogram over an integer one, and the
accumulator HistogramLogProcessor sums DoubleHistograms with (auto-resizing)."""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from analysis.read.hdr.histogram import LONG_MAX, Histogram, Layout, java_long, layout_for


def _containing_binary_order(value: int) -> int:
    """DoubleHistogram.findContainingBinaryOrderOfMagnitude(long): 64 - numberOfLeadingZeros."""
    return (value & ((1 << 64) - 1)).bit_length() if value >= 0 else 64


def _highest_allowed_value_ever() -> float:
    value = 1.0
    while value < 1.7976931348623157e308 / 4.0:
        value *= 2
    return value


HIGHEST_ALLOWED_DOUBLE = _highest_allowed_value_ever()


@lru_cache(maxsize=64)
def double_internal_layout(configured_ratio: int, digits: int) -> tuple[int, int]:
    """(internal highest-to-lowest ratio, highest trackable value of the integer histogram) of
    a DoubleHistogram with this configured ratio and digits, as its Java constructor sets them
    (lowest discernible value 1). `digits` must be 0 to 5."""
    internal_ratio = 1 << (_containing_binary_order(configured_ratio) + 1)
    half = Layout(1, 2, digits).sub_bucket_half_count
    return internal_ratio, half * internal_ratio - 1


class DoubleHistogram:
    """Java's DoubleHistogram: an integer Histogram plus a power-of-two value conversion ratio.

    Read-only statistics come straight from the integer histogram scaled by the ratio, as in
    Java. Adding DoubleHistograms (`sum_double_histograms`) re-records every bucket's value into
    an auto-ranging accumulator exactly as `DoubleHistogram.add` does, range shifts included,
    because that is what decides the numbers Java prints for a merged DoubleHistogram log.
    """

    def __init__(self, integer: Histogram, integer_to_double_ratio: float,
                 configured_highest_to_lowest_ratio: int):
        self.integer = integer
        self.ratio = integer_to_double_ratio
        self.configured_ratio = configured_highest_to_lowest_ratio

    @property
    def layout(self) -> Layout:
        return self.integer.layout

    @property
    def total_count(self) -> int:
        return self.integer.total_count

    @property
    def min(self) -> float:
        return self.integer.min * self.ratio

    @property
    def max(self) -> float:
        return self.highest_equivalent_value(self.integer.max * self.ratio)

    @property
    def mean(self) -> float:
        return self.integer.mean * self.ratio

    @property
    def stddev(self) -> float:
        return self.integer.stddev * self.ratio

    def value_at_percentile(self, percentile: float) -> float:
        return self.integer.value_at_percentile(percentile) * self.ratio

    def values_at_percentiles(self, percentiles) -> np.ndarray:
        return self.integer.values_at_percentiles(percentiles).astype(np.float64) * self.ratio

    def highest_equivalent_value(self, value: float) -> float:
        """DoubleHistogram.highestEquivalentValue, ulp walk included."""
        integer_value = java_long(value * (1.0 / self.ratio))
        layout = self.integer.layout
        idx = layout.index_of(np.array([max(integer_value, 0)]))
        next_non_equivalent = int(layout.lowest_value_at(idx)[0] + layout.size_at(idx)[0])
        upper = next_non_equivalent * self.ratio
        highest = upper - 2 * math.ulp(upper)
        while highest + math.ulp(highest) < upper:
            highest += math.ulp(highest)
        return highest

    def __repr__(self) -> str:
        return f"DoubleHistogram(count={self.total_count}, max={self.max})"


class DoubleAccumulator:
    """An auto-resizing DoubleHistogram being added to, step for step as Java's code does."""

    def __init__(self, configured_ratio: int, digits: int):
        self.configured_ratio = configured_ratio
        internal_ratio, highest_trackable = double_internal_layout(configured_ratio, digits)
        self.layout = layout_for(1, highest_trackable, digits)
        self.htv = self.layout.highest_trackable_value
        self.bucket_count = self.layout.bucket_count
        self.counts = np.zeros(self.layout.counts_array_length, np.int64)
        self.total = 0
        self._set_range(math.pow(2.0, 800), math.pow(2.0, 800) * internal_ratio)

    # integer-histogram state helpers
    def _set_range(self, lowest: float, highest: float) -> None:
        self.lowest, self.highest = lowest, highest
        self.itd = lowest / self.layout.sub_bucket_half_count
        self.dti = 1.0 / self.itd

    def _nonzero_above_zero(self) -> np.ndarray:
        return np.flatnonzero(self.counts[1:]) + 1

    def _resize(self, new_htv: int) -> None:
        buckets = self.layout.buckets_needed(new_htv)
        length = self.layout.counts_length_for_buckets(buckets)
        if length > self.counts.size:
            self.counts = np.concatenate([self.counts, np.zeros(length - self.counts.size, np.int64)])
        self.bucket_count = buckets
        self.htv = new_htv

    def _shift_values(self, n: int, left: bool) -> None:
        """shiftValuesLeft / shiftValuesRight of the integer histogram (raises OverflowError
        where Java throws ArrayIndexOutOfBoundsException)."""
        if n == 0 or self.total == self.counts[0]:
            return
        shift = n << self.layout.sub_bucket_half_count_magnitude
        nz = self._nonzero_above_zero()
        if left:
            if int(nz[-1]) >= self.counts.size - shift:
                raise OverflowError("shift would overflow")
            half = self.layout.sub_bucket_half_count
            low = nz[nz < half]
            high = nz[nz >= half]
            moved = self.counts[high].copy()
            low_counts = self.counts[low].copy()
            self.counts[nz] = 0
            self.counts[high + shift] = moved
            if low.size:  # shiftLowestHalfBucketContentsLeft
                targets = self.layout.index_of(self.layout.lowest_value_at(low) << n)
                np.add.at(self.counts, targets, low_counts)
        else:
            if int(nz[0]) < shift + self.layout.sub_bucket_half_count:
                raise OverflowError("shift would underflow")
            moved = self.counts[nz].copy()
            self.counts[nz] = 0
            self.counts[nz - shift] = moved

    def _handle_shift_failure(self, n: int) -> None:
        new_order = n + _containing_binary_order(self.htv)
        if new_order > 63:
            raise OverflowError("DoubleHistogram range cannot grow beyond 2^63")
        self._resize((1 << new_order) - 1)
        self.configured_ratio <<= n

    def _capped_order(self, value: float) -> int:
        if value > self.configured_ratio:
            return int(math.log(self.configured_ratio) / math.log(2))
        if value > math.pow(2.0, 50):
            return 50
        return _containing_binary_order(java_long(math.ceil(value)))

    def _shift_range_right(self, n: int) -> None:
        new_lowest, new_highest = self.lowest, self.highest
        try:
            multiplier = 1.0 / (1 << n)
            self.highest *= multiplier
            if self.total > self.counts[0]:
                try:
                    self._shift_values(n, left=True)
                except OverflowError:
                    self._handle_shift_failure(n)
                    new_highest /= multiplier
                    self._shift_values(n, left=True)
            new_lowest *= multiplier
            new_highest *= multiplier
        finally:
            self._set_range(new_lowest, new_highest)

    def _shift_range_left(self, n: int) -> None:
        new_lowest, new_highest = self.lowest, self.highest
        try:
            multiplier = 1.0 * (1 << n)
            self.lowest *= multiplier
            if self.total > self.counts[0]:
                try:
                    self._shift_values(n, left=False)
                    new_lowest *= multiplier
                    new_highest *= multiplier
                except OverflowError:
                    self._handle_shift_failure(n)
                    new_lowest /= multiplier
            # Java 2.2.2 scales once more here, also after a successful shift.
            new_lowest *= multiplier
            new_highest *= multiplier
        finally:
            self._set_range(new_lowest, new_highest)

    def _auto_adjust(self, value: float) -> None:
        if value == 0.0:
            return
        if value < self.lowest:
            if value < 0.0:
                raise OverflowError("negative values cannot be recorded")
            while value < self.lowest:
                self._shift_range_right(self._capped_order(math.ceil(self.lowest / value) - 1.0))
        elif value >= self.highest:
            if value > HIGHEST_ALLOWED_DOUBLE:
                raise OverflowError(f"value {value} is beyond a DoubleHistogram's range")
            while value >= self.highest:
                self._shift_range_left(
                    self._capped_order(math.ceil((value + math.ulp(value)) / self.highest) - 1.0))

    def add(self, other: DoubleHistogram) -> None:
        """DoubleHistogram.add: recordValueWithCount(valueFromIndex(i) * ratio, count) per bucket,
        in index order. Runs of values inside the current range are recorded in one step."""
        src = other.integer
        if not src.indices.size:
            return
        values = src.layout.lowest_value_at(src.indices).astype(np.float64) * other.ratio
        counts = src.counts
        i, n = 0, values.size
        while i < n:
            value = float(values[i])
            if value < self.lowest or value >= self.highest:
                self._auto_adjust(value)
            # the run of following values that need no range change
            rest = values[i:]
            in_range = (rest == 0.0) | ((rest >= self.lowest) & (rest < self.highest))
            in_range[0] = True
            stop = i + (int(np.argmin(in_range)) if not in_range.all() else rest.size)
            integer_values = (values[i:stop] * self.dti)
            integer_values = np.where(integer_values >= 9.223372036854775807e18, LONG_MAX,
                                      np.trunc(integer_values)).astype(np.int64)
            idx = self.layout.index_of(integer_values)
            if idx.size and (int(idx.max()) >= self.counts.size or int(integer_values.min()) < 0):
                raise OverflowError("value outside the DoubleHistogram's integer range")
            np.add.at(self.counts, idx, counts[i:stop])
            self.total += int(counts[i:stop].sum())
            i = stop

    def result(self) -> DoubleHistogram:
        nz = np.flatnonzero(self.counts)
        integer = Histogram(self.layout, nz.astype(np.int64), self.counts[nz].copy(), self.bucket_count)
        return DoubleHistogram(integer, self.itd, self.configured_ratio)


def sum_double_histograms(histograms, like_processor: bool = False) -> DoubleHistogram:
    """The sum of DoubleHistograms, equal to Java's.

    like_processor=False: into `new DoubleHistogram(3)` (auto-resizing, ratio 2), as the
    javastats oracle and most Java code do. True: into a reset copy of the first histogram, as
    HistogramLogProcessor does (its configured range ratio and digits)."""
    histograms = list(histograms)
    if not histograms:
        raise ValueError("no histograms to add")
    if like_processor:
        first = histograms[0]
        acc = DoubleAccumulator(first.configured_ratio, first.layout.significant_digits)
    else:
        acc = DoubleAccumulator(2, 3)
    for h in histograms:
        acc.add(h)
    return acc.result()
