"""Compiling a module's small C file (hgrm's inner loops, the JFR checkpoint walk, the build's
input walk, the og:image's PNG row filter) into a
shared object in .cache/native/, keyed by the source, compiler, flags and platform, so that
each source is built once and a changed one is built again, and loading it. The modules
(read/hdr/, read/jfr/native.py, pipeline/native_walk.py, write/charts/png_encode.py) each make
a `Loader` of their source, and fall back to their pure-Python code when the object cannot be
had; `make`'s install step builds them ahead of time. A shared leaf: every stage has C."""
from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

# (subprocess, tempfile and platform are imported where a compile needs them: ~0.02 s of a
# CLI's start-up otherwise, for every run that finds the object built)

CACHE = Path(os.environ.get("LOADCURVE_NATIVE_CACHE")
             or Path(__file__).resolve().parents[2] / ".cache" / "native")
BUILD_SECONDS = 120


def compile_shared(source: Path, flags: list[str], prefix: str, libs: tuple = ()) -> Path:
    """The shared object for `source`, compiled now unless already in the cache, written
    under a temporary name and renamed (two processes building at once both succeed).
    `libs` (-l options) follow the source, where a linker that drops unneeded libraries
    still sees what it needs them for. Raises OSError/RuntimeError when it cannot be."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise RuntimeError("no C compiler (cc)")
    key = hashlib.sha256(b"\0".join([source.read_bytes(), cc.encode(),
                                     " ".join([*flags, *libs]).encode(),
                                     _machine().encode(), sys.platform.encode()]))
    target = CACHE / f"{prefix}-{key.hexdigest()[:16]}.so"
    if target.exists():
        return target
    import subprocess
    import tempfile

    CACHE.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".build-", suffix=".so", dir=CACHE)
    os.close(fd)
    try:
        try:
            proc = subprocess.run([cc, *flags, "-o", tmp, str(source), *libs],
                                  capture_output=True, text=True, timeout=BUILD_SECONDS)
        except subprocess.SubprocessError as exc:
            raise RuntimeError(str(exc)) from exc
        if proc.returncode != 0:
            first = (proc.stderr.strip().splitlines() or ["?"])[0]
            raise RuntimeError(f"{cc} failed: {first}")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def check_abi(lib: ctypes.CDLL, symbol: str, expected: int, source: Path) -> None:
    """Raise OSError unless `lib`'s `symbol`() - the ABI number its C source declares - is the
    one the loading module was written against (a stale object in .cache/native/)."""
    abi = getattr(lib, symbol)
    abi.restype = ctypes.c_int64
    abi.argtypes = []
    found = abi()
    if found != expected:
        raise OSError(f"{source.name} ABI {found}, expected {expected}")


def array_of(dtype):
    """A ctypes argument type: a C-contiguous numpy array of `dtype`, passed as the address of
    its data. np.ctypeslib.ndpointer checks the same, but its from_param and the _ctypes
    object it hands ctypes took ~4x as long a call, and a small log makes ~37 such calls (a
    run's 36 logs: ~0.2 ms each)."""
    import numpy as np      # (not at import: the JFR loader has no numpy arrays to pass)

    dtype = np.dtype(dtype)

    class Array:
        @classmethod
        def from_param(cls, obj):
            if not (isinstance(obj, np.ndarray) and obj.dtype == dtype and
                    obj.flags.c_contiguous):
                raise TypeError(f"a C-contiguous {dtype} array, not {type(obj).__name__} "
                                f"{getattr(obj, 'dtype', '')}")
            # (the caller's argument keeps the array alive for the call)
            return ctypes.c_void_p(obj.ctypes.data)
    Array.__name__ = f"array_of_{dtype}"
    return Array


def _machine() -> str:
    """platform.machine(): on POSIX, what it reads (os.uname)."""
    if hasattr(os, "uname"):
        return os.uname().machine
    import platform
    return platform.machine()


def load(build: Callable[[], Path], wrap: Callable[[ctypes.CDLL], object],
         check: Callable[[object, Path], None], fallback: str, what: str) -> tuple[object, str]:
    """(the wrapped object, how it runs) when it builds, loads and passes `check`; else (None,
    why not, naming the `fallback` that runs instead). LOADCURVE_NATIVE=0 always falls back."""
    if os.environ.get("LOADCURVE_NATIVE") == "0":
        return None, f"{fallback} (LOADCURVE_NATIVE=0)"
    try:
        path = build()
        kernels = wrap(ctypes.CDLL(str(path)))
        check(kernels, path)
        return kernels, f"compiled ({path.name})"
    except (OSError, RuntimeError) as exc:
        return None, f"{fallback} (no {what}: {exc})"


class Loader:
    """One module's compiled C file, its `get()` and `describe()`: `source` built with `flags`
    (compile_shared, cached under `prefix`), wrapped, checked and kept on first use; else None
    and the module's `fallback` (see `load`). `build` and `loaded` are attributes so that a
    test can hand it another object, or empty `loaded` to load again."""

    def __init__(self, source: Path, flags: list[str], prefix: str,
                 wrap: Callable[[ctypes.CDLL], object], check: Callable[[object, Path], None],
                 fallback: str, what: str, libs: tuple = ()):
        self.source, self.flags, self.prefix, self.libs = source, flags, prefix, libs
        self.wrap, self.check, self.fallback, self.what = wrap, check, fallback, what
        self.loaded: list[tuple[object, str]] = []     # [(wrapped or None, description)]

    def build(self) -> Path:
        """The shared object for this source (compiled once, cached)."""
        return compile_shared(self.source, self.flags, self.prefix, self.libs)

    def get(self) -> object:
        """The wrapped object, built and loaded on first call; None when it cannot be."""
        return self._once()[0]

    def describe(self) -> str:
        """How the module runs: compiled (which object), or its fallback and why."""
        return self._once()[1]

    def _once(self) -> tuple[object, str]:
        if not self.loaded:
            # through the attribute, looked up now: a test may have replaced `build`
            self.loaded.append(load(lambda: self.build(), self.wrap, self.check,
                                    self.fallback, self.what))
        return self.loaded[0]
