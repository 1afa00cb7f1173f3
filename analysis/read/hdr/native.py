"""The compiled inner loops of `hgrm` (_native.c): built with the system C compiler on first
use (or by `make analyse`'s install step: `python -m analysis.read.hdr.native`) into
.cache/native/, loaded with ctypes. Without a compiler, or when the build or the load fails,
`get()` is None and the numpy code runs instead, with byte-identical output (tested);
`LOADCURVE_NATIVE=0` in the environment forces that. `describe()` says which path runs.

C rather than numba: one small file and the system's compiler, nothing more to install, and
no JIT compilation at run time (numba itself was not measured).
The shared object is named after a hash of the source, the compiler and its flags, so an
edited source is rebuilt and a stale one never loaded; it is built in a temporary file and
renamed into place, so concurrent first uses are safe.
"""
from __future__ import annotations

import ctypes
import sys
from pathlib import Path

import numpy as np

from analysis import native_build

SOURCE = Path(__file__).with_name("_native.c")
# -fwrapv: int64 sums wrap as numpy's do; -ffp-contract=off: no fused multiply-add, so the
# percentile targets are Java's double arithmetic, operation by operation.
FLAGS = ["-O2", "-shared", "-fPIC", "-fwrapv", "-ffp-contract=off"]
ABI = 5               # lc_abi() of the source this module was written against
ROW_DEFERRED = 1      # lc_decode_v2's status of a row left to the Python decoder
POOL = 5              # output arrays kept for reuse: a batch in use, the next being
                      # decoded, spares


_i64 = native_build.array_of(np.int64)
_u8 = native_build.array_of(np.uint8)
_f64 = native_build.array_of(np.float64)
_I64 = ctypes.c_int64


