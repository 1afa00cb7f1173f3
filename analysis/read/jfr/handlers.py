"""What the chunk reader does with each event it reads: the event's values routed to the
summary it counts in (the window, the warm-up, none), one event at a time (`_on_<type>`) or a
chunk's events of one type at once (`_batch_<type>`, the frequent ones the compiled walk lists).

reader.ChunkReader reads chunks with these; a subclass reading more events (stacks.py) adds or
overrides handlers. The handlers need of the reader: `summary`, the chunk's `_clock` (start
nanos, start ticks, ticks per second) and `_window_ticks`, `_samples` (execution samples by
stack trace key, per summary), `setting_events` and the chunk's `_data`.
"""
from __future__ import annotations

from collections import Counter

from analysis.read.jfr import native
from analysis.read.jfr.summary import as_int, as_number, as_str
from analysis.read.jfr.wire import read_string


def short_text(data: bytes, at: int):
    """read_string(data, at)[0], the JVM's usual setting name or value (UTF-8 or a char array
    of ASCII, under 128 bytes, or empty: ~1,200 a run) read without read_string's calls."""
    encoding = data[at]
    if encoding == 3 or encoding == 4:
        n = data[at + 1]
        raw = bytes(data[at + 2:at + 2 + n])
        if n < 128 and len(raw) == n and raw.isascii():
            return raw.decode("ascii")
    elif encoding == 1:
        return ""
    elif encoding == 0:
        return None
    return read_string(data, at)[0]


