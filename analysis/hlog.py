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
import re
import struct
import zlib
from dataclasses import dataclass, field

import numpy as np

from analysis.errors import HlogError
from analysis.histogram import (Histogram, Layout, LayoutError, _java_long, layout_for,
                                sum_histograms)

# Payload cookies (AbstractHistogram / DoubleHistogram). The low nibble of the second-lowest
# byte carries the word size for V0/V1; `cookie & ~0xf0` is the base.
V0_COOKIE, V0_COMPRESSED = 0x1c849308, 0x1c849309
V1_COOKIE, V1_COMPRESSED = 0x1c849301, 0x1c849302
V2_COOKIE, V2_COMPRESSED = 0x1c849303, 0x1c849304
DHIST_COOKIE, DHIST_COMPRESSED = 0x0c72124e, 0x0c72124f
V2_MAX_WORD_SIZE = 9
INT_MAX = (1 << 31) - 1
LONG_MAX = (1 << 63) - 1

# Timestamps whose millisecond value does not fit in a Java long are not times (a fuzzer's
# 1e20, a StartTime of 1e300): Java saturates them silently; we skip the line and say so.
MAX_ABS_SECONDS = 9.2e15

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")
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


def _inflate(compressed: bytes, limit: int) -> bytes:
    """Inflate at most `limit` bytes; never more, whatever the stream claims."""
    inflater = zlib.decompressobj()
    try:
        return inflater.decompress(compressed, limit)
    except zlib.error as exc:
        raise PayloadError(f"corrupt zlib data in payload ({exc})") from None


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
    if configured_ratio * math.pow(10.0, digits) >= (1 << 61):
        raise PayloadError("DoubleHistogram highestToLowestValueRatio * 10^digits must be < 2^61")
    internal_ratio = 1 << (configured_ratio.bit_length() + 1)
    lowest_tracking = inner.layout.sub_bucket_half_count
    expected_htv = lowest_tracking * internal_ratio - 1
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
        compressed = raw[8:8 + compressed_length]
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
    cookie = struct.unpack_from(">i", header, 0)[0]
    base = cookie & ~0xf0
    if base in (V2_COOKIE, V1_COOKIE) and header_size == 40:
        payload_length, _offset, digits, ldv, htv, ratio = struct.unpack_from(">iiiqqd", header, 4)
        word_size = V2_MAX_WORD_SIZE if base == V2_COOKIE else ((cookie & 0xf0) >> 4) & 0xe
    elif base == V0_COOKIE and header_size == 32:
        digits, ldv, htv, _total = struct.unpack_from(">iqqq", header, 4)
        payload_length, ratio = None, 1.0
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
    if payload_length is not None and payload_length < 0:
        raise PayloadError(f"negative payload length {payload_length}")
    # Java reads min(countsArrayLength * 8, payloadLength) bytes of counts, and no more.
    limit = layout.counts_array_length * 8
    if payload_length is not None:
        limit = min(limit, payload_length)
    return layout, word_size, limit, payload_length, ratio


def _finish_payload(decoded, body: bytes) -> DecodedPayload:
    layout, word_size, limit, payload_length, ratio = decoded
    if payload_length is not None and len(body) < min(limit, payload_length):
        raise PayloadError(f"payload holds {len(body)} bytes of counts but its header says "
                           f"{payload_length}")
    return DecodedPayload(layout, word_size, body, double_ratio=ratio)


