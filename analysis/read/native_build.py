"""Compiling a module's small C file (hgrm's inner loops, the JFR checkpoint walk) into a
shared object in .cache/native/, keyed by the source, compiler, flags and platform, so that
each source is built once and a changed one is built again, and loading it. The modules
(read/hdr/native.py, read/jfr/native.py) call `compile_shared` and `load`, and fall back to
their pure-Python code when the object cannot be had; `make`'s install step builds both ahead
of time."""
from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

CACHE = Path(os.environ.get("LOADCURVE_NATIVE_CACHE")
             or Path(__file__).resolve().parents[2] / ".cache" / "native")
BUILD_SECONDS = 120


def compile_shared(source: Path, flags: list[str], prefix: str) -> Path:
    """The shared object for `source`, compiled now unless already in the cache, written
    under a temporary name and renamed (two processes building at once both succeed).
    Raises OSError/RuntimeError/SubprocessError when it cannot be."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise RuntimeError("no C compiler (cc)")
    key = hashlib.sha256(b"\0".join([source.read_bytes(), cc.encode(), " ".join(flags).encode(),
                                     platform.machine().encode(), sys.platform.encode()]))
    target = CACHE / f"{prefix}-{key.hexdigest()[:16]}.so"
    if target.exists():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".build-", suffix=".so", dir=CACHE)
    os.close(fd)
    try:
        proc = subprocess.run([cc, *flags, "-o", tmp, str(source)], capture_output=True,
                              text=True, timeout=BUILD_SECONDS)
        if proc.returncode != 0:
            first = (proc.stderr.strip().splitlines() or ["?"])[0]
            raise RuntimeError(f"{cc} failed: {first}")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def load(build: Callable[[], Path], wrap: Callable[[ctypes.CDLL], Any],
         check: Callable[[Any, Path], None], fallback: str, what: str) -> tuple[Any, str]:
    """(the wrapped object, how it runs) when it builds, loads and passes `check`; else (None,
    why not, naming the `fallback` that runs instead). LOADCURVE_NATIVE=0 always falls back."""
    if os.environ.get("LOADCURVE_NATIVE") == "0":
        return None, f"{fallback} (LOADCURVE_NATIVE=0)"
    try:
        path = build()
        kernels = wrap(ctypes.CDLL(str(path)))
        check(kernels, path)
        return kernels, f"compiled ({path.name})"
    except (OSError, subprocess.SubprocessError, RuntimeError) as exc:
        return None, f"{fallback} (no {what}: {exc})"


def once(cache: list, load: Callable[[], tuple[Any, str]]) -> tuple[Any, str]:
    """`load()`'s result, computed on the first call and kept in `cache` (a module's list, which
    tests empty to load again)."""
    if not cache:
        cache.append(load())
    return cache[0]
