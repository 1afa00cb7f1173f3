"""What the text readers of load-tool files share: refusing binary or non-UTF-8 input with one
clear error, and counting the lines they skip (a capped list of warnings, every line counted)."""
from __future__ import annotations

from analysis.errors import ResultsError

WARNINGS_SHOWN = 20


class SkipLog:
    """The lines a reader skipped: all counted, the first WARNINGS_SHOWN listed."""

    def __init__(self, path: str):
        self.path = path
        self.count = 0
        self._listed: list[str] = []

    def skip(self, line: int, what: str) -> None:
        self.count += 1
        if len(self._listed) < WARNINGS_SHOWN:
            self._listed.append(f"{self.path}:{line}: {what} (skipped)")

    def warnings(self) -> list[str]:
        more = self.count - len(self._listed)
        return self._listed + ([f"... and {more} more"] if more else [])


def binary_line(data: bytes) -> int | None:
    """The 1-based line of the first NUL byte, None when there is none."""
    at = data.find(b"\0")
    return None if at < 0 else data.count(b"\n", 0, at) + 1


def read_text_lines(path: str, what: str) -> list[str]:
    """The lines of a small text file (a console output, an .hgrm), or one ResultsError when it
    is empty, binary or not UTF-8. `what` names the expected content for the hint."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ResultsError(f"cannot read the file: {e.strerror}", path=path) from None
    if not data.strip():
        raise ResultsError("the file is empty", path=path, hint=f"expected {what}")
    nul = binary_line(data)
    if nul is not None:
        raise ResultsError("binary data (NUL bytes), not text", path=path, line=nul,
                           hint=f"expected {what}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ResultsError(f"not UTF-8 text (byte {e.start})", path=path,
                           line=data.count(b"\n", 0, e.start) + 1,
                           hint=f"expected {what}") from None
    return text.splitlines()
