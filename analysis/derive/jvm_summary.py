"""What the report says of one JFR recording: the JVM summary, computed from what a reader
recorded of its events (read/jfr/summary.py's Summary, filled by read_jfr in one pass).

    from analysis.derive.jvm_summary import summarize_jfr
    s = summarize_jfr(path, attribution=[(regex, label), ...] or None)

`path` is anything read_jfr reads (analysis/read/jfr/__init__.py): a `.jfr`, a `.jfr.gz`, a JFR
repository folder, or a small `jfr print --json` export. Raises `analysis.errors.JfrError`
(naming the file and byte offset) when nothing can be read.

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

import math
import os

from analysis.read.jfr import read_jfr
from analysis.read.jfr.summary import UNMATCHED_LABEL, Summary, jdk_label

NS_PER_MS = 1_000_000
MIB = 1 << 20
HOT_METHODS = 20
# The figures of the warm-up (everything before a window) kept beside the window's.
WARMUP_KEYS = ("gc", "safepoint", "cpu", "allocation_rate_mb_s", "threads", "samples")


def percentile_nearest_rank(values: list[float], pct: float) -> float | None:
    """The smallest value with at least pct % of values at or below it (nearest rank)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100.0 * len(ordered)))
    return ordered[rank - 1]


def _r(x, digits=6):
    return None if x is None else round(float(x), digits)


def summarize_jfr(path: str | os.PathLike, attribution: list[tuple[str, str]] | None = None,
                  window: tuple[int, int] | None = None) -> dict:
    """The summary of one recording (the module docstring); JfrError when unreadable. With
    `window` = (start, end) epoch ns, only events that start inside it are counted."""
    return jvm_summary(read_jfr(path, attribution, window))


def summarize_and_fold(path: str | os.PathLike, attribution=None,
                       window: tuple[int, int] | None = None) -> tuple[dict, dict[str, dict]]:
    """(summarize_jfr's summary, {event: fold_jfr's result} for every STACK_EVENTS type) of
    one recording, read once; JfrError as summarize_jfr."""
    # Imported here so that `import analysis.derive.jvm_summary` (the jfr command's --help)
    # stays cheap: the folding reader loads the whole chunk reader.
    from analysis.read.jfr.stacks import FoldingReader, FoldingSummary
    summary = FoldingSummary(attribution, window)
    read_jfr(path, attribution, window, summary=summary, reader=FoldingReader)
    return jvm_summary(summary), summary.folded_all()


