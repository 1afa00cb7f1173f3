"""The batch decoder: the counts of many V2 payloads decoded together into two flat arrays
(see `Batch`), with the one-at-a-time codec for anything else."""
from __future__ import annotations

import binascii
import zlib
from dataclasses import dataclass, field

import numpy as np

from analysis.read.hdr import codec, group_inflate, native
from analysis.read.hdr.lines import Interval
from analysis.read.hdr.payload import (INT_MAX, SMALL_COMPRESSED, V2_MAX_WORD_SIZE,
                                       DecodedPayload, PayloadError, parse_header_fields,
                                       counts_from_payload, varints, payload_from_text,
                                       payload_histogram)


# Batch.column(k): the k-th field of every row's lines.iter_lines item
LINE, TAG, START_S, LENGTH_S, START_MS, END_MS, LOG_START_S = range(7)
# Headers a group's payloads may have for _inflate_plain (a loadgen log's groups have two)
MAX_KINDS = 8


@dataclass
class Batch:
    """Consecutive valid intervals of a log with all their counts in two flat arrays.

    `keys[e] = row * stride + index` for every non-zero entry e (ascending), `counts[e]` its
    count; `stride` is a power of two above every row's counts-array length, so one cumulative
    sum over a whole batch serves every interval at once.

    Each row is kept as its lines.iter_lines item; `intervals` makes their Interval objects
    on first use, `column` reads one field of every row without them (the hgrm command)."""

    items: list
    payloads: list[DecodedPayload]
    raws: list[bytes]
    keys: np.ndarray
    counts: np.ndarray
    stride_bits: int
    totals: np.ndarray                  # each interval's total count (int64)
    is_double: list[bool]               # each interval's payload is a DoubleHistogram's
    # an undecoded batch's (bodies joined, their lengths) (see decode_batch); keys, counts and
    # totals are None then
    joined: tuple | None = field(default=None, repr=False)
    _intervals: list | None = field(default=None, repr=False)
    _columns: list | None = field(default=None, repr=False)

    @property
    def intervals(self) -> list[Interval]:
        if self._intervals is None:
            self._intervals = [Interval(*item[:7], total_count=total, is_double=double)
                               for item, total, double in zip(self.items, self.totals.tolist(),
                                                              self.is_double)]
        return self._intervals

    def column(self, k: int) -> tuple:
        """Field k (LINE, TAG, ...) of every row."""
        if self._columns is None:
            self._columns = list(zip(*self.items)) or [()] * 8
        return self._columns[k]

    def decoded(self, path: str, warnings: list[str]) -> Batch | None:
        """An undecoded batch (see `joined`) decoded the general way: the rows it refuses
        are left out, with a warning each in `warnings`."""
        return decode_batch(self.items, path, warnings,
                            (list(self.payloads), list(self.raws), {}, self.joined))

    @property
    def stride(self) -> int:
        return 1 << self.stride_bits

    def row_bounds(self, rows=None) -> tuple[np.ndarray, np.ndarray]:
        rows = np.arange(len(self.items)) if rows is None else np.asarray(rows)
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
        every_row = rows is None
        rows = range(len(self.items)) if every_row else [int(r) for r in rows]
        starts, ends = self.row_bounds(np.asarray(rows, dtype=np.int64))
        mask = self.stride - 1
        payloads, counts = self.payloads, self.counts
        if every_row:
            # (one pass over the batch's keys, not a numpy call a row: read_hlog's small logs
            # have ~60 rows of a few entries each)
            indices = self.keys & mask
            for row, a, b in zip(rows, starts.tolist(), ends.tolist()):
                yield payload_histogram(payloads[row], indices[a:b], counts[a:b])
            return
        for row, a, b in zip(rows, starts.tolist(), ends.tolist()):
            yield payload_histogram(payloads[row], self.keys[a:b] & mask, counts[a:b])


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
    decoded = varints(buf)
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
        st = np.where(v < 0, -v, steps[a:b])     # (uncapped: the index in the message is exact)
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


def inflate_items(items):
    """(payloads, raws, errors) of a group of lines: base64, inflation and header parsing;
    (payloads, raws, {}, joined) when every payload is a plain one (see _inflate_plain)."""
    plain = _inflate_plain(items)
    if plain is not None:
        return plain
    payloads: list = [None] * len(items)
    raws: list = [None] * len(items)
    errors: dict[int, str] = {}
    for r, item in enumerate(items):
        try:
            raw, payload = payload_from_text(item[7])
        except PayloadError as exc:
            errors[r] = str(exc)
            continue
        payloads[r], raws[r] = payload, raw
    return payloads, raws, errors


