"""HdrHistogram arithmetic and statistics, equal to HdrHistogram 2.2.2's Java `Histogram`.

A `Histogram` here is the sparse form of Java's counts array: the indices that hold a non-zero
count (ascending) and those counts. Everything a reader of the numbers sees - total count, min,
max, mean, standard deviation, value at percentile, the `.hgrm` percentile distribution - is
computed the way `AbstractHistogram` computes it, including its floating-point order of
operations, so the results are bit-for-bit the ones Java prints. Values stay in the unit they
were recorded in; scaling happens only when formatting output.

Reference points in the Java sources (HdrHistogram 2.2.2, AbstractHistogram.java):
`init` (bucket layout), `valueFromIndex`, `getMean`, `getStdDeviation`, `getValueAtPercentile`,
`add` (auto-resize), `outputPercentileDistribution`, and PercentileIterator.java.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

LONG_MAX = (1 << 63) - 1
# Up to this many percentiles are looked up one by one in Python ints; beyond it the array
# arithmetic's fixed cost is the smaller one (a spectrum's ~60, an .hgrm's hundreds).
FEW_PERCENTILES = 16


class LayoutError(ValueError):
    """A histogram header whose parameters Java's constructor would refuse."""


def _java_int(value: int) -> int:
    """Wrap to a signed 32-bit int, as Java's int arithmetic does."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


@dataclass(frozen=True)
class Layout:
    """The bucket layout of a Java histogram (AbstractHistogram.init), from its three parameters."""

    lowest_discernible_value: int
    highest_trackable_value: int
    significant_digits: int

    def __post_init__(self):
        ldv, htv, digits = (self.lowest_discernible_value, self.highest_trackable_value,
                            self.significant_digits)
        # The same checks, in the same order, as Java's constructor.
        if ldv < 1:
            raise LayoutError(f"lowestDiscernibleValue {ldv} must be >= 1")
        if ldv > LONG_MAX // 2:
            raise LayoutError(f"lowestDiscernibleValue {ldv} must be <= 2^62")
        if htv < 2 * ldv:
            raise LayoutError(f"highestTrackableValue {htv} must be >= 2 * lowestDiscernibleValue {ldv}")
        if htv > LONG_MAX:
            raise LayoutError(f"highestTrackableValue {htv} does not fit in a signed 64-bit integer")
        if not 0 <= digits <= 5:
            raise LayoutError(f"numberOfSignificantValueDigits {digits} must be between 0 and 5")
        largest_single_unit = 2 * int(math.pow(10, digits))
        # Java computes both magnitudes with floating-point logs; math.log matches Math.log here.
        unit_magnitude = int(math.log(ldv) / math.log(2))
        sub_bucket_count_magnitude = int(math.ceil(math.log(largest_single_unit) / math.log(2)))
        if sub_bucket_count_magnitude + unit_magnitude > 62:
            raise LayoutError(f"numberOfSignificantValueDigits {digits} with lowestDiscernibleValue "
                              f"{ldv} cannot be represented in 63 bits")
        set_ = object.__setattr__
        set_(self, "unit_magnitude", unit_magnitude)
        # Java: `(1 << unitMagnitude) - 1` in *int* arithmetic, then widened to long.
        set_(self, "unit_magnitude_mask", _java_int(_java_int(1 << (unit_magnitude & 31)) - 1))
        set_(self, "sub_bucket_half_count_magnitude", sub_bucket_count_magnitude - 1)
        set_(self, "sub_bucket_count", 1 << sub_bucket_count_magnitude)
        set_(self, "sub_bucket_half_count", 1 << (sub_bucket_count_magnitude - 1))
        set_(self, "bucket_count", self.buckets_needed(htv))
        set_(self, "counts_array_length", (self.bucket_count + 1) * self.sub_bucket_half_count)

    # Declared for readers and type checkers; set in __post_init__.
    unit_magnitude: int = 0
    unit_magnitude_mask: int = 0
    sub_bucket_half_count_magnitude: int = 0
    sub_bucket_count: int = 0
    sub_bucket_half_count: int = 0
    bucket_count: int = 0
    counts_array_length: int = 0

    def buckets_needed(self, value: int) -> int:
        """AbstractHistogram.getBucketsNeededToCoverValue."""
        smallest_untrackable = self.sub_bucket_count << self.unit_magnitude
        buckets = 1
        while smallest_untrackable <= value:
            if smallest_untrackable > LONG_MAX // 2:
                return buckets + 1
            smallest_untrackable <<= 1
            buckets += 1
        return buckets

    def counts_length_for_buckets(self, bucket_count: int) -> int:
        return (bucket_count + 1) * self.sub_bucket_half_count

    # -- index <-> value, vectorised (int64 arrays) and scalar ------------------------------

    def _bucket_of_index(self, index):
        return np.maximum((index >> self.sub_bucket_half_count_magnitude) - 1, 0)

    def lowest_value_at(self, index: np.ndarray) -> np.ndarray:
        """valueFromIndex: the lowest value counted at each index."""
        index = np.asarray(index, dtype=np.int64)
        half_mag = self.sub_bucket_half_count_magnitude
        bucket = (index >> half_mag) - 1
        sub = (index & (self.sub_bucket_half_count - 1)) + self.sub_bucket_half_count
        below = bucket < 0
        sub = np.where(below, sub - self.sub_bucket_half_count, sub)
        bucket = np.where(below, 0, bucket)
        return sub << (bucket + self.unit_magnitude)

    def size_at(self, index: np.ndarray) -> np.ndarray:
        """sizeOfEquivalentValueRange for the values at each index."""
        index = np.asarray(index, dtype=np.int64)
        return np.left_shift(np.int64(1), self._bucket_of_index(index) + self.unit_magnitude)

    def highest_value_at(self, index: np.ndarray) -> np.ndarray:
        """highestEquivalentValue(valueFromIndex(i)); written as lowest + (size - 1) so the top
        bucket of a 2^63 range does not overflow (Java wraps there and lands on the same value)."""
        return self.lowest_value_at(index) + (self.size_at(index) - 1)

    def median_value_at(self, index: np.ndarray) -> np.ndarray:
        """medianEquivalentValue(valueFromIndex(i))."""
        return self.lowest_value_at(index) + (self.size_at(index) >> 1)

    def index_of(self, values: np.ndarray) -> np.ndarray:
        """countsArrayIndex for non-negative int64 values."""
        values = np.asarray(values, dtype=np.int64)
        sub_bucket_mask = (self.sub_bucket_count - 1) << self.unit_magnitude
        # 64 - numberOfLeadingZeros(v | mask) == bit_length(v | mask); v | mask > 0 always.
        bit_length = _bit_length(values | np.int64(sub_bucket_mask))
        leading_zero_count_base = 64 - self.unit_magnitude - (self.sub_bucket_half_count_magnitude + 1)
        bucket = leading_zero_count_base - (64 - bit_length)
        sub = (values.astype(np.uint64) >> (bucket + self.unit_magnitude).astype(np.uint64)).astype(np.int64)
        return ((bucket + 1) << self.sub_bucket_half_count_magnitude) + (sub - self.sub_bucket_half_count)

    def highest_recordable_value(self, bucket_count: int) -> int:
        return self.highest_value_of(self.counts_length_for_buckets(bucket_count) - 1)

    # Scalar forms of the above for one index: a histogram's min, max and a few percentiles
    # are asked for every interval of every log, where numpy's per-call cost on one-element
    # arrays is most of the work. Python ints wrapped to int64 at the end give the array
    # forms' results exactly: +, - and << agree modulo 2^64, and numpy wraps (a shift of 64 or
    # more gives numpy's 0 too; tested).

    def _lowest_and_shift(self, index: int) -> tuple[int, int]:
        bucket = (index >> self.sub_bucket_half_count_magnitude) - 1
        sub = (index & (self.sub_bucket_half_count - 1)) + self.sub_bucket_half_count
        if bucket < 0:
            sub -= self.sub_bucket_half_count
            bucket = 0
        shift = bucket + self.unit_magnitude
        return sub << shift, shift

    def lowest_value_of(self, index: int) -> int:
        return _wrap64(self._lowest_and_shift(index)[0])

    def highest_value_of(self, index: int) -> int:
        lowest, shift = self._lowest_and_shift(index)
        return _wrap64(lowest + (1 << shift) - 1)


def _wrap64(value: int) -> int:
    """A Python int as the int64 numpy's wrapping arithmetic leaves."""
    return ((value + (1 << 63)) & ((1 << 64) - 1)) - (1 << 63)


