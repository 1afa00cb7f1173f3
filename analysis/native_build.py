"""Compiling a module's small C file (hgrm's inner loops, the JFR checkpoint walk) into a
shared object in .cache/native/, keyed by the source, compiler, flags and platform, so that
each source is built once and a changed one is built again. The loaders (read/hdr/native.py,
read/jfr/native.py) call `compile_shared` and fall back to their pure-Python code when it
raises; `make`'s install step builds both ahead of time."""
from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CACHE = Path(os.environ.get("LOADCURVE_NATIVE_CACHE")
             or Path(__file__).resolve().parents[1] / ".cache" / "native")
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
