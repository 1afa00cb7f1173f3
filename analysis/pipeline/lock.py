"""One build per tree: an exclusive lock on .cache/loadcurve/build.lock.

A POSIX record lock (fcntl F_SETLK), not flock: a flock belongs to the open file, which every
forked worker shares, so workers that outlived a killed build kept the tree locked (issue 22).
A record lock belongs to the process that took it: forked children never hold it, and the
kernel drops it the moment that process dies. Its one trap: closing *any* descriptor of the
lock file in this process drops it too, so nothing else in the build opens build.lock.
"""
from __future__ import annotations

import fcntl
import os
import struct
import sys
from pathlib import Path

from analysis.errors import BuildError

# struct flock on Linux: l_type, l_whence, l_start, l_len, l_pid (other systems order it
# otherwise; there the holder is read from the file instead, see holder_pid)
_LINUX_FLOCK = "hhqqi"


class BuildLock:
    """The tree's build lock, held from __enter__ to __exit__ (or this process's death)."""

    def __init__(self, path: Path):
        self.path = path
        self.fd: int | None = None

    def __enter__(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # O_CLOEXEC: programs the build runs (a compiler, dask's workers) get no descriptor
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            message, hint = busy_message(fd)
            os.close(fd)
            raise BuildError(message, path=self.path, hint=hint) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self.fd = fd
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)  # releases the lock; the file stays (removing it would race)
            self.fd = None


def holder_pid(fd: int) -> int | None:
    """The pid holding the lock on `fd`'s file, as the kernel sees it (Linux), else the pid the
    holder wrote into it; None when unknown (0 from the kernel: a process in another pid
    namespace, or on another host of a network file system)."""
    if sys.platform.startswith("linux"):
        query = struct.pack(_LINUX_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
        l_type, _, _, _, pid = struct.unpack(_LINUX_FLOCK, fcntl.fcntl(fd, fcntl.F_GETLK, query))
        if l_type == fcntl.F_UNLCK:
            return None   # released since our attempt
        return pid or None
    text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    return int(text) if text.isdigit() else None


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:   # another user's process: alive
        return True
    return True


def busy_message(fd: int) -> tuple[str, str]:
    """What the error says when the lock is taken: who holds it, and what to do."""
    pid = holder_pid(fd)
    if pid is None:
        return ("another build is running on this tree, in a process this machine cannot see "
                "(another container or host sharing the folder)",
                "wait for it to finish, then build again")
    if not alive(pid):
        return (f"the build lock names pid {pid}, which is gone",
                "build again; if this repeats, remove .cache/loadcurve/build.lock")
    return (f"another build is running on this tree (pid {pid})",
            f"wait for it to finish, or stop it with `kill {pid}`, then build again")
