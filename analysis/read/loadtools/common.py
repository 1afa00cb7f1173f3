"""What the load-tool readers share: the skipped-line log, the native unit of a set of
latencies, and the checks every text file gets before it is parsed (issue 23): binary or
non-UTF-8 input is one clear error naming the file (and the line, where there is one)."""
from __future__ import annotations

import numpy as np

from analysis.errors import ResultsError
from analysis.read.loadtools.results import NS_PER_UNIT

# the warnings list stays readable on a file with a million bad lines; the count stays exact
MAX_LISTED_WARNINGS = 20


class SkipLog:
    """Lines a reader could not use: every one counted, the first MAX_LISTED_WARNINGS listed
    as "path:LINE: what (skipped)"."""

    def __init__(self, path: str):
        self.path = path
        self.count = 0
        self._listed: list[str] = []

    def skip(self, line: int, what: str) -> None:
        self.count += 1
        if len(self._listed) < MAX_LISTED_WARNINGS:
            self._listed.append(f"{self.path}:{line}: {what} (skipped)")

    def warnings(self) -> list[str]:
        more = self.count - len(self._listed)
        return self._listed + ([f"... and {more} more"] if more else [])


def native_unit(latency_ns: np.ndarray) -> str:
    """The coarsest of ms/us/ns in which every latency is a whole number."""
    for unit in ("ms", "us"):
        if latency_ns.size and not np.any(latency_ns % NS_PER_UNIT[unit]):
            return unit
    return "ns"


def check_text(path: str, head: bytes, what: str) -> None:
    """Refuses, in one clear error naming the line, the files no text reader can make sense
    of: empty, or binary (a NUL byte)."""
    if not head.strip():
        raise ResultsError("the file is empty", path=path, hint=f"expected {what}")
    nul = binary_line(head)
    if nul is not None:
        raise ResultsError("binary data (NUL bytes), not text", path=path, line=nul,
                           hint=f"expected {what}")


def binary_line(data: bytes) -> int | None:
    """The 1-based line of the first NUL byte, None when there is none."""
    at = data.find(b"\0")
    return None if at < 0 else data.count(b"\n", 0, at) + 1


def read_head(path: str, size: int = 64 * 1024) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(size)
    except OSError as e:
        raise ResultsError(f"cannot read the file: {e.strerror}", path=path) from None


def decode_text(path: str, data: bytes, what: str) -> str:
    check_text(path, data, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ResultsError(f"not UTF-8 text (byte {e.start})", path=path,
                           line=data.count(b"\n", 0, e.start) + 1,
                           hint=f"expected {what}") from None


def read_text(path: str, what: str) -> str:
    """A whole (small) text file: summaries, reports, console output, an .hgrm."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ResultsError(f"cannot read the file: {e.strerror}", path=path) from None
    return decode_text(path, data, what)


def read_text_lines(path: str, what: str) -> list[str]:
    """read_text's lines. `what` names the expected content for the hint."""
    return read_text(path, what).splitlines()
