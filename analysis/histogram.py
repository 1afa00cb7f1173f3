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
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache

import numpy as np

LONG_MAX = (1 << 63) - 1


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
        top = self.counts_length_for_buckets(bucket_count) - 1
        return int(self.highest_value_at(np.array([top]))[0])


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
        return int(self.layout.lowest_value_at(self.indices[:1])[0])

    @property
    def max(self) -> int:
        """getMaxValue: highest equivalent value of the highest non-empty bucket, 0 when empty."""
        if not self.indices.size:
            return 0
        return int(self.layout.highest_value_at(self.indices[-1:])[0])

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
        return int(self.values_at_percentiles([percentile])[0])

    def values_at_percentiles(self, percentiles) -> np.ndarray:
        """getValueAtPercentile for several percentiles at once (int64 array)."""
        total = self.total_count
        out = np.zeros(len(percentiles), dtype=np.int64)
        if total == 0:
            return out
        targets = np.array([percentile_target_count(p, total) for p in percentiles], np.int64)
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
    return max(_java_long(math.ceil(fp_count)), 1)


def _java_long(value: float) -> int:
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


# -- .hgrm output ----------------------------------------------------------------------------

def java_format_fixed(value: float, decimals: int, width: int = 0) -> str:
    """Java's `%W.Df` for a double.

    Java's Formatter rounds the shortest decimal representation of the double (what
    Double.toString prints) half-up, where C and Python round the exact binary value: 0.0015 is
    "0.002" in Java and "0.001" with Python's '%.3f'. Python's repr is that shortest
    representation, so only ties in it need the decimal path.
    """
    text = "%.*f" % (decimals, value)
    if value == value and value not in (math.inf, -math.inf):
        shortest = repr(float(value))
        if "e" in shortest:
            text = _half_up(shortest, decimals)
        else:
            dot = shortest.find(".")
            fraction = shortest[dot + 1:]
            if len(fraction) > decimals and fraction[decimals] == "5" and \
                    fraction[decimals + 1:].strip("0") == "":
                text = _half_up(shortest, decimals)
    else:
        text = "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    return text.rjust(width) if width else text


def _half_up(shortest: str, decimals: int) -> str:
    quantum = Decimal(1).scaleb(-decimals)
    rounded = Decimal(shortest).quantize(quantum, rounding=ROUND_HALF_UP)
    return f"{rounded:f}"


def _java_divide(numerator: float, denominator: float) -> float:
    """IEEE division as Java does it (x / 0.0 is infinite, not an exception)."""
    if denominator == 0.0:
        if numerator == 0.0 or numerator != numerator:
            return math.nan
        return math.copysign(math.inf, numerator) * math.copysign(1.0, denominator)
    return numerator / denominator


def percentile_distribution(hist: Histogram, ticks_per_half: int = 5):
    """Rows of Java's PercentileIterator: (value, percentile_level, total_count_to_value).
    The last row is the 100% row."""
    total = hist.total_count
    if total == 0:
        return []
    cum = hist.cumulative_counts
    # Java: (100.0 * totalCountToCurrentIndex) / arrayTotalCount, in doubles.
    percent_reached = (100.0 * cum.astype(np.float64)) / float(total)
    highest = hist.layout.highest_value_at(hist.indices)
    rows = []
    level = 0.0
    last = hist.indices.size - 1
    pos = 0
    log2 = math.log(2)
    while True:
        pos = int(np.searchsorted(percent_reached, level, side="left"))
        if pos > last:  # cannot happen with a consistent cumulative array; stay safe
            pos = last
        rows.append((int(highest[pos]), level, int(cum[pos])))
        if cum[pos] >= total:
            break
        ticks = ticks_per_half * _java_long(
            math.pow(2, _java_long(math.log(100.0 / (100.0 - level)) / log2) + 1))
        level += 100.0 / ticks
    rows.append((int(highest[last]), 100.0, int(total)))
    return rows


def format_percentile_distribution(hist: Histogram, ticks_per_half: int, value_unit_ratio: float,
                                   csv: bool) -> str:
    """AbstractHistogram.outputPercentileDistribution, byte for byte."""
    digits = hist.layout.significant_digits
    out = []
    if csv:
        out.append('"Value","Percentile","TotalCount","1/(1-Percentile)"\n')
    else:
        out.append("%12s %14s %10s %14s\n\n" % ("Value", "Percentile", "TotalCount", "1/(1-Percentile)"))
    for value, level, count in percentile_distribution(hist, ticks_per_half):
        scaled = value / value_unit_ratio
        fraction = level / 100.0
        if csv:
            if level != 100.0:
                out.append(f"{java_format_fixed(scaled, digits)},{java_format_fixed(fraction, 12)},"
                           f"{count},{java_format_fixed(_java_divide(1.0, 1.0 - fraction), 2)}\n")
            else:
                out.append(f"{java_format_fixed(scaled, digits)},{java_format_fixed(fraction, 12)},"
                           f"{count},Infinity\n")
        else:
            line = (f"{java_format_fixed(scaled, digits, 12)} {java_format_fixed(fraction, 12, 2)} "
                    f"{count:10d}")
            if level != 100.0:
                line += " " + java_format_fixed(_java_divide(1.0, 1.0 - fraction), 2, 14)
            out.append(line + "\n")
    if not csv:
        out.append(f"#[Mean    = {java_format_fixed(hist.mean / value_unit_ratio, digits, 12)}, "
                   f"StdDeviation   = {java_format_fixed(hist.stddev / value_unit_ratio, digits, 12)}]\n")
        out.append(f"#[Max     = {java_format_fixed(hist.max / value_unit_ratio, digits, 12)}, "
                   f"Total count    = {hist.total_count:12d}]\n")
        out.append(f"#[Buckets = {hist.bucket_count:12d}, SubBuckets     = "
                   f"{hist.layout.sub_bucket_count:12d}]\n")
    return "".join(out)


# -- DoubleHistogram ---------------------------------------------------------------------------

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
        integer_value = _java_long(value * (1.0 / self.ratio))
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


class _DoubleAccumulator:
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
        return _containing_binary_order(_java_long(math.ceil(value)))

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
        acc = _DoubleAccumulator(first.configured_ratio, first.layout.significant_digits)
    else:
        acc = _DoubleAccumulator(2, 3)
    for h in histograms:
        acc.add(h)
    return acc.result()
