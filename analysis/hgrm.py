"""Percentile distribution (.hgrm) and interval summary of an .hlog, like HistogramLogProcessor.

A drop-in for HdrHistogram's `org.HdrHistogram.HistogramLogProcessor` (2.2.2): the same flags,
and for every valid input the same output bytes (the date text of the `#[StartTime: ...]`
comment follows the local time zone). `-o OUT` writes the interval summary to OUT and the
percentile distribution to OUT.hgrm; without `-o` the distribution goes to standard output.

Where HistogramLogProcessor misbehaves, this command does not: a bad line (trailing blank line,
unparsable line, corrupt payload) is skipped with one `warning: file:line: reason` on stderr and
reading goes on; intervals that start before #[StartTime] are kept (and reported) unless -start
excludes them; a tag or window that matches nothing is an error. Exit status: 0 on success,
1 with one `error: ...` line when nothing usable remains or an argument is invalid.
"""
from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

from analysis import atomic
from analysis.errors import HlogError, LoadcurveError
from analysis.histogram import (Histogram, _DoubleAccumulator, format_percentile_distribution,
                                java_format_fixed, percentile_target_count)
from analysis.hlog import Interval, _HeaderState, iter_batches

TOTAL_PERCENTILES = (50.0, 90.0, 99.0, 99.9, 99.99)
BLOCK = 64   # counts-array entries per block in the running-percentile search


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # HistogramLogProcessor's single-dash long flags, declared whole so argparse keeps them.
    parser.add_argument("-i", dest="input", metavar="FILE",
                        help="the .hlog to read (default: standard input)")
    parser.add_argument("-o", dest="output", metavar="OUT",
                        help="write the interval summary to OUT and the distribution to OUT.hgrm")
    parser.add_argument("-csv", dest="csv", action="store_true", help="CSV output format")
    parser.add_argument("-tag", dest="tag", metavar="TAG",
                        help="read only the lines with this tag (default: untagged lines)")
    parser.add_argument("-start", dest="start", type=float, metavar="SEC",
                        help="skip intervals that start before SEC seconds after #[StartTime] "
                             "(default: keep all)")
    parser.add_argument("-end", dest="end", type=float, metavar="SEC",
                        help="skip intervals that start after SEC seconds after #[StartTime]")
    parser.add_argument("-outputValueUnitRatio", dest="ratio", type=float, default=1000000.0,
                        metavar="R", help="divide recorded values by R in the output "
                                          "(default 1000000.0: ns recorded, ms shown)")
    parser.add_argument("-percentilesOutputTicksPerHalf", dest="ticks", type=int, default=5,
                        metavar="N", help="percentile rows per halving of the distance to 100%% "
                                          "(default 5)")
    parser.add_argument("-listtags", dest="listtags", action="store_true",
                        help="list the tags found in the log and exit")


def run(args) -> int:
    if not (math.isfinite(args.ratio) and args.ratio > 0):
        raise LoadcurveError(f"-outputValueUnitRatio must be a positive number, not {args.ratio}")
    if args.ticks < 1:
        raise LoadcurveError(f"-percentilesOutputTicksPerHalf must be at least 1, not {args.ticks}")
    source = args.input or "-"
    text = sys.stdin.buffer.read().decode("latin-1") if source == "-" else None
    name = "<stdin>" if source == "-" else source
    warnings: list[str] = []
    try:
        if args.listtags:
            return _list_tags(source, text, warnings)
        outputs = process(source, text, warnings, tag=args.tag, start_s=args.start,
                          end_s=args.end, ratio=args.ratio, ticks=args.ticks, csv=args.csv,
                          with_interval_log=args.output is not None)
    except HlogError as exc:
        _print_warnings(getattr(exc, "warnings", None) or warnings)
        raise
    _print_warnings(warnings)
    interval_log, hgrm = outputs
    if args.output:
        atomic.write_text(args.output, interval_log)
        atomic.write_text(args.output + ".hgrm", hgrm)
    else:
        sys.stdout.write(hgrm)
        sys.stdout.flush()
    del name
    return 0


def _print_warnings(warnings) -> None:
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)


