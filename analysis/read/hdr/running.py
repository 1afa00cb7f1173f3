"""Running percentiles: HistogramLogProcessor's accumulated histogram advanced one batch of
intervals at a time, with every interval's and every running total's percentiles found by
vectorised searches (the hot loop of `python -m analysis hgrm`)."""
from __future__ import annotations

import functools
import math

import numpy as np

from analysis.errors import HlogError
from analysis.read.hdr import native
from analysis.read.hdr.distribution import format_percentile_distribution
from analysis.read.hdr.double import DoubleAccumulator
from analysis.read.hdr.histogram import Histogram

TOTAL_PERCENTILES = (50.0, 90.0, 99.0, 99.9, 99.99)
BLOCK_BITS = 5
BLOCK = 1 << BLOCK_BITS   # counts-array entries per block in the running-percentile search
FINE_CELLS = 1 << 21    # per-index grid cells (16 MB) per run of rows in that search

class Rows:
    """Per-row interval stats and running totals of one batch, ready for the summary lines."""

    def __init__(self, counts, ip50, ip90, imax, totals, tps, tmax):
        # (as given: the compiled line printer takes the int64 arrays; the Python lines and
        # the leading rows take lists, made when first asked for)
        self._given = (counts, ip50, ip90, imax, totals, tps, tmax)

    @functools.cached_property
    def _listed(self):
        # plain Python numbers: indexing and hashing them is much cheaper than numpy scalars
        counts, ip50, ip90, imax, totals, tps, tmax = self._given
        return ([np.asarray(x).tolist() for x in (counts, ip50, ip90, imax, totals, tmax)],
                list(zip(*[np.asarray(p).tolist() for p in tps])))

    @functools.cached_property
    def counts(self) -> list:
        return np.asarray(self._given[0]).tolist()

    def row(self, k):
        (counts, ip50, ip90, imax, totals, tmax), tps = self._listed
        return (counts[k], ip50[k], ip90[k], imax[k], totals[k], tps[k], tmax[k])

    def columns(self, start: int):
        """The rows from `start` on, one list per number (the arguments of _IntervalLog.rows
        after the times)."""
        (counts, ip50, ip90, imax, totals, tmax), tps = self._listed
        return (counts[start:], ip50[start:], ip90[start:], imax[start:], totals[start:],
                tps[start:], tmax[start:])

    def integer_columns(self, start: int):
        """The rows from `start` on as int64 arrays: (counts, totals, an (n, 9) array of the
        values: 50 %, 90 %, max, then the totals' 50 % to 99.99 % and max); None unless
        every number is an int64 (a DoubleHistogram's values are not)."""
        counts, ip50, ip90, imax, totals, tps, tmax = self._given
        columns = (counts, totals, ip50, ip90, imax, *tps, tmax)
        if not all(isinstance(c, np.ndarray) and c.dtype == np.int64 for c in columns):
            return None
        return (np.ascontiguousarray(counts[start:]), np.ascontiguousarray(totals[start:]),
                np.stack([c[start:] for c in columns[2:]], axis=1))


