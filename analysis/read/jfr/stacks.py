"""The stacks of one event type in a JFR recording, folded: each distinct stack and its weight.

    from analysis.read.jfr.stacks import fold_jfr
    f = fold_jfr(path, event="jdk.ExecutionSample", window=(start_ns, end_ns) or None)

write/folded.py's folded_text(f) is that result as a `.folded` file.

This is the `stackcollapse` of JFR (as FlameGraph has one per profiler): the recording is read by
the same chunk reader as the summary (reader.py), with the chosen event's stack trace (and its
duration, for the off-CPU events) as the fields decoded. Recordings of async-profiler (`-o jfr`)
hold jdk.ExecutionSample events with stack traces in the same pools, and are read the same way.

The result is plain data, the same for the same input:

    schema_version   1
    event            the event type read (STACK_EVENTS)
    unit             "samples" (jdk.ExecutionSample: one per sample) or "ns" (the off-CPU
                     events: the sum of their durations, exact integers; write/folded.py prints ms)
    stacks           {(frame, ...) root first: weight}; a frame is "pkg.Class.method" as the
                     recording names the method (overloads share one name)
    total            the sum of the weights
    events           events with a readable stack; unresolved: events whose stack trace is not in
                     the recording (a chunk cut before its constant pools); their weight is in
                     no stack and not in `total`
    truncated_stacks events whose stack the JVM cut at its stack depth (64 frames by default):
                     their root-most frames are missing, so they fold under another root
    threshold_ms     the recording's threshold for an off-CPU event (the lowest, when several
                     recordings ran: shorter events are not in the file); None when the
                     settings do not say
    period_ms        the sampling period of jdk.ExecutionSample (its Java setting), or None
    window           {start_epoch_s, end_epoch_s} when events were limited to a window
    truncated, damage, covered_until, jdk, warnings, warning_count   as in the JVM summary
                     (derive/jvm_summary.py)

With `window` = (start, end) epoch ns only events that start inside [start, end) count; with
`window_s` = (start, end) the same in seconds from the start of the recording's first chunk.
"""
from __future__ import annotations

import math
import os
from collections import Counter
from itertools import chain
from pathlib import Path

from analysis.errors import JfrError
from analysis.read.jfr import native
from analysis.read.jfr.plan import EVENT_FIELDS
from analysis.read.jfr.reader import ChunkReader
from analysis.read.jfr.summary import SETTINGS_REPORTED, Summary, jdk_label

# Event type -> (unit, the fields read, in the order of the event's fields).
STACK_EVENTS = {
    "jdk.ExecutionSample": ("samples", ("startTime", "stackTrace")),
    "jdk.ThreadPark": ("ns", ("startTime", "duration", "stackTrace")),
    "jdk.JavaMonitorEnter": ("ns", ("startTime", "duration", "stackTrace")),
    "jdk.ThreadSleep": ("ns", ("startTime", "duration", "stackTrace")),
    "jdk.SocketRead": ("ns", ("startTime", "duration", "stackTrace")),
}
CPU_EVENT = "jdk.ExecutionSample"
# Read beside the chosen event: its settings (threshold, period) and the JVM's name.
_ALWAYS = {
    "jdk.ActiveSetting": ("startTime", "id", "name", "value"),
    "jdk.JVMInformation": ("startTime", "jvmName", "jvmVersion"),
}
# The frame of a stack trace with no frames (the JVM records some), so its weight is drawn.
NO_FRAMES = "[no frames]"


class Fold:
    """The folded stacks of one event type: {stack root first: weight} and its event counts."""

    def __init__(self):
        self.stacks: Counter = Counter()
        self.events = 0
        self.unresolved = 0
        self.truncated_stacks = 0

    def add(self, frames, weight, truncated=False, events=1):
        """`events` events with this stack (leaf first, None: not in the recording) weighing
        `weight` together."""
        if frames is None:
            self.unresolved += events
            return
        self.events += events
        if truncated:
            self.truncated_stacks += events
        self.stacks[frames[::-1] or (NO_FRAMES,)] += weight


def folded_result(summary: Summary, event: str, fold: Fold, periods: list[float]) -> dict:
    """fold_jfr's result (the module docstring) of one event type's Fold."""
    unit = STACK_EVENTS[event][0]
    result = {
        "schema_version": 1,
        "event": event,
        "unit": unit,
        "stacks": dict(sorted(fold.stacks.items())),
        "total": sum(fold.stacks.values()),
        "events": fold.events,
        "unresolved": fold.unresolved,
        "truncated_stacks": fold.truncated_stacks,
        "threshold_ms": summary.threshold_in_effect(event) if unit == "ns" else None,
        "period_ms": min(periods) if periods and unit == "samples" else None,
        "truncated": summary.truncated,
        "damage": summary.damage_note,
        "covered_until": None if summary.covered_until_ns is None
        else round(summary.covered_until_ns / 1e9, 6),
        "jdk": jdk_label(summary.jvm_name, summary.jvm_version),
        "warnings": summary.warnings,
        "warning_count": summary.warning_count,
    }
    if summary.window is not None:
        result["window"] = {"start_epoch_s": round(summary.window[0] / 1e9, 6),
                            "end_epoch_s": round(summary.window[1] / 1e9, 6)}
    return result