def _list_tags(source, text, warnings) -> int:
    tags, untagged = set(), False
    for batch in iter_batches(source, warnings, text=text):
        for iv in batch.intervals:
            if iv.tag is None:
                untagged = True
            else:
                tags.add(iv.tag)
    _print_warnings(warnings)
    print("Tags found in input file:")
    if untagged:
        print("[NO TAG (default)]")
    for t in sorted(tags):
        print(t)
    return 0


# -- formatting -------------------------------------------------------------------------------

def _range_header(title: str, start: float, end: float | None) -> str:
    end_text = java_format_fixed(end, 3) if end is not None else "<Infinite>"
    return (f"#[{title} between {java_format_fixed(start, 3)} and {end_text} seconds "
            "(relative to StartTime)]\n")


def _start_time_line(start_time: float) -> str:
    # Java: new Date((long) (startTime * 1000)).toString(), in the local time zone.
    millis = int(start_time * 1000)
    try:
        when = time.strftime("%a %b %d %H:%M:%S %Z %Y", time.localtime(millis / 1000.0))
    except (OverflowError, OSError, ValueError):
        when = "?"
    return f"#[StartTime: {java_format_fixed(start_time, 3)} (seconds since epoch), {when}]\n"


class _ValueText:
    """Formatted `value / ratio` strings, memoised: a log has few distinct bucket values."""

    def __init__(self, ratio: float, width: int):
        self.ratio, self.width, self.cache = ratio, width, {}

    def __call__(self, value) -> str:
        text = self.cache.get(value)
        if text is None:
            text = java_format_fixed(value / self.ratio, 3, self.width)
            self.cache[value] = text
        return text


class _IntervalLog:
    def __init__(self, csv: bool, ratio: float):
        self.csv = csv
        self.lines: list[str] = []
        self.value = _ValueText(ratio, 0 if csv else 7)

    def row(self, t: float, count: int, ip50, ip90, imax, total: int, tps, tmax) -> None:
        v = self.value
        if self.csv:
            self.lines.append(f"{java_format_fixed(t, 3)},{count},{v(ip50)},{v(ip90)},{v(imax)},"
                              f"{total},{v(tps[0])},{v(tps[1])},{v(tps[2])},{v(tps[3])},"
                              f"{v(tps[4])},{v(tmax)}\n")
        else:
            self.lines.append(f"{java_format_fixed(t, 3, 4)}: I:{count} ( {v(ip50)} {v(ip90)} "
                              f"{v(imax)} ) T:{total} ( {v(tps[0])} {v(tps[1])} {v(tps[2])} "
                              f"{v(tps[3])} {v(tps[4])} {v(tmax)} )\n")

    def legend(self) -> str:
        if self.csv:
            return ('"Timestamp","Int_Count","Int_50%","Int_90%","Int_Max","Total_Count",'
                    '"Total_50%","Total_90%","Total_99%","Total_99.9%","Total_99.99%","Total_Max"\n')
        return ("Time: IntervalPercentiles:count ( 50% 90% Max ) TotalPercentiles:count "
                "( 50% 90% 99% 99.9% 99.99% Max )\n")


# -- processing -------------------------------------------------------------------------------

def _selected(batch, tag, start_s, end_s) -> np.ndarray:
    return np.array([iv.tag == tag and (start_s is None or iv.start_s >= start_s)
                     and (end_s is None or iv.start_s <= end_s) for iv in batch.intervals],
                    dtype=bool)


