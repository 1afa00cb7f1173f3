"""The build state's records as the state file holds them (pipeline/runner.py: Build.load_state).

Build._state_json writes the state from each run's record text, made again only for a record
that changed. After a load every text had to be made again: at 1,000 runs the first save of a
build that added one run dumped all 1,000 records (~0.1 s quiet, ~0.5 s at load 18). The file
holds those texts already, so they are cut out of it where it is known to be what a save wrote:
a save keeps the size, modification time and inode of the file it wrote beside it (STAMP, as
the build's other caches know a file: a sha256 of the 7 MB at each of a full build's saves
would cost the main process ~2 CPU s), and only a file that still has them is cut (any other -
edited, replaced, or written by other code - is parsed and dumped as before). Cut with the
json module's own scanner, record by record, it costs no more than one json.loads of the whole
file."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from analysis import atomic

STAMP_SUFFIX = ".stamp"
HEAD = '{"runs":{'
_SCAN = json.JSONDecoder().scan_once


def stamp_path(state_path: Path) -> Path:
    return state_path.with_name(state_path.name + STAMP_SUFFIX)


def written(state_path: Path) -> None:
    """Keep the stamp of the state file a save has just written. (Not kept - a full disk -
    the stamp left is another file's: the next load parses the file whole.)"""
    try:
        atomic.write_text(stamp_path(state_path), _stamp(state_path))
    except OSError:
        pass


def records(state_path: Path, text: str, version: int
            ) -> tuple[dict[str, Any], dict[str, tuple[Any, str]]] | None:
    """(the state, each run's (record, record text)) of `text`, the state file's, when a save
    wrote it and it is `{"runs":{...},"version":<version>}`; else None (json.loads it)."""
    try:
        if stamp_path(state_path).read_text() != _stamp(state_path) \
                or not text.isascii() or len(text) != state_path.stat().st_size:
            return None
    except OSError:
        return None
    tail = '},"version":' + json.dumps(version) + "}"
    if not (text.startswith(HEAD) and text.endswith(tail)):
        return None
    runs: dict[str, Any] = {}
    texts: dict[str, tuple[Any, str]] = {}
    at, end = len(HEAD), len(text) - len(tail)
    try:
        while at < end:
            start = at
            run_id, at = _SCAN(text, at)
            if not isinstance(run_id, str) or text[at] != ":":
                return None
            entry, at = _SCAN(text, at + 1)
            runs[run_id] = entry
            texts[run_id] = (entry, text[start:at])
            if at < end:
                if text[at] != ",":
                    return None
                at += 1
    except (StopIteration, ValueError, IndexError):
        return None
    if at != end:
        return None
    return {"runs": runs, "version": version}, texts


def _stamp(path: Path) -> str:
    st = path.stat()
    return f"{st.st_size} {st.st_mtime_ns} {st.st_ino}"
