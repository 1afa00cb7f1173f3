"""The compiled stat walk of the build (_walk.c): a run folder's listing for its input key
(cache._stat_stamp) and the size check of a run's recorded outputs (runner.outputs_intact),
built into .cache/native/ on first use (read/native_build.py) and loaded with ctypes. At 1,000
runs the two stat ~230,000 files on every build, adding a run included; in Python each stat
cost several times the system call, under the interpreter lock. Without a compiler, or with
LOADCURVE_NATIVE=0, `get()` is None and the Python code runs, with the same answers (tested).
"""
from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path

from analysis.read import native_build

SOURCE = Path(__file__).with_name("_walk.c")
FLAGS = ["-O2", "-shared", "-fPIC"]
ABI = 2              # lc_walk_abi() of the source this module was written against
PYTHON = -1          # LC_WALK_PYTHON: the folder holds what only the Python walk decides
ROOM = 64 * 1024     # a listing's first buffer (the scale corpus's runs need ~9 KB)


class Walker:
    def __init__(self, lib):
        lib.lc_walk_abi.restype = ctypes.c_long
        lib.lc_walk_abi.argtypes = []
        if lib.lc_walk_abi() != ABI:
            raise OSError(f"{SOURCE.name} ABI {lib.lc_walk_abi()}, expected {ABI}")
        lib.lc_walk_listing.restype = ctypes.c_long
        lib.lc_walk_listing.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_long]
        lib.lc_sizes_match.restype = ctypes.c_long
        lib.lc_sizes_match.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                       ctypes.c_long]
        self.lib = lib
        self._buffers = threading.local()   # (the build walks runs on several threads)

    def listing(self, folder: str) -> bytes | None:
        """The folder's listing (cache._listing's bytes), or None: leave it to Python."""
        buf = getattr(self._buffers, "buf", None)
        if buf is None:
            buf = self._buffers.buf = ctypes.create_string_buffer(ROOM)
        path = os.fsencode(folder)
        n = self.lib.lc_walk_listing(path, buf, len(buf))
        if n > len(buf):
            buf = self._buffers.buf = ctypes.create_string_buffer(n)
            n = self.lib.lc_walk_listing(path, buf, len(buf))
        if n == PYTHON or n > len(buf):   # (grown again between the two calls)
            return None
        return buf.raw[:n]

    def sizes_match(self, root: str, outputs: dict[str, int]) -> bool:
        """Whether each file `root` + rel exists with its recorded size (os.stat's answer)."""
        rels = os.fsencode("\0".join(outputs) + "\0")
        sizes = "\0".join(map(str, outputs.values())).encode() + b"\0"
        return self.lib.lc_sizes_match(os.fsencode(root), rels, sizes, len(outputs)) == 1


def _self_check(walker: Walker, path: Path) -> None:
    """A miscompiled object goes no further: the listing of this module's own folder is the
    Python walk's."""
    from analysis.pipeline.cache import _listing
    if walker.listing(str(SOURCE.parent)) != _listing(str(SOURCE.parent)):
        raise RuntimeError(f"{path.name}: its listing of {SOURCE.parent} is not Python's")


LOADER = native_build.Loader(SOURCE, FLAGS, "walk", Walker, _self_check, "Python",
                             "compiled walk")
get = LOADER.get            # the compiled walk, or None: see native_build.Loader
describe = LOADER.describe


if __name__ == "__main__":     # make's install step: build now, never fail the install
    print(f"the build's stat walk: {describe()}")
