"""Reading one recording file in several processes, part by part, with the serial reader's result.

A recording is chunks back to back, each with its own metadata and constant pools, so a chunk
reads without the ones before it; only a chunk without a readable metadata event takes the
types of the last chunk before it that had one. A plain file whose first two chunks or more are
whole is cut at chunk starts into parts of about equal bytes (at most `jobs`, one chunk or more
each). Each part after the first is read by a forked child into its own copy of the empty
summary, which it sends back pickled through a pipe; the first is read here meanwhile. The
parts' summaries are then merged in file order (summary.Summary.merge), which gives what one
reader reading every chunk after another gives: the last part ends as the whole file does (a
chunk cut short, a damaged header after it), every other part holds whole chunks only.

A child whose first chunk has no metadata of its own finds the types the serial reader would
hold (the last earlier chunk's), reading back chunk by chunk. Anything else unusual (a child
that fails or stops, a chunk that is not where the scan found it) makes read_in_parts return
False before the caller's summary is touched: the caller then reads the file serially.

The children are forked after the imports, so each starts at once with the compiled walk
loaded; the JDK's `jfr print` decodes on two cores too.
"""
from __future__ import annotations

import os
import pickle
import signal
from pathlib import Path

from analysis.errors import JfrError
from analysis.read.jfr import native
from analysis.read.jfr.chunks import (HEADER_SIZE, MAX_CHUNK_BYTES, read_chunks_from_stream,
                                      parse_header)


def whole_chunk_starts(path: str) -> list[int]:
    """The byte offsets of the file's leading whole, finished chunks, and where the last ends."""
    starts = [0]
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        while True:
            offset = starts[-1]
            raw = os.pread(f.fileno(), HEADER_SIZE, offset)
            try:
                header = parse_header(raw, path, offset)
            except JfrError:
                break
            if not header.finished or not HEADER_SIZE <= header.size <= MAX_CHUNK_BYTES or \
                    offset + header.size > size:
                break
            starts.append(offset + header.size)
    return starts


def part_bounds(starts: list[int], file_size: int, jobs: int) -> list[int]:
    """The offsets where the parts start (the first 0): of `starts` (whole_chunk_starts's, the
    last being where the whole chunks end), the ones nearest to equal shares of the file."""
    bounds = [0]
    for i in range(1, jobs):
        share = file_size * i // jobs
        # the chunk starts after the first chunk, before the whole chunks' end
        best = min(starts[1:-1], key=lambda s: abs(s - share), default=None)
        if best is not None and best > bounds[-1]:
            bounds.append(best)
    return bounds


def read_in_parts(path: Path, summary, jobs: int) -> bool:
    """Read the recording file `path` into `summary` (an empty summary.Summary) in up to `jobs`
    processes, as read_recording would with a reader.ChunkReader; False (summary untouched)
    when it cannot be read so (one part only, or anything unusual): read it serially then."""
    if jobs < 2 or not hasattr(os, "fork"):
        return False
    name = str(path)
    try:
        starts = whole_chunk_starts(name)
        bounds = part_bounds(starts, os.path.getsize(name), jobs)
    except OSError:
        return False
    if len(bounds) < 2:
        return False
    template = pickle.dumps(summary, pickle.HIGHEST_PROTOCOL)
    _prepare_metadata(name, bounds[1:])
    children = []
    try:
        for i, start in enumerate(bounds[1:], 1):
            stop = bounds[i + 1] if i + 1 < len(bounds) else None
            children.append(_fork_part(name, template, starts, start, stop))
        parts = [_read_part(name, template, starts, 0, bounds[1])]
        while children:
            parts.append(_collect(children.pop(0)))
    finally:
        for child in children:      # (only when this process failed: an error, a Ctrl-C)
            _stop(child)
    if any(part is None for part in parts):
        return False
    for part in parts:
        summary.merge(part)
    return True


