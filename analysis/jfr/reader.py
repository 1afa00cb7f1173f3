"""Reading one chunk: its metadata, its constant pools, and the events the summary needs.

The chunk is walked once from front to back. Every event starts with its size and type id (both
varints), so events of types the summary does not use are stepped over by their size without
being decoded. Checkpoint events (type 1) carry constant-pool entries (stack traces, methods,
class names ...); only the pools the summary resolves are kept, the others are stepped over
entry by entry with skippers generated from the metadata. Walking forward (rather than following
the header's chain of checkpoints back from the end, as the JDK does) is what lets a chunk
without its end still give every whole event before the damage.

Values that refer to constant pools are resolved when the chunk ends, because the JVM writes a
segment's constants after the events that use them.
"""
from __future__ import annotations

import struct
from collections import Counter

from analysis.jfr.chunks import HEADER_SIZE, Chunk
from analysis.jfr.metadata import Metadata, parse_metadata
from analysis.jfr.summary import Summary
from analysis.jfr.wire import Damage, StringRef, read_varint

METADATA_TYPE = 0
CHECKPOINT_TYPE = 1

# Event types the summary reads, and the fields it takes from each (by name, looked up in each
# chunk's metadata, so a field added or moved by a newer JDK is still found).
EVENT_FIELDS = {
    "jdk.GarbageCollection": ("startTime", "duration", "sumOfPauses", "longestPause"),
    "jdk.GCPhasePause": ("startTime", "duration"),
    "jdk.GCHeapSummary": ("startTime", "when", "heapUsed"),
    "jdk.SafepointBegin": ("startTime", "duration"),
    "jdk.CPULoad": ("startTime", "jvmUser", "jvmSystem", "machineTotal"),
    "jdk.ObjectAllocationSample": ("startTime", "weight"),
    "jdk.ThreadPark": ("startTime", "duration"),
    "jdk.JavaMonitorEnter": ("startTime", "duration"),
    "jdk.ExecutionSample": ("startTime", "stackTrace"),
    "jdk.ActiveSetting": ("startTime", "id", "name", "value"),
    "jdk.JVMInformation": ("startTime", "jvmName", "jvmVersion"),
}

# Constant pools the summary resolves: name -> fields kept from each entry.
POOL_FIELDS = {
    "jdk.types.StackTrace": ("truncated", "frames"),
    "jdk.types.Method": ("type", "name"),
    "java.lang.Class": ("name",),
    "jdk.types.Symbol": ("string",),
    "jdk.types.GCWhen": ("when",),
    "java.lang.String": (),
}


