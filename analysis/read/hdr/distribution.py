"""The `.hgrm` percentile distribution and Java's fixed-point number text, byte for byte as
HdrHistogram's `outputPercentileDistribution` prints them."""
from __future__ import annotations

import math

import numpy as np
from decimal import ROUND_HALF_UP, Decimal

from analysis.read.hdr.histogram import Histogram, java_long


def java_format_fixed(value: float, decimals: int, width: int = 0) -> str:
    """Java's `%W.Df` for a double.

    Java's Formatter rounds the shortest decimal representation of the double (what
    Double.toString prints) half-up, where C and Python round the exact binary value: 0.0015 is
    "0.002" in Java and "0.001" with Python's '%.3f'. Python's repr is that shortest
    representation, so only ties in it need the decimal path. Where that representation has
    fewer decimals than asked (a double of 16-17 digits), Java pads it with zeros: 1.5e14+0.69
    (shortest ...844.7) is "...844.70" in Java and "...844.69" in C.
    """
    text = "%.*f" % (decimals, value)
    if value == value and value not in (math.inf, -math.inf):
        shortest = repr(float(value))
        if "e" in shortest:
            text = _half_up(shortest, decimals)
        else:
            dot = shortest.find(".")
            fraction = shortest[dot + 1:]
            if len(fraction) > decimals:
                if fraction[decimals] == "5" and fraction[decimals + 1:].strip("0") == "":
                    text = _half_up(shortest, decimals)
            else:
                text = shortest + "0" * (decimals - len(fraction))
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


class EndlessDistribution(ValueError):
    """A percentile distribution that never reaches 100 %: a count below the total whose
    percentage is, in doubles, at or past the last level the ticks can reach (a total near
    2^62 with a few counts above the rest). HistogramLogProcessor prints rows forever or
    throws there."""

    def __init__(self, total: int, reached: int, level: float):
        self.total, self.reached, self.level = total, reached, level
        super().__init__(f"its percentile distribution cannot reach 100 %: {reached} of the "
                         f"total count {total} is already {level!r} % in doubles, and the "
                         f"{total - reached} above it cannot be reached by steps that small")


def percentile_distribution(hist: Histogram, ticks_per_half: int = 5):
    """Rows of Java's PercentileIterator: (value, percentile_level, total_count_to_value).
    The last row is the 100% row. Raises EndlessDistribution where Java never ends."""
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
        if level >= 100.0:
            # Java's next level is infinite and its iterator throws NoSuchElementException
            raise EndlessDistribution(total, int(cum[pos]), level)
        ticks = ticks_per_half * java_long(
            math.pow(2, java_long(math.log(100.0 / (100.0 - level)) / log2) + 1))
        following = level + 100.0 / ticks
        if following == level:
            # the step is below the double's precision: Java prints this row forever
            raise EndlessDistribution(total, int(cum[pos]), level)
        level = following
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