def _bit_length(values: np.ndarray) -> np.ndarray:
    """64 - Long.numberOfLeadingZeros(v) for non-negative int64 values, exactly."""
    rest = values.astype(np.uint64)
    length = np.zeros(values.shape, np.int64)
    for shift in (32, 16, 8, 4, 2, 1):
        high = rest >= np.uint64(1 << shift)
        rest = np.where(high, rest >> np.uint64(shift), rest)
        length += high * shift
    return length + (rest > 0)


@lru_cache(maxsize=256)
def layout_for(lowest_discernible_value: int, highest_trackable_value: int,
               significant_digits: int) -> Layout:
    return Layout(lowest_discernible_value, highest_trackable_value, significant_digits)


class Histogram:
    """Counts of recorded values in one Java histogram layout, with Java's statistics.

    `indices` (int64, ascending, unique) and `counts` (int64, > 0) are the non-zero entries of
    Java's counts array. `bucket_count` is the bucket count Java's histogram would have (it grows
    when adding values beyond the range, as an auto-resizing Histogram does); it is printed in the
    `.hgrm` footer.
    """

    __slots__ = ("layout", "indices", "counts", "bucket_count", "_cum")

    def __init__(self, layout: Layout, indices: np.ndarray, counts: np.ndarray,
                 bucket_count: int | None = None):
        self.layout = layout
        self.indices = indices
        self.counts = counts
        self.bucket_count = layout.bucket_count if bucket_count is None else bucket_count
        self._cum = None

    @classmethod
    def empty(cls, layout: Layout) -> "Histogram":
        return cls(layout, np.zeros(0, np.int64), np.zeros(0, np.int64))

    @classmethod
    def from_values(cls, layout: Layout, values, counts=None) -> "Histogram":
        """A histogram of recorded values (each value once, or with `counts`), as
        recordValueWithCount would build it. For tests and tools; the reader decodes directly."""
        values = np.asarray(values, dtype=np.int64).ravel()
        if counts is None:
            counts = np.ones(values.shape, np.int64)
        counts = np.asarray(counts, dtype=np.int64).ravel()
        if values.size and values.min() < 0:
            raise ValueError("histogram values cannot be negative")
        merged = cls.empty(layout)
        if values.size:
            bucket_count = max(layout.bucket_count, layout.buckets_needed(int(values.max())))
            idx = layout.index_of(values)
            merged = _sum_entries(layout, idx, counts, bucket_count)
        return merged

    # -- Java's getters ----------------------------------------------------------------------

    @property
    def cumulative_counts(self) -> np.ndarray:
        if self._cum is None:
            self._cum = np.cumsum(self.counts)
        return self._cum

    @property
    def total_count(self) -> int:
        return int(self.cumulative_counts[-1]) if self.counts.size else 0

    @property
    def min(self) -> int:
        """getMinValue: 0 when empty or when the lowest bucket (values equivalent to 0) holds a count."""
        if not self.indices.size or self.indices[0] == 0:
            return 0
        return self.layout.lowest_value_of(int(self.indices[0]))

    @property
    def max(self) -> int:
        """getMaxValue: highest equivalent value of the highest non-empty bucket, 0 when empty."""
        if not self.indices.size:
            return 0
        return self.layout.highest_value_of(int(self.indices[-1]))

    @property
    def mean(self) -> float:
        """getMean: the running double sum of median-equivalent value x count, in index order."""
        total = self.total_count
        if total == 0:
            return 0.0
        weighted = self.layout.median_value_at(self.indices).astype(np.float64) * \
            self.counts.astype(np.float64)
        # np.cumsum adds left to right like Java's loop (np.sum would add pairwise).
        return float(np.cumsum(weighted)[-1]) / float(total)

    @property
    def stddev(self) -> float:
        """getStdDeviation, with Java's order of operations."""
        total = self.total_count
        if total == 0:
            return 0.0
        mean = self.mean
        deviation = self.layout.median_value_at(self.indices).astype(np.float64) - mean
        squares = (deviation * deviation) * self.counts.astype(np.float64)
        return math.sqrt(float(np.cumsum(squares)[-1]) / float(total))

    def value_at_percentile(self, percentile: float) -> int:
        """getValueAtPercentile."""
        total = self.total_count
        if total == 0:
            return 0
        target = percentile_target_count(percentile, total)
        pos = int(self.cumulative_counts.searchsorted(target))
        return self._value_at_position(pos, percentile)

    def values_at_percentiles(self, percentiles) -> np.ndarray:
        """getValueAtPercentile for several percentiles at once (int64 array): one search of
        the cumulative counts for all of them."""
        total = self.total_count
        if total == 0:
            return np.zeros(len(percentiles), dtype=np.int64)
        targets = [percentile_target_count(p, total) for p in percentiles]
        if len(targets) > FEW_PERCENTILES:
            return self._values_at_targets(np.array(targets, np.int64), percentiles)
        positions = self.cumulative_counts.searchsorted(targets).tolist()
        return np.array([self._value_at_position(pos, p)
                         for pos, p in zip(positions, percentiles)], np.int64)

    def _value_at_position(self, pos: int, percentile: float) -> int:
        """The value at the first entry whose cumulative count reaches a percentile's target
        (pos: that entry; past the end: none, 0): its lowest equivalent value for the 0th
        percentile, else its highest."""
        if pos >= self.indices.size:
            return 0
        index = int(self.indices[pos])
        if float(percentile) == 0.0:
            return self.layout.lowest_value_of(index)
        return self.layout.highest_value_of(index)

    def _values_at_targets(self, targets: np.ndarray, percentiles) -> np.ndarray:
        pos = np.searchsorted(self.cumulative_counts, targets, side="left")
        idx = self.indices[np.minimum(pos, self.indices.size - 1)]
        highest = self.layout.highest_value_at(idx)
        lowest = self.layout.lowest_value_at(idx)
        is_zero = np.array([float(p) == 0.0 for p in percentiles])
        out = np.where(is_zero, lowest, highest)
        return np.where(pos < self.indices.size, out, 0)

    # -- adding -----------------------------------------------------------------------------

    def __add__(self, other: "Histogram") -> "Histogram":
        return sum_histograms([self, other])

    def __eq__(self, other) -> bool:
        if not isinstance(other, Histogram):
            return NotImplemented
        return (self.layout == other.layout and np.array_equal(self.indices, other.indices)
                and np.array_equal(self.counts, other.counts))

    __hash__ = None

    def __repr__(self) -> str:
        return (f"Histogram(count={self.total_count}, min={self.min}, max={self.max}, "
                f"digits={self.layout.significant_digits})")


