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
interval's timestamp when there is no StartTime line), with one exception in `read_hlog`: a log
with a `#[BaseTime]` but no `#[StartTime]` before its first interval starts its axis at that
interval's absolute start (timestamp + BaseTime). Java takes the bare relative timestamp as the
start time there, so every offset is about BaseTime and a window matches nothing or everything.
`iter_batches` keeps Java's axis unless its HeaderState asks for the other
(`axis_from_first_interval`): HistogramLogProcessor's output is printed on Java's.

Also reported, once per tag (Java says nothing): intervals with a negative timestamp, and
intervals that start before the one above them. A file none of whose lines is a histogram line
or a log header (`#[StartTime`, `#[BaseTime`, the legend) is one HlogError, without a warning per
line; once some line is recognised, every bad line is a warning.
"""
from __future__ import annotations

import os

from analysis.errors import HlogError
from analysis.read.hdr.ahead import decoded_ahead
from analysis.read.hdr.batch import LINE, decode_batch, decode_part
from analysis.read.hdr.codec import a2b_base64
from analysis.read.hdr.double import sum_double_histograms
from analysis.read.hdr.histogram import sum_histograms
from analysis.read.hdr.groups import item_groups
from analysis.read.hdr.lines import (HeaderState, Interval, interval_matches, nothing_read_error,
                                     open_lines, time_order_warnings)
from analysis.read.hdr.payload import parse_payload

# Decoded entries kept in memory for instant `Interval.histogram`; beyond this, intervals keep
# their payload and decode on access (a 24-hour log has ~1.5e8 entries).
KEEP_DECODED_ENTRIES = 8_000_000
BATCH_LINES = 512      # (see iter_batches)
DECODE = "decode"       # sent back to iter_batches for an undecoded batch (see there)


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
    batch = decode_part(items, list(range(len(intervals))), payloads,
                         [iv._raw for iv in intervals], errors, stride_bits)
    if errors or batch is None or len(batch.items) != len(intervals):
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


def iter_batches(path, warnings: list[str], state: HeaderState | None = None,
                 batch_size: int | None = None, text=None, undecoded: bool = False,
                 threads: int = 1):
    """Read `path` (or the lines in `text`, named `path` in messages) and yield Batches of
    decoded intervals, in file order; bad lines become warnings, in line order.

    `batch_size` None: batches of 512 lines. 512 keeps the arrays of a batch (~11 MB for the
    24-hour log) in a shared L3 cache and halves the per-batch Python of 256 (one core,
    bench/perf/hgrm_vs_hlp.py's log: 8% less CPU time, measured interleaved).

    `undecoded=True` yields the groups of plain payloads undecoded (batch.Batch.joined), for
    the caller to decode as it adds them up (running.IntegerRunning.add_undecoded); a caller
    that cannot take one sends DECODE back (`batches.send(DECODE)`), which returns the batch
    decoded the general way (None when none of its rows decodes), its warnings merged into
    the group's in line order. Without a send, every row of an undecoded batch counts as
    decoded.

    `threads` > 1: that many threads decode the groups ahead of the caller (ahead.py); the
    batches, the warnings and `state` between them are the same."""
    path = os.fspath(path)
    state = state or HeaderState()
    handle, lines = open_lines(path, text)
    kept: set[int] = set()       # lines decoded, once some timestamp went backwards
    size = batch_size or BATCH_LINES
    if threads > 1:
        groups = decoded_ahead(lambda own: item_groups(lines, path, own, size), state,
                               lambda items, read: _decoded(path, items, read, undecoded),
                               threads)
    else:
        groups = (_decoded(path, items, read_warnings, undecoded)
                  for items, read_warnings in item_groups(lines, path, state, size))
    try:
        for batch, group_warnings in groups:
            mark = len(warnings)
            warnings.extend(group_warnings)
            if batch is not None and batch.joined is not None:
                if (yield batch) == DECODE:
                    decode_warnings: list[str] = []
                    batch = batch.decoded(path, decode_warnings)
                    warnings[mark:] = _in_line_order(path, warnings[mark:] + decode_warnings)
                    yield batch
            elif batch is not None:
                yield batch
            if batch is not None and (state.negative or state.backwards):
                kept.update(batch.column(LINE))
        warnings.extend(time_order_warnings(path, state, kept))
    finally:
        groups.close()          # (ahead.py's threads stop reading before the file closes)
        if handle is not None:
            handle.close()


def _decoded(path, items, read_warnings, undecoded=False):
    """-> (the group's Batch or None, its warnings in line order)."""
    decode_warnings: list[str] = []
    batch = decode_batch(items, path, decode_warnings, None, undecoded) if items else None
    return batch, _in_line_order(path, read_warnings + decode_warnings)


def _in_line_order(path: str, messages: list[str]) -> list[str]:
    def line_of(message: str) -> int:
        try:
            return int(message[len(path) + 1:].split(":", 1)[0])
        except ValueError:
            return 0
    return sorted(messages, key=line_of)


# Said of a skipped last line that the file ends inside: the log may be one still written.
UNFINISHED = (" (the file ends inside this line: is the run still being recorded? build again "
              "once it ends)")


def read_hlog(path) -> HlogLog:
    """Read an `.hlog` file: every valid interval, one warning per skipped line.
    Raises HlogError when the file holds no usable interval."""
    path = os.fspath(path)
    warnings: list[str] = []
    state = HeaderState(axis_from_first_interval=True)
    intervals: list[Interval] = []
    kept_entries = 0
    for batch in iter_batches(path, warnings, state):
        keep = kept_entries + batch.keys.size <= KEEP_DECODED_ENTRIES
        kept_entries += batch.keys.size if keep else 0
        if keep:
            for iv, hist in zip(batch.intervals, batch.histograms()):
                iv._histogram = hist
        else:
            # (a group inflated in one compiled call keeps no raw payloads: base64 again)
            for iv, raw, text in zip(batch.intervals, batch.raws, batch.column(7)):
                iv._raw = raw if raw is not None else a2b_base64(text)
        intervals.extend(batch.intervals)
    if state.unterminated_line:
        at = f"{path}:{state.unterminated_line}: "
        warnings[:] = [w + UNFINISHED if w.startswith(at) else w for w in warnings]
    if not intervals:
        err = nothing_read_error(path, state, warnings)
        err.warnings = warnings
        raise err
    before = [iv for iv in intervals if iv.start_s < 0]
    if before and state.explicit_start:
        warnings.append(f"{path}:{before[0].line}: {len(before)} interval(s) start before "
                        "#[StartTime]; kept (HistogramLogProcessor drops them)")
    return HlogLog(path, intervals, warnings, state.start_time if state.observed_start else None,
                   state.base_time if state.observed_base else None)
