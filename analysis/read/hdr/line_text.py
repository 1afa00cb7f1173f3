"""hgrm's interval summary lines printed by compiled code (_lines.c) for the groups of an
integer log whose times all print as '%.3f' does: the values' texts (Java's rounding) are
still made here, once per distinct value, and the C code joins them with the times and
counts. `interval_lines` returns None for anything else, and the caller prints the lines in
Python (processor._IntervalLog.rows), with the same bytes (tested both ways)."""
from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np

from analysis import native_build
from analysis.native_build import array_of

SOURCE = Path(__file__).with_name("_lines.c")
FLAGS = ["-O2", "-shared", "-fPIC"]
ABI = 1              # lc_lines_abi() of the source this module was written against
CELLS = 9            # value columns of a line: the interval's 3, then the running total's 6
EXACT_MILLIS = 2.0 ** 43     # (see exact_millis)

_i64 = array_of(np.int64)
_u8 = array_of(np.uint8)
_f64 = array_of(np.float64)
_I64 = ctypes.c_int64


def exact_millis(values: np.ndarray) -> np.ndarray:
    """Per time: whether '%.3f' prints it as Java's fixed format does. In 1e-4 <= |t| < 1e15
    (repr without an exponent), the shortest repr has at most 3 decimals exactly when t is
    the double nearest some k / 1000. '%.3f' rounds the double's exact value, which is that
    k / 1000 only while half a unit in the last place is under 0.0005, below 2^43 (at 2^46,
    70368744177664.38 is exactly ...664.375: '%.3f' gives .375, Java .380)."""
    return (np.round(values * 1000.0) / 1000.0 == values) & (np.abs(values) < EXACT_MILLIS) & \
        ((np.abs(values) >= 1e-4) | (values == 0.0))


class Kernels:
    def __init__(self, lib):
        native_build.check_abi(lib, "lc_lines_abi", ABI, SOURCE)
        lib.lc_interval_lines.restype = _I64
        lib.lc_interval_lines.argtypes = [_f64, _I64, _I64, _i64, _i64, _i64, _i64, _i64, _I64,
                                          _u8, _i64, _I64, _I64, _u8, _I64]
        self.lib = lib

    def lines(self, times, time_width: int, counts, totals, values, table: ValueTable,
              csv: bool) -> bytes:
        """lc_interval_lines (see _lines.c), the values' texts from `table` (those it lacks
        added first)."""
        n = times.size
        for _ in range(2):
            offsets = table.offsets
            longest = int(np.diff(offsets).max()) if offsets.size > 1 else 0
            cap = max(n, 1) * (64 + 2 * 24 + CELLS * (longest + 1) + 32)
            out = np.empty(cap, np.uint8)
            size = self.lib.lc_interval_lines(times, n, time_width, counts, totals, values,
                                              table.known, table.slots, table.known.size,
                                              np.frombuffer(table.joined or b"\0", np.uint8),
                                              offsets, offsets.size - 1, int(csv), out, cap)
            if size != -2:
                break
            table.add(values)
        if size < 0:
            raise RuntimeError("lc_interval_lines: inconsistent arguments")
        return out[:size].tobytes()


def _self_check(kernels: Kernels, path: Path) -> None:
    one = np.ones(1, np.int64)
    table = ValueTable({7: "x"})
    got = kernels.lines(np.array([1.5]), 4, one, one * 2, np.full(CELLS, 7), table, False)
    if got != b"1.500: I:1 ( x x x ) T:2 ( x x x x x x )\n":
        raise RuntimeError(f"{path.name} fails its self-check")


LOADER = native_build.Loader(SOURCE, FLAGS, "hdrlines", Kernels, _self_check, "Python",
                             "compiled line printer")
get = LOADER.get
describe = LOADER.describe


class ValueTable:
    """The texts of the values printed so far, joined in the order first met (`joined`, text
    k at offsets[k] .. offsets[k + 1]), and where each value's text is (known[i]'s is text
    slots[i]; known sorted, for _lines.c's bisection). Only values never met before are
    formatted: a group of the 24-hour log has ~670 distinct values, of ~5,500 in the whole
    log, nearly all met in the groups before."""

    def __init__(self, value_text):
        self.value_text = value_text       # value -> its text (processor._ValueText)
        self.known = np.empty(0, np.int64)     # sorted
        self.slots = np.empty(0, np.int64)     # known[i]'s text is text number slots[i]
        self.joined = bytearray()
        self.offsets = np.zeros(1, np.int64)

    def add(self, values: np.ndarray) -> None:
        """The texts of those of `values` not known yet."""
        where = np.searchsorted(self.known, values)
        found = where < self.known.size
        found[found] = self.known[where[found]] == values[found]
        if found.all():
            return
        # (np.unique's first call in a process costs ~30 ms: a sort and a mask do the same)
        new = np.sort(values[~found])
        new = new[np.concatenate([[True], new[1:] != new[:-1]])]
        texts = [self.value_text[v].encode("latin-1") for v in new.tolist()]
        self.joined += b"".join(texts)
        self.offsets = np.concatenate([self.offsets, self.offsets[-1] + np.cumsum(
            np.fromiter(map(len, texts), np.int64, len(texts)))])
        known = np.concatenate([self.known, new])
        order = np.argsort(known, kind="stable")
        slots = np.concatenate([self.slots, np.arange(self.slots.size, known.size)])
        self.known, self.slots = known[order], slots[order]


def interval_lines(times: list[float], stats, start: int, csv: bool, table: ValueTable
                   ) -> str | None:
    """The summary lines of stats' rows from `start` on (times: theirs), as
    processor._IntervalLog.rows joins them; None where the compiled printer does not apply (not
    built, a DoubleHistogram's values, a time '%.3f' would print otherwise than Java)."""
    columns = stats.integer_columns(start)
    if columns is None or not times:
        return None
    kernels = get()
    values = np.asarray(times, np.float64)
    if kernels is None or not exact_millis(values).all():
        return None
    counts, totals, cells = columns
    return kernels.lines(values, 0 if csv else 4, counts, totals,
                         cells.ravel(), table, csv).decode("latin-1")
