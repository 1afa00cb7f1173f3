"""HdrHistogram payload codec: base64 text -> header, layout and count bytes -> counts.

Every payload kind HdrHistogram writers have produced: V2 (`HISTF...`, zigzag LEB128 counts,
compressed or not), V1 (2/4/8-byte count words), V0, and DoubleHistogram wrappers (`DHIST...`).
A payload is inflated only up to the size its own header allows (as Java does), and a claimed
length or count that cannot be real is refused (`PayloadError`).
"""
from __future__ import annotations

import math
import struct
import zlib
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from analysis.read.hdr.codec import a2b_base64, inflate
from analysis.read.hdr.double import DoubleHistogram, double_internal_layout
from analysis.read.hdr.histogram import Histogram, Layout, LayoutError, layout_for

# Payload cookies (AbstractHistogram / DoubleHistogram). The low nibble of the second-lowest
# byte carries the word size for V0/V1; `cookie & ~0xf0` is the base.
V0_COOKIE, V0_COMPRESSED = 0x1c849308, 0x1c849309
V1_COOKIE, V1_COMPRESSED = 0x1c849301, 0x1c849302
V2_COOKIE, V2_COMPRESSED = 0x1c849303, 0x1c849304
DHIST_COOKIE, DHIST_COMPRESSED = 0x0c72124e, 0x0c72124f
V2_MAX_WORD_SIZE = 9
INT_MAX = (1 << 31) - 1

# Compressed payloads up to this size are inflated in one call (at most ~16 MB out);
# larger ones stream, stopping where the payload's own header says the counts end.
SMALL_COMPRESSED = 16 * 1024


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


_OUTER = struct.Struct(">Ii")     # a compressed payload's cookie and compressed length
_INNER_LENGTH = struct.Struct(">i")


def _parse_common_payload(raw: bytes) -> DecodedPayload | None:
    """The payload of nearly every line of a log - compressed V2, whole, its header seen
    before - decoded without the general path's checks in Java's order, or None for the
    general path (which then decodes it again: such payloads are rare)."""
    # (Java's writers set the word-size nibble: 0x1c849314; the general path ignores it too)
    if len(raw) < 8:
        return None
    cookie, compressed_length = _OUTER.unpack_from(raw)
    if cookie & ~0xf0 != V2_COMPRESSED or \
            not 0 <= compressed_length <= min(len(raw) - 8, SMALL_COMPRESSED):
        return None
    inflated = inflate(memoryview(raw)[8:8 + compressed_length])
    if inflated is None or len(inflated) < 40:
        return None
    payload_length = _INNER_LENGTH.unpack_from(inflated, 4)[0]
    layout, word_size, limit, ratio = parse_header_fields(inflated[:4] + inflated[8:40], 40)
    limit = min(limit, payload_length)
    if payload_length < 0 or len(inflated) < 40 + limit:
        return None
    return DecodedPayload(layout, word_size, inflated[40:40 + limit], ratio)


def _parse_integer_payload(raw: bytes) -> DecodedPayload:
    common = _parse_common_payload(raw)
    if common is not None:
        return common
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
            inflated = inflate(compressed)
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
        layout, word_size, limit, ratio = parse_header_fields(header[:4] + header[8:], 40)
        payload_length = struct.unpack_from(">i", header, 4)[0]
        if payload_length < 0:
            raise PayloadError(f"negative payload length {payload_length}")
        # Java reads min(countsArrayLength * 8, payloadLength) bytes of counts, and no more.
        return layout, word_size, min(limit, payload_length), payload_length, ratio
    layout, word_size, limit, ratio = parse_header_fields(header, header_size)
    return layout, word_size, limit, None, ratio


@lru_cache(maxsize=256)
def parse_header_fields(header: bytes, header_size: int):
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


def decode_varints_scalar(data: bytes) -> np.ndarray:
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
    return payload_histogram(payload, indices, counts)


def payload_histogram(payload: DecodedPayload, indices: np.ndarray, counts: np.ndarray):
    """The Histogram of a payload's decoded entries, wrapped in a DoubleHistogram for DHIST
    payloads."""
    hist = Histogram(payload.layout, indices, counts)
    if payload.double_config is not None:
        return DoubleHistogram(hist, payload.double_ratio, payload.double_config[0])
    return hist


def payload_from_text(text: str) -> tuple[bytes, DecodedPayload]:
    """(b64decode(text), parse_payload of it): the common payload by the shortest path (one
    line of a 24-hour log in ~10 us), anything else by the general one. Raises PayloadError."""
    raw = b64decode(text)       # (pybase64 first when installed: codec.a2b_base64)
    payload = _parse_common_payload(raw)
    return raw, payload if payload is not None else parse_payload(raw)


def b64decode(text: str) -> bytes:
    """java.util.Base64 basic decoder: strict alphabet, padding optional."""
    if len(text) % 4:
        if len(text) % 4 == 1:
            raise PayloadError("base64 payload has an impossible length")
        text += "=" * (4 - len(text) % 4)
    try:
        return a2b_base64(text)
    except ValueError as exc:     # (binascii.Error is one)
        raise PayloadError(f"payload is not valid base64 ({exc})") from None


MAX_STEP = 1 << 24   # longer zero runs can only be trailing (checked per row)


def varints(buf: np.ndarray):
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
        return decode_varints_scalar(bytes(data))
    decoded = varints(data)
    if decoded is None:
        return decode_varints_scalar(bytes(data))
    values, _ = decoded
    return values[data < 0x80].astype(np.int64)
