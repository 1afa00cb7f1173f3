"""Writing files so that a build killed at any moment leaves the old file intact.

Every file is written to a temporary name in the same folder, then renamed over the target
(rename is atomic on POSIX within one filesystem): a killed process leaves the old file or the
new one, never a mix, whether or not the data reached the disk.

Only a crash of the machine itself (power, kernel) can lose data the kernel had not written yet.
What that costs depends on the file:
- generated outputs (write_bytes, write_text) can be made again by the next build; they are
  not flushed one by one. A build writes ~60 files a run: flushing each (median 0.5-6.5 ms
  of waiting on this project's machine, the busier the disk the slower) kept a 10-run build's
  workers waiting 0.9-4.5 s in all, and the build took 9.1 s instead of 8.7 (issue 15);
- the records that say which outputs a build made (write_record: the build state, the corpus
  cache) are written after one flush of everything written before them (os.sync), then
  flushed themselves. So after a crash the record on disk names only outputs that reached the
  disk; an output written after it belongs to a run the record does not hold as built (another
  input digest), which the next build makes again;
- files a person will edit (create_text: drafts) are flushed before they appear.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _temp_beside(path: Path, data: bytes, durable: bool) -> str:
    """Write `data` to a new temporary file in `path`'s folder (flushed to disk when
    `durable`); return its name."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise _naming(exc, path) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
    except BaseException as exc:
        _unlink(tmp)
        if isinstance(exc, OSError):
            raise _naming(exc, path) from None
        raise
    return tmp


def _naming(exc: OSError, path: Path) -> OSError:
    """`exc` naming the file being written (a failed write names none; a failed mkstemp names
    its random temporary name), so that a disk full says which output it stopped."""
    return type(exc)(exc.errno, exc.strerror, str(path))


def _unlink(name: str) -> None:
    try:
        os.unlink(name)
    except FileNotFoundError:
        pass


def _holds(path: Path, data: bytes) -> bool:
    try:
        return path.stat().st_size == len(data) and path.read_bytes() == data
    except FileNotFoundError:
        return False


def write_bytes(path: str | os.PathLike, data: bytes) -> bool:
    """Atomically replace `path` with `data`. Returns False (and writes nothing) if the file
    already holds exactly these bytes, so unchanged outputs keep their mtime."""
    path = Path(path)
    if _holds(path, data):
        return False
    _replace(path, data, durable=False)
    return True


def _replace(path: Path, data: bytes, durable: bool) -> None:
    tmp = _temp_beside(path, data, durable)
    try:
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise


def write_text(path: str | os.PathLike, text: str) -> bool:
    return write_bytes(path, text.encode("utf-8"))


def write_record(path: str | os.PathLike, text: str) -> bool:
    """write_text for a record of generated outputs (the build state): every file written
    before it, by this process or its workers, is on disk before the record is."""
    path, data = Path(path), text.encode("utf-8")
    if _holds(path, data):
        return False
    os.sync()
    _replace(path, data, durable=True)
    return True


def create_text(path: str | os.PathLike, text: str) -> None:
    """Create `path` holding `text`, atomically and on disk; FileExistsError if it exists. For
    files a person will edit afterwards (drafts), which must never be replaced: os.link never
    does."""
    path = Path(path)
    tmp = _temp_beside(path, text.encode("utf-8"), durable=True)
    try:
        os.link(tmp, path)
    finally:
        _unlink(tmp)