def _inflate_plain(items):
    """inflate_items of a group whose payloads are all compressed V2 ones of at most
    MAX_KINDS headers (every group of a normal log) -> (each row's payload, one shared per
    header, raws, {}, (counts bodies joined, their lengths)), as worker.unpack_payloads
    gives: base64 and inflation one call a row, the rest by the compiled checks (lc_outer,
    lc_kinds, lc_bodies) on the joined bytes. None for anything else: payload_from_text then
    takes each row, and words any error."""
    kernels = native.get()
    if kernels is None or not items:
        return None
    inflater = group_inflate.get()
    grouped = inflater.inflate([item[7] for item in items], SMALL_COMPRESSED) \
        if inflater is not None else None
    if grouped is not None:
        # (the raw payloads are not kept: as for a group worker.unpack_payloads gives)
        bodies, offsets = grouped
        raws = [None] * len(items)
    else:
        inflated = _inflate_each(items, kernels)
        if inflated is None:
            return None
        raws, inflated = inflated
        bodies = bytearray().join(inflated)
        offsets = _offsets(inflated)
    kinds = np.empty(len(items), np.int64)
    known: list[bytes] = []
    shared: list[DecodedPayload] = []
    limits: list[int] = []
    row = 0
    while True:
        row = kernels.kinds(bodies, offsets, row, known, kinds)
        if row == len(items):
            break
        if row < 0 or len(known) == MAX_KINDS:
            return None
        at = int(offsets[row])
        header = bytes(bodies[at:at + 4] + bodies[at + 8:at + 40])
        try:
            layout, word_size, limit, ratio = parse_header_fields(header, 40)
        except ValueError:     # (PayloadError, LayoutError)
            return None
        if word_size != V2_MAX_WORD_SIZE:
            return None
        known.append(header)
        shared.append(DecodedPayload(layout, V2_MAX_WORD_SIZE, b"", ratio))
        limits.append(limit)
    lengths = kernels.bodies(bodies, offsets, kinds, limits)
    if lengths is None:
        return None
    payloads = [shared[0]] * len(items) if len(shared) == 1 else \
        [shared[k] for k in kinds.tolist()]
    return payloads, raws, {}, (bodies, lengths)


def _inflate_each(items, kernels):
    """(raw payloads, each inflated) of a group of lines, a base64 and an inflate call each,
    or None when one is not a plain payload (see _inflate_plain)."""
    b64 = codec.fast_b64decode or _strict_a2b
    inflate = codec.fast_decompress or zlib.decompress
    try:
        raws = [b64(item[7]) for item in items]
    except (ValueError, TypeError):
        return None
    offsets = _offsets(raws)
    joined = b"".join(raws)
    if not kernels.outer_ok(joined, offsets, SMALL_COMPRESSED):
        return None
    view = memoryview(joined)
    try:
        return raws, [inflate(view[a + 8:b]) for a, b in zip(offsets[:-1].tolist(),
                                                             offsets[1:].tolist())]
    except Exception:      # (isal's IsalError is no zlib.error)
        return None


def _strict_a2b(text) -> bytes:
    return binascii.a2b_base64(text, strict_mode=True)


def _offsets(parts) -> np.ndarray:
    offsets = np.zeros(len(parts) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, parts), np.int64, len(parts)), out=offsets[1:])
    return offsets


def decode_batch(items, path: str, warnings: list[str], inflated=None,
                 undecoded: bool = False) -> Batch | None:
    """`inflated`: inflate_items' (payloads, raws, errors) of the items, which may add
    `joined` (see worker.pack_payloads). `undecoded`: a group whose
    bodies come joined is not decoded but kept so, for running.IntegerRunning.add_rows to
    decode as it adds them (Batch.joined; Batch.decoded decodes it, should a row need the
    general decoder)."""
    payloads, raws, errors, *joined = inflated if inflated is not None else inflate_items(items)
    joined = joined[0] if joined else None
    if undecoded and joined is not None and not errors and native.get() is not None:
        return Batch(list(items), payloads, raws, None, None, 0, None,
                     [False] * len(items), joined)
    good = [r for r in range(len(items)) if r not in errors]
    max_cal = max((payloads[r].layout.counts_array_length for r in good), default=1)
    stride_bits = max(int(max_cal - 1).bit_length(), 6)
    # Keep a batch's row x block matrices small when a layout is huge.
    rows_per_part = max(1, min(len(good), (1 << 27) >> stride_bits))
    parts = [good[i:i + rows_per_part] for i in range(0, len(good), rows_per_part)] or [[]]
    if joined is not None and (len(parts) > 1 or native.get() is None):
        payloads[:] = unjoin(payloads, joined)
        joined = None
    batches = []
    for part in parts:
        batches.append(decode_part(items, part, payloads, raws, errors, stride_bits, joined))
    for r in sorted(errors):
        warnings.append(f"{path}:{items[r][0]}: {errors[r]}; line skipped")
    batches = [b for b in batches if b is not None]
    if not batches:
        return None
    if len(batches) == 1:
        return batches[0]
    return _concat_batches(batches)