def decode_varints(data: np.ndarray) -> np.ndarray:
    """ZigZag LEB128 (ZigZagEncoding.getLong) for a uint8 array that ends on a whole varint.
    Vectorised for varints of up to 8 bytes; the 9-byte form (all 8 bits of byte 9) goes
    through the scalar decoder."""
    if not data.size:
        return np.zeros(0, np.int64)
    ends = np.flatnonzero(data < 0x80)
    if not ends.size or ends[-1] != data.size - 1:
        raise PayloadError("payload ends inside a varint (truncated counts)")
    lengths = np.diff(ends, prepend=-1)
    if int(lengths.max()) > 8:
        return _decode_varints_scalar(bytes(data))
    starts = ends - lengths + 1
    low7 = (data & 0x7F).astype(np.uint64)
    value = low7[starts]
    sel = np.flatnonzero(lengths > 1)
    k = 1
    while sel.size:
        value[sel] |= low7[starts[sel] + k] << np.uint64(7 * k)
        k += 1
        sel = sel[lengths[sel] > k]
    return ((value >> np.uint64(1)).astype(np.int64)) ^ -((value & np.uint64(1)).astype(np.int64))


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
    hist = Histogram(payload.layout, indices, counts)
    if payload.double_config is not None:
        from analysis.histogram import DoubleHistogram
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
        return [iv for iv in self.intervals if iv.tag == tag
                and (start_s is None or iv.start_s >= start_s)
                and (end_s is None or iv.start_s <= end_s)]

    def merged(self, tag=None, start_s: float | None = None, end_s: float | None = None):
        """The sum of the matching intervals, as HistogramLogProcessor accumulates them."""
        chosen = self.select(tag, start_s, end_s)
        if not chosen:
            raise HlogError(_nothing_matches(tag, start_s, end_s, self.tags()), path=self.path)
        kinds = {iv.is_double for iv in chosen}
        if len(kinds) > 1:
            raise HlogError("the log mixes Histogram and DoubleHistogram lines for "
                            f"{_tag_name(tag)}; they cannot be added", path=self.path)
        if chosen[0].is_double:
            from analysis.histogram import sum_double_histograms
            return sum_double_histograms(iv.histogram for iv in chosen)
        return sum_histograms(iv.histogram for iv in chosen)


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
    text = text.strip()
    if not _NUMBER.match(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


@dataclass
class _HeaderState:
    """HistogramLogReader's start/base time state."""

    start_time: float = 0.0
    observed_start: bool = False
    base_time: float = 0.0
    observed_base: bool = False
    explicit_start: bool = False     # a #[StartTime] line was seen (not deduced)


def iter_lines(text: str, path: str, warnings: list[str], state: _HeaderState):
    """Yield (line_no, tag, start_s_offset, length, start_ms, end_ms, log_start, payload_text)
    for every well-formed histogram line, updating `state` like Java's reader."""
    for line_no, line in enumerate(text.splitlines(), start=1):
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
        timestamp, length, interval_max = (_number(f) for f in fields[:3])
        if timestamp is None or length is None or interval_max is None:
            bad = next(f.strip() for f, v in zip(fields[:3], (timestamp, length, interval_max))
                       if v is None)
            warnings.append(f"{path}:{line_no}: {bad[:40]!r} is not a finite number; line skipped")
            continue
        payload = fields[3].strip().split()
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


def read_text(path) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except IsADirectoryError:
        raise HlogError("is a directory, not an .hlog file", path=path) from None
    except FileNotFoundError:
        raise HlogError("no such file", path=path) from None
    except OSError as exc:
        raise HlogError(exc.strerror or str(exc), path=path) from None
    # .hlog files are ASCII; undecodable bytes can only sit in bad lines, which are reported.
    return data.decode("latin-1")


@dataclass
class Batch:
    """Consecutive valid intervals of a log with their counts in flat arrays: the entries of
    interval r are indices[offsets[r]:offsets[r+1]] and counts[...] (ascending indices)."""

    intervals: list[Interval]
    payloads: list[DecodedPayload]
    raws: list[bytes]
    offsets: np.ndarray
    indices: np.ndarray
    counts: np.ndarray

    def histogram(self, row: int):
        a, b = int(self.offsets[row]), int(self.offsets[row + 1])
        payload = self.payloads[row]
        hist = Histogram(payload.layout, self.indices[a:b], self.counts[a:b])
        if payload.double_config is not None:
            from analysis.histogram import DoubleHistogram
            return DoubleHistogram(hist, payload.double_ratio, payload.double_config[0])
        return hist


def _decode_v2_rows(payloads: list[DecodedPayload], rows: list[int], errors: dict):
    """Vectorised decode of many V2 payloads at once -> {row: (indices, counts)}."""
    out = {}
    good = []
    for r in rows:
        body = payloads[r].counts_bytes
        if body and body[-1] >= 0x80:
            errors[r] = "payload ends inside a varint (truncated counts)"
        else:
            good.append(r)
    if not good:
        return out
    bodies = [payloads[r].counts_bytes for r in good]
    byte_ends = np.cumsum([len(b) for b in bodies])
    buf = np.frombuffer(b"".join(bodies), dtype=np.uint8)
    try:
        values = decode_varints(buf)
    except PayloadError:
        # a 9-byte varint somewhere: fall back to one payload at a time
        for r in good:
            try:
                out[r] = counts_from_payload(payloads[r])
            except PayloadError as exc:
                errors[r] = str(exc)
        return out
    terminators = np.cumsum(buf < 0x80) if buf.size else np.zeros(0, np.int64)
    var_ends = np.where(byte_ends > 0, terminators[np.maximum(byte_ends - 1, 0)], 0) \
        if buf.size else np.zeros(len(good), np.int64)
    var_starts = np.concatenate([[0], var_ends[:-1]])
    step = np.where(values < 0, -values, 1)
    position = np.cumsum(step) - step
    row_base = np.zeros(len(good), np.int64)
    has = var_ends > var_starts
    row_base[has] = position[var_starts[has]]
    for k, r in enumerate(good):
        a, b = int(var_starts[k]), int(var_ends[k])
        v = values[a:b]
        if not v.size:
            out[r] = (np.zeros(0, np.int64), np.zeros(0, np.int64))
            continue
        if int(v.min()) < -INT_MAX:
            errors[r] = "an encoded run of zero counts exceeds 2^31-1"
            continue
        keep = v > 0
        idx = position[a:b][keep] - row_base[k]
        cnt = v[keep]
        cal = payloads[r].layout.counts_array_length
        if idx.size and int(idx[-1]) >= cal:
            errors[r] = (f"payload has counts beyond its histogram's range "
                         f"(index {int(idx[-1])} >= {cal})")
            continue
        out[r] = (idx, cnt)
    # totals that cannot be real (checked for all rows at once)
    return out


def iter_batches(path, warnings: list[str], state: _HeaderState | None = None,
                 batch_size: int = 2048):
    """Read `path` and yield Batches of decoded intervals; bad lines become warnings."""
    path = os.fspath(path)
    text = read_text(path)
    state = state or _HeaderState()
    pending = []
    for item in iter_lines(text, path, warnings, state):
        pending.append(item)
        if len(pending) >= batch_size:
            batch = _decode_batch(pending, path, warnings)
            pending = []
            if batch is not None:
                yield batch
    if pending:
        batch = _decode_batch(pending, path, warnings)
        if batch is not None:
            yield batch


def _decode_batch(items, path: str, warnings: list[str]) -> Batch | None:
    payloads: list = [None] * len(items)
    raws: list = [None] * len(items)
    errors: dict[int, str] = {}
    v2_rows, other_rows = [], []
    for r, item in enumerate(items):
        try:
            raw = b64decode(item[7])
            payload = parse_payload(raw)
        except PayloadError as exc:
            errors[r] = str(exc)
            continue
        payloads[r], raws[r] = payload, raw
        (v2_rows if payload.word_size == V2_MAX_WORD_SIZE else other_rows).append(r)
    decoded = _decode_v2_rows(payloads, v2_rows, errors)
    for r in other_rows:
        try:
            decoded[r] = counts_from_payload(payloads[r])
        except PayloadError as exc:
            errors[r] = str(exc)
    for r, (idx, cnt) in list(decoded.items()):
        if cnt.size and float(cnt.sum(dtype=np.float64)) > 9.2e18:
            errors[r] = "payload's total count exceeds 2^63-1"
            del decoded[r]
    for r in sorted(errors):
        warnings.append(f"{path}:{items[r][0]}: {errors[r]}; line skipped")
    rows = [r for r in range(len(items)) if r in decoded]
    if not rows:
        return None
    intervals, kept_payloads, kept_raws, seg_idx, seg_cnt = [], [], [], [], []
    lengths = []
    for r in rows:
        line_no, tag, offset, length, start_ms, end_ms, log_start, _ = items[r]
        idx, cnt = decoded[r]
        payload = payloads[r]
        intervals.append(Interval(line_no, tag, offset, length, start_ms, end_ms, log_start,
                                  total_count=int(cnt.sum()) if cnt.size else 0,
                                  is_double=payload.double_config is not None))
        kept_payloads.append(payload)
        kept_raws.append(raws[r])
        seg_idx.append(idx)
        seg_cnt.append(cnt)
        lengths.append(idx.size)
    offsets = np.zeros(len(rows) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    indices = np.concatenate(seg_idx).astype(np.int64, copy=False)
    counts = np.concatenate(seg_cnt).astype(np.int64, copy=False)
    for payload in kept_payloads:
        payload.counts_bytes = b""  # decoded now; keep memory to the arrays
    return Batch(intervals, kept_payloads, kept_raws, offsets, indices, counts)


def read_hlog(path) -> HlogLog:
    """Read an `.hlog` file: every valid interval, one warning per skipped line.
    Raises HlogError when the file holds no usable interval."""
    path = os.fspath(path)
    warnings: list[str] = []
    state = _HeaderState()
    intervals: list[Interval] = []
    kept_entries = 0
    for batch in iter_batches(path, warnings, state):
        keep = kept_entries + batch.indices.size <= KEEP_DECODED_ENTRIES
        kept_entries += batch.indices.size if keep else 0
        for row, iv in enumerate(batch.intervals):
            if keep:
                iv._histogram = batch.histogram(row)
            else:
                iv._raw = batch.raws[row]
            intervals.append(iv)
    if not intervals:
        err = HlogError("no usable histogram interval in the file"
                        + (f" ({len(warnings)} line(s) skipped)" if warnings else ""),
                        path=path, hint="is this an HdrHistogram interval log?")
        err.warnings = warnings
        raise err
    before = [iv for iv in intervals if iv.start_s < 0]
    if before and state.explicit_start:
        warnings.append(f"{path}:{before[0].line}: {len(before)} interval(s) start before "
                        "#[StartTime]; kept (HistogramLogProcessor drops them)")
    return HlogLog(path, intervals, warnings, state.start_time if state.observed_start else None,
                   state.base_time if state.observed_base else None)