def percentile_target_count(percentile: float, total: int) -> int:
    """The count a percentile must reach: Java's getValueAtPercentile arithmetic."""
    requested = min(max(math.nextafter(float(percentile), -math.inf), 0.0), 100.0)
    fp_count = (requested * float(total)) / 100.0
    return max(java_long(math.ceil(fp_count)), 1)


def java_long(value: float) -> int:
    """Java's (long) cast of a double: truncation, saturating, NaN -> 0."""
    if value != value:
        return 0
    if value >= 9.223372036854775807e18:
        return LONG_MAX
    if value <= -9.223372036854775808e18:
        return -LONG_MAX - 1
    return int(value)


def _sum_entries(layout: Layout, indices: np.ndarray, counts: np.ndarray,
                 bucket_count: int) -> Histogram:
    """Histogram from possibly repeated (index, count) entries."""
    if not indices.size:
        return Histogram(layout, np.zeros(0, np.int64), np.zeros(0, np.int64), bucket_count)
    total = int(counts.sum(dtype=np.float64)) if counts.size else 0
    length = int(indices.max()) + 1
    if total < (1 << 53):
        # bincount adds in float64, exact while every sum stays below 2^53.
        dense = np.bincount(indices, weights=counts, minlength=length).astype(np.int64)
    else:
        dense = np.zeros(length, np.int64)
        np.add.at(dense, indices, counts)
    nz = np.flatnonzero(dense)
    return Histogram(layout, nz.astype(np.int64), dense[nz], bucket_count)