class Kernels:
    """The loaded shared object, with numpy-typed entry points."""

    def __init__(self, lib):
        native_build.check_abi(lib, "lc_abi", ABI, SOURCE)
        lib.lc_decode_v2.restype = _I64
        lib.lc_decode_v2.argtypes = [_u8, _I64, _i64, _I64, _i64, _i64, _i64, _I64, _i64, _i64,
                                     _u8, ctypes.POINTER(_I64)]
        lib.lc_running.restype = _I64
        lib.lc_running.argtypes = [_i64, _i64, _I64, _i64, _i64, _I64, _I64, _i64, _I64, _i64,
                                   _I64, _i64, _f64, ctypes.c_void_p, _i64]
        lib.lc_add_bodies.restype = _I64
        lib.lc_add_bodies.argtypes = [_u8, _i64, _I64, _u8, _i64, _i64, _I64, _i64, _I64, _i64,
                                      _f64, _i64, _I64, _i64]
        lib.lc_scan_lines.restype = _I64
        lib.lc_scan_lines.argtypes = [_u8, _I64, _I64, _i64, _i64, _u8, _f64, _i64, _i64]
        lib.lc_outer.restype = _I64
        lib.lc_outer.argtypes = [ctypes.c_char_p, _i64, _I64, _I64]
        lib.lc_bodies.restype = _I64
        lib.lc_bodies.argtypes = [_u8, _i64, _I64, _i64, _i64, _i64]
        lib.lc_kinds.restype = _I64
        lib.lc_kinds.argtypes = [_u8, _i64, _I64, _I64, ctypes.c_char_p, _I64, _i64]
        self.lib = lib
        self._pool: list[list] = []      # [keys, counts, references when idle]: see _outputs
        self._scratch = np.empty(0, np.int64)    # add_bodies' one row of entries

    def _outputs(self, size: int):
        """(keys, counts) arrays of at least `size` entries for lc_decode_v2. Fresh arrays of
        a batch's size cost more in page faults (~1 ms a batch here) than decoding into them,
        so arrays are reused once nothing refers to them any more: the batch made of them,
        and every view of it, is gone (numpy views hold a reference to the array they see)."""
        for entry in self._pool:
            keys, counts, idle = entry
            if keys.size >= size and sys.getrefcount(keys) <= idle and \
                    sys.getrefcount(counts) <= idle:
                return keys, counts
        size += size >> 3               # (room for the next, slightly larger batch)
        keys, counts = np.empty(size, np.int64), np.empty(size, np.int64)
        if len(self._pool) < POOL:
            self._pool = [e for e in self._pool if e[0].size >= size]   # (too small: drop)
            entry = [keys, counts, 0]
            self._pool.append(entry)
            # held by the pool and a local name, as in the test above: idle
            entry[2] = sys.getrefcount(keys)
        return keys, counts

    def decode_v2(self, bodies: list[bytes], cals: list[int], stride_bits: int):
        """batch._decode_v2_batch's job: -> (keys, counts, row_entries, totals, deferred,
        stride_bits). Row r's entries are keys/counts[row_entries[r]:row_entries[r + 1]],
        totals[r] their sum; `deferred` lists the rows left to payload.counts_from_payload
        (anything unusual: it words the error, or decodes them)."""
        n = len(bodies)
        return self.decode_v2_joined(b"".join(bodies), np.fromiter(map(len, bodies), np.int64, n),
                                     cals, stride_bits)

    def decode_v2_joined(self, joined: bytes, lengths, cals, stride_bits: int):
        """decode_v2 of the bodies joined into one bytes object, with their lengths."""
        n = lengths.size
        buf = np.frombuffer(joined, np.uint8)
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        keys, counts = self._outputs(max(buf.size, 1))   # a count takes at least one byte
        capacity = keys.size
        row_entries = np.empty(n + 1, np.int64)
        totals = np.empty(max(n, 1), np.int64)
        status = np.empty(max(n, 1), np.uint8)
        bits = _I64(stride_bits)
        if not buf.size:
            buf = np.zeros(1, np.uint8)      # (a valid pointer; its length is given as 0)
        m = self.lib.lc_decode_v2(buf, int(offsets[-1]), offsets, n,
                                  np.asarray(cals, np.int64), keys, counts, capacity,
                                  row_entries, totals, status, ctypes.byref(bits))
        if m < 0:
            raise RuntimeError("lc_decode_v2: inconsistent arguments")
        deferred = np.flatnonzero(status[:n] == ROW_DEFERRED).tolist()
        return keys[:m], counts[:m], row_entries, totals[:n], deferred, bits.value

    def scan_lines(self, block, length: int):
        """lc_scan_lines of block[:length] (bytes or bytearray; see _native.c) -> (starts,
        ends, plain, nums, payload starts, heads), one entry per line."""
        buf = np.frombuffer(block, np.uint8)
        cap = length // 512 + 64      # (room for a log's lines; else counted, and again)
        for _ in range(2):
            starts, ends, payloads, heads = (np.empty(cap, np.int64) for _ in range(4))
            plain = np.empty(cap, np.uint8)
            nums = np.empty((cap, 3), np.float64)
            n = self.lib.lc_scan_lines(buf, length, cap, starts, ends, plain, nums, payloads,
                                       heads)
            if n >= 0:
                return (starts[:n], ends[:n], plain[:n].view(bool), nums[:n], payloads[:n],
                        heads[:n])
            cap = block.count(b"\n", 0, length) + block.count(b"\r", 0, length) + 1
        raise RuntimeError("lc_scan_lines: more lines than line ends")

    def outer_ok(self, joined: bytes, offsets, max_compressed: int) -> bool:
        """Whether every payload of `joined` passes lc_outer."""
        return self.lib.lc_outer(joined, offsets, offsets.size - 1, max_compressed) == 0

    def kinds(self, joined: bytearray, offsets, start: int, known: list[bytes], kinds):
        """lc_kinds: from row `start` on, kinds[r] = the position in `known` of row r's
        header -> n when every row has one, else the first row without (-1 - r: too short)."""
        return self.lib.lc_kinds(np.frombuffer(joined, np.uint8), offsets, start,
                                 offsets.size - 1, b"".join(known), len(known), kinds)

    def bodies(self, joined: bytearray, offsets, kinds, limits):
        """lc_bodies: the counts bodies packed at the front of `joined` (in place; it is cut
        to them) -> their lengths, or None when some payload is not a plain one of its
        header (kinds: lc_kinds'; limits: each header's counts byte limit; `joined` is then
        spoilt)."""
        n = offsets.size - 1
        lengths = np.empty(n, np.int64)
        size = self.lib.lc_bodies(np.frombuffer(joined, np.uint8), offsets, n, kinds,
                                  np.asarray(limits, np.int64), lengths)
        if size < 0:
            return None
        del joined[size:]
        return lengths

    def running(self, keys, counts, starts, ends, mask: int, dense, blocks, state, requested,
                row_counts=None):
        """lc_running (see _native.c): -> an (n rows, 10) int64 array; updates dense, blocks
        and state in place. row_counts: each row's count, when known (else it is summed)."""
        keys = np.ascontiguousarray(keys, np.int64)
        counts = np.ascontiguousarray(counts, np.int64)
        starts = np.ascontiguousarray(starts, np.int64)
        ends = np.ascontiguousarray(ends, np.int64)
        if row_counts is not None:
            row_counts = np.ascontiguousarray(row_counts, np.int64)
        if counts.size != keys.size or ends.size != starts.size or state.size != 11 or \
                requested.size != 7 or (row_counts is not None and
                                        row_counts.size != starts.size):
            raise RuntimeError("lc_running: arrays of the wrong size")
        out = np.empty((starts.size, 10), np.int64)
        code = self.lib.lc_running(keys, counts, keys.size, starts, ends, starts.size, mask,
                                   dense, dense.size, blocks, blocks.size, state, requested,
                                   None if row_counts is None else row_counts.ctypes.data, out)
        if code < 0:
            raise RuntimeError("lc_running: inconsistent arguments")
        return out

    def add_bodies(self, bodies, lengths, chosen, cals, dense, blocks, state, requested):
        """lc_add_bodies (see _native.c): the V2 counts `bodies` (joined; `lengths` each;
        `cals` their counts arrays' lengths) decoded, and the `chosen` ones (a bool per row)
        added as `running` adds them -> a (chosen rows, 10) array like its; None when some
        row needs the general decoder (dense, blocks and state are then unchanged)."""
        n = lengths.size
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        chosen = np.ascontiguousarray(chosen, np.uint8)
        cals = np.ascontiguousarray(cals, np.int64)
        if state.size != 11 or requested.size != 7 or chosen.size != n or cals.size != n:
            raise RuntimeError("lc_add_bodies: arrays of the wrong size")
        longest = int(lengths.max()) if n else 0
        if self._scratch.size < 2 * longest:
            self._scratch = np.empty(2 * longest + 1024, np.int64)
        buf = np.frombuffer(bodies, np.uint8) if len(bodies) else np.zeros(1, np.uint8)
        out = np.empty((int(np.count_nonzero(chosen)), 10), np.int64)
        code = self.lib.lc_add_bodies(buf, offsets, n, chosen, cals, dense, dense.size,
                                      blocks, blocks.size, state, requested, self._scratch,
                                      self._scratch.size, out)
        if code == -1:
            raise RuntimeError("lc_add_bodies: inconsistent arguments")
        return out if code >= 0 else None


def _self_check(kernels: Kernels, path: Path) -> None:
    """A count of 1, a run of 2 zeros, a count of 2: a miscompiled object goes no further."""
    keys, counts, _, totals, deferred, _ = kernels.decode_v2([b"\x02\x03\x04"], [10], 6)
    if keys.tolist() != [0, 3] or counts.tolist() != [1, 2] or deferred or totals[0] != 3:
        raise RuntimeError(f"{path.name} fails its self-check")


LOADER = native_build.Loader(SOURCE, FLAGS, "hdr", Kernels, _self_check, "numpy",
                             "compiled kernels")
get = LOADER.get            # the compiled kernels, or None: see native_build.Loader
describe = LOADER.describe


if __name__ == "__main__":     # make's install step: build now, never fail the install
    print(f"hgrm inner loops: {describe()}")
    from analysis.read.hdr import group_inflate, line_text
    print(f"hgrm interval lines: {line_text.describe()}")
    print(f"hgrm payloads' base64 and inflating: {group_inflate.describe()}")