class IntegerRunning:
    """HistogramLogProcessor's accumulated Histogram, advanced one batch of intervals at a time.

    Per-interval percentiles and the running totals' percentiles after every interval are
    found with vectorised searches over a batch's keyed entries (see batch.Batch) instead of
    Java's scan of the whole counts array per percentile per interval; the numbers are the same
    by construction: same target counts, first index whose cumulative count reaches them."""

    def __init__(self, layout):
        self.layout = layout
        self.dense = np.zeros(BLOCK, np.int64)
        self.total = 0
        self.max_value = 0
        self.bucket_count = layout.bucket_count
        # the compiled path's block sums of `dense` and its running-percentile positions
        # (native.Kernels.running); None until it runs, and again once the numpy path has run
        self._blocks = None
        self._state = None

    def add_rows(self, batch, rows):
        compiled = self.add_decoded(batch, rows)
        if compiled is not None:
            return compiled
        distinct = {id(p): p for p in batch.payloads}      # (one for a packed group)
        if len(distinct) == 1:
            layouts = [next(iter(distinct.values())).layout] * len(rows)
        else:
            layouts = [batch.payloads[r].layout for r in rows]
        counts, ip50, ip90, imax, acc_max, totals, tps = self._add_vectorised(batch, rows,
                                                                              layouts)
        return self._rows(counts, ip50, ip90, imax, acc_max, totals, tps)

    def add_decoded(self, batch, rows) -> Rows | None:
        """add_rows by the compiled pass (lc_running), which takes rows of the accumulator's
        own layout while the total stays below NATIVE_TOTALS; None, with nothing added, for
        any other rows."""
        kernels = native.get()
        if kernels is None:
            return None
        distinct = {id(p): p for p in batch.payloads}      # (one for a packed group)
        if len(distinct) == 1:
            same = next(iter(distinct.values())).layout is self.layout
        else:
            same = all(batch.payloads[r].layout is self.layout for r in rows)
        if not same or self.total + sum(batch.totals[rows].tolist()) >= NATIVE_TOTALS:
            return None
        counts, ip50, ip90, imax, totals, tps = self._add_compiled(kernels, batch, rows)
        return self._rows(counts, ip50, ip90, imax, imax, totals, tps)

    def add_undecoded(self, batch, chosen) -> Rows | None:
        """add_rows of the `chosen` rows (a bool per row) of an undecoded batch (see
        batch.Batch.joined), each decoded as it is added (_native.c's lc_add_bodies; every
        row is decoded, as decode_batch would). None, with nothing added, when some row
        needs the general decoder or a chosen row has another layout: the caller then
        decodes the batch (Batch.decoded) and calls add_rows."""
        kernels = native.get()
        payloads = batch.payloads
        if kernels is None or self.total >= NATIVE_TOTALS:
            return None
        distinct = {id(p): p for p in payloads}
        if len(distinct) == 1:
            if payloads[0].layout is not self.layout:
                return None
            cals = np.full(len(payloads), self.layout.counts_array_length, np.int64)
        else:
            if any(payloads[r].layout is not self.layout for r in np.flatnonzero(chosen)):
                return None
            cals = np.fromiter((p.layout.counts_array_length for p in payloads), np.int64,
                               len(payloads))
        size = max(BLOCK, 1 << int(self.layout.counts_array_length - 1).bit_length())
        self._prepare(size)
        out = kernels.add_bodies(*batch.joined, chosen, cals, self.dense, self._blocks,
                                 self._state, NATIVE_REQUESTED)
        if out is None:
            return None
        counts, ip50, ip90, imax, totals, tps = self._from_compiled(out)
        return self._rows(counts, ip50, ip90, imax, imax, totals, tps)

    def _prepare(self, size: int) -> None:
        """The counts array at least `size` long, its block sums and the compiled path's
        state ready."""
        grow = size - self.dense.size
        if grow > 0:
            self.dense = np.concatenate([self.dense, np.zeros(grow, np.int64)])
            if self._blocks is not None:
                self._blocks = np.concatenate([self._blocks, np.zeros(grow >> BLOCK_BITS,
                                                                      np.int64)])
        if self._blocks is None:
            sums = self.dense.reshape(-1, BLOCK).sum(axis=1)
            start = [-1] * len(TOTAL_PERCENTILES) + [0] * len(TOTAL_PERCENTILES) + [0]
            self._blocks, self._state = sums, np.array(start, np.int64)
        self._state[-1] = self.total

    def _from_compiled(self, out):
        """lc_running's rows -> (counts, p50, p90, max, totals, [running percentiles])."""
        index = out[:, [1, 2, 3, 5, 6, 7, 8, 9]]          # -1: an empty row or total
        values = np.where(index >= 0, self.layout.highest_value_at(np.maximum(index, 0)), 0)
        return (out[:, 0], values[:, 0], values[:, 1], values[:, 2], out[:, 4],
                [values[:, 3 + j] for j in range(len(TOTAL_PERCENTILES))])

    def _rows(self, counts, ip50, ip90, imax, acc_max, totals, tps) -> Rows:
        # Java's add() resizes for an interval whose max lies beyond the current range.
        top = int(imax.max()) if len(counts) else 0
        highest = self.layout.highest_recordable_value(self.bucket_count)
        if top and highest < top:
            for m in imax:
                if m and highest < m:
                    self.bucket_count = self.layout.buckets_needed(int(m))
                    highest = self.layout.highest_recordable_value(self.bucket_count)
        running_max = np.maximum.accumulate(np.maximum(acc_max, self.max_value))
        self.max_value = int(running_max[-1])
        self.total = int(totals[-1])
        return Rows(counts, ip50, ip90, imax, totals, tps, running_max)

    def _add_compiled(self, kernels, batch, rows):
        """add_rows in one compiled pass over the rows' entries (_native.c's lc_running), for
        rows in the accumulator's own layout: -> (counts, p50, p90, max, totals, [running
        percentiles])."""
        bits = batch.stride_bits
        stride = 1 << bits
        self._prepare(stride)
        rows = np.asarray(rows, np.int64)
        keys = batch.keys
        starts = np.searchsorted(keys, (rows << bits).astype(keys.dtype))
        ends = np.searchsorted(keys, ((rows + 1) << bits).astype(keys.dtype))
        out = kernels.running(keys, batch.counts, starts, ends, stride - 1, self.dense,
                              self._blocks, self._state, NATIVE_REQUESTED,
                              batch.totals[rows])
        return self._from_compiled(out)

    def _add_vectorised(self, batch, rows, layouts):
        """add_rows with numpy: -> (counts, p50, p90, max, max in the accumulator's layout,
        totals, [running percentiles])."""
        self._blocks = self._state = None       # (the compiled path starts afresh)
        bits = batch.stride_bits
        keys, cnt = batch.keys, batch.counts
        n = len(rows)
        if n != len(batch.items):
            # keep only the chosen rows' entries, renumbered 0..n-1
            rank = np.full(len(batch.items), -1, np.int64)
            rank[rows] = np.arange(n)
            row_of = rank[keys >> bits]
            keep = row_of >= 0
            keys = (row_of[keep] << bits) | (keys[keep] & ((1 << bits) - 1))
            cnt = cnt[keep]
        row_ids = np.arange(n, dtype=np.int64)
        # (queries in the keys' own dtype: a mixed-type search would copy the keys each time)
        starts = np.searchsorted(keys, (row_ids << bits).astype(keys.dtype))
        ends = np.searchsorted(keys, ((row_ids + 1) << bits).astype(keys.dtype))
        cum = np.cumsum(cnt)
        before = _prefix(cum, starts)
        after = _prefix(cum, ends)
        counts = after - before
        nonempty = counts > 0
        mask = (1 << bits) - 1
        ip = []
        for p in (50.0, 90.0):
            pos = np.searchsorted(cum, before + _targets(p, counts), side="left")
            ip.append(self._values(keys, pos, nonempty, layouts, mask))
        imax = self._values(keys, ends - 1, nonempty, layouts, mask)
        if any(lay is not self.layout for lay in layouts):
            keys = self._to_accumulator_layout(keys, layouts, starts, ends, bits)
            acc_max = self._values(keys, ends - 1, nonempty, [self.layout] * n, mask)
        else:
            acc_max = imax
        totals = self.total + np.cumsum(counts)
        tps = self._running_percentiles(keys, cnt, cum, bits, starts, totals)
        return counts, ip[0], ip[1], imax, acc_max, totals, tps

    def _values(self, keys, pos, nonempty, layouts, mask):
        """Highest equivalent value of the entry at each row's position (0 for empty rows)."""
        if not keys.size:
            return np.zeros(len(pos), np.int64)
        idx = keys[np.clip(pos, 0, keys.size - 1)] & mask
        first = layouts[0]
        if all(lay is first for lay in layouts):
            values = first.highest_value_at(idx)
        else:
            values = np.array([int(lay.highest_value_at(idx[k:k + 1])[0])
                               for k, lay in enumerate(layouts)], np.int64)
        return np.where(nonempty, values, 0)

    def _to_accumulator_layout(self, keys, layouts, starts, ends, bits):
        """Java's add() slow path: another layout's entries are re-recorded at their lowest
        equivalent value into the accumulator's layout."""
        keys = keys.copy()
        mask = (1 << bits) - 1
        for k, lay in enumerate(layouts):
            if lay.sub_bucket_count == self.layout.sub_bucket_count and \
                    lay.unit_magnitude == self.layout.unit_magnitude:
                continue
            a, b = starts[k], ends[k]
            mapped = self.layout.index_of(lay.lowest_value_at(keys[a:b] & mask))
            if mapped.size and int(mapped.max()) > mask:
                raise HlogError("an interval's values do not fit the first interval's histogram "
                                "layout")
            keys[a:b] = (np.int64(k) << bits) | mapped
        return keys

    def _running_percentiles(self, keys, cnt, cum, bits, starts, totals):
        """Values at TOTAL_PERCENTILES of the accumulated histogram after each row.

        Counts only grow as rows are added and targets only grow with the total, so for the
        whole batch each percentile's answer lies between the index where the counts *after*
        the batch first reach the batch's smallest target and the index where the counts
        *before* it reach the largest (or the highest filled index). Only the blocks of
        BLOCK indices in those windows are accumulated row by row (a rows x blocks grid, whose
        running sums down the rows are the accumulated histogram after each row); a second,
        per-index grid over the few blocks that hold an answer finds the exact index."""
        n = totals.size
        stride = 1 << bits
        if stride > self.dense.size:
            self.dense = np.concatenate([self.dense, np.zeros(stride - self.dense.size, np.int64)])
        before = self.dense
        after = before + _exact_bincount(keys & (stride - 1), cnt, before.size)
        self.dense = after
        values = np.zeros((n, len(TOTAL_PERCENTILES)), np.int64)
        valid = totals > 0
        if not valid.any():
            return [values[:, j] for j in range(len(TOTAL_PERCENTILES))]
        targets = np.stack([_targets(p, totals) for p in TOTAL_PERCENTILES], axis=1)
        cum_before = np.cumsum(before)
        cum_after = np.cumsum(after)
        top = int(np.searchsorted(cum_after, cum_after[-1], side="left"))  # highest filled index
        lows = np.searchsorted(cum_after, targets[valid].min(axis=0), side="left") >> BLOCK_BITS
        highs = np.minimum(np.searchsorted(cum_before, targets[valid].max(axis=0), side="left"),
                           top) >> BLOCK_BITS
        # the windows' blocks, as a few ranges of consecutive blocks, and their grid columns
        ranges = []
        for lo, hi in sorted(zip(lows.tolist(), highs.tolist())):
            if ranges and lo <= ranges[-1][1] + 1:
                ranges[-1][1] = max(ranges[-1][1], hi)
            else:
                ranges.append([lo, hi])
        blocks = np.concatenate([np.arange(lo, hi + 1) for lo, hi in ranges])
        column = np.zeros(before.size >> BLOCK_BITS, np.int64)
        column[blocks] = np.arange(blocks.size)
        rows = np.arange(n, dtype=np.int64)
        sel = _entries_in(keys, bits, rows, [(lo << BLOCK_BITS, (hi + 1) << BLOCK_BITS)
                                             for lo, hi in ranges])
        width = blocks.size
        cell = sel[1] * width + column[(np.take(keys, sel[0]) & (stride - 1)) >> BLOCK_BITS]
        grid = _exact_bincount(cell, np.take(cnt, sel[0]), n * width).reshape(n, width)
        np.cumsum(grid, axis=0, out=grid)
        grid += before.reshape(-1, BLOCK).sum(axis=1)[blocks]
        # each row's accumulated count before each window, then the block holding the answer
        found = np.zeros((n, len(TOTAL_PERCENTILES)), np.int64)
        reach = np.zeros((n, len(TOTAL_PERCENTILES)), np.int64)  # count left to find in it
        # (each row's own counts below each window, then accumulated down the rows)
        first = np.searchsorted(keys, ((rows << bits)[:, None] + np.minimum(
            lows << BLOCK_BITS, stride)).astype(keys.dtype))
        below = np.cumsum(_prefix(cum, first) - _prefix(cum, starts)[:, None], axis=0)
        below += np.where(lows > 0, cum_before[np.maximum(lows << BLOCK_BITS, 1) - 1], 0)
        for j, lo in enumerate(lows.tolist()):
            c0, c1 = int(column[lo]), int(column[highs[j]])
            running = np.cumsum(grid[:, c0:c1 + 1], axis=1)
            running += below[:, j:j + 1]
            col = np.argmax(running >= targets[:, j:j + 1], axis=1)
            found[:, j] = lo + col
            reach[:, j] = targets[:, j] - np.where(col > 0, running[rows, col - 1], below[:, j])
        # the exact index inside each answer block
        index = np.zeros(found.shape, np.int64)
        _exact_indices(keys, cnt, bits, before, found, reach, valid, 0, n, index)
        values[valid] = self.layout.highest_value_at(index[valid])
        return [values[:, j] for j in range(len(TOTAL_PERCENTILES))]

    def histogram(self) -> Histogram:
        nz = np.flatnonzero(self.dense)
        return Histogram(self.layout, nz.astype(np.int64), self.dense[nz].copy(), self.bucket_count)

    def percentile_distribution(self, ticks, ratio, csv) -> str:
        return format_percentile_distribution(self.histogram(), ticks, ratio, csv)