def jvm_summary(summary: Summary, allocation_span_s: float | None = None) -> dict:
    """The summary of a recording's record (the module docstring). The allocation rate is over
    `allocation_span_s` when given, else over the window's covered part, else the recording."""
    if summary.phase_pauses:
        pauses = sorted(summary.phase_pauses)
        pause_source = "jdk.GCPhasePause"
    else:
        pauses = sorted(summary.gc_events)
        pause_source = "jdk.GarbageCollection"
    pause_ms = [d / NS_PER_MS for _, d in pauses]
    duration_s = None
    spans = summary.covered_spans()
    if spans:
        duration_s = sum(b - a for a, b in spans) / 1e9
    window = warmup = None
    if summary.window is not None and duration_s is not None:
        w0, w1 = summary.window
        covered_s = sum(max(0, min(w1, b) - max(w0, a)) for a, b in spans) / 1e9
        window = {"start_epoch_s": _r(w0 / 1e9), "end_epoch_s": _r(w1 / 1e9),
                  "covered_s": _r(covered_s)}
        before_s = sum(max(0, min(w0, b) - a) for a, b in spans) / 1e9
        # The recording's settings (thresholds, enabled events) hold for the warm-up too.
        summary.warmup.thresholds, summary.warmup.enabled = summary.thresholds, summary.enabled
        summary.warmup.periods = summary.periods
        full = jvm_summary(summary.warmup, allocation_span_s=before_s)
        warmup = {"duration_s": _r(before_s), **{k: full[k] for k in WARMUP_KEYS}}
        allocation_span_s = covered_s
    span_s = duration_s if allocation_span_s is None else allocation_span_s
    alloc_rate = None
    # With a window, no sample inside it while the recording has some means a rate near 0
    # (the event is throttled), not "not recorded".
    recorded = summary.allocation_events or (summary.warmup is not None
                                          and summary.warmup.allocation_events)
    if recorded and span_s and span_s > 0:
        alloc_rate = summary.allocation_weight / MIB / span_s
    # Percentages are of the samples whose stacks resolved (a chunk cut before its constant
    # pool leaves some without); `samples.unresolved` says how many were left out.
    n = summary.sample_count - summary.samples_unresolved
    # (Counter's `[]` of a missing method calls its Python __missing__; `.get` is dict's)
    self_of, total_of = summary.self_counts.get, summary.total_counts.get
    hot = sorted(summary.self_counts.keys() | summary.total_counts.keys(),
                 key=lambda m: (-self_of(m, 0), -total_of(m, 0), m))
    by_total = sorted(summary.total_counts.keys(),
                      key=lambda m: (-total_of(m, 0), -self_of(m, 0), m))

    # A share is rounded once per distinct count (float rounding is a decimal conversion, ~1k
    # instructions, and most methods of a recording have a few samples each), and a method in
    # both tables is one row computed, copied (the two tables' rows stay separate objects).
    pct: dict[int, float] = {}
    rows: dict[str, dict] = {}

    def share(count):
        got = pct.get(count)
        if got is None:
            got = pct[count] = _r(100.0 * count / n, 3)
        return got

    def row(m):
        made = rows.get(m)
        if made is not None:
            return dict(made)
        made = rows[m] = {"method": m,
                          "self_samples": self_of(m, 0),
                          "self_pct": share(self_of(m, 0)),
                          "total_samples": total_of(m, 0),
                          "total_pct": share(total_of(m, 0))}
        return made
    hot_methods = [row(m) for m in hot[:HOT_METHODS]] if n else []
    hot_methods_by_total = [row(m) for m in by_total[:HOT_METHODS]] if n else []
    attribution = None
    if summary.attribution:
        order = [label for _, label in summary.attribution]
        labels = list(dict.fromkeys(order + [UNMATCHED_LABEL]))
        attribution = [{"label": label, "samples": summary.label_counts[label],
                        "pct": _r(100.0 * summary.label_counts[label] / n, 3) if n else None}
                       for label in labels]
    cpu = {"jvm_user": None, "jvm_system": None, "machine": None, "samples": summary.cpu_n}
    if summary.cpu_n:
        cpu.update(jvm_user=_r(summary.cpu_sums[0] / summary.cpu_n),
                   jvm_system=_r(summary.cpu_sums[1] / summary.cpu_n),
                   machine=_r(summary.cpu_sums[2] / summary.cpu_n))
    result = {
        "schema_version": 1,
        "source": "recording" if summary.export_types is None else "jfr print --json export",
        "jdk": jdk_label(summary.jvm_name, summary.jvm_version),
        "start_epoch_s": _r(summary.start_ns / 1e9) if summary.start_ns is not None else None,
        "duration_s": _r(duration_s),
        "covered_until": _r(summary.covered_until_ns / 1e9)
        if summary.covered_until_ns is not None else None,
        "truncated": summary.truncated,
        "damage": summary.damage_note,
        "chunks": summary.chunks,
        "gaps": [[_r(a / 1e9), _r(b / 1e9)] for (_, a), (b, _) in zip(spans, spans[1:])],
        "gc": {
            "count": summary.gc_count,
            "pause_total_ms": _r(summary.gc_pause_total_ns / NS_PER_MS),
            "pause_max_ms": _r(summary.gc_pause_max_ns / NS_PER_MS),
            "pause_p99_ms": _r(percentile_nearest_rank(pause_ms, 99)),
            "pause_count": len(pauses),
            "pause_source": pause_source,
            "pauses": [[_r(t / 1e9), _r(d / NS_PER_MS)] for t, d in pauses],
            "heap_used_after_gc_max_mb": _r(summary.heap_after_max / MIB)
            if summary.heap_after_max is not None else None,
            "heap_used_after_gc_mean_mb": _r(summary.heap_after_sum / summary.heap_after_count
                                             / MIB) if summary.heap_after_count else None,
        },
        "safepoint": {
            "count": summary.safepoint_count,
            "total_ms": _r(summary.safepoint_total_ns / NS_PER_MS),
            "threshold_ms": summary.threshold_in_effect("jdk.SafepointBegin"),
            "recorded": "true" in summary.enabled.get("jdk.SafepointBegin", ())
            or summary.safepoint_count > 0,
        },
        "cpu": cpu,
        "allocation_rate_mb_s": _r(alloc_rate, 3),
        "allocation_samples": summary.allocation_events,
        "allocation_bytes": summary.allocation_weight if summary.allocation_events else None,
        "threads": {
            "parked_ms": _r(summary.park_ns / NS_PER_MS),
            "park_events": summary.park_count,
            "park_threshold_ms": summary.threshold_in_effect("jdk.ThreadPark"),
            "monitor_blocked_ms": _r(summary.monitor_ns / NS_PER_MS),
            "monitor_events": summary.monitor_count,
            "monitor_threshold_ms": summary.threshold_in_effect("jdk.JavaMonitorEnter"),
        },
        "samples": {"count": summary.sample_count, "unresolved": summary.samples_unresolved,
                    "truncated_stacks": summary.samples_truncated,
                    "period_ms": summary.threshold_in_effect("jdk.ExecutionSample", summary.periods)},
        "hot_methods": hot_methods,
        "hot_methods_by_total": hot_methods_by_total,
        "attribution": attribution,
        "warnings": summary.warnings,
        "warning_count": summary.warning_count,
    }
    if summary.window is not None:
        result["window"] = window
        result["warmup"] = warmup
    if summary.export_types is not None:
        _blank_unexported(result, summary.export_types)
    return result


def _blank_unexported(result: dict, exported: set[str]) -> None:
    """In an export, a missing event type says nothing about the JVM: those figures are None."""
    if "jdk.SafepointBegin" not in exported:
        result["safepoint"].update(count=None, total_ms=None, recorded=False)
    if "jdk.ObjectAllocationSample" not in exported:
        result["allocation_samples"] = None
    if "jdk.ThreadPark" not in exported:
        result["threads"].update(parked_ms=None, park_events=None)
    if "jdk.JavaMonitorEnter" not in exported:
        result["threads"].update(monitor_blocked_ms=None, monitor_events=None)
    if "jdk.ExecutionSample" not in exported:
        result["samples"]["count"] = None
    if "jdk.GarbageCollection" not in exported:
        result["gc"].update(count=None, pause_total_ms=None, pause_max_ms=None)
