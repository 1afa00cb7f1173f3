"""The lines a reader skips: every one counted, the first few listed as "path:LINE: what (skipped)"
(the readers' contract, issue 23), so that a damaged file never loses rows silently."""
from __future__ import annotations

LISTED = 20


class SkippedLines:
    def __init__(self, path: str, listed: int = LISTED):
        self.path = path
        self.listed = listed
        self.count = 0
        self._lines: list[str] = []

    def skip(self, line: int | None, what: str) -> None:
        self.count += 1
        if len(self._lines) < self.listed:
            where = f"{self.path}:{line}" if line is not None else self.path
            self._lines.append(f"{where}: {what} (skipped)")

    def warnings(self) -> list[str]:
        more = self.count - len(self._lines)
        return self._lines + ([f"... and {more} more"] if more > 0 else [])