def _exact_indices(keys, cnt, bits, before, found, reach, valid, r0, r1, out) -> None:
    """out[r] = the index inside block found[r] where row r's accumulated counts reach
    `reach[r]` more, for the valid rows r0..r1-1: per-index counts of the few answer blocks,
    accumulated row by row (rows before r0 are summed into the starting counts). Runs of rows
    whose answers are spread over many blocks are halved to keep that grid small."""
    used, slot = np.unique(found[r0:r1][valid[r0:r1]], return_inverse=True)
    if not used.size:
        return
    if r1 - r0 > 1 and (r1 - r0 + 1) * used.size * BLOCK > FINE_CELLS:
        mid = (r0 + r1) // 2
        _exact_indices(keys, cnt, bits, before, found, reach, valid, r0, mid, out)
        _exact_indices(keys, cnt, bits, before, found, reach, valid, mid, r1, out)
        return
    positions, entry_rows = _entries_in(keys, bits, np.arange(r1, dtype=np.int64),
                                        [(b << BLOCK_BITS, (b + 1) << BLOCK_BITS)
                                         for b in used.tolist()])
    index = np.take(keys, positions) & ((1 << bits) - 1)
    cell = (np.maximum(entry_rows - r0 + 1, 0) * used.size
            + np.searchsorted(used, index >> BLOCK_BITS)) * BLOCK + (index & (BLOCK - 1))
    m = r1 - r0 + 1
    fine = _exact_bincount(cell, np.take(cnt, positions), m * used.size * BLOCK)
    fine = fine.reshape(m, used.size, BLOCK)
    np.cumsum(fine, axis=0, out=fine)
    fine += before.reshape(-1, BLOCK)[used]
    rows = np.flatnonzero(valid[r0:r1])
    in_block = np.cumsum(fine[1 + rows.repeat(found.shape[1]), slot.ravel()], axis=1)
    position = np.argmax(in_block >= reach[r0:r1][rows].ravel()[:, None], axis=1)
    out[r0 + rows] = (found[r0:r1][rows] << BLOCK_BITS) + position.reshape(rows.size, -1)


