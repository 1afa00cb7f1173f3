"""The build's stat walk: a run folder's listing for its input key (cache._stat_stamp), in
Python and compiled (_walk.c), and the size check of a run's recorded outputs
(runner.outputs_intact). The compiled one is built into .cache/native/ on first use
(native_build.py) and loaded with ctypes. At 1,000
runs the two stat ~230,000 files on every build, adding a run included; in Python each stat
cost several times the system call, under the interpreter lock. Without a compiler, or with
LOADCURVE_NATIVE=0, `get()` is None and the Python code runs, with the same answers (tested).
"""
from __future__ import annotations

import ctypes
import os
import stat
import threading
from pathlib import Path

from analysis import native_build

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
        """The folder's listing (python_listing's bytes), or None: leave it to Python."""
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


def listing(folder: str) -> bytes | None:
    """The folder's listing for its input key, from the compiled walk when it is there and
    can decide, else from Python's."""
    walker = get()
    found = walker.listing(folder) if walker is not None else None
    return found if found is not None else python_listing(folder)


def python_listing(folder: str) -> bytes | None:
    """"rel\0size\0mtime_ns\0ino\0" of each file under `folder` (walk_files' order), or None
    (see cache._stat_stamp). _walk.c makes the same bytes, faster."""
    parts = []
    for rel, entry in walk_files(folder, ""):
        try:
            if entry.is_symlink():
                return None
            st = entry.stat(follow_symlinks=False)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        parts.append(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}\0")
    return "".join(parts).encode()


def walk_files(folder: str, prefix: str):
    """(run-relative path, DirEntry) of every file under `folder` in os.walk's order with
    sorted names: a folder's files, then its subfolders; linked folders not entered. One
    scandir per folder and no per-file lstat (a no-change build of 1,000 runs hashes ~110,000
    files)."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    files, folders = [], []
    for entry in entries:
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        (folders if is_dir else files).append(entry)
    for entry in sorted(files, key=lambda e: e.name):
        yield prefix + entry.name, entry
    for entry in sorted(folders, key=lambda e: e.name):
        if not entry.is_symlink():
            yield from walk_files(entry.path, f"{prefix}{entry.name}/")


def _self_check(walker: Walker, path: Path) -> None:
    """A miscompiled object goes no further: the listing of this module's own folder is the
    Python walk's."""
    if walker.listing(str(SOURCE.parent)) != python_listing(str(SOURCE.parent)):
        raise RuntimeError(f"{path.name}: its listing of {SOURCE.parent} is not Python's")


LOADER = native_build.Loader(SOURCE, FLAGS, "walk", Walker, _self_check, "Python",
                             "compiled walk")
get = LOADER.get            # the compiled walk, or None: see native_build.Loader
describe = LOADER.describe


if __name__ == "__main__":     # make's install step: build now, never fail the install
    print(f"the build's stat walk: {describe()}")
