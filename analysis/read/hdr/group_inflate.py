"""A group's payload texts base64-decoded and inflated in one compiled call (_inflate.c,
linked with ISA-L's C library: Debian's libisal-dev). Built and loaded as native.py's kernels
are; without the header or the library, or with LOADCURVE_NATIVE=0, `get()` is None and
batch._inflate_plain makes its one base64 and one inflate call a line, as before.

Why: on the 24-hour log those calls, their bytes objects and lists were ~0.25 s of one
core's ~3 s beside ISA-L's own inflating; and a compiled call releases the GIL."""
from __future__ import annotations

import ctypes
import threading
from pathlib import Path

import numpy as np

from analysis import native_build

SOURCE = Path(__file__).with_name("_inflate.c")
FLAGS = ["-O2", "-shared", "-fPIC"]
LIBS = ("-lisal",)
ABI = 1                  # li_abi() of the source this module was written against
REFUSED, NO_ROOM = -1, -2
# The room first offered for a group's inflated payloads, per byte of their base64 text
# (a 2,000-value payload of the 24-hour log inflates to ~2.4 bytes a text byte), and the
# most ever offered: 1,032 bytes a compressed byte is deflate's own limit, and never more than
# MOST_BYTES for a group (a hostile log's group then takes the lines' path, whose bound is a
# payload's; a group of 512 of the 24-hour log's payloads inflates to ~1.2 MB).
FIRST_ROOM = 4
MOST_ROOM = 1032
MOST_BYTES = 256 << 20

_i64 = native_build.array_of(np.int64)
_u8 = native_build.array_of(np.uint8)
_I64 = ctypes.c_int64


class GroupInflater:
    """The loaded object's li_inflate_group, with each thread's output room kept between
    calls (a fresh one a group costs its page faults again)."""

    def __init__(self, lib):
        native_build.check_abi(lib, "li_abi", ABI, SOURCE)
        lib.li_inflate_group.restype = _I64
        lib.li_inflate_group.argtypes = [ctypes.c_char_p, _i64, _I64, _I64, _u8, _u8, _I64,
                                         _i64]
        self.lib = lib
        self._local = threading.local()

    def inflate(self, texts, max_compressed: int):
        """The payload texts (bytes-like, or str) of a group -> (every payload inflated,
        joined into one bytearray, their offsets: n + 1 int64), or None when some payload
        is not one this pass takes (see _inflate.c)."""
        n = len(texts)
        if not n:
            return None
        try:
            joined = b"".join(texts) if not isinstance(texts[0], str) else \
                "".join(texts).encode("ascii")
        except (TypeError, UnicodeEncodeError):
            return None
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(np.fromiter(map(len, texts), np.int64, n), out=offsets[1:])
        longest = int(np.diff(offsets).max())
        scratch = np.empty(longest * 3 // 4 + 8, np.uint8)
        out_offsets = np.empty(n + 1, np.int64)
        limit = min(MOST_ROOM * len(joined) + 64 * n, MOST_BYTES)
        need = min(FIRST_ROOM * len(joined) + 64 * n, limit)
        while True:
            room = getattr(self._local, "room", None)
            if room is None or room.size < need:
                room = self._local.room = np.empty(need, np.uint8)
            size = self.lib.li_inflate_group(joined, offsets, n, max_compressed, scratch, room,
                                             room.size, out_offsets)
            if size >= 0:
                # (a copy of the inflated size: the batch keeps it, the room is reused)
                return bytearray(room[:size].data), out_offsets
            if size != NO_ROOM or need >= limit:
                return None
            need = min(2 * need, limit)


def _self_check(inflater: GroupInflater, path: Path) -> None:
    """One payload of a V2 histogram (one count of 1): a miscompiled object goes no
    further."""
    import base64
    import zlib
    body = bytes.fromhex("1c849303" "00000001" "00000000" "00000001" "00000000"
                         "00000000" "00000000" "00000000" "00000000" "3ff00000") + b"\x02"
    squeezed = zlib.compress(body)
    text = base64.b64encode(bytes.fromhex("1c849304") + len(squeezed).to_bytes(4, "big")
                            + squeezed)
    got = inflater.inflate([text], 1 << 14)
    if got is None or bytes(got[0]) != body or got[1].tolist() != [0, len(body)]:
        raise RuntimeError(f"{path.name} fails its self-check")


LOADER = native_build.Loader(SOURCE, FLAGS, "hdr-inflate", GroupInflater, _self_check,
                             "a base64 and an inflate call a line",
                             "compiled group inflater", LIBS)
get = LOADER.get            # the compiled inflater, or None: see native_build.Loader
describe = LOADER.describe