def unjoin(payloads, joined) -> list[DecodedPayload]:
    """Payloads sharing joined bodies (worker.pack_payloads) -> one per row with its body."""
    blob, lengths = joined
    ends = np.cumsum(lengths).tolist()
    return [DecodedPayload(p.layout, p.word_size, blob[a:b], p.double_ratio, p.double_config)
            for p, a, b in zip(payloads, [0] + ends, ends)]


def decode_part(items, part, payloads, raws, errors, stride_bits, joined=None) -> Batch | None:
    # V2 payloads that end on a one-to-eight-byte varint are decoded together; anything else
    # (V1/V0 words, a 9-byte varint at the end, a truncated payload) one at a time.
    if joined is not None:
        # every row of the group, plain V2 bodies joined (worker.pack_payloads): no per-row
        # Python before the compiled decoder but each row's counts array length
        cals = np.fromiter((p.layout.counts_array_length for p in payloads), np.int64,
                           len(payloads))
        keys, counts, _, totals, slow, bits = native.get().decode_v2_joined(*joined, cals,
                                                                             stride_bits)
        if not slow:
            return _batch(items, part, payloads, raws, keys, counts, totals, bits)
        payloads[:] = unjoin(payloads, joined)    # (anything unusual: the general path)
    batchable = [r for r in part if payloads[r].word_size == V2_MAX_WORD_SIZE
                 and (not payloads[r].counts_bytes or payloads[r].counts_bytes[-1] < 0x80)]
    result = kernels = row_totals = None
    deferred: set[int] = set()
    if batchable:
        bodies = [payloads[r].counts_bytes for r in batchable]
        cals = [payloads[r].layout.counts_array_length for r in batchable]
        kernels = native.get()
        if kernels is not None:
            keys, counts, _, totals, slow, bits = kernels.decode_v2(bodies, cals, stride_bits)
            # the rows it leaves (anything unusual) are decoded below, one at a time, by the
            # code that words their errors
            deferred = {batchable[pos] for pos in slow}
            result = (keys, counts, {}, bits)
        else:
            result = _decode_v2_batch(bodies, cals, stride_bits)
        if result is None:
            batchable = []
    chosen = set(batchable) - deferred
    others = [r for r in part if r not in chosen]
    if result is not None and not others and not result[2]:
        keys, counts, _, stride_bits = result
        rows = batchable
        if kernels is not None:
            # every row's sum, each below 2^62 (larger ones were deferred)
            row_totals = totals
    else:
        per_row: dict[int, tuple] = {}
        if result is not None:
            b_keys, b_counts, bad, b_bits = result
            for pos, reason in bad.items():
                errors[batchable[pos]] = reason
            row_of = b_keys >> b_bits
            bounds = np.searchsorted(row_of, np.arange(len(batchable) + 1))
            for pos, r in enumerate(batchable):
                if pos not in bad and r in chosen:
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
    if row_totals is None:
        keys, counts, rows, row_totals = _row_totals(keys, counts, rows, errors, stride_bits)
        if not rows:
            return None
    return _batch(items, rows, payloads, raws, keys, counts, row_totals, stride_bits)


def _batch(items, rows, payloads, raws, keys, counts, row_totals, stride_bits) -> Batch:
    if len(rows) == len(items):       # (every row: rows is 0, 1, 2, ...)
        kept_items, kept_payloads, kept_raws = list(items), list(payloads), list(raws)
    else:
        kept_items = [items[r] for r in rows]
        kept_payloads = [payloads[r] for r in rows]
        kept_raws = [raws[r] for r in rows]
    distinct = list({id(p): p for p in kept_payloads}.values())  # (one for a packed group)
    for payload in distinct:
        payload.counts_bytes = b""  # decoded now; keep memory to the arrays
    if len(distinct) == 1:
        is_double = [distinct[0].double_config is not None] * len(kept_payloads)
    else:
        is_double = [p.double_config is not None for p in kept_payloads]
    return Batch(kept_items, kept_payloads, kept_raws, keys, counts, stride_bits,
                 np.asarray(row_totals, np.int64), is_double)


def _row_totals(keys, counts, rows, errors, stride_bits):
    """-> (keys, counts, rows, each row's total count), without the rows whose total cannot
    be real (their reason goes to `errors`)."""
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
    return keys, counts, rows, row_totals


def _concat_batches(batches: list[Batch]) -> Batch:
    bits = max(b.stride_bits for b in batches)
    keys, counts, offset = [], [], 0
    for b in batches:
        rows = (b.keys >> b.stride_bits) + offset
        keys.append((rows << bits) | (b.keys & (b.stride - 1)))
        counts.append(b.counts)
        offset += len(b.items)
    return Batch([item for b in batches for item in b.items],
                 [p for b in batches for p in b.payloads], [r for b in batches for r in b.raws],
                 np.concatenate(keys), np.concatenate(counts), bits,
                 np.concatenate([b.totals for b in batches]),
                 [d for b in batches for d in b.is_double])
