"""The user-facing error types.

Library code raises these; the CLI turns any of them into one `error: ...` line and exit 1.
A message says where (file, and line or byte offset when known), what is wrong, and what to do.
"""
from __future__ import annotations

import errno
import os


class LoadcurveError(Exception):
    """An input or usage problem the user can fix, reported without a traceback."""

    def __init__(self, message: str, *, path: str | os.PathLike | None = None,
                 line: int | None = None, offset: int | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.path = os.fspath(path) if path is not None else None
        self.line = line
        self.offset = offset
        self.hint = hint

    def where(self) -> str:
        if self.path is None:
            return ""
        if self.line is not None:
            return f"{self.path}:{self.line}"
        if self.offset is not None:
            return f"{self.path}: byte {self.offset}"
        return self.path

    def __str__(self) -> str:
        where = self.where()
        text = f"{where}: {self.message}" if where else self.message
        return f"{text} ({self.hint})" if self.hint else text


class HlogError(LoadcurveError):
    """A .hlog file that cannot be read, or yields nothing usable."""


class JfrError(LoadcurveError):
    """A JFR recording (or export) that cannot be read."""


class ManifestError(LoadcurveError):
    """A run.yml that is missing fields or has wrong values; carries every problem at once."""

    def __init__(self, problems: list[str], *, path=None, hint=None):
        self.problems = list(problems)
        super().__init__("; ".join(self.problems), path=path, hint=hint)


class BuildError(LoadcurveError):
    """A site build that could not complete (lock held, output not writable, ...)."""


class CountsError(LoadcurveError):
    """A generator `.counts.json` that cannot be read, has wrong types, or breaks an identity."""


class ResultsError(LoadcurveError):
    """A load tool's result file (JMeter, Gatling, k6, vegeta, hey, wrk, Locust, .hgrm, CSV)
    that cannot be read, or holds nothing usable."""


# Errors of the machine, not of the input: no run is to blame, and no build can go on.
_NO_ROOM = "free space on that disk, then build again"
MACHINE_FAULTS = {
    errno.ENOSPC: _NO_ROOM,
    errno.EDQUOT: _NO_ROOM,
    errno.EROFS: "the folder is on a read-only file system: make it writable (or build a copy "
                 "of the tree elsewhere), then build again",
}


def os_error_text(exc: OSError) -> str:
    """An OSError as the one line the CLI prints: the file, what happened, what to do when the
    machine is at fault (a disk full, a read-only file system)."""
    where = f"{exc.filename}: " if exc.filename else ""
    hint = MACHINE_FAULTS.get(exc.errno)
    return f"{where}{exc.strerror or exc}" + (f" ({hint})" if hint else "")


def is_machine_fault(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in MACHINE_FAULTS
