"""Writing generated files so that a build killed at any moment leaves the old file intact.

Every generated file is written to a temporary name in the same folder, flushed, then renamed
over the target (rename is atomic on POSIX within one filesystem).
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_bytes(path: str | os.PathLike, data: bytes) -> bool:
    """Atomically replace `path` with `data`. Returns False (and writes nothing) if the file
    already holds exactly these bytes, so unchanged outputs keep their mtime."""
    path = Path(path)
    try:
        if path.stat().st_size == len(data) and path.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return True


def write_text(path: str | os.PathLike, text: str) -> bool:
    return write_bytes(path, text.encode("utf-8"))
