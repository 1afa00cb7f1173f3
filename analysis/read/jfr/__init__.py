"""Read JDK Flight Recorder recordings (in Python, no JDK) and summarise what the JVM did.

    from analysis.read.jfr import summarize_jfr
    s = summarize_jfr(path, attribution=[(regex, label), ...] or None)

`path` is a `.jfr` file, a `.jfr.gz`, a JFR repository folder of chunk files (what a JVM killed
mid-run leaves; read in file-name order), or a small `jfr print --json` export (`.json`).
Raises `analysis.errors.JfrError` (naming the file and byte offset) when nothing can be read.
The constant pools and the frequent events are walked by a small compiled helper where the
system has a C compiler (native.py; `LOADCURVE_NATIVE=0` turns it off), with the same results as
the Python reader alone.

The result is plain JSON-serialisable data, the same for the same input:

    schema_version    1
    jdk               "OpenJDK 64-Bit Server VM 17.0.15+6-..." (jdk.JVMInformation) or None
    start_epoch_s     recording start (first chunk), epoch seconds
    duration_s        the time the chunks cover: the sum of their spans, where chunks that
                      start within 1 s of the data before them join it (a recording's chunks
                      follow each other; chunks of different times joined into one file or
                      folder do not, and the gaps between them count nowhere)
    gaps              [[end of data, start of the next chunk], ...] epoch s, one per gap (each
                      also a warning); [] for one continuous recording
    covered_until     epoch seconds up to which data was read: the end of the last whole chunk,
                      or, for a chunk without its end, the last event time read
    truncated         True when a chunk was cut short or never finished (JVM killed)
    damage            where reading stopped ("file: byte N: what"), or None
    chunks            chunks read
    gc.count          jdk.GarbageCollection events
    gc.pause_total_ms sum of their sumOfPauses
    gc.pause_max_ms   largest longestPause
    gc.pause_p99_ms   nearest-rank p99 of the individual pauses (jdk.GCPhasePause durations, or
                      each collection's sumOfPauses when GCPhasePause was not recorded)
    gc.pauses         [[start epoch s, duration ms], ...] sorted by time, for latency charts
    gc.pause_source   which event the pause list came from
    gc.heap_used_after_gc_max_mb / _mean_mb   jdk.GCHeapSummary "After GC" heapUsed, MiB
    safepoint         count, total_ms (jdk.SafepointBegin durations), threshold_ms, recorded
                      (False: the recording's settings left the event off, e.g. default.jfc)
    cpu               jvm_user, jvm_system, machine: means of jdk.CPULoad (fractions 0..1);
                      samples: how many CPULoad events
    allocation_rate_mb_s   sum of jdk.ObjectAllocationSample weights / duration_s, MiB/s
                      (None when the event is absent, e.g. JDK 11-15)
    threads           parked_ms (jdk.ThreadPark), monitor_blocked_ms (jdk.JavaMonitorEnter),
                      their event counts, and park_threshold_ms / monitor_threshold_ms: the
                      recording's thresholds; shorter waits were not recorded
    samples           count of jdk.ExecutionSample, unresolved (no stack), truncated_stacks;
                      period_ms: the recording's sampling period (its jdk.ActiveSetting; None
                      in an export, which carries no settings)
    hot_methods       top 20 [{method "pkg.Class.method", self_samples, self_pct,
                      total_samples, total_pct}], self = leaf frame, total = anywhere in stack
                      (counted once per sample); overloads share one name; sorted by self
    hot_methods_by_total   the same rows, top 20 by total samples (callers: where time is spent
                      beneath a method)
    attribution       None without patterns; else [{label, samples, pct}] in pattern order then
                      "other": each sample goes to the first frame, leaf to root, whose
                      "pkg.Class.method" name fully matches a pattern (patterns tried in order)
    warnings          up to 20 "file: byte N: what" notes on events skipped; warning_count

With `window=(start_ns, end_ns)` (epoch nanoseconds, e.g. a cell's measured window from its
`.hlog` or counts.json), every figure above counts only events whose start time falls inside
[start, end): GC (a collection counts where it starts), safepoints, CPU load samples,
allocation (its rate over the covered part of the window), parks, monitors, execution samples and
hot methods. Event times are JFR ticks turned into epoch time with each chunk's header (start
nanos, start ticks, ticks per second), the clock the `.hlog`'s StartTime is on. Two more keys:

    window            {start_epoch_s, end_epoch_s, covered_s: the part the chunks cover}
    warmup            the same gc, safepoint, cpu, allocation_rate_mb_s, threads and samples
                      figures for everything before the window (JVM start and the load
                      generator's warm-up), and its duration_s; events after the window (the
                      drain) count nowhere

`start_epoch_s`, `duration_s` and `covered_until` still describe the whole recording.

Times are epoch seconds so that pauses can be drawn on the latency-over-time chart of the
same load point. MiB = 2^20 bytes.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from analysis.errors import JfrError

__all__ = ["summarize_jfr", "read_recording", "JfrError"]


def summarize_jfr(path: str | os.PathLike,
                  attribution: list[tuple[str, str]] | None = None,
                  window: tuple[int, int] | None = None, summary=None, reader=None) -> dict:
    """The summary of one recording (see the module docstring); JfrError when unreadable.
    With `window` = (start, end) epoch ns, only events that start inside it are counted.
    `summary` and `reader` (a Summary made with the same attribution and window, and a
    ChunkReader class) let a caller collect more in the same pass: stacks.summarize_and_fold."""
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
    summary = summary if summary is not None else Summary(attribution, window)
    try:
        if p.is_file() and is_json_export(p):
            summarize_export(p, summary)
            return summary.result()
    except OSError as exc:
        raise JfrError(f"cannot read: {exc.strerror or exc}", path=p) from None
    read_recording(p, (reader or ChunkReader)(summary))
    return summary.result()


def read_recording(p: Path, reader) -> None:
    """Feed every chunk of recording `p` to `reader` (a reader.ChunkReader), keeping what the
    chunks before a damaged one gave; JfrError when nothing at all can be read."""
    from analysis.read.jfr.chunks import iter_chunks

    summary = reader.summary
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
            summary.truncated = True
            summary.damage_note = str(exc)
    except OSError as exc:
        raise JfrError(f"cannot read: {exc.strerror or exc}", path=p) from None
    if chunks_read == 0:
        raise JfrError("empty file", path=p, offset=0)
    if summary.covered_until_ns is None:
        raise JfrError(f"no event could be read ({summary.damage_note})", path=p)
    summary.close_chunks()