def sum_histograms(histograms) -> Histogram:
    """The sum of histograms as Java builds it: a copy of the first one's layout, auto-resizing,
    then `add` of each in order. Entries of a histogram with a different layout are re-recorded
    at their lowest equivalent value (Java's slow path in AbstractHistogram.add).

    Streams: memory is one counts array, however many histograms are added."""
    iterator = iter(histograms)
    try:
        first = next(iterator)
    except StopIteration:
        raise ValueError("no histograms to add") from None
    layout = first.layout
    bucket_count = layout.bucket_count
    highest = layout.highest_recordable_value(bucket_count)
    dense = np.zeros(0, np.int64)
    grand_total = 0
    for h in itertools.chain([first], iterator):
        if not h.indices.size:
            continue
        grand_total += h.total_count
        if grand_total > LONG_MAX:
            raise OverflowError("the total count exceeds 2^63-1")
        same = h.layout.sub_bucket_count == layout.sub_bucket_count and \
            h.layout.unit_magnitude == layout.unit_magnitude
        idx = h.indices if same else layout.index_of(h.layout.lowest_value_at(h.indices))
        hmax = h.max
        if highest < hmax:
            bucket_count = layout.buckets_needed(hmax)
            highest = layout.highest_recordable_value(bucket_count)
        need = int(idx.max()) + 1
        if need > dense.size:
            dense = np.concatenate([dense, np.zeros(max(need, 2 * dense.size) - dense.size,
                                                    np.int64)])
        if same:
            dense[idx] += h.counts              # indices of one histogram are distinct
        else:
            np.add.at(dense, idx, h.counts)     # a coarser layout can merge entries
    nz = np.flatnonzero(dense)
    return Histogram(layout, nz.astype(np.int64), dense[nz], bucket_count)
