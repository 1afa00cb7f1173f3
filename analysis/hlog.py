"""Read HdrHistogram interval logs (`.hlog`) the way HdrHistogram's Java HistogramLogReader does.

Accepted input: every payload kind HdrHistogram writers have produced - V2 (`HISTF...`, zigzag
LEB128 counts, compressed or not), V1 (2/4/8-byte count words), V0, and DoubleHistogram
wrappers (`DHIST...`) - with the header rules of `HistogramLogReader`: `#[StartTime: s]`,
`#[BaseTime: s]`, the legend line, other comments, `Tag=name,` prefixes, CRLF line ends, blank
lines, no header at all, absolute or relative timestamps.

Unlike the Java reader, a bad line never ends reading: it is skipped with one warning naming
`file:line` and the reason (`HlogLog.warnings`), and every valid interval is kept, including
intervals that start before `#[StartTime]` (HistogramLogProcessor drops those silently).
`read_hlog` raises `HlogError` when no usable interval remains.

Memory stays bounded by the input: a payload is inflated only up to the size its own header
allows (as Java does), and a claimed length or count that cannot be real is refused.

Time axis: `Interval.start_s` is seconds since the log's start time exactly as Java computes it
for HistogramLogProcessor's `-start/-end` (absolute start - `#[StartTime]`, or - the first
interval's timestamp when there is no StartTime line).
"""
from __future__ import annotations

import binascii
import math
import os
import stat
import struct
import zlib
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from analysis.errors import HlogError
from analysis.histogram import (DoubleHistogram, Histogram, Layout, LayoutError, _java_long,
                                double_internal_layout, layout_for, sum_double_histograms,
                                sum_histograms)

# Payload cookies (AbstractHistogram / DoubleHistogram). The low nibble of the second-lowest
# byte carries the word size for V0/V1; `cookie & ~0xf0` is the base.
V0_COOKIE, V0_COMPRESSED = 0x1c849308, 0x1c849309
V1_COOKIE, V1_COMPRESSED = 0x1c849301, 0x1c849302
V2_COOKIE, V2_COMPRESSED = 0x1c849303, 0x1c849304
DHIST_COOKIE, DHIST_COMPRESSED = 0x0c72124e, 0x0c72124f
V2_MAX_WORD_SIZE = 9
INT_MAX = (1 << 31) - 1

# Timestamps whose millisecond value does not fit in a Java long are not times (a fuzzer's
# 1e20, a StartTime of 1e300): Java saturates them silently; we skip the line and say so.
MAX_ABS_SECONDS = 9.2e15
# Compressed payloads up to this size are inflated in one call (at most ~16 MB out);
# larger ones stream, stopping where the payload's own header says the counts end.
SMALL_COMPRESSED = 16 * 1024

# Decoded entries kept in memory for instant `Interval.histogram`; beyond this, intervals keep
# their payload and decode on access (a 24-hour log has ~1.5e8 entries).
KEEP_DECODED_ENTRIES = 8_000_000


class PayloadError(ValueError):
    """A payload that cannot be decoded; the message is the reason shown to the user."""


# -- payload decoding --------------------------------------------------------------------------

@dataclass
class DecodedPayload:
    """One payload after inflation and header parsing, before its counts are decoded."""

    layout: Layout
    word_size: int               # 9 for V2 varints, else 2/4/8-byte big-endian words
    counts_bytes: bytes
    double_ratio: float | None = None    # integer-to-double ratio for DoubleHistogram payloads
    double_config: tuple | None = None   # (configured highest-to-lowest ratio, digits)


def parse_payload(raw: bytes) -> DecodedPayload:
    """Cookie dispatch and header parsing (EncodableHistogram.decodeFromCompressedByteBuffer),
    also accepting uncompressed encodings."""
    if len(raw) < 4:
        raise PayloadError("payload shorter than its 4-byte cookie")
    cookie = struct.unpack_from(">i", raw, 0)[0]
    if cookie in (DHIST_COOKIE, DHIST_COMPRESSED):
        if len(raw) < 16:
            raise PayloadError("DoubleHistogram payload shorter than its 16-byte header")
        digits, configured_ratio = struct.unpack_from(">iq", raw, 4)
        inner = _parse_integer_payload(raw[16:])
        _check_double_config(inner, configured_ratio, digits)
        inner.double_config = (configured_ratio, digits)
        return inner
    return _parse_integer_payload(raw)


def _check_double_config(inner: DecodedPayload, configured_ratio: int, digits: int) -> None:
    """DoubleHistogram's constructor checks on a decoded internal histogram."""
    if configured_ratio < 2:
        raise PayloadError(f"DoubleHistogram highestToLowestValueRatio {configured_ratio} must be >= 2")
    # Java rejects digits outside 0..5 before computing with them; a fuzzed header with a huge
    # digits field would otherwise overflow math.pow below.
    if not 0 <= digits <= 5:
        raise PayloadError(f"DoubleHistogram significant digits {digits} must be 0 to 5")
    if configured_ratio * math.pow(10.0, digits) >= (1 << 61):
        raise PayloadError("DoubleHistogram highestToLowestValueRatio * 10^digits must be < 2^61")
    # (the integer histogram's sub-bucket half count depends on its digits alone when its
    # lowest discernible value is 1; the test below requires both)
    _, expected_htv = double_internal_layout(configured_ratio, digits)
    lay = inner.layout
    if (lay.lowest_discernible_value != 1 or lay.highest_trackable_value != expected_htv
            or lay.significant_digits != digits):
        raise PayloadError("DoubleHistogram's integer histogram does not match its stated parameters")
    if not (inner.double_ratio is not None and math.isfinite(inner.double_ratio)
            and inner.double_ratio > 0):
        raise PayloadError("DoubleHistogram value conversion ratio is not a positive number")