def _prefix(cum: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Sum of the counts before each entry position, from their inclusive running sum."""
    if not cum.size:
        return np.zeros(positions.shape, np.int64)
    return np.where(positions > 0, cum[np.maximum(positions - 1, 0)], 0)


def _entries_in(keys, bits, rows, spans):
    """(positions, row of each) of every row's entries whose index lies in one of the
    [start, end) spans, grouped by span, then row."""
    # a row's entries lie below the batch's stride (the accumulator may be longer)
    bounds = np.minimum(np.array(spans, np.int64).reshape(-1, 2), 1 << bits)
    base = rows << bits
    first = np.searchsorted(keys, (bounds[:, :1] + base).ravel().astype(keys.dtype))
    size = np.searchsorted(keys, (bounds[:, 1:] + base).ravel().astype(keys.dtype)) - first
    m = int(size.sum())
    positions = np.repeat(first - (np.cumsum(size) - size), size) + np.arange(m)
    return positions, np.repeat(np.tile(rows, len(spans)), size)


def _exact_bincount(keys: np.ndarray, weights: np.ndarray, length: int) -> np.ndarray:
    """Integer sums of `weights` per key. bincount adds in float64, which is exact while every
    sum stays below 2^53; beyond that the slower exact integer path is taken."""
    if not keys.size:
        return np.zeros(length, np.int64)
    # int32 weights cannot sum past 2^52 in fewer than 2^21 entries: skip the check then
    if (weights.dtype == np.int32 and weights.size < (1 << 21)) or \
            float(weights.sum(dtype=np.float64)) < 2.0 ** 52:
        return np.bincount(keys, weights=weights, minlength=length).astype(np.int64)
    out = np.zeros(length, np.int64)
    np.add.at(out, keys, weights)
    return out


def _requested(percentile: float) -> float:
    """The percentile getValueAtPercentile computes with: a hair below, clamped to 0..100."""
    return min(max(math.nextafter(float(percentile), -math.inf), 0.0), 100.0)


# lc_running's percentiles: each row's 50th and 90th, then the running TOTAL_PERCENTILES; and
# the accumulated total it is trusted with (larger ones take the numpy path)
NATIVE_REQUESTED = np.array([_requested(p) for p in (50.0, 90.0, *TOTAL_PERCENTILES)])
NATIVE_TOTALS = 1 << 62


def _targets(percentile: float, totals: np.ndarray) -> np.ndarray:
    """percentile_target_count for many totals at once (same double arithmetic)."""
    fp = (_requested(percentile) * totals.astype(np.float64)) / 100.0
    targets = np.ceil(fp)
    targets = np.where(targets >= 9.223372036854775807e18, 2**63 - 1, targets).astype(np.int64)
    return np.maximum(targets, 1)


class DoubleRunning:
    """The DoubleHistogram path: Java's accumulator emulated interval by interval."""

    def __init__(self, first):
        self.acc = DoubleAccumulator(first.configured_ratio, first.layout.significant_digits)

    def add_rows(self, batch, rows):
        counts, ip50, ip90, imax, totals, tmax = [], [], [], [], [], []
        tps = [[] for _ in TOTAL_PERCENTILES]
        for h in batch.histograms(rows):
            counts.append(h.total_count)
            p50, p90 = h.values_at_percentiles((50.0, 90.0)).tolist()
            ip50.append(p50)
            ip90.append(p90)
            imax.append(h.max)
            self.acc.add(h)
            total = self.acc.result()
            totals.append(total.total_count)
            for column, value in zip(tps, total.values_at_percentiles(TOTAL_PERCENTILES).tolist()):
                column.append(value)
            tmax.append(total.max)
        return Rows(counts, ip50, ip90, imax, totals, tps, tmax)

    def percentile_distribution(self, ticks, ratio, csv) -> str:
        total = self.acc.result()
        return format_percentile_distribution(total.integer, ticks, ratio / total.ratio, csv)