class ChunkReader:
    """Reads chunks one after another into a Summary, keeping the last metadata (a chunk cut
    before its metadata event can still be read with the previous chunk's types)."""

    def __init__(self, summary: Summary):
        self.summary = summary
        self.metadata: Metadata | None = None
        self._plan_for: Metadata | None = None

    # -- per metadata: which type ids to decode, and how ------------------------------------
    def _plan(self, md: Metadata):
        if self._plan_for is md:
            return
        self.event_plans = {}
        for name, wanted in EVENT_FIELDS.items():
            cls = md.by_name.get(name)
            if cls is None:
                continue
            idx = tuple(cls.field_index(f) for f in wanted)
            self.event_plans[cls.type_id] = (name, md.decoder(cls.type_id), idx)
        self.pool_plans = {}
        for name, wanted in POOL_FIELDS.items():
            cls = md.by_name.get(name)
            if cls is None:
                continue
            idx = tuple(cls.field_index(f) for f in wanted)
            extra = None
            if name == "jdk.types.StackTrace" and idx[1] is not None:
                frame_cls = md.classes.get(cls.fields[idx[1]].type_id)
                extra = frame_cls.field_index("method") if frame_cls else None
            self.pool_plans[cls.type_id] = (name, md.decoder(cls.type_id), idx, extra)
        self.string_pool_type = md.string_type_id
        self.first_field_is_start_time = {
            c.type_id for c in md.classes.values()
            if c.fields and c.fields[0].name == "startTime" and c.super_type == "jdk.jfr.Event"}
        self._plan_for = md

    # -- one chunk ----------------------------------------------------------------------------
    def read(self, chunk: Chunk) -> None:
        s = self.summary
        h = chunk.header
        data = chunk.data
        end = min(len(data), h.size) if chunk.complete or HEADER_SIZE < h.size <= len(data) \
            else len(data)
        if not chunk.complete and HEADER_SIZE < h.size <= len(data) and not h.finished:
            # A JVM killed mid-chunk: the header's size is its last flush, where metadata and
            # constants are consistent; bytes after it may be half written. Read to the end of
            # the file anyway and stop at the first event that is not whole.
            end = len(data)
        s.note_chunk(h, chunk.complete)

        md = self._find_metadata(chunk, end)
        if md is None:
            s.damage(chunk.path, chunk.offset + HEADER_SIZE,
                     "chunk has no readable metadata event; its events cannot be decoded")
            return
        self.metadata = md
        self._plan(md)
        # With the types known the chunk is readable from its start, even if no event follows.
        s.cover_until(h.start_nanos)

        start_nanos, start_ticks, tps = h.start_nanos, h.start_ticks, h.ticks_per_second
        pools: dict[int, dict] = {tid: {} for tid in self.pool_plans}
        samples: Counter = Counter()
        plans = self.event_plans
        need_times = not chunk.complete
        timed = self.first_field_is_start_time
        last_ticks = None

        pos = HEADER_SIZE
        while pos < end:
            event_start = pos
            try:
                b = data[pos]
                if b < 128:
                    size = b
                    p = pos + 1
                else:
                    size, p = read_varint(data, pos)
                b = data[p]
                if b < 128:
                    type_id = b
                    p += 1
                else:
                    type_id, p = read_varint(data, p)
            except IndexError:
                s.damage(chunk.path, chunk.offset + event_start, "event header cut short")
                break
            if size < 2 or event_start + size > end:
                if event_start + size > end and not chunk.complete:
                    s.damage(chunk.path, chunk.offset + event_start,
                             "event runs past the end of the data (cut short)")
                else:
                    s.damage(chunk.path, chunk.offset + event_start,
                             f"event claims {size} bytes, impossible here")
                break
            pos = event_start + size
            plan = plans.get(type_id)
            if plan is not None:
                try:
                    values, q = plan[1](data, p)
                    if q > pos:
                        raise Damage("event fields run past its size")
                except (Damage, IndexError, struct.error, UnicodeError) as exc:
                    s.warn(chunk.path, chunk.offset + event_start, f"{plan[0]} skipped: {exc}")
                    continue
                self._event(plan, values, start_nanos, start_ticks, tps, samples)
                if need_times and values[plan[2][0]] is not None:
                    t = values[plan[2][0]]
                    if last_ticks is None or t > last_ticks:
                        last_ticks = t
            elif type_id == CHECKPOINT_TYPE:
                try:
                    self._checkpoint(data, p, pos, pools)
                except (Damage, IndexError, struct.error, UnicodeError) as exc:
                    s.warn(chunk.path, chunk.offset + event_start,
                           f"constant pool checkpoint skipped: {exc}")
            elif need_times and type_id in timed:
                try:
                    t, _ = read_varint(data, p)
                except IndexError:
                    continue
                if last_ticks is None or t > last_ticks:
                    last_ticks = t
        if chunk.complete:
            s.cover_until(start_nanos + h.duration_nanos)
        elif last_ticks is not None:
            s.cover_until(start_nanos + (last_ticks - start_ticks) * 1_000_000_000 // tps)
        self._resolve_samples(samples, pools)

    def _find_metadata(self, chunk: Chunk, end: int) -> Metadata | None:
        data = chunk.data
        candidates = []
        if HEADER_SIZE <= chunk.header.metadata_offset < end:
            candidates.append(chunk.header.metadata_offset)
        for pos in candidates + [None]:
            if pos is None:
                pos = self._scan_for_metadata(data, end)
                if pos is None:
                    break
            try:
                size, p = read_varint(data, pos)
                type_id, p = read_varint(data, p)
                if type_id != METADATA_TYPE or pos + size > end:
                    continue
                md_id_probe = self.metadata
                md = parse_metadata(data, p, pos + size)
                if md_id_probe is not None and md_id_probe.metadata_id == md.metadata_id \
                        and md_id_probe.classes.keys() == md.classes.keys():
                    return md_id_probe  # same types: keep the generated decoders
                return md
            except (Damage, IndexError, struct.error, UnicodeError) as exc:
                self.summary.warn(chunk.path, chunk.offset + pos, f"metadata unreadable: {exc}")
        return self.metadata  # a chunk cut before its metadata: the previous chunk's types

    @staticmethod
    def _scan_for_metadata(data, end):
        pos = HEADER_SIZE
        try:
            while pos < end:
                size, p = read_varint(data, pos)
                type_id, p = read_varint(data, p)
                if size < 2:
                    return None
                if type_id == METADATA_TYPE:
                    return pos
                pos += size
        except IndexError:
            return None
        return None

    # -- constant pools -------------------------------------------------------------------------
    def _checkpoint(self, data, p, end, pools):
        md = self.metadata
        _start, p = read_varint(data, p)
        _duration, p = read_varint(data, p)
        _delta, p = read_varint(data, p)
        p += 1  # checkpoint kind flags (flush, chunk header, statics, thread)
        pool_count, p = read_varint(data, p)
        if pool_count > end - p:
            raise Damage(f"checkpoint claims {pool_count} pools in {end - p} bytes")
        for _ in range(pool_count):
            type_id, p = read_varint(data, p)
            count, p = read_varint(data, p)
            if count > end - p:
                raise Damage(f"pool claims {count} entries in {end - p} bytes")
            plan = self.pool_plans.get(type_id)
            if plan is None:
                skip = md.skipper(type_id)
                for _ in range(count):
                    b = data[p]
                    if b < 128:
                        p += 1
                    else:
                        p = read_varint(data, p)[1]
                    p = skip(data, p)
                if p > end:
                    raise Damage("pool entries run past the checkpoint's size")
                continue
            name, decode, idx, frame_method = plan
            pool = pools[type_id]
            for _ in range(count):
                key, p = read_varint(data, p)
                value, p = decode(data, p)
                pool[key] = _keep(name, value, idx, frame_method)
            if p > end:
                raise Damage("pool entries run past the checkpoint's size")

    def _event(self, plan, values, start_nanos, start_ticks, tps, samples):
        name, _decode, idx = plan
        s = self.summary

        def at(i):
            j = idx[i]
            return values[j] if j is not None else None

        def epoch_ns(ticks):
            return start_nanos + (ticks - start_ticks) * 1_000_000_000 // tps

        def span_ns(ticks):
            return ticks * 1_000_000_000 // tps if ticks is not None else None

        t = at(0)
        t_ns = epoch_ns(t) if t is not None else None
        if name == "jdk.ExecutionSample":
            samples[at(1)] += 1
        elif name == "jdk.ObjectAllocationSample":
            s.allocation(at(1))
        elif name == "jdk.CPULoad":
            s.cpu(at(1), at(2), at(3))
        elif name == "jdk.GarbageCollection":
            s.garbage_collection(t_ns, span_ns(at(1)), span_ns(at(2)), span_ns(at(3)))
        elif name == "jdk.GCPhasePause":
            s.gc_pause(t_ns, span_ns(at(1)))
        elif name == "jdk.GCHeapSummary":
            s.heap_summary(self._pool_string("jdk.types.GCWhen", at(1)), at(2))
        elif name == "jdk.SafepointBegin":
            s.safepoint(t_ns, span_ns(at(1)))
        elif name == "jdk.ThreadPark":
            s.park(span_ns(at(1)))
        elif name == "jdk.JavaMonitorEnter":
            s.monitor_enter(span_ns(at(1)))
        elif name == "jdk.ActiveSetting":
            cls = self.metadata.classes.get(at(1)) if isinstance(at(1), int) else None
            if cls is not None:
                s.setting(cls.name, self._str(at(2)), self._str(at(3)))
        elif name == "jdk.JVMInformation":
            s.jvm(self._str(at(1)), self._str(at(2)))

    # GCWhen values are resolved straight away from the pools seen so far; the JVM writes these
    # small fixed pools at the start of every chunk.
    def _pool_string(self, pool_name, key):
        return ("pool", pool_name, key)

    @staticmethod
    def _str(v):
        return v if isinstance(v, str) or v is None else None

    def _resolve_samples(self, samples: Counter, pools):
        md = self.metadata
        by_name = {}
        for type_id, (name, *_rest) in self.pool_plans.items():
            by_name[name] = pools.get(type_id, {})
        strings = by_name.get("java.lang.String", {})

        def text(v):
            if isinstance(v, StringRef):
                v = strings.get(v.key)
            return v if isinstance(v, str) else None

        symbols = by_name.get("jdk.types.Symbol", {})
        classes = by_name.get("java.lang.Class", {})
        methods = by_name.get("jdk.types.Method", {})
        traces = by_name.get("jdk.types.StackTrace", {})
        method_names: dict = {}

        def method_name(key):
            n = method_names.get(key)
            if n is None:
                m = methods.get(key)
                if m is None:
                    n = "<unknown method>"
                else:
                    cls_sym = classes.get(m[0])
                    cls_name = text(symbols.get(cls_sym)) if cls_sym is not None else None
                    meth = text(symbols.get(m[1]))
                    n = f"{(cls_name or '<unknown class>').replace('/', '.')}." \
                        f"{meth or '<unknown>'}"
                method_names[key] = n
            return n

        for key, count in sorted(samples.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)):
            trace = traces.get(key)
            if trace is None:
                self.summary.samples(None, count)
                continue
            self.summary.samples(tuple(method_name(m) for m in trace[1]), count,
                                 truncated=bool(trace[0]))
        # The GCWhen strings of heap summaries read in this chunk.
        when = by_name.get("jdk.types.GCWhen", {})
        self.summary.resolve_heap_when(lambda key: text(when.get(key)))
        del md


def _keep(name, value, idx, frame_method):
    """The part of a pool entry the summary uses (smaller than the whole decoded tuple)."""
    if name == "jdk.types.StackTrace":
        truncated = value[idx[0]] if idx[0] is not None else 0
        frames = value[idx[1]] if idx[1] is not None else []
        return (truncated, tuple(f[frame_method] for f in frames) if frame_method is not None
                else ())
    if name == "java.lang.String":
        return value[0]
    if name == "jdk.types.Method":
        return (value[idx[0]] if idx[0] is not None else None,
                value[idx[1]] if idx[1] is not None else None)
    j = idx[0]
    return value[j] if j is not None else None