def _prepare_metadata(path: str, starts: list[int]) -> None:
    """Parse the metadata events of the chunks at `starts` and make the ChunkReader's plan and
    walk program of each, before forking: the children find them in the caches (metadata_for,
    metadata_plan, native.program_for) instead of each making them again (~0.02 s of CPU a
    JDK's metadata). Nothing is read into a summary; what cannot be parsed is left to the
    part's reader."""
    from analysis.read.jfr.metadata import metadata_for
    from analysis.read.jfr.plan import metadata_plan
    from analysis.read.jfr.reader import ChunkReader
    from analysis.read.jfr.wire import DECODE_ERRORS, read_varint

    with open(path, "rb") as f:
        for start in starts:
            try:
                header = parse_header(os.pread(f.fileno(), HEADER_SIZE, start), path, start)
                head = os.pread(f.fileno(), 10, start + header.metadata_offset)
                size, _ = read_varint(head, 0)
                if not 0 < size <= header.size - header.metadata_offset:
                    continue
                event = os.pread(f.fileno(), size, start + header.metadata_offset)
                _size, p = read_varint(event, 0)
                type_id, p = read_varint(event, p)
                if type_id != 0:
                    continue
                md = metadata_for(event, p, size)
                plan = metadata_plan(md, ChunkReader.event_fields, ChunkReader.settings_reported)
                kernels = native.get()
                if kernels is not None:
                    native.program_for(md, plan.pool_captures, plan.listed)
            except (JfrError, *DECODE_ERRORS):
                continue


def _fork_part(path: str, template: bytes, starts: list[int], start: int, stop: int | None):
    """(pid, read end of its pipe) of a child reading the part [start, stop) into a summary it
    sends back pickled (nothing when it fails)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            os.close(read_fd)
            part = _read_part(path, template, starts, start, stop)
            if part is not None:
                with open(write_fd, "wb") as pipe:
                    pipe.write(pickle.dumps(part, pickle.HIGHEST_PROTOCOL))
                status = 0
        finally:
            # Not Python's exit: the parent's buffers and handlers are not the child's to run.
            os._exit(status)
    os.close(write_fd)
    return pid, read_fd


def _collect(child):
    """The summary a child sent, or None when it failed."""
    pid, read_fd = child
    try:
        with open(read_fd, "rb") as pipe:
            payload = pipe.read()
    except BaseException:
        _stop((pid, None))
        raise
    _, status = os.waitpid(pid, 0)
    if status != 0 or not payload:
        return None
    try:
        return pickle.loads(payload)
    except Exception:   # (a child cut short while writing: its part is read serially)
        return None


def _stop(child):
    """End a child not collected, and reap it."""
    pid, read_fd = child
    if read_fd is not None:
        os.close(read_fd)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def _read_part(path: str, template: bytes, starts: list[int], start: int, stop: int | None):
    """The summary of the chunks from `start` to `stop` (None: the end of the file), read as
    read_recording reads them after the chunks before; None when that cannot be done here."""
    from analysis.read.jfr.reader import ChunkReader

    summary = _fresh(template)
    reader = ChunkReader(summary)
    expected = None if stop is None else starts.index(stop) - starts.index(start)
    first = True
    with open(path, "rb") as f:
        f.seek(start)
        chunks = read_chunks_from_stream(f, path, None, start)
        try:
            for chunk in chunks:
                if expected is not None and not chunk.complete:
                    return None
                reader.read(chunk)
                if first and reader.metadata is None and start > 0:
                    # No metadata of its own: read it again with the types the serial reader
                    # would have from the chunks before.
                    previous = _last_metadata_before(path, starts, start)
                    if previous is not None:
                        summary = _fresh(template)
                        reader = ChunkReader(summary)
                        reader.metadata = previous
                        reader.read(chunk)
                first = False
                if expected is not None:
                    expected -= 1
                    if expected == 0:
                        break
        except JfrError as exc:
            if stop is not None:
                return None     # (a header the scan found whole: the file changed)
            summary.note_damage(str(exc))
    if expected:
        return None
    return summary


def _last_metadata_before(path: str, starts: list[int], start: int):
    """The metadata of the last chunk before `start` that has one (what a reader carries)."""
    from analysis.read.jfr.reader import ChunkReader
    from analysis.read.jfr.summary import Summary

    probe = ChunkReader(Summary())     # (its warnings are the earlier part's to give)
    with open(path, "rb") as f:     # (not the part's file: its reading goes on after this)
        for offset in reversed(starts[:starts.index(start)]):
            f.seek(offset)
            chunk = next(read_chunks_from_stream(f, path, None, offset))
            md = probe._find_metadata(chunk, len(chunk.data))
            if md is not None:
                return md
    return None


def _fresh(template: bytes):
    summary = pickle.loads(template)
    for s in (summary, summary.warmup):
        if s is not None:
            s.cpu_log = []
    return summary
