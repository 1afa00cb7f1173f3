"""Writing generated files so that a build killed at any moment leaves the old file intact.

Every generated file is written to a temporary name in the same folder, flushed, then renamed
over the target (rename is atomic on POSIX within one filesystem).
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _temp_beside(path: Path, data: bytes) -> str:
    """Write `data` to a new temporary file in `path`'s folder, on disk; return its name."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
    except BaseException:
        _unlink(tmp)
        raise
    return tmp


def _unlink(name: str) -> None:
    try:
        os.unlink(name)
    except FileNotFoundError:
        pass


def write_bytes(path: str | os.PathLike, data: bytes) -> bool:
    """Atomically replace `path` with `data`. Returns False (and writes nothing) if the file
    already holds exactly these bytes, so unchanged outputs keep their mtime."""
    path = Path(path)
    try:
        if path.stat().st_size == len(data) and path.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    tmp = _temp_beside(path, data)
    try:
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise
    return True


def write_text(path: str | os.PathLike, text: str) -> bool:
    return write_bytes(path, text.encode("utf-8"))


def create_text(path: str | os.PathLike, text: str) -> None:
    """Create `path` holding `text`, atomically; FileExistsError if it exists. For files a
    person will edit afterwards (drafts), which must never be replaced: os.link never does."""
    path = Path(path)
    tmp = _temp_beside(path, text.encode("utf-8"))
    try:
        os.link(tmp, path)
    finally:
        _unlink(tmp)
