"""One build per tree: an exclusive flock on .cache/loadcurve/build.lock."""
from __future__ import annotations

import fcntl
import os
from pathlib import Path

from analysis.errors import BuildError


class BuildLock:
    """An exclusive flock on .cache/loadcurve/build.lock; the kernel drops it if we die."""

    def __init__(self, path: Path):
        self.path = path
        self.fd: int | None = None

    def __enter__(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
            os.close(fd)
            raise BuildError(f"another build is running on this tree (pid {holder})",
                             path=self.path, hint="wait for it to finish, then build again")
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self.fd = fd
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)  # releases the lock; the file stays (removing it would race)
            self.fd = None
