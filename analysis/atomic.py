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

import itertools
import os
import tempfile
from pathlib import Path


# A temporary name of this process's own (pid and a count): a worker writes ~120 files a run,
# and tempfile.mkstemp's random names, its file object and the folder's mkdir and stat before
# each of them took about half a write's CPU. O_EXCL still refuses a name that exists (a file
# a killed process of the same pid left): then mkstemp picks one.
_PID = [os.getpid()]
_COUNT = itertools.count()
os.register_at_fork(after_in_child=lambda: _PID.__setitem__(0, os.getpid()))
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _temp_beside(path: Path, data: bytes, durable: bool) -> str:
    """Write `data` to a new temporary file in `path`'s folder (flushed to disk when
    `durable`); return its name. The folder is made only when it is missing."""
    tmp = f"{path.parent}{os.sep}.{path.name}.{_PID[0]}-{next(_COUNT)}.tmp"
    try:
        try:
            fd = os.open(tmp, _CREATE, 0o600)
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(tmp, _CREATE, 0o600)
    except FileExistsError:
        fd, tmp = _random_temp(path)
    except OSError as exc:
        raise _naming(exc, path) from None
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if durable:
                os.fsync(fd)
            os.fchmod(fd, 0o644)
        finally:
            os.close(fd)
    except BaseException as exc:
        _unlink(tmp)
        if isinstance(exc, OSError):
            raise _naming(exc, path) from None
        raise
    return tmp


def _random_temp(path: Path) -> tuple[int, str]:
    try:
        return tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise _naming(exc, path) from None


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