def _parse_integer_payload(raw: bytes) -> DecodedPayload:
    if len(raw) < 4:
        raise PayloadError("payload shorter than its 4-byte cookie")
    outer = struct.unpack_from(">i", raw, 0)[0]
    base = outer & ~0xf0
    if base in (V2_COMPRESSED, V1_COMPRESSED, V0_COMPRESSED):
        if len(raw) < 8:
            raise PayloadError("compressed payload shorter than its 8-byte header")
        compressed_length = struct.unpack_from(">i", raw, 4)[0]
        if compressed_length < 0 or compressed_length > len(raw) - 8:
            raise PayloadError(f"payload claims {compressed_length} compressed bytes but has "
                               f"{len(raw) - 8}")
        header_size = 32 if base == V0_COMPRESSED else 40
        compressed = memoryview(raw)[8:8 + compressed_length]   # (no copy)
        if compressed_length <= SMALL_COMPRESSED:
            # One call is cheaper, and a small input cannot inflate past ~1032x its size.
            # A corrupt stream takes the step-by-step path below, which reports the first
            # problem in Java's order (the header before the counts).
            try:
                inflated = zlib.decompress(compressed)
            except zlib.error:
                inflated = None
            if inflated is not None:
                header = inflated[:header_size].ljust(header_size, b"\0")
                decoded = _parse_header(header, header_size)
                return _finish_payload(decoded, inflated[header_size:header_size + decoded[2]])
        inflater = zlib.decompressobj()
        try:
            header = inflater.decompress(compressed, header_size)
        except zlib.error as exc:
            raise PayloadError(f"corrupt zlib data in payload ({exc})") from None
        header = header.ljust(header_size, b"\0")  # Java reads a short header as zeros
        decoded = _parse_header(header, header_size)
        limit = decoded[2]
        try:
            body = inflater.decompress(inflater.unconsumed_tail, limit) if limit else b""
        except zlib.error as exc:
            raise PayloadError(f"corrupt zlib data in payload ({exc})") from None
        return _finish_payload(decoded, body)
    if base in (V2_COOKIE, V1_COOKIE, V0_COOKIE):
        header_size = 32 if base == V0_COOKIE else 40
        if len(raw) < header_size:
            raise PayloadError(f"payload shorter than its {header_size}-byte header")
        decoded = _parse_header(raw[:header_size], header_size)
        return _finish_payload(decoded, raw[header_size:header_size + decoded[2]])
    raise PayloadError(f"unknown payload cookie 0x{outer & 0xffffffff:08x} "
                       "(not an HdrHistogram V0/V1/V2 or DoubleHistogram encoding)")


def _parse_header(header: bytes, header_size: int):
    """-> (layout, word_size, byte limit to read, payload_length or None, ratio)."""
    if header_size == 40:
        # A log repeats a handful of headers that differ only in the payload length (bytes
        # 4-8): the rest is parsed and checked once per distinct header.
        layout, word_size, limit, ratio = _parse_header_fields(header[:4] + header[8:], 40)
        payload_length = struct.unpack_from(">i", header, 4)[0]
        if payload_length < 0:
            raise PayloadError(f"negative payload length {payload_length}")
        # Java reads min(countsArrayLength * 8, payloadLength) bytes of counts, and no more.
        return layout, word_size, min(limit, payload_length), payload_length, ratio
    layout, word_size, limit, ratio = _parse_header_fields(header, header_size)
    return layout, word_size, limit, None, ratio


@lru_cache(maxsize=256)
def _parse_header_fields(header: bytes, header_size: int):
    """-> (layout, word_size, counts byte limit, ratio) of a header; for 40-byte (V1/V2)
    headers `header` is given without its payload length field (bytes 4-8)."""
    cookie = struct.unpack_from(">i", header, 0)[0]
    base = cookie & ~0xf0
    if base in (V2_COOKIE, V1_COOKIE) and header_size == 40:
        _offset, digits, ldv, htv, ratio = struct.unpack_from(">iiqqd", header, 4)
        word_size = V2_MAX_WORD_SIZE if base == V2_COOKIE else ((cookie & 0xf0) >> 4) & 0xe
    elif base == V0_COOKIE and header_size == 32:
        digits, ldv, htv, _total = struct.unpack_from(">iqqq", header, 4)
        ratio = 1.0
        word_size = ((cookie & 0xf0) >> 4) & 0xe
    elif base in (V2_COOKIE, V1_COOKIE, V0_COOKIE):
        raise PayloadError("payload header version does not match its compressed wrapper")
    else:
        raise PayloadError(f"unknown histogram cookie 0x{cookie & 0xffffffff:08x} inside payload")
    if word_size not in (2, 4, 8, V2_MAX_WORD_SIZE):
        raise PayloadError(f"count word size {word_size} is not 2, 4 or 8 bytes")
    try:
        layout = layout_for(ldv, htv, digits)
    except LayoutError as exc:
        raise PayloadError(f"invalid histogram header: {exc}") from None
    return layout, word_size, layout.counts_array_length * 8, ratio


def _finish_payload(decoded, body: bytes) -> DecodedPayload:
    layout, word_size, limit, payload_length, ratio = decoded
    if payload_length is not None and len(body) < min(limit, payload_length):
        raise PayloadError(f"payload holds {len(body)} bytes of counts but its header says "
                           f"{payload_length}")
    return DecodedPayload(layout, word_size, body, double_ratio=ratio)


def _decode_varints_scalar(data: bytes) -> np.ndarray:
    out = []
    pos, n = 0, len(data)
    while pos < n:
        value = 0
        for k in range(9):
            if pos >= n:
                raise PayloadError("payload ends inside a varint (truncated counts)")
            byte = data[pos]
            pos += 1
            if k == 8:
                value |= byte << 56
                break
            value |= (byte & 0x7F) << (7 * k)
            if not byte & 0x80:
                break
        value &= (1 << 64) - 1
        decoded = (value >> 1) ^ -(value & 1)
        out.append(decoded)
    return np.array(out, dtype=np.int64)


