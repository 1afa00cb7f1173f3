"""Read JDK Flight Recorder recordings (in Python, no JDK): what the JVM recorded, event by event.

    from analysis.read.jfr import read_jfr
    record = read_jfr(path, attribution=[(regex, label), ...] or None)   # a summary.Summary

`path` is a `.jfr` file, a `.jfr.gz`, a JFR repository folder of chunk files (what a JVM killed
mid-run leaves; read in file-name order), or a small `jfr print --json` export (`.json`).
Raises `analysis.errors.JfrError` (naming the file and byte offset) when nothing can be read.
The constant pools and the frequent events are walked by a small compiled helper where the
system has a C compiler (native.py; `LOADCURVE_NATIVE=0` turns it off), with the same results as
the Python reader alone.

The record holds counts, sums, the GC pause timeline, the settings in effect and the samples'
methods (summary.py); derive/jvm_summary.py turns it into the JVM summary the report prints
(summarize_jfr), with every figure it holds described.

With `window=(start_ns, end_ns)` (epoch nanoseconds, e.g. a cell's measured window from its
`.hlog` or counts.json), the record counts only events whose start time falls inside
[start, end): GC (a collection counts where it starts), safepoints, CPU load samples,
allocation samples, parks, monitors and execution samples. Event times are JFR ticks turned into
epoch time with each chunk's header (start nanos, start ticks, ticks per second), the clock the
`.hlog`'s StartTime is on. Events before the window are recorded apart (Summary.warmup, the
warm-up); events after it (the drain) nowhere.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from analysis.errors import JfrError

__all__ = ["read_jfr", "read_recording", "JfrError"]


def read_jfr(path: str | os.PathLike, attribution: list[tuple[str, str]] | None = None,
             window: tuple[int, int] | None = None, summary=None, reader=None, jobs: int = 1):
    """The record (summary.Summary) of one recording (see the module docstring); JfrError when
    unreadable. With `window` = (start, end) epoch ns, only events that start inside it are
    counted. `summary` and `reader` (a Summary made with the same attribution and window, and
    a ChunkReader class) let a caller collect more in the same pass:
    derive/jvm_summary.summarize_and_fold. With `jobs` > 1 (and neither of those) a file of
    several chunks is read in up to that many processes (parallel.py), with the same record."""
    # Imported here so that `import analysis.read.jfr` (e.g. by the CLI's --help) stays cheap.
    from analysis.read.jfr.export import is_json_export, summarize_export
    from analysis.read.jfr.reader import ChunkReader
    from analysis.read.jfr.summary import Summary

    p = Path(path)
    for pattern, _label in attribution or []:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise JfrError(f"attribution pattern {pattern!r} is not a valid regex: {exc}",
                           path=p) from None
    if not p.exists():
        raise JfrError("no such file or folder", path=p)
    if window is not None and not (type(window[0]) is int and type(window[1]) is int
                                   and window[0] < window[1]):
        raise JfrError(f"window {window!r} is not (start, end) epoch nanoseconds with start "
                       f"before end", path=p)
    # Parts are read into copies of an empty summary made here (parallel.py).
    jobs = jobs if summary is None and reader is None else 1
    summary = summary if summary is not None else Summary(attribution, window)
    try:
        if p.is_file() and is_json_export(p):
            summarize_export(p, summary)
            return summary
    except OSError as exc:
        raise JfrError(f"cannot read: {exc.strerror or exc}", path=p) from None
    read_recording(p, (reader or ChunkReader)(summary), jobs)
    return summary


def read_recording(p: Path, reader, jobs: int = 1) -> None:
    """Feed every chunk of recording `p` to `reader` (a reader.ChunkReader), keeping what the
    chunks before a damaged one gave; JfrError when nothing at all can be read. With `jobs` > 1
    (`reader` a ChunkReader, its summary empty) a file is read in parts (parallel.py)."""
    from analysis.read.jfr.chunks import iter_chunks

    summary = reader.summary
    if jobs > 1 and p.is_file():
        from analysis.read.jfr.parallel import read_in_parts
        try:
            if read_in_parts(p, summary, jobs):
                _close(p, summary)
                return
        except OSError:
            pass    # the serial read below says what cannot be read
    chunks_read = 0
    try:
        try:
            for chunk in iter_chunks(p):
                chunks_read += 1
                reader.read(chunk)
        except JfrError as exc:
            if chunks_read == 0:
                raise
            # A later chunk's header is damaged: keep what the earlier chunks gave.
            summary.note_damage(str(exc))
    except OSError as exc:
        raise JfrError(f"cannot read: {exc.strerror or exc}", path=p) from None
    if chunks_read == 0:
        raise JfrError("empty file", path=p, offset=0)
    _close(p, summary)


def _close(p: Path, summary) -> None:
    if summary.covered_until_ns is None:
        raise JfrError(f"no event could be read ({summary.damage_note})", path=p)
    summary.close_chunks()