def process(source, text, warnings, *, tag=None, start_s=None, end_s=None, ratio=1e6, ticks=5,
            csv=False, with_interval_log=True):
    """-> (interval log text, .hgrm text). Raises HlogError when no interval matches."""
    state = _HeaderState()
    ilog = _IntervalLog(csv, ratio)
    body: list[str] = []         # interval rows, with the StartTime line where Java puts it
    hgrm_prefix: list[str] = []
    start_line_done = False
    legend_done = False
    earliest = None
    kind = None
    acc = None
    for batch in iter_batches(source, warnings, state, text=text):
        chosen = _selected(batch, tag, start_s, end_s)
        if not chosen.any():
            continue
        rows = np.flatnonzero(chosen)
        first = batch.intervals[rows[0]]
        if kind is None:
            kind = "double" if first.is_double else "integer"
            acc = _IntegerRunning(batch.payloads[rows[0]].layout) if kind == "integer" \
                else _DoubleRunning(batch.histogram(int(rows[0])))
        for r in rows:
            if batch.intervals[r].is_double != (kind == "double"):
                iv = batch.intervals[r]
                raise HlogError(f"a {'DoubleHistogram' if iv.is_double else 'Histogram'} line in "
                                f"a log of {'DoubleHistograms' if kind == 'double' else 'Histograms'}; "
                                "they cannot be added", path=source, line=iv.line)
        stats = acc.add_rows(batch, rows)
        for k, r in enumerate(rows):
            iv: Interval = batch.intervals[r]
            earliest = iv.start_s if earliest is None else min(earliest, iv.start_s)
            if not start_line_done and iv.log_start_s != 0.0:
                start_line_done = True
                line = _start_time_line(iv.log_start_s)
                hgrm_prefix.append(line)
                body.append(line)
            if not legend_done:
                legend_done = True
                body.append(ilog.legend())
            if with_interval_log:
                ilog.lines = body
                ilog.row(iv.end_ms / 1000.0 - iv.log_start_s, *stats.row(k))
    if kind is None:
        raise HlogError(_no_match_message(tag, start_s, end_s), path=source)
    range_start = start_s if start_s is not None else min(0.0, earliest)
    interval_log = _range_header("Interval percentile log", range_start, end_s) + "".join(body)
    hgrm = acc.percentile_distribution(ticks, ratio, csv)
    if with_interval_log:
        hgrm = _range_header("Overall percentile distribution", range_start, end_s) + \
            "".join(hgrm_prefix) + hgrm
    else:
        hgrm = "".join(hgrm_prefix) + hgrm
    return interval_log, hgrm


def _no_match_message(tag, start_s, end_s) -> str:
    what = "untagged interval" if tag is None else f"interval with tag {tag!r}"
    window = ""
    if start_s is not None or end_s is not None:
        window = (f" starting between {start_s if start_s is not None else '-inf'} and "
                  f"{end_s if end_s is not None else 'inf'} s")
    return f"no {what}{window} in the log (use -listtags to see its tags)"


class _Rows:
    """Per-row interval stats and running totals of one batch, ready for the summary lines."""

    def __init__(self, counts, ip50, ip90, imax, totals, tps, tmax):
        self.counts, self.ip50, self.ip90, self.imax = counts, ip50, ip90, imax
        self.totals, self.tps, self.tmax = totals, tps, tmax

    def row(self, k):
        return (int(self.counts[k]), self.ip50[k], self.ip90[k], self.imax[k],
                int(self.totals[k]), [p[k] for p in self.tps], self.tmax[k])