class StackSummary(Summary):
    """What the reader gives, kept as folded stacks (and the chunk bookkeeping of Summary)."""

    def __init__(self, event: str, window=None, window_s=None):
        super().__init__(None, None)
        self.event = event
        # Events before the window (warm-up) count nowhere here: route() gives None for them.
        self.window = window
        self.window_s = window_s
        self.fold = Fold()

    def note_chunk(self, header, complete, where=None):
        super().note_chunk(header, complete, where)
        if self.window_s is not None and self.window is None:
            # The first chunk is the recording's start (chunks are read in recording order).
            start = header.start_nanos
            end = self.window_s[1]
            self.window = (start + round(self.window_s[0] * 1e9),
                           start + round(end * 1e9) if math.isfinite(end) else 1 << 63)

    def samples(self, frames, weight, truncated=False, events=1):
        self.fold.add(frames, weight, truncated, events)

    def folded(self) -> dict:
        # Summary.setting keeps each event's sampling periods (the summary reports them too)
        return folded_result(self, self.event, self.fold, self.periods.get(self.event, []))


class StackReader(ChunkReader):
    """The chunk reader, decoding the stack trace (and duration) of one event type."""

    def __init__(self, summary: StackSummary):
        super().__init__(summary)
        self.event_fields = {summary.event: STACK_EVENTS[summary.event][1], **_ALWAYS}
        self.settings_reported = frozenset({summary.event})
        # Events per stack trace key (ChunkReader counts samples; durations need their own).
        self._events: dict = {}

    # jdk.ExecutionSample: ChunkReader._on_ExecutionSample counts samples per stack key.

    def _on_duration(self, v):
        target = self._route(v[0])
        if target is None:
            return
        key = v[2] if type(v[2]) is int else None
        weights = self._samples.get(target)
        if weights is None:
            weights = self._samples[target] = Counter()
            self._events[target] = Counter()
        weights[key] += self._span_ns(v[1]) or 0
        self._events[target][key] += 1

    _on_ThreadPark = _on_JavaMonitorEnter = _on_ThreadSleep = _on_SocketRead = _on_duration

    def _resolve_samples(self, names):
        stack = names[0]
        target = self.summary
        weights = self._samples.get(target, {})
        events = self._events.get(target)
        for key, weight in weights.items():
            n = events[key] if events is not None else weight
            frames, truncated = stack(key) or (None, False)
            target.samples(frames, weight, truncated=truncated, events=n)
        self._events = {}


# -- the summary and every event's stacks in one pass (the build: per cell repetition) --------

class FoldingSummary(Summary):
    """A Summary that also folds, inside its window, the stacks of every STACK_EVENTS type:
    the summary is the same as without (the warm-up's stacks are not kept)."""

    def __init__(self, attribution=None, window=None):
        super().__init__(attribution, window)
        self.folds = {event: Fold() for event in STACK_EVENTS}

    def samples(self, frames, count, truncated=False):
        super().samples(frames, count, truncated)
        self.folds[CPU_EVENT].add(frames, count, truncated, count)

    def folded_all(self) -> dict[str, dict]:
        """{event: fold_jfr's result} for every STACK_EVENTS type."""
        return {event: folded_result(self, event, fold, self.periods.get(CPU_EVENT, []))
                for event, fold in self.folds.items()}


# The summary's events with the off-CPU events' stack traces added (in field order, as the
# events write them: startTime, duration, ..., stackTrace).
_FOLDING_FIELDS = {**EVENT_FIELDS,
                   **{e: fields for e, (unit, fields) in STACK_EVENTS.items() if unit == "ns"}}


