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

With the compiled walk (native.py) the checkpoints are stepped through in C before the events
are read, and of the pools the summary resolves only each entry's key and offset are kept; an
entry is made when the summary looks it up (about a tenth of them), from the fields the walk
captured. The walk also lists the values of the events whose wanted fields are all numbers
or strings (the loop hands those to the handlers without decoding them; the frequent GC,
allocation and CPU load ones by type, a chunk's at once: _batch_*), and where each wanted
event starts: the loop never meets the others (millions of GC phase events in a profile
recording). A checkpoint or event the walk leaves (anything damaged or unusual) is read here
as without it, so the summaries and warnings are the same either way.

What to decode of each event and pool, made once per metadata, is plan.py's.
"""
from __future__ import annotations

from collections import Counter
from itertools import chain

from analysis.read.jfr import native
from analysis.read.jfr.chunks import FLAG_COMPRESSED_TICKS, HEADER_SIZE, Chunk
from analysis.read.jfr.handlers import EventHandlers
from analysis.read.jfr.metadata import Metadata, metadata_for
from analysis.read.jfr.names import stack_names
from analysis.read.jfr.plan import EVENT_FIELDS, index_walked, keep_entry, metadata_plan
from analysis.read.jfr.summary import SETTINGS_REPORTED, Summary
from analysis.read.jfr.wire import DECODE_ERRORS, Damage, read_varint

METADATA_TYPE = 0
CHECKPOINT_TYPE = 1


def _defined_in(cls, name):
    """The class of cls's MRO that defines attribute `name`, or None."""
    return next((c for c in cls.__mro__ if name in c.__dict__), None)


class _Recipe:
    """What ChunkReader._plan makes of a metadata's plan for a reader class (the same for each
    of its readers, one a recording: made once)."""

    def __init__(self, cls, plan):
        self.events = [(type_id, name, timed, untimed, plan.listed_strings.get(type_id),
                        plan.listed_floats.get(type_id))
                       for type_id, (name, timed, untimed) in plan.events.items()]
        # The frequent events whose `_batch_` handler is written beside their `_on_` one (in
        # the same class: a subclass that reads an event otherwise has its own or none): the
        # walk lists them by type and they are handled a chunk's at once (a float field's
        # value as its bits: the handler reads it with native.floats_of).
        self.batches = []
        for type_id, (name, _timed, _untimed) in plan.events.items():
            short = name.split(".")[-1]
            if hasattr(cls, "_batch_" + short) and type_id in plan.listed and \
                    not plan.listed_strings.get(type_id) and \
                    _defined_in(cls, "_on_" + short) is _defined_in(cls, "_batch_" + short):
                self.batches.append((type_id, "_batch_" + short))
        # A recording's settings are ~400 events, each event type's; the handler that reads
        # only the reported types' (the listed one: value 1 is the type id) needs no others, so
        # the walk drops those (for a whole chunk: an unfinished one's loop reads every event's
        # time).
        self.keep_listed = {}
        if _defined_in(cls, "_on_ActiveSetting_listed") is EventHandlers:
            for type_id, name, _timed, _untimed, strings, _floats in self.events:
                if name == "jdk.ActiveSetting" and strings == (2, 3):
                    self.keep_listed[type_id] = (1, tuple(plan.setting_events))


class ChunkReader(EventHandlers):
    """Reads chunks one after another into a Summary, keeping the last metadata (a chunk cut
    before its metadata event can still be read with the previous chunk's types).

    A subclass may read other events (stacks.py: the stacks of one event type) by naming them
    in `event_fields`, with a handler `_on_<last part of the name>` each, and the event types
    whose settings it wants in `settings_reported`."""

    event_fields = EVENT_FIELDS
    settings_reported = SETTINGS_REPORTED

    def __init__(self, summary: Summary):
        self.summary = summary
        self.metadata: Metadata | None = None
        self._plan_for: Metadata | None = None
        self._samples: dict = {}     # (read: per chunk, execution samples by stack key)

    # -- per metadata: which type ids to decode, and how ------------------------------------
    def _plan(self, md: Metadata):
        if self._plan_for is md:
            return
        plan = metadata_plan(md, self.event_fields, self.settings_reported)
        recipe = plan.recipes.get(type(self))
        if recipe is None:
            recipe = plan.recipes[type(self)] = _Recipe(type(self), plan)
        # Two decoders per event type: with startTime (for a chunk without its end, where the
        # latest event time is what "covered until" means) and, for whole chunks, without it
        # where the summary does not use it (one timestamp less to decode per event).
        self.event_plans = {}
        self.event_plans_timed = {}
        for type_id, name, timed, untimed, strings, floats in recipe.events:
            handler = getattr(self, "_on_" + name.split(".")[-1])
            # What takes a listed event's values (native.py): its strings are offsets, its
            # floats a C double's bits.
            listed = handler if not strings else self._on_ActiveSetting_listed \
                if name == "jdk.ActiveSetting" and strings == (2, 3) else \
                self._with_strings(handler, strings)
            if floats:
                listed = self._with_floats(listed, floats)
            self.event_plans_timed[type_id] = (name, timed, handler, listed)
            self.event_plans[type_id] = (name, untimed, handler, listed)
        self.batch_handlers = {type_id: getattr(self, batch)
                               for type_id, batch in recipe.batches}
        self.keep_listed = recipe.keep_listed
        self.pool_plans = plan.pools
        self.pool_captures = plan.pool_captures
        self.lazy_plans = plan.lazy_pools
        self.setting_events = plan.setting_events
        self.first_field_is_start_time = plan.first_field_is_start_time
        self.listed_fields = plan.listed
        self._plan_for = md

    # -- one chunk ----------------------------------------------------------------------------
    def read(self, chunk: Chunk) -> None:
        s = self.summary
        h = chunk.header
        data = chunk.data
        # A whole chunk's data is exactly its size. A chunk the JVM never finished (killed) or
        # a copy cut short is read as far as its bytes go: past the header's size (the JVM's
        # last flush) events may be half written, so reading stops at the first one that is
        # not whole.
        end = len(data)
        s.note_chunk(h, chunk.complete, (chunk.path, chunk.offset))
        if h.flags & FLAG_COMPRESSED_TICKS:
            # Not written by JDK 11-25; a later format may encode times differently.
            s.warn(chunk.path, chunk.offset + 67, "chunk flags say 'compressed ticks', which this "
                   "reader does not know; event times may be wrong")

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
        self._clock = (start_nanos, start_ticks, tps)
        # Where an event counts is decided on its ticks, not its epoch time (one conversion
        # a chunk, not one an event): _epoch_ns never decreases as ticks grow, so the window's
        # ends are two ticks of this chunk's clock.
        self._window_ticks = None if s.window is None else \
            (self._first_tick_at(s.window[0]), self._first_tick_at(s.window[1]))
        self._data = data
        pools: dict[int, dict] = {tid: {} for tid in self.pool_plans}
        # Entries the compiled walk indexed: key -> offset of the value, per pool. A key is in
        # `pools` or here, not both (the later checkpoint's entry wins, as in one dict).
        offsets: dict[int, dict] = {tid: {} for tid in self.pool_plans}
        need_times = not chunk.complete
        # With a window every event's start time decides where it counts.
        plans = self.event_plans_timed if need_times or s.window is not None \
            else self.event_plans
        timed = self.first_field_is_start_time
        # The event types the loop reads (the others are stepped over by their size).
        wanted = set(plans) | {CHECKPOINT_TYPE}
        if need_times:
            wanted |= timed
        kernels = native.get()
        walk = kernels.checkpoints(data, native.program_for(
            md, self.pool_captures, self.listed_fields), wanted, self.batch_handlers,
            None if need_times else self.keep_listed) if kernels is not None else None
        walked, entries, listed, visits, batched = walk or ({}, None, None, None, {})
        # The checkpoints the walk read are not visited: their entries are indexed in their
        # order among those the loop reads (before the next of those, the rest at the end), so
        # that of two entries of a key the later still wins.
        walked_in_order = list(walked.items())
        n_indexed = 0
        # With the walk the loop goes from one wanted event to the next (`hops`: where each
        # starts, then where the walk stopped), never meeting the others: a profile recording
        # holds millions of GC phase events that no report reads.
        hops = None if visits is None else chain(visits[0], (visits[1],))
        # The listed events come in the order the loop meets them: the next one's offset.
        listed_at, listed_values = listed or ((), ())
        n_listed = len(listed_at)
        li = 0
        next_listed = listed_at[0] if n_listed else -1
        width = native.EVENT_VALUES
        # Execution samples by stack trace key, per summary they count in (window, warm-up).
        self._samples: dict[Summary, Counter] = {}
        last_ticks = None

        # The hot loop (without the walk: with it, only the wanted events come here): most
        # events are stepped over, so it reads only size and type, with the varint cases the
        # JVM writes (1 byte, and sizes padded to 4 bytes) unrolled.
        pos = HEADER_SIZE if hops is None else next(hops)
        while pos < end:
            try:
                b = data[pos]
                if b < 128:
                    size = b
                    p = pos + 1
                else:
                    b1 = data[pos + 1]
                    if b1 < 128:
                        size = (b & 127) | (b1 << 7)
                        p = pos + 2
                    else:
                        b2 = data[pos + 2]
                        b3 = data[pos + 3]
                        if b2 >= 128 and b3 < 128:
                            size = (b & 127) | ((b1 & 127) << 7) | ((b2 & 127) << 14) | (b3 << 21)
                            p = pos + 4
                        else:
                            size, p = read_varint(data, pos)
                type_id = data[p]
            except IndexError:
                s.damage(chunk.path, chunk.offset + pos, "event header cut short")
                break
            nxt = pos + size
            if size < 2 or nxt > end:
                if nxt > end and not chunk.complete:
                    s.damage(chunk.path, chunk.offset + pos,
                             "event runs past the end of the data (cut short)")
                else:
                    s.damage(chunk.path, chunk.offset + pos,
                             f"event claims {size} bytes, impossible here")
                break
            if type_id < 128 and type_id not in wanted:
                pos = nxt if hops is None else next(hops, end)
                continue
            # An event to decode (or a type id of two bytes or more, to look up properly).
            event_start = pos
            pos = nxt if hops is None else next(hops, end)
            if type_id < 128:
                p += 1
            else:
                try:
                    type_id, p = read_varint(data, p)
                except IndexError:
                    continue
            plan = plans.get(type_id)
            if plan is not None:
                try:
                    if p == next_listed:
                        values = listed_values[li * width:li * width + width]
                        li += 1
                        next_listed = listed_at[li] if li < n_listed else -1
                        plan[3](values)
                    else:
                        while 0 <= next_listed < p:    # (only if the walk read otherwise)
                            li += 1
                            next_listed = listed_at[li] if li < n_listed else -1
                        values, q = plan[1](data, p)
                        if q > nxt:
                            raise Damage("event fields run past its size")
                        plan[2](values)
                except DECODE_ERRORS as exc:
                    s.warn(chunk.path, chunk.offset + event_start, f"{plan[0]} skipped: {exc}")
                    continue
                if need_times and values[0] is not None:  # startTime is wanted first
                    t = values[0]
                    if last_ticks is None or t > last_ticks:
                        last_ticks = t
            elif type_id == CHECKPOINT_TYPE:
                while n_indexed < len(walked_in_order) and walked_in_order[n_indexed][0] < p:
                    index_walked(walked_in_order[n_indexed][1], entries, pools, offsets)
                    n_indexed += 1
                try:
                    self._checkpoint(data, p, nxt, pools, offsets)
                except DECODE_ERRORS as exc:
                    s.warn(chunk.path, chunk.offset + event_start,
                           f"constant pool checkpoint skipped: {exc}")
            elif need_times and type_id in timed:
                try:
                    t, _ = read_varint(data, p)
                except IndexError:
                    continue
                if last_ticks is None or t > last_ticks:
                    last_ticks = t
        # The checkpoints after the last one the loop read (all of them, but in damaged or
        # unusual chunks) are indexed by key only where a lookup needs it (names.py): a run's
        # chunks hold ~47k such entries, and the C naming takes them as they are.
        pending: dict[int, list] = {}
        for _pos, indexed in walked_in_order[n_indexed:]:
            for tid, first, stop in indexed:
                pending.setdefault(tid, []).append((first, stop))
        for type_id, rows in batched.items():
            self.batch_handlers[type_id](rows)
            if need_times:
                t = max(rows[::width])
                if last_ticks is None or t > last_ticks:
                    last_ticks = t
        if not chunk.complete:
            what = "chunk never finished (the JVM stopped while writing it)" if not h.finished \
                else f"chunk cut short ({len(data)} of {h.size} bytes)"
            s.note_unfinished(f"{chunk.path}: byte {chunk.offset}: {what}; read up to its last "
                              f"whole event")
        if chunk.complete:
            s.cover_until(start_nanos + h.duration_nanos)
        elif last_ticks is not None:
            s.cover_until(start_nanos + (last_ticks - start_ticks) * 1_000_000_000 // tps)
        # One set of name lookups a chunk: a subclass folding more stacks (stacks.py) resolves
        # them with the same method names, not a second copy of each.
        self._resolve_samples(self._stack_names(pools, offsets, data, entries, pending))

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
                # Chunks of one JVM build repeat the same metadata event: its parsed types and
                # generated decoders are shared (metadata_for).
                return metadata_for(data, p, pos + size)
            except DECODE_ERRORS as exc:
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
    def _checkpoint(self, data, p, end, pools, offsets):
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
            indexed = offsets[type_id]
            for _ in range(count):
                key, p = read_varint(data, p)
                value, p = decode(data, p)
                pool[key] = keep_entry(name, value, idx, frame_method)
                if indexed:
                    indexed.pop(key, None)
            if p > end:
                raise Damage("pool entries run past the checkpoint's size")

    def _stack_names(self, pools, offsets, data, entries, pending=None):
        """-> (stack(key), text(value), GCWhen's lookup, truncation(key)):
        names.stack_names's."""
        return stack_names(self.pool_plans, self.lazy_plans, pools, offsets, data, entries,
                           self._stack_keys(), pending, self._truncation_keys())

    def _stack_keys(self):
        """The stack trace keys _resolve_samples will name (a subclass resolving more adds
        its own)."""
        return chain.from_iterable(samples for target, samples in self._samples.items()
                                   if target.names_methods)

    def _truncation_keys(self):
        """The stack trace keys whose truncation alone _resolve_samples asks (the warm-up's
        samples: their stacks are not named)."""
        return chain.from_iterable(samples for target, samples in self._samples.items()
                                   if not target.names_methods)

    def _resolve_samples(self, names):
        """The chunk's execution samples and GCWhen keys resolved; `names`: _stack_names's."""
        stack, text, when, truncation = names
        for target in (self.summary, self.summary.warmup):
            if target is None:
                continue
            samples = self._samples.get(target, {})
            for key, count in sorted(samples.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)):
                if not target.names_methods:
                    truncated = truncation(key)
                    target.samples(None if truncated is None else (), count,
                                   truncated=bool(truncated))
                    continue
                resolved = stack(key)
                if resolved is None:
                    target.samples(None, count)
                    continue
                target.samples(resolved[0], count, truncated=resolved[1])
            # The GCWhen strings of heap summaries read in this chunk.
            target.resolve_heap_when(lambda key: text(when(key)) if type(key) is int
                                     else None)
