"""Intervals -> an HdrHistogram interval log (`.hlog`), byte for byte as Java's
HistogramLogWriter (HdrHistogram 2.2.2) writes it.

The header is the harness's (bench/loadgen LoadGen.hlog): an optional comment, the format version
(`#[Histogram log format version 1.3]`), `#[StartTime: ...]` and `#[BaseTime: ...]` both at the
first interval's start, the legend line; then one line per interval, `Tag=NAME,` first where it
has a tag, its start relative to BaseTime, its length and its max (value / units per ms) as
Java's `%.3f`, and the payload: AbstractHistogram.encodeIntoCompressedByteBuffer at
Deflater.BEST_COMPRESSION, in base64.

The payload: cookie 0x1c849314 (V2, compressed, with the word-size nibble Java sets), the
deflated length, then zlib's deflate of the V2 encoding: cookie 0x1c849313, payload length,
normalizing index offset 0, significant digits, lowest discernible and highest trackable value
(the histogram's own layout), integer-to-double ratio 1.0, then the counts from index 0 to the
highest non-zero one as ZigZag LEB128 longs, a run of n > 1 zero counts as -n. An empty
histogram encodes one zero count (Java's counts limit is index(max) + 1 with max 0).

Deterministic: the date text of `#[StartTime]` (Java's Date.toString) is written in UTC, as Java
writes it with `-Duser.timezone=UTC`; nothing depends on the clock or the machine. zlib is the
system's, as Java's Deflater uses it: with the same zlib the bytes are Java's.
"""
from __future__ import annotations

import base64
import os
import struct
import time
import zlib

import numpy as np

from analysis import atomic
from analysis.read.hdr.distribution import java_format_fixed
from analysis.read.hdr.histogram import Histogram
from analysis.read.hdr.payload import V2_COMPRESSED, V2_COOKIE

LEGEND = '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"'
# Java's writers set the word-size nibble of the cookie: "LSBit of wordSize byte indicates TLZE"
TLZE_NIBBLE = 0x10
BEST_COMPRESSION = 9
_HEADER = struct.Struct(">iiiiqqd")
_OUTER = struct.Struct(">ii")


def zigzag_leb128(values: np.ndarray) -> bytes:
    """ZigZagEncoding.putLong of each int64 value, concatenated: 7 bits a byte, low first, the
    9th byte (values over 56 bits) carrying 8."""
    u = ((values << 1) ^ (values >> 63)).astype(np.uint64)
    lengths = np.ones(u.size, np.int64)
    for k in range(1, 9):
        lengths += u >= np.uint64(1 << (7 * k))
    ends = np.cumsum(lengths)
    out = np.zeros(int(ends[-1]) if u.size else 0, np.uint8)
    starts = ends - lengths
    for k in range(9):
        sel = np.flatnonzero(lengths > k)
        if not sel.size:
            break
        part = u[sel] >> np.uint64(7 * k)
        if k < 8:
            byte = (part & np.uint64(0x7F)) | np.where(lengths[sel] > k + 1, np.uint64(0x80),
                                                        np.uint64(0))
        else:
            byte = part & np.uint64(0xFF)
        out[starts[sel] + k] = byte.astype(np.uint8)
    return out.tobytes()


def v2_counts(h: Histogram) -> bytes:
    """fillBufferFromCountsArray: the counts up to the highest non-zero index, zero runs of
    n > 1 as -n (a lone zero as 0)."""
    if not h.indices.size:
        return b"\x00"
    gaps = np.diff(h.indices, prepend=-1) - 1          # zero counts before each entry
    runs = np.where(gaps > 1, -gaps, 0)
    items = np.empty(2 * h.indices.size, np.int64)
    items[0::2], items[1::2] = runs, h.counts
    keep = np.ones(items.size, bool)
    keep[0::2] = gaps > 0                              # no run to write before a neighbour
    return zigzag_leb128(items[keep])


def encode_histogram(h: Histogram) -> bytes:
    """encodeIntoCompressedByteBuffer(buffer, Deflater.BEST_COMPRESSION) of an integer
    histogram recorded with integer-to-double ratio 1.0."""
    if not isinstance(h, Histogram):
        raise TypeError(f"only integer histograms are written, not {type(h).__name__}")
    layout = h.layout
    body = v2_counts(h)
    raw = _HEADER.pack(V2_COOKIE | TLZE_NIBBLE, len(body), 0, layout.significant_digits,
                       layout.lowest_discernible_value, layout.highest_trackable_value,
                       1.0) + body
    compressed = zlib.compress(raw, BEST_COMPRESSION)
    return _OUTER.pack(V2_COMPRESSED | TLZE_NIBBLE, len(compressed)) + compressed


def java_date_utc(millis: int) -> str:
    """Java's `new Date(millis).toString()` with the UTC time zone."""
    when = time.gmtime(millis // 1000)
    return time.strftime("%a %b %d %H:%M:%S UTC %Y", when)


def header_lines(base_ms: int, comment: str | None = None) -> list[str]:
    lines = [f"#{_one_line(comment)}"] if comment is not None else []
    seconds = java_format_fixed(base_ms / 1000.0, 3)
    lines += ["#[Histogram log format version 1.3]",
              f"#[StartTime: {seconds} (seconds since epoch), {java_date_utc(base_ms)}]",
              f"#[BaseTime: {seconds} (seconds since epoch)]",
              LEGEND]
    return lines


def _one_line(text: str) -> str:
    """A comment stays one line: a line break in a file name would start a line of its own."""
    return " ".join(text.splitlines())


def interval_line(iv, base_ms: int, units_per_ms: float) -> str:
    """outputIntervalHistogram(start, end, histogram, units_per_ms) of one Interval."""
    start = (iv.start_ms - base_ms) / 1000.0
    end = (iv.end_ms - base_ms) / 1000.0
    h = iv.histogram
    payload = base64.b64encode(encode_histogram(h)).decode("ascii")
    fields = (java_format_fixed(start, 3), java_format_fixed(end - start, 3),
              java_format_fixed(float(h.max) / units_per_ms, 3), payload)
    if iv.tag is None:
        return ",".join(fields)
    if any(c in iv.tag for c in ", \r\n"):
        raise ValueError(f"tag {iv.tag!r} cannot hold commas, spaces or line breaks")
    return f"Tag={iv.tag}," + ",".join(fields)


def hlog_text(intervals, units_per_ms: float, comment: str | None = None,
              base_ms: int | None = None) -> str:
    """The whole log: header, then the intervals in the order given. StartTime and BaseTime
    are `base_ms`, by default the earliest interval start."""
    intervals = list(intervals)
    if base_ms is None:
        base_ms = min((iv.start_ms for iv in intervals), default=0)
    lines = header_lines(base_ms, comment)
    lines += [interval_line(iv, base_ms, units_per_ms) for iv in intervals]
    return "\n".join(lines) + "\n"


def write_hlog(path: str | os.PathLike, intervals, units_per_ms: float,
               comment: str | None = None) -> bool:
    """Write the log atomically (analysis/atomic.py); False when the file already held it."""
    return atomic.write_text(path, hlog_text(intervals, units_per_ms, comment))