class FoldingReader(ChunkReader):
    """The summary's chunk reader that also decodes the off-CPU events' stack traces, so one
    walk of the file gives the summary and the stacks of every event (not one walk each)."""

    event_fields = _FOLDING_FIELDS
    settings_reported = SETTINGS_REPORTED | frozenset(STACK_EVENTS)

    def __init__(self, summary: FoldingSummary):
        super().__init__(summary)
        # event -> {stack trace key: [summed ns, events]}, of the chunk being read
        self._off_cpu: dict[str, dict] = {}
        # The chunk's parks: the window's by stack trace key as _off_cpu's, the warm-up's
        # [summed ns, events]. The summary's park figures are their sums (_resolve_samples).
        self._parks: dict = {}
        self._warmup_parks = [0, 0]

    def _tally(self, event, key, span_ns):
        """One event of the window (the warm-up's and the drain's stacks are not kept)."""
        key = key if type(key) is int else None
        per_key = self._off_cpu.get(event)
        if per_key is None:
            per_key = self._off_cpu[event] = {}
        tally = per_key.get(key)
        if tally is None:
            tally = per_key[key] = [0, 0]
        tally[0] += span_ns or 0
        tally[1] += 1

    # Parks are the most frequent off-CPU events (~10k a run in runs/pool-vs-virtual): one
    # call each, routed as ChunkReader._route does, and only tallied here; the summary is
    # given each chunk's sums (integers: the same figures as one park at a time).
    def _on_ThreadPark(self, v):
        window = self._window_ticks
        if window is not None:
            t = v[0]
            if type(t) is not int or t >= window[1]:
                return
            if t < window[0]:
                if self.summary.warmup is not None:
                    warmup = self._warmup_parks
                    d = v[1]
                    warmup[0] += d * 1_000_000_000 // self._clock[2] if type(d) is int else 0
                    warmup[1] += 1
                return
        key = v[2] if type(v[2]) is int else None
        tally = self._parks.get(key)
        if tally is None:
            tally = self._parks[key] = [0, 0]
        d = v[1]
        tally[0] += d * 1_000_000_000 // self._clock[2] if type(d) is int else 0
        tally[1] += 1

    def _batch_ThreadPark(self, rows):
        """_on_ThreadPark of a chunk's parks the walk listed (ChunkReader._batch_*), summed by
        stack trace key in C (native.Kernels.tally) where it can."""
        tps = self._clock[2]
        kernels = native.get()
        tallied = kernels.tally(rows, self._window_ticks, tps) if kernels is not None else None
        if tallied is not None:
            by_key, (early_ns, early) = tallied
            if early and self.summary.warmup is not None:
                self._warmup_parks[0] += early_ns
                self._warmup_parks[1] += early
            parks = self._parks
            for key, ns, n in by_key:
                tally = parks.get(key)
                if tally is None:
                    parks[key] = [ns, n]
                else:
                    tally[0] += ns
                    tally[1] += n
            return
        for target, events in self._split(rows):
            if target is not self.summary:      # the warm-up's: summed, their stacks not kept
                self._warmup_parks[0] += sum(v[1] * 1_000_000_000 // tps for v in events)
                self._warmup_parks[1] += len(events)
                continue
            parks = self._parks
            for _t, d, key, _ in events:
                tally = parks.get(key)
                if tally is None:
                    tally = parks[key] = [0, 0]
                tally[0] += d * 1_000_000_000 // tps
                tally[1] += 1

    def _on_JavaMonitorEnter(self, v):
        if super()._on_JavaMonitorEnter(v) is self.summary:
            self._tally("jdk.JavaMonitorEnter", v[2], self._span_ns(v[1]))

    def _on_ThreadSleep(self, v):
        if self._route(v[0]) is self.summary:
            self._tally("jdk.ThreadSleep", v[2], self._span_ns(v[1]))

    def _on_SocketRead(self, v):
        if self._route(v[0]) is self.summary:
            self._tally("jdk.SocketRead", v[2], self._span_ns(v[1]))

    def _stack_keys(self):
        return chain(super()._stack_keys(), self._parks,
                     chain.from_iterable(self._off_cpu.values()))

    def _resolve_samples(self, names):
        super()._resolve_samples(names)
        if self._warmup_parks[1]:
            self.summary.warmup.parks(*self._warmup_parks)
            self._warmup_parks = [0, 0]
        if self._parks:
            self.summary.parks(sum(ns for ns, _n in self._parks.values()),
                               sum(n for _ns, n in self._parks.values()))
            self._off_cpu["jdk.ThreadPark"] = self._parks
            self._parks = {}
        if not self._off_cpu:
            return
        stack = names[0]
        for event, per_key in sorted(self._off_cpu.items()):
            fold = self.summary.folds[event]
            for key, (ns, n) in per_key.items():
                frames, truncated = stack(key) or (None, False)
                fold.add(frames, ns, truncated=truncated, events=n)
        self._off_cpu = {}


def fold_jfr(path: str | os.PathLike, event: str = CPU_EVENT,
             window: tuple[int, int] | None = None,
             window_s: tuple[float, float] | None = None) -> dict:
    """The folded stacks of `event` in one recording (see the module docstring); JfrError when
    the recording cannot be read or the event is not one of STACK_EVENTS."""
    from analysis.read.jfr import read_recording
    from analysis.read.jfr.export import is_json_export

    p = Path(path)
    if event not in STACK_EVENTS:
        raise JfrError(f"no stacks are folded for event {event!r}", path=p,
                       hint="use one of " + ", ".join(STACK_EVENTS))
    for name, w in (("window", window), ("window_s", window_s)):
        if w is not None and not (w[0] < w[1]):
            raise JfrError(f"{name} {w!r}: the start is not before the end", path=p)
    if not p.exists():
        raise JfrError("no such file or folder", path=p)
    try:
        if p.is_file() and is_json_export(p):
            raise JfrError("a `jfr print --json` export holds no stack pools to fold", path=p,
                           hint="fold the .jfr recording itself")
    except OSError as exc:
        raise JfrError(f"cannot read: {exc.strerror or exc}", path=p) from None
    summary = StackSummary(event, window, window_s)
    read_recording(p, StackReader(summary))
    return summary.folded()