def counts_from_payload(payload: DecodedPayload) -> tuple[np.ndarray, np.ndarray]:
    """(indices, counts) of the non-zero entries, checked against the payload's layout."""
    body = np.frombuffer(payload.counts_bytes, dtype=np.uint8)
    cal = payload.layout.counts_array_length
    if payload.word_size == V2_MAX_WORD_SIZE:
        values = decode_varints(body)
        if values.size and int(values.min()) < -INT_MAX:
            raise PayloadError("an encoded run of zero counts exceeds 2^31-1")
        step = np.where(values < 0, -values, 1)
        position = np.cumsum(step) - step
        keep = values > 0
        indices, counts = position[keep], values[keep]
    else:
        usable = (body.size // payload.word_size) * payload.word_size
        if usable != body.size and payload.word_size != 8:
            raise PayloadError("payload length is not a whole number of count words")
        words = np.frombuffer(payload.counts_bytes[:usable], dtype=f">i{payload.word_size}")
        if words.size and int(words.min()) < 0:
            raise PayloadError("payload holds a negative count")
        indices = np.flatnonzero(words).astype(np.int64)
        counts = words[indices].astype(np.int64)
    if indices.size and int(indices[-1]) >= cal:
        raise PayloadError(f"payload has counts beyond its histogram's range "
                           f"(index {int(indices[-1])} >= {cal})")
    if counts.size and float(counts.sum(dtype=np.float64)) > 9.2e18:
        raise PayloadError("payload's total count exceeds 2^63-1")
    return indices, counts


def histogram_from_raw(raw: bytes):
    """A Histogram (or DoubleHistogram) from one base64-decoded payload."""
    payload = parse_payload(raw)
    indices, counts = counts_from_payload(payload)
    return _payload_histogram(payload, indices, counts)


def _payload_histogram(payload: DecodedPayload, indices: np.ndarray, counts: np.ndarray):
    """The Histogram of a payload's decoded entries, wrapped in a DoubleHistogram for DHIST
    payloads."""
    hist = Histogram(payload.layout, indices, counts)
    if payload.double_config is not None:
        return DoubleHistogram(hist, payload.double_ratio, payload.double_config[0])
    return hist


def b64decode(text: str) -> bytes:
    """java.util.Base64 basic decoder: strict alphabet, padding optional."""
    if len(text) % 4:
        if len(text) % 4 == 1:
            raise PayloadError("base64 payload has an impossible length")
        text += "=" * (4 - len(text) % 4)
    try:
        return binascii.a2b_base64(text, strict_mode=True)
    except (binascii.Error, ValueError) as exc:
        raise PayloadError(f"payload is not valid base64 ({exc})") from None


# -- the log ------------------------------------------------------------------------------------

@dataclass
class Interval:
    """One histogram line of a log."""

    line: int                 # 1-based line number in the file
    tag: str | None           # None for untagged lines
    start_s: float            # seconds since the log's start time (HistogramLogProcessor's axis)
    length_s: float           # the interval length written in the line
    start_ms: int             # Java's getStartTimeStamp(): absolute start, ms since the epoch
    end_ms: int               # Java's getEndTimeStamp()
    log_start_s: float        # the reader's start time (s since epoch) when this line was read
    _histogram: object = field(default=None, repr=False)
    _raw: bytes | None = field(default=None, repr=False)
    total_count: int = 0
    is_double: bool = False

    @property
    def histogram(self):
        """The interval's Histogram (DoubleHistogram for DHIST payloads)."""
        if self._histogram is not None:
            return self._histogram
        return histogram_from_raw(self._raw)

    @property
    def end_s(self) -> float:
        """End of the interval on the start_s axis: HistogramLogProcessor's time column."""
        return self.end_ms / 1000.0 - self.log_start_s


def interval_matches(iv: Interval, tag, start_s: float | None, end_s: float | None) -> bool:
    """Whether `iv` has `tag` and starts in [start_s, end_s] (HistogramLogProcessor's
    -tag/-start/-end test; None leaves that side open)."""
    return (iv.tag == tag and (start_s is None or iv.start_s >= start_s)
            and (end_s is None or iv.start_s <= end_s))


class HlogLog:
    """A parsed `.hlog`: its valid intervals, the warnings for lines skipped, its start time."""

    def __init__(self, path: str, intervals: list[Interval], warnings: list[str],
                 start_time_s: float | None, base_time_s: float | None):
        self.path = path
        self.intervals = intervals
        self.warnings = warnings
        self.start_time_s = start_time_s
        self.base_time_s = base_time_s

    def tags(self) -> list:
        """Sorted tag names; None (untagged) first when present."""
        names = {iv.tag for iv in self.intervals}
        return ([None] if None in names else []) + sorted(n for n in names if n is not None)

    def select(self, tag=None, start_s: float | None = None,
               end_s: float | None = None) -> list[Interval]:
        """Intervals of `tag` whose start_s lies in [start_s, end_s] (HistogramLogProcessor's
        -start/-end test, on the interval's start)."""
        return [iv for iv in self.intervals if interval_matches(iv, tag, start_s, end_s)]

    def merged(self, tag=None, start_s: float | None = None, end_s: float | None = None):
        """The sum of the matching intervals, as HistogramLogProcessor accumulates them."""
        chosen = self.select(tag, start_s, end_s)
        if not chosen:
            raise HlogError(_nothing_matches(tag, start_s, end_s, self.tags()), path=self.path)
        kinds = {iv.is_double for iv in chosen}
        if len(kinds) > 1:
            raise HlogError("the log mixes Histogram and DoubleHistogram lines for "
                            f"{_tag_name(tag)}; they cannot be added", path=self.path)
        histograms = (h for _, h in self.iter_histograms(chosen))
        if chosen[0].is_double:
            return sum_double_histograms(histograms)
        return sum_histograms(histograms)

    def iter_histograms(self, intervals: list[Interval] | None = None, group: int = 256):
        """(interval, histogram) for each interval (default: all), in order.

        Faster than `iv.histogram` one by one for a long log: intervals whose counts were not
        kept in memory (see KEEP_DECODED_ENTRIES) are decoded in vectorised groups."""
        intervals = self.intervals if intervals is None else intervals
        lazy: list[Interval] = []
        for iv in intervals:
            if iv._histogram is not None:
                yield from _decode_group(lazy)
                lazy = []
                yield iv, iv._histogram
            else:
                lazy.append(iv)
                if len(lazy) >= group:
                    yield from _decode_group(lazy)
                    lazy = []
        yield from _decode_group(lazy)


def _decode_group(intervals: list[Interval]):
    """Decode the kept payloads of several intervals together (they were valid when read)."""
    if not intervals:
        return
    payloads = [parse_payload(iv._raw) for iv in intervals]
    max_cal = max(p.layout.counts_array_length for p in payloads)
    stride_bits = max(int(max_cal - 1).bit_length(), 6)
    items = [(iv.line, iv.tag, iv.start_s, iv.length_s, iv.start_ms, iv.end_ms, iv.log_start_s,
              None) for iv in intervals]
    errors: dict[int, str] = {}
    batch = _decode_part(items, list(range(len(intervals))), payloads,
                         [iv._raw for iv in intervals], errors, stride_bits)
    if errors or batch is None or len(batch.intervals) != len(intervals):
        for iv in intervals:     # cannot happen for payloads that decoded once; stay exact
            yield iv, iv.histogram
        return
    yield from zip(intervals, batch.histograms())


def _tag_name(tag) -> str:
    return "untagged lines" if tag is None else f"tag {tag!r}"


def _nothing_matches(tag, start_s, end_s, tags) -> str:
    window = ""
    if start_s is not None or end_s is not None:
        window = (f" between {start_s if start_s is not None else '-inf'} and "
                  f"{end_s if end_s is not None else 'inf'} s")
    known = ", ".join("untagged" if t is None else repr(t) for t in tags) or "none"
    return f"no interval with {_tag_name(tag)}{window} (tags in the log: {known})"


def _number(text: str) -> float | None:
    """A finite decimal number as Java's Scanner.nextDouble reads it, else None."""
    try:
        value = float(text)
    except ValueError:
        return None
    if not math.isfinite(value) or "_" in text:  # Python also accepts 1_000, nan, inf
        return None
    return value


@dataclass
class _HeaderState:
    """HistogramLogReader's start/base time state."""

    start_time: float = 0.0
    observed_start: bool = False
    base_time: float = 0.0
    observed_base: bool = False
    explicit_start: bool = False     # a #[StartTime] line was seen (not deduced)


def iter_lines(lines, path: str, warnings: list[str], state: _HeaderState):
    """Yield (line_no, tag, start_s_offset, length, start_ms, end_ms, log_start, payload_text)
    for every well-formed histogram line of `lines`, updating `state` like Java's reader."""
    for line_no, line in enumerate(lines, start=1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            words = stripped.split()
            if words[0] in ("#[StartTime:", "#[BaseTime:"):
                which = words[0][2:-1]
                value = _number(words[1].rstrip(",")) if len(words) > 1 else None
                if value is None or abs(value) >= MAX_ABS_SECONDS:
                    shown = words[1] if len(words) > 1 else "(nothing)"
                    warnings.append(f"{path}:{line_no}: {which} {shown} is not a usable time "
                                    "in seconds; line ignored")
                    continue
                if which == "StartTime":
                    state.start_time, state.observed_start = value, True
                    state.explicit_start = True
                else:
                    state.base_time, state.observed_base = value, True
            continue
        if stripped.startswith('"StartTimestamp"'):
            continue
        fields = stripped.split(",")
        tag = None
        if fields[0].startswith("Tag="):
            tag = fields[0][4:]
            fields = fields[1:]
        if len(fields) < 4:
            warnings.append(f"{path}:{line_no}: expected 'start,length,max,payload', found "
                            f"{len(fields)} field(s); line skipped")
            continue
        # Plain finite numbers (every line of a normal log) are taken at once; anything else
        # goes through _number's exact rules, one field at a time.
        try:
            timestamp, length, interval_max = float(fields[0]), float(fields[1]), float(fields[2])
            plain = (math.isfinite(timestamp + length + interval_max) and "_" not in fields[0]
                     and "_" not in fields[1] and "_" not in fields[2])
        except ValueError:
            plain = False
        if not plain:
            timestamp, length, interval_max = (_number(f) for f in fields[:3])
            if timestamp is None or length is None or interval_max is None:
                bad = next(f.strip() for f, v in zip(fields[:3], (timestamp, length, interval_max))
                           if v is None)
                warnings.append(f"{path}:{line_no}: {bad[:40]!r} is not a finite number; "
                                "line skipped")
                continue
        payload = fields[3].split()      # (split() also drops surrounding whitespace)
        if not payload:
            warnings.append(f"{path}:{line_no}: empty histogram payload; line skipped")
            continue
        if abs(timestamp) >= MAX_ABS_SECONDS or abs(length) >= MAX_ABS_SECONDS:
            warnings.append(f"{path}:{line_no}: timestamp {fields[0].strip()[:40]} s is out of "
                            "any plausible range; line skipped")
            continue
        if not state.observed_start:
            state.start_time, state.observed_start = timestamp, True
        if not state.observed_base:
            # Java: a timestamp more than a year before StartTime means relative timestamps.
            state.base_time = (state.start_time
                               if timestamp < state.start_time - (365 * 24 * 3600.0) else 0.0)
            state.observed_base = True
        absolute_start = timestamp + state.base_time
        offset = absolute_start - state.start_time
        absolute_end = absolute_start + length
        yield (line_no, tag, offset, length, _java_long(absolute_start * 1000.0),
               _java_long(absolute_end * 1000.0), state.start_time, payload[0])


@dataclass
class Batch:
    """Consecutive valid intervals of a log with all their counts in two flat arrays.

    `keys[e] = row * stride + index` for every non-zero entry e (ascending), `counts[e]` its
    count; `stride` is a power of two above every row's counts-array length, so one cumulative
    sum over a whole batch serves every interval at once."""

    intervals: list[Interval]
    payloads: list[DecodedPayload]
    raws: list[bytes]
    keys: np.ndarray
    counts: np.ndarray
    stride_bits: int

    @property
    def stride(self) -> int:
        return 1 << self.stride_bits

    def row_bounds(self, rows=None) -> tuple[np.ndarray, np.ndarray]:
        rows = np.arange(len(self.intervals)) if rows is None else np.asarray(rows)
        starts = np.searchsorted(self.keys, (rows.astype(np.int64) << self.stride_bits)
                                 .astype(self.keys.dtype))
        ends = np.searchsorted(self.keys, ((rows.astype(np.int64) + 1) << self.stride_bits)
                               .astype(self.keys.dtype))
        return starts, ends

    def histogram(self, row: int):
        return next(self.histograms([row]))

    def histograms(self, rows=None):
        """Yield the histograms of `rows` (default: every row), in order; the row bounds are
        found once for all of them, each histogram is built when asked for."""
        rows = range(len(self.intervals)) if rows is None else [int(r) for r in rows]
        starts, ends = self.row_bounds(np.asarray(rows, dtype=np.int64))
        mask = self.stride - 1
        for row, a, b in zip(rows, starts.tolist(), ends.tolist()):
            yield _payload_histogram(self.payloads[row], self.keys[a:b] & mask, self.counts[a:b])


MAX_STEP = 1 << 24   # longer zero runs can only be trailing (checked per row)


def _varints(buf: np.ndarray):
    """(values, steps) of a buffer of whole varints, per byte, vectorised.

    A varint's ZigZag-decoded value and its step (how far it moves the counts-array position:
    1 for a count, n for a run of n zeros, capped at MAX_STEP) sit at its last byte; the other
    bytes of a varint hold 0 and 0. Working per byte avoids compacting the buffer first.

    Nearly every varint in a V2 payload is one byte, decoded here in int8 arithmetic (faster
    than a table lookup, whose uint8 indices numpy widens first); the few longer ones are
    patched afterwards. Returns None when a varint is longer than 8 bytes (the scalar decoder,
    which knows the 9-byte form, then takes the payload)."""
    is_end = buf < 0x80
    signed = buf.view(np.int8)
    small = (signed >> 1) ^ -(signed & 1)               # one-byte ZigZag, in int8
    small *= is_end                                      # 0 on continuation bytes
    steps = np.maximum(-small, is_end.view(np.int8)).astype(np.int32)
    values = small.astype(np.int32)
    continuation = np.flatnonzero(~is_end)
    if continuation.size:
        # the byte after a run of continuation bytes ends that varint
        run_end = np.flatnonzero(np.diff(continuation, append=-2) != 1)
        ends = continuation[run_end] + 1
        if int(ends[-1]) >= buf.size:
            raise PayloadError("payload ends inside a varint (truncated counts)")
        run_start = np.concatenate([[0], run_end[:-1] + 1])
        lengths = run_end - run_start + 2
        longest = int(lengths.max())
        if longest > 8:
            return None
        value = (buf[ends] & 0x7F).astype(np.int64)
        for k in range(1, longest):
            sel = lengths > k
            value[sel] = (value[sel] << 7) | (buf[ends[sel] - k] & 0x7F)
        z = (value >> 1) ^ -(value & 1)
        if int(z.min()) < -INT_MAX or int(z.max()) > INT_MAX:
            values = values.astype(np.int64)
        values[ends] = z
        steps[ends] = np.minimum(np.maximum(-z, 1), MAX_STEP)
    return values, steps


def decode_varints(data: np.ndarray) -> np.ndarray:
    """ZigZag LEB128 values (ZigZagEncoding.getLong) of a uint8 array of whole varints."""
    if not data.size:
        return np.zeros(0, np.int64)
    if data[-1] >= 0x80:      # a 9-byte varint may end on any byte; the scalar decoder knows
        return _decode_varints_scalar(bytes(data))
    decoded = _varints(data)
    if decoded is None:
        return _decode_varints_scalar(bytes(data))
    values, _ = decoded
    return values[data < 0x80].astype(np.int64)


def _decode_v2_batch(bodies: list[bytes], cals: list[int], stride_bits: int):
    """Decode many V2 count payloads at once.

    Returns (keys, counts, bad, stride_bits) where bad maps a body's position to the reason it
    was refused (refused bodies contribute no entries), or None when a 9-byte varint needs the
    scalar decoder. Each body must end on a whole varint."""
    bad: dict[int, str] = {}
    n = len(bodies)
    lengths = np.fromiter((len(b) for b in bodies), np.int64, n)
    buf = np.frombuffer(b"".join(bodies), dtype=np.uint8)
    if not buf.size:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), bad, stride_bits
    decoded = _varints(buf)
    if decoded is None:
        return None
    values, steps = decoded
    var_ends = np.cumsum(lengths)            # byte ranges: values and steps are per byte
    var_starts = var_ends - lengths
    nonempty = np.flatnonzero(lengths > 0)
    row_min = np.zeros(n, np.int64)
    if values.dtype != np.int32:   # int32 values all lie above -2^31 (see _varints)
        row_min[nonempty] = np.minimum.reduceat(values, var_starts[nonempty])
    span = np.zeros(n, np.int64)
    span[nonempty] = np.add.reduceat(steps, var_starts[nonempty], dtype=np.int64)
    cal = np.asarray(cals, np.int64)
    for r in np.flatnonzero(row_min < -INT_MAX):
        bad[int(r)] = "an encoded run of zero counts exceeds 2^31-1"
    # A span beyond the counts array is legal only as trailing zeros (Java's encoder never
    # writes those); such rows are checked exactly and their tail dropped.
    suspicious = np.flatnonzero(span > cal)
    if suspicious.size or bad:
        values = values.astype(np.int64)
        steps = steps.astype(np.int64)
    for r in suspicious:
        if r in bad:
            continue
        a, b = var_starts[r], var_ends[r]
        v = values[a:b]
        st = steps[a:b]
        pos = np.cumsum(st) - st
        filled = np.flatnonzero(v > 0)
        if filled.size and int(pos[filled[-1]]) >= cals[r]:
            bad[int(r)] = (f"payload has counts beyond its histogram's range "
                           f"(index {int(pos[filled[-1]])} >= {cals[r]})")
            continue
        tail = a + (int(filled[-1]) + 1 if filled.size else 0)
        span[r] = int(pos[filled[-1]]) + 1 if filled.size else 0
        values[tail:b] = 0
        steps[tail:b] = 0
    for r in bad:
        a, b = var_starts[r], var_ends[r]
        values[a:b] = 0
        steps[a:b] = 0
        span[r] = 0
    stride_bits = min(stride_bits, max(int(span.max() - 1).bit_length(), 6))
    stride = 1 << stride_bits
    # Positions fit 32 bits in any batch of normal size; the arithmetic is cheaper there.
    wide = n * stride >= (1 << 31)
    pos_type = np.int64 if wide else np.int32
    if wide:
        steps = steps.astype(np.int64)
    # Jump each row's positions to row << stride_bits: add the gap after the previous
    # non-empty row's span to that row's last step (an exclusive prefix sum ignores it).
    first = int(nonempty[0]) if nonempty.size else 0
    jumped = gaps = None
    if nonempty.size > 1:
        prev, nxt = nonempty[:-1], nonempty[1:]
        jumped = var_ends[prev] - 1
        gaps = ((nxt - prev) * stride - span[prev]).astype(pos_type)
        steps[jumped] += gaps
    positions = np.cumsum(steps, dtype=pos_type)      # inclusive: one past each varint
    filled = np.flatnonzero(values > 0)
    keys = np.take(positions, filled)
    keys -= 1                     # a count's step is 1: exclusive, where the count sits ...
    if jumped is not None:        # ... unless it also carries a jump to the next row
        is_count = values[jumped] > 0
        keys[np.searchsorted(filled, jumped[is_count])] -= gaps[is_count]
    if first:
        keys += first << stride_bits
    return keys, np.take(values, filled), bad, stride_bits


def _open_lines(path: str, text):
    if text is not None:
        return None, text.splitlines()
    try:
        # Opened without blocking and checked once open: a FIFO or device named as the input
        # would otherwise block, or stream forever.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            if os.path.isdir(path):
                raise IsADirectoryError
            raise HlogError("not a regular file (a FIFO or device?); give the path of an "
                            ".hlog file, or - for standard input", path=path)
        handle = open(fd, "r", encoding="latin-1", newline=None)
    except IsADirectoryError:
        raise HlogError("is a directory, not an .hlog file", path=path) from None
    except FileNotFoundError:
        raise HlogError("no such file", path=path) from None
    except OSError as exc:
        raise HlogError(exc.strerror or str(exc), path=path) from None
    return handle, handle


def _item_groups(lines, path: str, state: _HeaderState, batch_size: int):
    """(items, warnings raised while reading them) per group of batch_size histogram lines."""
    own: list[str] = []          # (iter_lines keeps appending to this very list)
    group = []
    for item in iter_lines(lines, path, own, state):
        group.append(item)
        if len(group) >= batch_size:
            yield group, own[:]
            group = []
            own.clear()
    if group or own:
        yield group, own[:]


def iter_batches(path, warnings: list[str], state: _HeaderState | None = None,
                 batch_size: int = 256, text=None, parallel: bool | None = False,
                 keep_raws: bool = True):
    """Read `path` (or the lines in `text`, named `path` in messages) and yield Batches of
    decoded intervals, in file order; bad lines become warnings, in line order.

    Batches of 256 lines keep the numpy arrays of a batch (~4 MB) inside the CPU caches; the
    per-batch Python overhead is then a few percent.

    `parallel=True` reads ahead in a second process (see _worker_groups): it splits the lines
    and inflates the payloads of the next batches while this process decodes the counts and
    its caller works; None decides by the input's size and the CPUs available. The batches,
    warnings and errors are the same either way. `keep_raws=False` leaves `Batch.raws` empty
    (None per interval), which spares shipping them between the processes. (Reading ahead in a
    thread was tried: zlib and numpy release the GIL, but handing it back and forth made the
    whole 1.5x slower. Decoding the counts in the worker too was tried: shipping the arrays
    back cost more than it saved on 2 cores.)"""
    path = os.fspath(path)
    state = state or _HeaderState()
    handle, lines = _open_lines(path, text)
    groups = None
    try:
        if _use_worker(path, text, parallel):
            groups = _worker_groups(lines, path, state, batch_size, keep_raws)
        else:
            groups = ((items, read_warnings, None)
                      for items, read_warnings in _item_groups(lines, path, state, batch_size))
        for items, read_warnings, inflated in groups:
            decode_warnings: list[str] = []
            batch = _decode_batch(items, path, decode_warnings, inflated) if items else None
            warnings.extend(_in_line_order(path, read_warnings + decode_warnings))
            if batch is not None:
                yield batch
    finally:
        if groups is not None:
            groups.close()
        if handle is not None:
            handle.close()


# Inputs at least this large are read with a second process when parallel=None (~7,000
# intervals of 2,000 values); below it the worker's start-up costs more than it saves.
PARALLEL_MIN_BYTES = 8 << 20
PIPE_BYTES = 1 << 20     # Linux's default limit for an unprivileged pipe buffer


def _use_worker(path: str, text, parallel: bool | None) -> bool:
    if not parallel and parallel is not None:
        return False
    import multiprocessing
    if multiprocessing.current_process().daemon:    # (may not start processes)
        return False
    if parallel:
        return "fork" in multiprocessing.get_all_start_methods()
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    if cpus < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return False
    try:
        size = len(text) if text is not None else os.path.getsize(path)
    except OSError:
        return False
    return size >= PARALLEL_MIN_BYTES


def _dumps(message) -> bytes:
    """Pickle a worker message; Layouts travel as their three parameters (the receiver gets
    its own cached Layout object), DecodedPayloads as their fields (faster than their dict)."""
    import copyreg
    import io
    import pickle
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = {**copyreg.dispatch_table, Layout: _reduce_layout,
                              DecodedPayload: _reduce_payload}
    pickler.dump(message)
    return buffer.getbuffer()


def _reduce_layout(layout):
    return layout_for, (layout.lowest_discernible_value, layout.highest_trackable_value,
                        layout.significant_digits)


def _reduce_payload(p: DecodedPayload):
    return DecodedPayload, (p.layout, p.word_size, p.counts_bytes, p.double_ratio,
                            p.double_config)


def _read_ahead(conn, lines, path: str, state: _HeaderState, batch_size: int,
                keep_raws: bool) -> None:
    """The worker process: split lines and inflate payloads, one message per group of lines:
    ("group", items, read warnings, (payloads, raws, errors), header state after the group),
    then ("done", final header state), or ("error", exception)."""
    try:
        for items, read_warnings in _item_groups(lines, path, state, batch_size):
            payloads, raws, errors = _inflate_items(items)
            if not keep_raws:
                raws = None
            items = [item[:7] + (None,) for item in items]   # (the payload text is done with)
            conn.send_bytes(_dumps(("group", items, read_warnings, (payloads, raws, errors),
                                    state)))
        conn.send_bytes(_dumps(("done", state)))
    except BaseException as exc:     # (the main process raises it, or reports the failure)
        try:
            message = _dumps(("error", exc))
        except Exception:
            message = _dumps(("error", HlogError(f"reading failed: {exc!r}", path=path)))
        try:
            conn.send_bytes(message)
        except OSError:
            pass
    finally:
        conn.close()


def _worker_groups(lines, path: str, state: _HeaderState, batch_size: int, keep_raws: bool):
    """_item_groups' groups, each with its (payloads, raws, errors) from _inflate_items, made
    by a forked worker process one group ahead. The worker's header state is copied into
    `state` as each group arrives, as if it had been read here; an exception in the worker is
    raised here, and a worker that dies raises one HlogError."""
    import multiprocessing
    import pickle
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    try:   # room for a whole message, so that the worker need not wait for this process
        import fcntl
        fcntl.fcntl(sender.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass
    worker = context.Process(target=_read_ahead, name="hlog-reader",
                             args=(sender, lines, path, state, batch_size, keep_raws))
    try:
        worker.start()
    except OSError:    # no process to be had (EAGAIN, ENOMEM): read here
        receiver.close()
        sender.close()
        yield from ((items, read_warnings, None)
                    for items, read_warnings in _item_groups(lines, path, state, batch_size))
        return
    sender.close()     # so that a worker that dies ends the pipe
    try:
        while True:
            try:
                message = pickle.loads(receiver.recv_bytes())
            except (EOFError, OSError):
                worker.join(5)
                code = worker.exitcode
                how = (f"killed by signal {-code}" if code is not None and code < 0
                       else f"exit status {code}")
                raise HlogError(f"the reader process stopped unexpectedly ({how})",
                                path=path) from None
            if message[0] == "group":
                _, items, read_warnings, (payloads, raws, errors), new_state = message
                state.__dict__.update(new_state.__dict__)
                yield items, read_warnings, (payloads, raws or [None] * len(items), errors)
            elif message[0] == "done":
                state.__dict__.update(message[1].__dict__)
                return
            else:
                raise message[1]
    finally:
        receiver.close()
        if worker.is_alive():
            worker.terminate()
        worker.join()


def _in_line_order(path: str, messages: list[str]) -> list[str]:
    def line_of(message: str) -> int:
        try:
            return int(message[len(path) + 1:].split(":", 1)[0])
        except ValueError:
            return 0
    return sorted(messages, key=line_of)


def _inflate_items(items):
    """(payloads, raws, errors) of a group of lines: base64, inflation and header parsing."""
    payloads: list = [None] * len(items)
    raws: list = [None] * len(items)
    errors: dict[int, str] = {}
    for r, item in enumerate(items):
        try:
            raw = b64decode(item[7])
            payload = parse_payload(raw)
        except PayloadError as exc:
            errors[r] = str(exc)
            continue
        payloads[r], raws[r] = payload, raw
    return payloads, raws, errors


def _decode_batch(items, path: str, warnings: list[str], inflated=None) -> Batch | None:
    payloads, raws, errors = inflated if inflated is not None else _inflate_items(items)
    good = [r for r in range(len(items)) if r not in errors]
    max_cal = max((payloads[r].layout.counts_array_length for r in good), default=1)
    stride_bits = max(int(max_cal - 1).bit_length(), 6)
    # Keep a batch's row x block matrices small when a layout is huge.
    rows_per_part = max(1, min(len(good), (1 << 27) >> stride_bits))
    parts = [good[i:i + rows_per_part] for i in range(0, len(good), rows_per_part)] or [[]]
    batches = []
    for part in parts:
        batches.append(_decode_part(items, part, payloads, raws, errors, stride_bits))
    for r in sorted(errors):
        warnings.append(f"{path}:{items[r][0]}: {errors[r]}; line skipped")
    batches = [b for b in batches if b is not None]
    if not batches:
        return None
    if len(batches) == 1:
        return batches[0]
    return _concat_batches(batches)


def _decode_part(items, part, payloads, raws, errors, stride_bits) -> Batch | None:
    # V2 payloads that end on a one-to-eight-byte varint are decoded together; anything else
    # (V1/V0 words, a 9-byte varint at the end, a truncated payload) one at a time.
    batchable = [r for r in part if payloads[r].word_size == V2_MAX_WORD_SIZE
                 and (not payloads[r].counts_bytes or payloads[r].counts_bytes[-1] < 0x80)]
    result = None
    if batchable:
        result = _decode_v2_batch([payloads[r].counts_bytes for r in batchable],
                                  [payloads[r].layout.counts_array_length for r in batchable],
                                  stride_bits)
        if result is None:
            batchable = []
    chosen = set(batchable)
    others = [r for r in part if r not in chosen]
    if result is not None and not others and not result[2]:
        keys, counts, _, stride_bits = result
        rows = batchable
    else:
        per_row: dict[int, tuple] = {}
        if result is not None:
            b_keys, b_counts, bad, b_bits = result
            for pos, reason in bad.items():
                errors[batchable[pos]] = reason
            row_of = b_keys >> b_bits
            bounds = np.searchsorted(row_of, np.arange(len(batchable) + 1))
            for pos, r in enumerate(batchable):
                if pos not in bad:
                    a, b = bounds[pos], bounds[pos + 1]
                    per_row[r] = (b_keys[a:b] & ((1 << b_bits) - 1), b_counts[a:b])
        for r in others:
            try:
                per_row[r] = counts_from_payload(payloads[r])
            except PayloadError as exc:
                errors[r] = str(exc)
        rows = [r for r in part if r in per_row]
        seg_keys = [(np.int64(k) << stride_bits) + per_row[r][0].astype(np.int64)
                    for k, r in enumerate(rows)]
        keys = np.concatenate(seg_keys) if seg_keys else np.zeros(0, np.int64)
        counts = np.concatenate([per_row[r][1] for r in rows]) if rows else np.zeros(0, np.int64)
    if not rows:
        return None
    starts = np.searchsorted(keys, (np.arange(len(rows), dtype=np.int64) << stride_bits)
                             .astype(keys.dtype))
    filled = np.flatnonzero(starts < np.append(starts[1:], keys.size))
    row_totals = np.zeros(len(rows), np.int64)
    if filled.size:
        row_totals[filled] = np.add.reduceat(counts, starts[filled], dtype=np.int64)
        if int(counts.max()) * float(keys.size) >= 2.0 ** 62:
            # int64 sums may have wrapped: recheck in floating point and refuse absurd rows
            approx = np.zeros(len(rows))
            approx[filled] = np.add.reduceat(counts.astype(np.float64), starts[filled])
            huge = np.flatnonzero(approx > 9.2e18)
            if huge.size:
                for k in huge:
                    errors[rows[k]] = "payload's total count exceeds 2^63-1"
                ok = np.ones(len(rows), bool)
                ok[huge] = False
                keep = ok[keys >> stride_bits]
                rank = np.cumsum(ok) - 1
                keys, counts = keys[keep], counts[keep]
                keys = (rank[keys >> stride_bits] << stride_bits) | \
                    (keys & ((1 << stride_bits) - 1))
                row_totals = row_totals[ok]
                rows = [r for k, r in enumerate(rows) if ok[k]]
                if not rows:
                    return None
    intervals, kept_payloads, kept_raws = [], [], []
    for k, r in enumerate(rows):
        line_no, tag, offset, length, start_ms, end_ms, log_start, _ = items[r]
        payload = payloads[r]
        intervals.append(Interval(line_no, tag, offset, length, start_ms, end_ms, log_start,
                                  total_count=int(row_totals[k]),
                                  is_double=payload.double_config is not None))
        kept_payloads.append(payload)
        kept_raws.append(raws[r])
        payload.counts_bytes = b""  # decoded now; keep memory to the arrays
    return Batch(intervals, kept_payloads, kept_raws, keys, counts, stride_bits)


def _concat_batches(batches: list[Batch]) -> Batch:
    bits = max(b.stride_bits for b in batches)
    keys, counts, offset = [], [], 0
    for b in batches:
        rows = (b.keys >> b.stride_bits) + offset
        keys.append((rows << bits) | (b.keys & (b.stride - 1)))
        counts.append(b.counts)
        offset += len(b.intervals)
    return Batch([iv for b in batches for iv in b.intervals],
                 [p for b in batches for p in b.payloads], [r for b in batches for r in b.raws],
                 np.concatenate(keys), np.concatenate(counts), bits)


def read_hlog(path) -> HlogLog:
    """Read an `.hlog` file: every valid interval, one warning per skipped line.
    Raises HlogError when the file holds no usable interval."""
    path = os.fspath(path)
    warnings: list[str] = []
    state = _HeaderState()
    intervals: list[Interval] = []
    kept_entries = 0
    for batch in iter_batches(path, warnings, state):
        keep = kept_entries + batch.keys.size <= KEEP_DECODED_ENTRIES
        kept_entries += batch.keys.size if keep else 0
        if keep:
            for iv, hist in zip(batch.intervals, batch.histograms()):
                iv._histogram = hist
        else:
            for iv, raw in zip(batch.intervals, batch.raws):
                iv._raw = raw
        intervals.extend(batch.intervals)
    if not intervals:
        err = HlogError("no usable histogram interval in the file"
                        + (f" ({len(warnings)} problem(s) reported)" if warnings else ""),
                        path=path, hint="is this an HdrHistogram interval log?")
        err.warnings = warnings
        raise err
    before = [iv for iv in intervals if iv.start_s < 0]
    if before and state.explicit_start:
        warnings.append(f"{path}:{before[0].line}: {len(before)} interval(s) start before "
                        "#[StartTime]; kept (HistogramLogProcessor drops them)")
    return HlogLog(path, intervals, warnings, state.start_time if state.observed_start else None,
                   state.base_time if state.observed_base else None)