class _IntegerRunning:
    """HistogramLogProcessor's accumulated Histogram, advanced one batch of intervals at a time.

    Per-interval percentiles and the running totals' percentiles after every interval are
    found with vectorised searches instead of Java's scan of the whole counts array per
    percentile per interval; the numbers are the same by construction (same target counts,
    first index whose cumulative count reaches them)."""

    def __init__(self, layout):
        self.layout = layout
        self.dense = np.zeros(BLOCK, np.int64)
        self.total = 0
        self.max_value = 0
        self.bucket_count = layout.bucket_count

    def add_rows(self, batch, rows):
        layout = self.layout
        lengths = np.diff(batch.offsets)
        n_rows = len(batch.intervals)
        entry_row = np.repeat(np.arange(n_rows), lengths)
        row_pos = np.full(n_rows, -1, np.int64)
        row_pos[rows] = np.arange(len(rows))
        keep = row_pos[entry_row] >= 0
        k_of = row_pos[entry_row[keep]]
        idx = batch.indices[keep]
        cnt = batch.counts[keep]
        sel_lengths = lengths[rows]
        # interval stats in each row's own layout
        counts, ip50, ip90, imax, acc_idx = self._interval_stats(batch, rows, idx, cnt, sel_lengths)
        # bucket growth, as Java's add() resizes for each interval's max
        for m in imax:
            if m and layout.highest_recordable_value(self.bucket_count) < m:
                self.bucket_count = layout.buckets_needed(int(m))
        totals = self.total + np.cumsum(counts)
        tps = self._running_percentiles(k_of, acc_idx, cnt, counts, totals)
        running_max = np.maximum.accumulate(
            np.maximum(self._acc_highest(acc_idx, k_of, len(rows)), self.max_value))
        self.max_value = int(running_max[-1])
        self.total = int(totals[-1])
        return _Rows(counts, ip50, ip90, imax, totals, tps, running_max)

    def _interval_stats(self, batch, rows, idx, cnt, sel_lengths):
        n = len(rows)
        ends = np.cumsum(sel_lengths)
        starts = ends - sel_lengths
        cum = np.cumsum(cnt)
        before = np.where(starts > 0, cum[np.maximum(starts - 1, 0)], 0) if cnt.size else \
            np.zeros(n, np.int64)
        after = np.where(ends > 0, cum[np.maximum(ends - 1, 0)], 0) if cnt.size else \
            np.zeros(n, np.int64)
        counts = after - before
        layouts = [batch.payloads[r].layout for r in rows]
        same = all(lay is self.layout for lay in layouts)
        out = []
        for p in (50.0, 90.0):
            targets = _targets(p, counts)
            pos = np.searchsorted(cum, before + targets, side="left")
            out.append((pos, counts > 0))
        ip = []
        for pos, nonempty in out:
            ip.append(self._row_values(idx, pos, nonempty, layouts, same, starts, ends))
        last = np.maximum(ends - 1, 0)
        imax = self._row_values(idx, last, counts > 0, layouts, same, starts, ends)
        if same:
            acc_idx = idx
        else:
            acc_idx = idx.copy()
            for k in range(n):
                lay = layouts[k]
                if lay.sub_bucket_count != self.layout.sub_bucket_count or \
                        lay.unit_magnitude != self.layout.unit_magnitude:
                    a, b = starts[k], ends[k]
                    acc_idx[a:b] = self.layout.index_of(lay.lowest_value_at(idx[a:b]))
        return counts, ip[0], ip[1], imax, acc_idx

    def _row_values(self, idx, pos, nonempty, layouts, same, starts, ends):
        if not idx.size:
            return np.zeros(len(pos), np.int64)
        safe = np.minimum(pos, idx.size - 1)
        if same:
            values = self.layout.highest_value_at(idx[safe])
        else:
            values = np.array([int(layouts[k].highest_value_at(idx[safe[k]:safe[k] + 1])[0])
                               for k in range(len(pos))], np.int64)
        return np.where(nonempty, values, 0)

    def _acc_highest(self, acc_idx, k_of, n):
        """Per row: highest equivalent value (accumulator layout) of its highest entry."""
        out = np.zeros(n, np.int64)
        if acc_idx.size:
            top = np.full(n, -1, np.int64)
            np.maximum.at(top, k_of, acc_idx)
            has = top >= 0
            out[has] = self.layout.highest_value_at(top[has])
        return out

    def _running_percentiles(self, k_of, idx, cnt, counts, totals):
        """Values at TOTAL_PERCENTILES of the accumulated histogram after each row."""
        n = counts.size
        length = max(self.dense.size, int(idx.max()) + 1 if idx.size else 0)
        length = -(-length // BLOCK) * BLOCK
        if length > self.dense.size:
            self.dense = np.concatenate([self.dense, np.zeros(length - self.dense.size, np.int64)])
        blocks = length // BLOCK
        block_of = idx // BLOCK
        if cnt.size:
            per_row_blocks = np.bincount(k_of * blocks + block_of, weights=cnt,
                                         minlength=n * blocks)
        else:
            per_row_blocks = np.zeros(n * blocks)
        per_row_blocks = per_row_blocks.astype(np.int64).reshape(n, blocks)
        base_blocks = self.dense.reshape(blocks, BLOCK).sum(axis=1)
        acc_blocks = np.cumsum(per_row_blocks, axis=0) + base_blocks
        cum_blocks = np.cumsum(acc_blocks, axis=1)
        width = int(totals[-1]) + 1 if n else 1
        row_shift = np.arange(n, dtype=np.int64) * width
        flat = (cum_blocks + row_shift[:, None]).ravel()
        found_blocks, targets_all = [], []
        for p in TOTAL_PERCENTILES:
            targets = _targets(p, totals)
            pos = np.searchsorted(flat, targets + row_shift, side="left") - \
                np.arange(n, dtype=np.int64) * blocks
            pos = np.where(totals > 0, pos, blocks)
            found_blocks.append(np.minimum(pos, blocks))
            targets_all.append(targets)
        found = np.stack(found_blocks, axis=1)            # (n, P)
        targets = np.stack(targets_all, axis=1)
        valid = found < blocks
        used = np.unique(found[valid])
        results = []
        if used.size:
            slot = np.full(blocks, -1, np.int64)
            slot[used] = np.arange(used.size)
            in_used = slot[block_of] >= 0
            span = used.size * BLOCK
            fine = np.bincount(k_of[in_used] * span + slot[block_of[in_used]] * BLOCK
                               + idx[in_used] % BLOCK, weights=cnt[in_used],
                               minlength=n * span).astype(np.int64).reshape(n, span)
            base_fine = self.dense.reshape(blocks, BLOCK)[used].ravel()
            acc_fine = np.cumsum(fine, axis=0) + base_fine
            q_row, q_p = np.nonzero(valid)
            q_block = found[q_row, q_p]
            cols = slot[q_block][:, None] * BLOCK + np.arange(BLOCK)
            cum_in_block = np.cumsum(acc_fine[q_row[:, None], cols], axis=1)
            before = np.where(q_block > 0, cum_blocks[q_row, np.maximum(q_block - 1, 0)], 0)
            reached = (cum_in_block + before[:, None]) >= targets[q_row, q_p][:, None]
            offset = np.argmax(reached, axis=1)
            index = q_block * BLOCK + offset
            values = np.zeros(found.shape, np.int64)
            values[q_row, q_p] = self.layout.highest_value_at(index)
        else:
            values = np.zeros(found.shape, np.int64)
        for j in range(len(TOTAL_PERCENTILES)):
            results.append(values[:, j])
        if cnt.size:
            self.dense += np.bincount(idx, weights=cnt, minlength=length).astype(np.int64)
        return results

    def histogram(self) -> Histogram:
        nz = np.flatnonzero(self.dense)
        return Histogram(self.layout, nz.astype(np.int64), self.dense[nz].copy(), self.bucket_count)

    def percentile_distribution(self, ticks, ratio, csv) -> str:
        return format_percentile_distribution(self.histogram(), ticks, ratio, csv)


def _targets(percentile: float, totals: np.ndarray) -> np.ndarray:
    """percentile_target_count for many totals at once (same double arithmetic)."""
    requested = min(max(math.nextafter(float(percentile), -math.inf), 0.0), 100.0)
    fp = (requested * totals.astype(np.float64)) / 100.0
    targets = np.ceil(fp)
    targets = np.where(targets >= 9.223372036854775807e18, 2**63 - 1, targets).astype(np.int64)
    return np.maximum(targets, 1)


class _DoubleRunning:
    """The DoubleHistogram path: Java's accumulator emulated interval by interval."""

    def __init__(self, first):
        self.acc = _DoubleAccumulator(first.configured_ratio, first.layout.significant_digits)

    def add_rows(self, batch, rows):
        counts, ip50, ip90, imax, totals, tmax = [], [], [], [], [], []
        tps = [[] for _ in TOTAL_PERCENTILES]
        for r in rows:
            h = batch.histogram(int(r))
            counts.append(h.total_count)
            ip50.append(h.value_at_percentile(50.0))
            ip90.append(h.value_at_percentile(90.0))
            imax.append(h.max)
            self.acc.add(h)
            total = self.acc.result()
            totals.append(total.total_count)
            for j, p in enumerate(TOTAL_PERCENTILES):
                tps[j].append(total.value_at_percentile(p))
            tmax.append(total.max)
        return _Rows(counts, ip50, ip90, imax, totals, tps, tmax)

    def percentile_distribution(self, ticks, ratio, csv) -> str:
        total = self.acc.result()
        return format_percentile_distribution(total.integer, ticks, ratio / total.ratio, csv)
