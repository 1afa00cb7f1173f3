"""Reading an `.hlog` file in blocks of bytes: groups.item_groups' groups, with the plain
histogram lines of a normal log (see lc_scan_lines in _native.c) found and parsed by the
compiled scanner and turned into items a whole run at a time (tagged or not); every other line
(headers, anything odd or broken) goes through lines.line_item, whose rules and messages stand.

Same items, warnings and header state as lines.iter_lines over the file opened as latin-1 text
with universal newlines (tested); without the compiled kernels it is that."""
from __future__ import annotations

import io
import os
from itertools import repeat

import numpy as np

from analysis.read.hdr import native
from analysis.read.hdr.histogram import java_long
from analysis.read.hdr.lines import HeaderState, recognise, line_item, numbered_lines

BLOCK_BYTES = 4 << 20
MIN_BLOCK_BYTES = 64 << 10
LONG_SAFE = 9.2e18      # |ms| below this: Java's (long) cast is numpy's truncation


def block_groups(handle, path: str, state: HeaderState, batch_size: int):
    """(items, warnings raised while reading them) per group of batch_size histogram lines of
    the binary file `handle`, as groups.item_groups yields them for its text: no line after a
    group's last one is read before the group is yielded (the header state and the warnings
    then are those of iter_lines at that point)."""
    kernels = native.get()
    own: list[str] = []
    group: list = []
    room = [batch_size]       # items the group still takes: a plain run stops there
    if kernels is None:
        text = io.TextIOWrapper(handle, encoding="latin-1", newline=None)
        runs = ([line_item(n, line, path, own, state)] for n, line in numbered_lines(text, state))
    else:
        runs = _item_runs(kernels, handle, path, own, state, room)
    for items in runs:
        group.extend(item for item in items if item is not None)
        if len(group) >= batch_size:
            yield group, own[:]
            group = []
            own.clear()
        room[0] = batch_size - len(group)
    if group or own:
        yield group, own[:]


def _item_runs(kernels, handle, path, warnings, state, room):
    """Lists of items (None for a line that gave none), in line order: one a line, or a run
    of plain lines of at most room[0]."""
    # One buffer, refilled: a fresh 4 MB object per read costs its page faults every time.
    # A small file gets a buffer of its size: zeroing 4 MB for a few kB of log took a build
    # 0.46 ms a file (the loop below still grows it for a file that grows meanwhile).
    block = bytearray(_buffer_size(handle))
    view = memoryview(block)
    kept = 0                  # bytes of an unfinished line, moved to the front
    line_base = 0
    while True:
        if kept == len(block):         # (a line longer than the buffer: it grows)
            view.release()
            block.extend(bytes(len(block)))
            view = memoryview(block)
        got = handle.readinto(view[kept:])
        size = kept + got
        if not got and size and block[size - 1] not in b"\r\n":
            state.unterminated_line = line_base + 1
        cut = _whole_lines(block, size) if got else size
        if cut:
            starts, ends, plain, nums, payloads, heads = kernels.scan_lines(block, cut)
            n = len(starts)
            plain_list = plain.tolist()
            run_ends = [*(np.flatnonzero(plain[1:] != plain[:-1]) + 1).tolist(), n]
            a = 0
            for b in run_ends:
                while a < b:
                    # (the first histogram line, which settles the start and base times, by
                    # line_item)
                    if plain_list[a] and state.observed_start and state.observed_base:
                        stop = min(b, a + room[0])
                        yield _plain_run(block, line_base, slice(a, stop),
                                         (starts, ends, nums, payloads, heads), warnings, state)
                    else:
                        stop = a + 1
                        yield [line_item(line_base + a + 1,
                                         block[starts[a]:ends[a]].decode("latin-1"), path,
                                         warnings, state)]
                    a = stop
            line_base += n
        kept = size - cut
        block[:kept] = block[cut:size]
        if not got:
            return


def _buffer_size(handle) -> int:
    try:
        size = os.fstat(handle.fileno()).st_size
    except (OSError, AttributeError, io.UnsupportedOperation):
        return BLOCK_BYTES
    return min(BLOCK_BYTES, max(size + 1, MIN_BLOCK_BYTES))


def _whole_lines(block, size: int) -> int:
    """The end of the last whole line of block[:size] (0: none); a CR at the very end may be
    half of a CRLF and stays for the next read."""
    cut = block.rfind(b"\n", 0, size) + 1
    bare_cr = block.rfind(b"\r", cut, size) + 1
    return bare_cr if 0 < bare_cr < size else cut


def _plain_run(block, line_base, run: slice, scanned, warnings, state):
    """line_item's items of the plain lines `run` of a block, all at once: no sign, no
    out-of-range time (lc_scan_lines' plain form; `scanned`: its arrays), with the start and
    base times known."""
    recognise(state, warnings)
    starts, ends, nums, payloads, heads = (x[run] for x in scanned)
    ts, length = nums[:, 0], nums[:, 1]
    line_nos = np.arange(line_base + run.start + 1, line_base + run.stop + 1)
    if (heads > starts).any():
        tags = [block[a + 4:h - 1].decode("latin-1") if h > a else None
                for a, h in zip(starts.tolist(), heads.tolist())]
        by_tag: dict = {}
        for k, tag in enumerate(tags):
            by_tag.setdefault(tag, []).append(k)
        backwards = np.zeros(ts.size, bool)
        for tag, rows in by_tag.items():     # (in order of first appearance, as line_item)
            backwards[rows] = _goes_backwards(state, tag, ts[rows])
    else:
        tags = [None] * ts.size
        backwards = _goes_backwards(state, None, ts)
    for k in np.flatnonzero(backwards).tolist():     # (in line order, as line_item)
        state.backwards.setdefault(tags[k], []).append(int(line_nos[k]))
    absolute_start = ts + state.base_time
    offset = absolute_start - state.start_time
    absolute_end = absolute_start + length
    start_ms, end_ms = (_java_longs(x * 1000.0) for x in (absolute_start, absolute_end))
    texts = [block[p:e] for p, e in zip(payloads.tolist(), ends.tolist())]
    return list(zip(line_nos.tolist(), tags, offset.tolist(), length.tolist(), start_ms,
                    end_ms, repeat(state.start_time), texts))


def _goes_backwards(state, tag, ts: np.ndarray) -> np.ndarray:
    """Which of a tag's timestamps `ts` (in line order) lie below the latest one before them
    (line_item's test; the latest stays), updating the tag's latest timestamp."""
    latest = state.latest_timestamp.get(tag)
    highest = np.maximum.accumulate(ts)
    before = np.empty_like(ts)
    before[0] = -np.inf if latest is None else latest
    before[1:] = highest[:-1]
    if latest is not None:
        np.maximum(before, latest, out=before)
    state.latest_timestamp[tag] = float(highest[-1]) if latest is None \
        else max(latest, float(highest[-1]))
    return ts < before


def _java_longs(values: np.ndarray) -> list[int]:
    if values.size and float(np.abs(values).max()) < LONG_SAFE:
        return values.astype(np.int64).tolist()
    return [java_long(v) for v in values.tolist()]