class EventHandlers:
    """The event handlers of reader.ChunkReader (its base class: split from reader.py, which
    had grown to the module size cap)."""

    # -- event handlers: values arrive in the order plan.EVENT_FIELDS lists them ----------------
    # A damaged metadata event can give a field another type than the JDK's; values reach the
    # summary only as the numbers (or strings) it expects, anything else as "absent".
    def _epoch_ns(self, ticks):
        if type(ticks) is not int:
            return None
        start_nanos, start_ticks, tps = self._clock
        return start_nanos + (ticks - start_ticks) * 1_000_000_000 // tps

    def _first_tick_at(self, ns):
        """The least tick whose _epoch_ns is `ns` or later: floor((t - start_ticks) * 1e9 / tps)
        >= ns - start_nanos exactly when (t - start_ticks) * 1e9 >= (ns - start_nanos) * tps."""
        start_nanos, start_ticks, tps = self._clock
        return start_ticks - (start_nanos - ns) * tps // 1_000_000_000

    def _span_ns(self, ticks):
        return ticks * 1_000_000_000 // self._clock[2] if type(ticks) is int else None

    def _route(self, ticks):
        """The summary an event at `ticks` counts in: Summary.route of its _epoch_ns."""
        s = self.summary
        window = self._window_ticks
        if window is None:
            return s
        if type(ticks) is not int:
            return None
        if ticks < window[0]:
            return s.warmup
        return s if ticks < window[1] else None

    def _on_ExecutionSample(self, v):
        target = self._route(v[0])
        if target is None:
            return
        key = v[1]
        counts = self._samples.get(target)
        if counts is None:
            counts = self._samples[target] = Counter()
        counts[key if type(key) is int else None] += 1

    def _on_ObjectAllocationSample(self, v):
        target = self._route(v[0])
        if target is not None:
            target.allocation(as_int(v[1]))

    def _on_CPULoad(self, v):
        target = self._route(v[0])
        if target is not None:
            target.cpu(as_number(v[1]), as_number(v[2]), as_number(v[3]))

    def _batch_CPULoad(self, rows):
        # (one a second, ~20 a recording: they were the loop's most frequent event decoded
        # field by field in Python)
        loads = native.floats_of(rows)
        route = self._route
        for i in range(0, len(rows), native.EVENT_VALUES):
            target = route(rows[i])
            if target is not None:
                target.cpu(as_number(loads[i + 1]), as_number(loads[i + 2]),
                           as_number(loads[i + 3]))

    def _on_GarbageCollection(self, v):
        start = self._epoch_ns(v[0])
        target = self.summary.route(start)
        if target is not None:
            target.garbage_collection(start, self._span_ns(v[1]), self._span_ns(v[2]))

    def _on_GCPhasePause(self, v):
        start = self._epoch_ns(v[0])
        target = self.summary.route(start)
        if target is not None:
            target.gc_pause(start, self._span_ns(v[1]))

    def _on_GCHeapSummary(self, v):
        # `when` is a key into the GCWhen pool, whose checkpoint may come later in the chunk.
        target = self._route(v[0])
        if target is not None:
            target.heap_summary(("pool", "jdk.types.GCWhen", as_int(v[1])), as_int(v[2]))

    def _on_SafepointBegin(self, v):
        start = self._epoch_ns(v[0])
        target = self.summary.route(start)
        if target is not None:
            target.safepoint(start, self._span_ns(v[1]))

    # -- the same, a chunk's events of one type at once (rows: native.EVENT_VALUES values an
    # event, in their order; the sums are integers, so the same as one event at a time)
    def _split(self, rows):
        """[(summary, [values of each of its events])]: the events of `rows` by where they
        count (_route; Summary.route of their epoch time decides the same)."""
        events = list(zip(*[iter(rows)] * native.EVENT_VALUES))
        window = self._window_ticks
        s = self.summary
        if window is None:
            return [(s, events)]
        lo, hi = window
        split = [(s, [v for v in events if lo <= v[0] < hi])]
        if s.warmup is not None:
            split.append((s.warmup, [v for v in events if v[0] < lo]))
        return split

    def _batch_ExecutionSample(self, rows):
        for target, events in self._split(rows):
            if events:
                counts = self._samples.get(target)
                if counts is None:
                    counts = self._samples[target] = Counter()
                counts.update([v[1] for v in events])

    def _split_sums(self, rows, tps=1_000_000_000):
        """[(summary, events, sum of their floor(value 1 * 1e9 / tps))] of _split's parts (at
        the default tps, the values' plain sum), summed in C (native.Kernels.tally: ~8k
        allocation samples a run were a tuple each) where it can, else as _split's."""
        kernels = native.get()
        tallied = kernels.tally(rows, self._window_ticks, tps) if kernels is not None else None
        if tallied is None:
            return [(target, len(events), sum(v[1] * 1_000_000_000 // tps for v in events))
                    for target, events in self._split(rows)]
        by_key, (early_sum, early) = tallied
        s = self.summary
        split = [(s, sum(n for _k, _ns, n in by_key), sum(ns for _k, ns, _n in by_key))]
        if self._window_ticks is not None and s.warmup is not None:
            split.append((s.warmup, early, early_sum))
        return split

    def _batch_ObjectAllocationSample(self, rows):
        for target, events, total in self._split_sums(rows):
            target.allocations(events, total)

    def _batch_GCHeapSummary(self, rows):
        for target, events in self._split(rows):
            target.heap_summaries([(("pool", "jdk.types.GCWhen", v[1]), v[2]) for v in events])

    def _batch_GarbageCollection(self, rows):
        start_nanos, start_ticks, tps = self._clock
        for target, events in self._split(rows):
            for v in events:
                target.garbage_collection(
                    start_nanos + (v[0] - start_ticks) * 1_000_000_000 // tps,
                    v[1] * 1_000_000_000 // tps, v[2] * 1_000_000_000 // tps)

    def _batch_GCPhasePause(self, rows):
        start_nanos, start_ticks, tps = self._clock
        for target, events in self._split(rows):
            target.gc_pauses([(start_nanos + (v[0] - start_ticks) * 1_000_000_000 // tps,
                               v[1] * 1_000_000_000 // tps) for v in events])

    def _batch_ThreadPark(self, rows):
        for target, events, total_ns in self._split_sums(rows, self._clock[2]):
            target.parks(total_ns, events)

    def _batch_SafepointBegin(self, rows):
        for target, events, total_ns in self._split_sums(rows, self._clock[2]):
            target.safepoints(events, total_ns)

    # These two return the summary the event counted in (None: none), so that a subclass
    # reading the same event for more (stacks.FoldingReader's monitor waits; its parks have a
    # handler of their own) does not route it again.
    def _on_ThreadPark(self, v):
        target = self._route(v[0])
        if target is None:
            return None
        ticks = v[1]
        target.park(ticks * 1_000_000_000 // self._clock[2] if type(ticks) is int else None)
        return target

    def _on_JavaMonitorEnter(self, v):
        target = self._route(v[0])
        if target is not None:
            target.monitor_enter(self._span_ns(v[1]))
        return target

    def _on_ActiveSetting(self, v):
        event_name = self.setting_events.get(v[1]) if type(v[1]) is int else None
        if event_name is not None:
            self.summary.setting(event_name, as_str(v[2]), as_str(v[3]))

    def _on_ActiveSetting_listed(self, v):
        # name and value are offsets: decoded only for the settings the summary reports
        event_name = self.setting_events.get(v[1])
        if event_name is not None:
            data = self._data
            self.summary.setting(event_name, as_str(short_text(data, v[2])),
                                 as_str(short_text(data, v[3])))

    def _with_strings(self, handler, strings):
        def listed(v):
            v = list(v)
            for k in strings:
                v[k] = short_text(self._data, v[k])
            handler(v)
        return listed

    @staticmethod
    def _with_floats(handler, floats):
        def listed(v):
            as_floats = native.floats_of(v)
            v = list(v)
            for k in floats:
                v[k] = as_floats[k]
            handler(v)
        return listed

    def _on_JVMInformation(self, v):
        self.summary.jvm(as_str(v[1]), as_str(v[2]))
