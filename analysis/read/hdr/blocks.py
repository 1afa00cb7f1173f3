"""Reading an `.hlog` file in blocks of bytes: groups.item_groups' groups, with the plain
histogram lines of a normal log (see lc_scan_lines in _native.c) found and parsed by the
compiled scanner and turned into items a whole run at a time; every other line (headers, tags,
anything odd or broken) goes through lines.line_item, whose rules and messages stand.

Same items, warnings and header state as lines.iter_lines over the file opened as latin-1 text
with universal newlines (tested); without the compiled kernels it is that."""
from __future__ import annotations

import io
from itertools import repeat

import numpy as np

from analysis.read.hdr import native
from analysis.read.hdr.histogram import java_long
from analysis.read.hdr.lines import HeaderState, _recognise, line_item, numbered_lines

BLOCK_BYTES = 4 << 20
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
    block = bytearray(BLOCK_BYTES)
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
            starts, ends, plain, nums, payloads = kernels.scan_lines(block, cut)
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
                        yield _plain_run(block, line_base, a, stop, ends, nums, payloads,
                                         warnings, state)
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


def _whole_lines(block, size: int) -> int:
    """The end of the last whole line of block[:size] (0: none); a CR at the very end may be
    half of a CRLF and stays for the next read."""
    cut = block.rfind(b"\n", 0, size) + 1
    bare_cr = block.rfind(b"\r", cut, size) + 1
    return bare_cr if 0 < bare_cr < size else cut


def _plain_run(block, line_base, a, b, ends, nums, payloads, warnings, state):
    """line_item's items of the plain lines a..b of a block, all at once: no tag, no sign, no
    out-of-range time (lc_scan_lines' plain form), with the start and base times known."""
    _recognise(state, warnings)
    ts, length = nums[a:b, 0], nums[a:b, 1]
    line_nos = np.arange(line_base + a + 1, line_base + b + 1)
    # a timestamp below the latest one so far goes backwards (the latest stays); never negative
    latest = state.latest_timestamp.get(None)
    highest = np.maximum.accumulate(ts)
    before = np.empty_like(ts)
    before[0] = -np.inf if latest is None else latest
    before[1:] = highest[:-1]
    if latest is not None:
        np.maximum(before, latest, out=before)
    backwards = np.flatnonzero(ts < before)
    if backwards.size:
        state.backwards.setdefault(None, []).extend(line_nos[backwards].tolist())
    state.latest_timestamp[None] = float(highest[-1]) if latest is None \
        else max(latest, float(highest[-1]))
    absolute_start = ts + state.base_time
    offset = absolute_start - state.start_time
    absolute_end = absolute_start + length
    start_ms, end_ms = (_java_longs(x * 1000.0) for x in (absolute_start, absolute_end))
    texts = [block[p:e] for p, e in zip(payloads[a:b].tolist(), ends[a:b].tolist())]
    return list(zip(line_nos.tolist(), repeat(None), offset.tolist(), length.tolist(), start_ms,
                    end_ms, repeat(state.start_time), texts))


def _java_longs(values: np.ndarray) -> list[int]:
    if values.size and float(np.abs(values).max()) < LONG_SAFE:
        return values.astype(np.int64).tolist()
    return [java_long(v) for v in values.tolist()]
