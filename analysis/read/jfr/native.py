"""The JFR reader's checkpoint walk, compiled (_native.c): built with the system C compiler on
first use (or by `make`'s install step: `python -m analysis.read.jfr.native`) into
.cache/native/ beside hgrm's kernels (analysis/read/hdr/native.py, whose pattern this follows),
loaded with ctypes. Without a compiler, or when the build or the load fails, `get()` is None and
the pure-Python reader runs alone, with the same summaries (tested); `LOADCURVE_NATIVE=0` in the
environment forces that. `describe()` says which path runs.

Why: constant-pool checkpoints are a third of a recording's bytes (a thread pool entry per
virtual thread, every symbol and method of every stack) and stepping through them entry by
entry was two thirds of the reader's time, though the summary resolves about a tenth of the
entries. The walk here gives, for the pools the summary resolves, each
entry's key and where its value starts (and the fields the summary takes from it); reader.py
makes an entry only when an event refers to it. On the way the walk lists the values of the
frequent events of numbers only (thread parks, allocation and execution samples, GC, CPU
load: a float as a C double's bits, floats_of), which reader.py then hands to its handlers
without decoding them in Python. At a chunk's end the methods the walk indexed are named
here too (Kernels.method_names; names.py says when).

The program handed to C describes each class of a chunk's metadata as a list of field kinds
(program_for). Classes whose shape the Python reader refuses or treats specially (an unknown
field type, a struct that contains itself, deep nesting, arrays of empty structs, a stack
trace whose frames the summary could not index) get no program, and any checkpoint with a
pool of them is read by the Python code as before.
"""
from __future__ import annotations

import ctypes
import mmap
import threading
from array import array
from itertools import accumulate, chain
from pathlib import Path

from analysis import native_build
from analysis.read.jfr.metadata import PRIMITIVES, ClassInfo, Metadata

SOURCE = Path(__file__).with_name("_native.c")
FLAGS = ["-O3", "-shared", "-fPIC"]
ABI = 13               # lc_jfr_abi() of the source this module was written against
CP_READ = 0           # a checkpoint's status: walked here (else left to the Python reader)

KIND_BYTE, KIND_VARINT, KIND_FLOAT, KIND_DOUBLE, KIND_STRING, KIND_STRUCT = 1, 2, 3, 4, 5, 6
KIND_ARRAY = 16
KIND_CAPTURE = 32
# How an event's captured varint becomes the value its decoder gives (bits 6-7 of its op).
CONV_SHIFT = 6
CONV = {"long": 1, "int": 2, "short": 3}    # others (a pool key, char, byte): as they are
EVENT_VALUES = 4      # _native.c: the most fields of an event it lists
PRIMITIVE_KIND = {"boolean": KIND_BYTE, "byte": KIND_BYTE, "char": KIND_VARINT,
                  "short": KIND_VARINT, "int": KIND_VARINT, "long": KIND_VARINT,
                  "float": KIND_FLOAT, "double": KIND_DOUBLE, "java.lang.String": KIND_STRING}
# The kinds of an event's field the walk lists (the others leave the event to Python).
LISTABLE = (KIND_VARINT, KIND_BYTE, KIND_FLOAT, KIND_DOUBLE, KIND_STRING)
# Nesting the program allows: JDK types nest two deep; well below metadata.MAX_STRUCT_DEPTH,
# so that no struct given a program is one whose codec generation the Python reader refuses.
MAX_NESTING = 8

_I64 = ctypes.c_int64
_i64 = ctypes.POINTER(_I64)
_u64 = ctypes.POINTER(ctypes.c_uint64)
_void = ctypes.c_void_p


def _array(ctype, values):
    """A C array of `values` (ctypes: numpy's import would cost more than a small recording's
    whole read)."""
    return (ctype * max(len(values), 1))(*values)


_arena = threading.local()
_PRIVATE = {"flags": mmap.MAP_PRIVATE} if hasattr(mmap, "MAP_PRIVATE") else {}


def _scratch(name: str, ctype, n: int):
    """The C array `name` of at least n items for the walk to write, this thread's, kept for
    the next walk (valid until then: the reader is done with a chunk's walk before the next).
    Anonymous memory, not ctypes' own arrays: those are zeroed when made (~70 MB of room for
    a 13 MB chunk, more than the walk costs), and fresh memory each walk would fault its pages
    in again. Private memory: a forked process (parallel.py, the build's workers) gets a copy
    to write, not the same pages (mmap's default for anonymous memory is shared)."""
    arrays = getattr(_arena, "arrays", None)
    if arrays is None:
        arrays = _arena.arrays = {}
    have = arrays.get(name)
    if have is None or len(have) < n:
        size = max(n, 1, len(have) * 2 if have is not None else 0)
        have = arrays[name] = (ctype * size).from_buffer(
            mmap.mmap(-1, size * ctypes.sizeof(ctype), **_PRIVATE))
    return have


def _view(array, n: int, fmt: str = "q") -> memoryview:
    """The first n items of a ctypes array, as a memoryview of Python ints (ctypes' own
    view's format, '<q', is one memoryview cannot index)."""
    return memoryview(array).cast("B").cast(fmt)[:n]


def floats_of(values: memoryview) -> memoryview:
    """The listed values `values` (a slice of checkpoints()' rows) as C doubles: a float or
    double field's value is the one at its index (the walk wrote its bits there)."""
    return values.cast("B").cast("d")


class Program:
    """A metadata's classes as lc_jfr_checkpoints reads them, and which pools are kept (slot s
    is the pool type id slot_types[s])."""

    def __init__(self, cls_ops, ops, cls_prefix, cls_slot, type_ids, type_cls, slot_types,
                 events=None):
        self.n_classes = len(cls_prefix)
        self.n_types = len(type_ids)
        self.slot_types = slot_types
        # Event types whose wanted fields the walk lists: type id -> (class, how many).
        events = events or {}
        self.events = frozenset(events)
        ev_types = self.ev_types = sorted(events)
        self.n_ev_types = len(ev_types)
        self.c_args = (_array(_I64, cls_ops), _array(_I64, ops), _array(_I64, cls_prefix),
                       _array(_I64, cls_slot), self.n_classes,
                       _array(ctypes.c_uint64, type_ids), _array(_I64, type_cls), self.n_types)
        self.c_events = (_array(ctypes.c_uint64, ev_types),
                         _array(_I64, [events[t][0] for t in ev_types]),
                         _array(_I64, [events[t][1] for t in ev_types]))
        self.type_ids = _view(self.c_args[5], max(self.n_types, 1), "Q")
        self._choices: dict = {}

    def choices(self, visit, batch, keep):
        """The C arrays of a walk's visit, batch and keep (Kernels.checkpoints), made once
        for each reader's choice (a run's recordings share a program and make the same)."""
        key = (frozenset(visit), frozenset(batch),
               None if not keep else tuple(sorted((t, i, tuple(v)) for t, (i, v) in keep.items())))
        made = self._choices.get(key)
        if made is None:
            keep = keep or {}
            # (as C compares them: a value's 64 bits unsigned)
            kept = [sorted({v & 0xFFFF_FFFF_FFFF_FFFF for v in keep[t][1]}) if t in keep else ()
                    for t in self.ev_types]
            made = (_array(ctypes.c_uint64, sorted(visit)),
                    _array(_I64, [t in batch for t in self.ev_types]),
                    _array(_I64, [keep[t][0] if t in keep else -1 for t in self.ev_types]),
                    _array(_I64, list(accumulate(map(len, kept)))),
                    _array(ctypes.c_uint64, list(chain.from_iterable(kept))))
            if len(self._choices) >= 8:
                self._choices.clear()
            self._choices[key] = made
        return made


_programs: dict = {}       # (id(metadata), kept pools) -> (metadata, Program)
_programs_lock = threading.Lock()


def program_for(md: Metadata, kept: dict[int, tuple | None],
                events: dict[int, tuple[int, ...]] | None = None) -> Program:
    """The program of `md` (cached while `md` lives), keeping the pools of `kept`'s type ids.
    kept[type id] is (capture the value of a primitive pool type, ((field index, item field
    index or -1), ...)): the fields whose values are captured, of each item of an array of
    structs when an item field is given; None: that pool may not be walked here (a checkpoint
    with it is left to the Python reader). events[type id]: the indices, ascending, of the
    fields of that event type to list (each a varint, a byte, a float or a double, listed as
    the bits of a C double: floats_of reads them, or a string, listed as its offset); a type
    whose fields are not all that is not listed."""
    key = (id(md), tuple(sorted(kept.items())), tuple(sorted((events or {}).items())))
    with _programs_lock:
        hit = _programs.get(key)
        if hit is not None and hit[0] is md:
            return hit[1]
    program = _build_program(md, kept, events or {})
    with _programs_lock:
        # Metadata objects are few (metadata.METADATA_CACHE_SIZE): drop those no longer cached
        # by keeping only this one's and the most recent others'.
        if len(_programs) >= 16:
            _programs.clear()
        _programs[key] = (md, program)
    return program


def _build_program(md: Metadata, kept: dict[int, tuple | None], events: dict) -> Program:
    index: dict[int, int] = {}     # type id -> class index, for classes with a program
    state: dict[int, None] = {}    # type ids being built, or refused
    ops_of: list[list[int]] = []

    height: dict[int, int] = {}    # type id -> how many structs deep its values nest

    def field_op(f):
        """The op of field `f`, or None when its class gets no program."""
        if f.constant_pool:
            kind = KIND_VARINT
        else:
            cls = md.classes.get(f.type_id)
            if cls is None:
                return None
            kind = PRIMITIVE_KIND.get(cls.name) if cls.name in PRIMITIVES else None
            if kind is None:
                c = build(cls)
                if c is None:
                    return None
                kind = KIND_STRUCT | c << 8
        if f.array:
            if kind & 15 == KIND_STRUCT and min_width(md.classes[f.type_id]) < 1:
                return None      # an array of empty structs: refused by the Python reader
            kind |= KIND_ARRAY
        return kind

    def min_width(cls: ClassInfo) -> int:
        """Fewest bytes a value of `cls` takes (metadata.Metadata._min_width; no cycles here:
        `cls` has a program)."""
        total = 0
        for g in cls.fields:
            sub = md.classes.get(g.type_id)
            if g.array or g.constant_pool or sub is None:
                total += 1
            elif sub.name in PRIMITIVES:
                total += 4 if sub.name == "float" else 8 if sub.name == "double" else 1
            else:
                total += min_width(sub)
        return total

    def build(cls: ClassInfo):
        tid = cls.type_id
        if tid in index:
            return index[tid]
        if tid in state:
            return None      # refused, or a struct that contains itself (being built)
        state[tid] = None
        ops = []
        deepest = 0
        for f in cls.fields:
            op = field_op(f)
            if op is None:
                return None
            if op & 15 == KIND_STRUCT:
                deepest = max(deepest, height[f.type_id])
            ops.append(op)
        if deepest + 1 > MAX_NESTING:
            return None
        del state[tid]
        height[tid] = deepest + 1
        index[tid] = len(ops_of)
        ops_of.append(ops)
        return index[tid]

    for tid in sorted(md.classes):
        if kept.get(tid, ()) is not None:
            build(md.classes[tid])
    # A kept pool's type is walked as a copy of its class whose captured fields are marked
    # (and, for an array of structs, a copy of the item's class), so that the same class met
    # inline elsewhere captures nothing.
    classes = [(by_tid, ops, 0, -1) for by_tid, ops in
               zip(sorted(index, key=index.get), ops_of)]
    slot_types = sorted(t for t, spec in kept.items() if spec is not None and t in index)
    pool_class = {t: index[t] for t in index if kept.get(t, ()) is not None}
    for slot, tid in enumerate(slot_types):
        prefix_capture, marks = kept[tid]
        ops = list(ops_of[index[tid]])
        for field, item_field in marks:
            ops[field] |= KIND_CAPTURE
            if item_field >= 0:
                item = ops[field] >> 8
                item_ops = list(ops_of[item])
                item_ops[item_field] |= KIND_CAPTURE
                classes.append((None, item_ops, 0, -1))
                ops[field] = ops[field] & 255 | (len(classes) - 1) << 8
        name = md.classes[tid].name
        prefix = PRIMITIVE_KIND[name] if name in PRIMITIVES else 0
        if prefix and prefix_capture:
            prefix |= KIND_CAPTURE
        classes.append((tid, ops, prefix, slot))
        pool_class[tid] = len(classes) - 1
    # An event type is listed as a copy of its class up to the last field wanted, those fields
    # marked captured with how their value is read.
    listed = {}
    for tid, fields in events.items():
        if tid not in index or not fields or len(fields) > EVENT_VALUES or \
                list(fields) != sorted(set(fields)):
            continue
        cls = md.classes[tid]
        ops = list(ops_of[index[tid]][:fields[-1] + 1])
        if len(ops) <= fields[-1]:
            continue
        for i in fields:
            f = cls.fields[i]
            if ops[i] & 15 not in LISTABLE or ops[i] & KIND_ARRAY:
                break
            conv = 0 if f.constant_pool else CONV.get(md.classes[f.type_id].name, 0)
            ops[i] |= KIND_CAPTURE | conv << CONV_SHIFT
        else:
            classes.append((None, ops, 0, -1))
            listed[tid] = (len(classes) - 1, len(fields))
    cls_ops, all_ops, cls_prefix, cls_slot = [0], [], [], []
    for tid, ops, prefix, slot in classes:
        all_ops += ops
        cls_ops.append(len(all_ops))
        if slot < 0 and tid is not None:
            name = md.classes[tid].name
            prefix = PRIMITIVE_KIND[name] if name in PRIMITIVES else 0
        cls_prefix.append(prefix)
        cls_slot.append(slot)
    pool_types = sorted(pool_class)
    return Program(cls_ops, all_ops, cls_prefix, cls_slot, pool_types,
                   [pool_class[t] for t in pool_types], slot_types, listed)


class Kernels:
    """The loaded shared object."""

    def __init__(self, lib):
        native_build.check_abi(lib, "lc_jfr_abi", ABI, SOURCE)
        lib.lc_jfr_checkpoints.restype = _I64
        lib.lc_jfr_checkpoints.argtypes = [
            ctypes.c_char_p, _I64, _i64, _i64, _i64, _i64, _I64, _u64, _i64, _I64,
            _I64, _i64, _i64, _i64, _I64, _i64, _i64, _I64, _u64, _i64, _i64, _I64, _u64,
            _u64, _i64, _i64, _i64, _i64, _i64, _u64, _I64, _I64, _i64, _i64, _i64, _i64,
            _i64, _i64, _u64, _I64, _I64, _i64, _i64, _i64, _i64, _i64, _i64, _i64, _i64]
        lib.lc_jfr_method_names.restype = _I64
        lib.lc_jfr_method_names.argtypes = [
            ctypes.c_char_p, _I64, _u64, _i64, _I64, _u64, _I64, _void, _I64, _void, _I64,
            _void, _I64, _void, _I64, _void, _I64, ctypes.POINTER(ctypes.c_uint8), _I64, _u64,
            _i64]
        lib.lc_jfr_stacks.restype = _I64
        lib.lc_jfr_stacks.argtypes = [
            ctypes.c_char_p, _I64, _u64, _i64, _I64, _u64, _I64, _void, _I64, _void, _I64, _I64,
            _i64, _i64, _u64, _I64, _u64, _i64, _i64]
        lib.lc_jfr_tally.restype = _I64
        lib.lc_jfr_tally.argtypes = [_void, _I64, _I64, _I64, _I64, _I64, _i64, _I64, _i64,
                                     _i64, _i64, _i64, _i64, _i64]
        self.lib = lib

    def tally(self, rows, window, tps):
        """A chunk's listed events (rows: a view of checkpoints()'s batched values: ticks,
        duration ticks, stack trace key, -) summed by key as stacks.FoldingReader tallies its
        parks -> ([(key, summed ns, events)] of those in `window` (ticks [lo, hi), or None:
        all), (summed ns, events) of those before it); None when C cannot (a window past 64
        bits, a sum that would pass them: Python's integers tally those)."""
        n = len(rows) // EVENT_VALUES
        if not isinstance(rows, memoryview) or rows.readonly:
            return None
        lo, hi = window if window is not None else (0, 0)
        if not (-1 << 63 <= lo < 1 << 63 and -1 << 63 <= hi < 1 << 63 and 0 < tps < 1 << 63) \
                or n == 0:
            return None
        # The rows' address from their first value: an array type of each length would be a
        # new class each call (ctypes keeps them only weakly: the collector frees them).
        at = ctypes.addressof(_I64.from_buffer(rows))
        n_table = 1 << max(3, (2 * n - 1).bit_length())
        table = _scratch("tally_table", _I64, n_table)
        keys, sums, counts = (_scratch(k, _I64, n) for k in ("tally_keys", "tally_sums",
                                                             "tally_counts"))
        out = [_I64(0) for _ in range(3)]
        if self.lib.lc_jfr_tally(at, n, window is not None, lo, hi, tps,
                                 table, n_table, keys, sums, counts,
                                 *(ctypes.byref(c) for c in out)) < 0:
            return None
        n_keys, early_sum, early_count = (c.value for c in out)
        return list(zip(keys[:n_keys], sums[:n_keys], counts[:n_keys])), \
            (early_sum, early_count)

    def checkpoints(self, data: bytes, program: Program, visit=(), batch=(), keep=None):
        """The checkpoints of a chunk's `data` walked here, its events listed, and the events
        the reader must see -> (walked, entries, events, visits). walked: {payload offset:
        [(pool type id, first entry, end), ...] in the order they came}; a checkpoint left to
        the Python reader is not in it. entries: (keys, offsets, ends, captures): entry e is
        keys[e], its value starts at offsets[e], its captures are captures[ends[e - 1] (0 for
        the first):ends[e]]. events: (offsets, values): the payload offsets of the events of
        program.events, but those left to the Python decoder and those of a type in `batch`,
        in order, and event i's values at values[EVENT_VALUES * i:] (past their number,
        zeros). keep: {type id of program.events: (i, values)}: its listed events whose value i
        is not in `values` are dropped (not listed, not visited; the reader's handler would do
        nothing with them). visits: (starts, stop): where each checkpoint left to the Python
        reader and each event of a type id in `visit` (but a batched or dropped one) starts, in
        order (a walked checkpoint is in `walked`), and where the walk stopped (len(data), or
        the event whose header or size is not whole). batched: {type id in `batch`: the values
        of its listed events, EVENT_VALUES each, in their order}. Sequences are
        memoryviews of the arrays C wrote, this thread's until its next walk (_scratch): a
        number becomes a Python int only when read (most are never read). None when `data` is not bytes (ctypes passes bytes without a copy)."""
        if type(data) is not bytes:
            return None
        n = len(data)
        visit_ids, batched_types, keep_index, keep_ends, keep_vals = program.choices(
            visit, batch, keep)
        # Room for what such chunks hold (a kept entry takes two bytes or more; a run's
        # ~200 KB chunks hold ~120 checkpoints, one per 1.6-1.9 KB); a chunk with more is
        # walked again with room for all of it.
        caps = (n // 1024 + 64, n // 256 + 256, n // 16 + 1024, n // 4 + 1024,
                n // 32 + 1024 if program.n_ev_types else 0, n // 32 + 1024)
        for _ in range(2):
            cap_cps, cap_groups, cap_entries, cap_caps, cap_events, cap_visits = caps
            cp_pos, cp_status, cp_groups = (_scratch(k, _I64, cap_cps) for k in
                                            ("cp_pos", "cp_status", "cp_groups"))
            g_slot, g_end = _scratch("g_slot", _I64, cap_groups), _scratch("g_end", _I64,
                                                                           cap_groups)
            e_key = _scratch("e_key", ctypes.c_uint64, cap_entries)
            e_off = _scratch("e_off", _I64, cap_entries)
            e_caps = _scratch("e_caps", _I64, cap_entries)
            captured = _scratch("captured", ctypes.c_uint64, cap_caps)
            ev_pos = _scratch("ev_pos", _I64, cap_events)
            ev_vals = _scratch("ev_vals", _I64, cap_events * EVENT_VALUES)
            visit_pos = _scratch("visit_pos", _I64, cap_visits)
            b_kind = _scratch("b_kind", _I64, cap_events)
            b_vals = _scratch("b_vals", _I64, cap_events * EVENT_VALUES)
            b_sorted = _scratch("b_sorted", _I64, cap_events * EVENT_VALUES)
            b_ends = _scratch("b_ends", _I64, program.n_ev_types)
            counts = [_I64(0) for _ in range(7)]
            n_cps = self.lib.lc_jfr_checkpoints(
                data, n, *program.c_args, cap_cps, cp_pos, cp_status, cp_groups,
                cap_groups, g_slot, g_end, cap_entries, e_key, e_off, e_caps, cap_caps,
                captured, *program.c_events, batched_types, keep_index, keep_ends,
                keep_vals, program.n_ev_types, cap_events,
                ev_pos, ev_vals, b_kind, b_vals, b_sorted, b_ends,
                visit_ids, len(visit), cap_visits, visit_pos,
                *(ctypes.byref(c) for c in counts))
            if n_cps < 0:
                raise RuntimeError("lc_jfr_checkpoints: inconsistent arguments")
            n_visits, stop, n_batched, n_groups, n_entries, n_caps, n_ev = \
                (c.value for c in counts)
            needed = (n_cps, n_groups, n_entries, n_caps, max(n_ev, n_batched), n_visits)
            if all(need <= cap for need, cap in zip(needed, caps)):
                break
            caps = needed
        else:
            raise RuntimeError("lc_jfr_checkpoints: counts changed between two walks")
        batched = {}
        if n_batched:
            rows = _view(b_sorted, n_batched * EVENT_VALUES)
            start = 0
            for t, end in zip(program.ev_types, b_ends[:program.n_ev_types]):
                if end > start:
                    batched[t] = rows[start * EVENT_VALUES:end * EVENT_VALUES]
                start = end
        slot_types = program.slot_types
        ends = g_end[:n_groups]
        slots = g_slot[:n_groups]
        walked = {}
        g = start = 0
        for pos, status, g_stop in zip(cp_pos[:n_cps], cp_status[:n_cps], cp_groups[:n_cps]):
            if status != CP_READ:
                continue
            pools = []
            while g < g_stop:
                pools.append((slot_types[slots[g]], start, ends[g]))
                start = ends[g]
                g += 1
            walked[pos] = pools
        return walked, (_view(e_key, n_entries, "Q"), _view(e_off, n_entries),
                        _view(e_caps, n_entries), _view(captured, n_caps, "Q")), \
            (_view(ev_pos, n_ev), _view(ev_vals, n_ev * EVENT_VALUES)), \
            (_view(visit_pos, n_visits), stop), batched


    def stacks(self, data: bytes, entries, traces, wanted, n_framed):
        """The stack traces of the keys `wanted` (an array('Q')) from the StackTrace pool's
        entries `traces` (runs of entries of this thread's last walk, as method_names takes a
        pool) -> (status, ends, frames, methods): status[i] None when the chunk has no entry
        of wanted[i], else whether the JVM truncated it; the method keys of the frames of
        wanted[i], leaf first, are frames[ends[i - 1]:ends[i]] (0 for the first) for the
        first n_framed keys (the others: their truncation only); methods: an array('Q') of
        every method key of those frames, once each (the methods to name). None when the
        call cannot be made (the arrays are not a walk's, an entry's captures are not a
        stack trace's)."""
        keys, _offsets, ends, caps = entries
        arrays = tuple(view.obj for view in (keys, ends, caps))
        if type(data) is not bytes or not all(isinstance(a, ctypes.Array) for a in arrays):
            return None
        n_wanted = len(wanted)
        status = _scratch("st_status", _I64, n_wanted)
        st_ends = _scratch("st_ends", _I64, n_framed)
        cap = 64 * n_framed + 1024
        n_frames, n_methods = _I64(0), _I64(0)
        for _ in range(2):
            frames = _scratch("st_frames", ctypes.c_uint64, cap)
            methods = _scratch("st_methods", ctypes.c_uint64, cap)
            if self.lib.lc_jfr_stacks(
                    data, len(data), arrays[0], arrays[1], len(keys), arrays[2], len(caps),
                    traces.buffer_info()[0], len(traces) // 2, wanted.buffer_info()[0],
                    n_wanted, n_framed, status, st_ends, frames, cap, methods,
                    ctypes.byref(n_frames), ctypes.byref(n_methods)) < 0:
                return None
            if n_frames.value <= cap:
                break
            cap = n_frames.value
        else:
            return None
        named = array("Q")
        named.frombytes(memoryview(methods).cast("B")[:8 * n_methods.value])
        return ([None if s < 0 else s == 1 for s in status[:n_wanted]], st_ends[:n_framed],
                _view(frames, n_frames.value, "Q").tolist(), named)

    def method_names(self, data: bytes, entries, methods, classes, symbols, strings,
                     wanted=None):
        """{method key: "pkg.Class.method"} of the method entries `methods` (indices into
        `entries`, the arrays of this thread's last walk: checkpoints()), resolved through the
        entries `classes`, `symbols` and `strings` of those pools, as names.stack_names's
        method_name names them; a method whose text only Python's decoders make exactly is not
        in it. Each pool's entries are an array('q') of runs, first and end entry of each (of
        a key's entries the last counts). With `wanted` (an array('Q') of method keys), only
        the wanted keys' methods are named. None when the call cannot be made (the arrays are
        not a walk's, or C refuses them)."""
        keys, _offsets, ends, caps = entries
        arrays = tuple(view.obj for view in (keys, ends, caps))
        if type(data) is not bytes or not all(isinstance(a, ctypes.Array) for a in arrays):
            return None
        # (their addresses: a ctypes array type of each new length would cost more than the
        # naming; the arrays live until the call returns)
        pools = [a.buffer_info()[0] for a in (methods, classes, symbols, strings)]
        n_named = sum(methods[1::2]) - sum(methods[::2]) if wanted is None else len(wanted)
        want = (None, -1) if wanted is None else (wanted.buffer_info()[0], len(wanted))
        named_keys = _scratch("named_keys", ctypes.c_uint64, n_named)
        cap = 64 * n_named + 4096
        for _ in range(2):
            out = _scratch("names_out", ctypes.c_uint8, cap)
            n_out = _I64(0)
            named = self.lib.lc_jfr_method_names(
                data, len(data), arrays[0], arrays[1], len(keys), arrays[2], len(caps),
                pools[0], len(methods) // 2, pools[1], len(classes) // 2, pools[2],
                len(symbols) // 2, pools[3], len(strings) // 2, *want, out, cap, named_keys,
                ctypes.byref(n_out))
            if named < 0:
                return None
            if n_out.value <= cap:
                break
            cap = n_out.value
        else:
            return None
        # C wrote only strictly valid UTF-8 without a NUL but each name's end
        text = str(_view(out, n_out.value, "B"), "utf-8")
        return dict(zip(_view(named_keys, named, "Q"), text.split("\0")))


def _self_check(kernels: Kernels, path: Path) -> None:
    """A miscompiled object goes no further: one checkpoint with a kept pool of two entries
    (a string, and a string with a two-byte length) and a pool of an int, walked."""
    md = Metadata({20: ClassInfo(20, "java.lang.String", None), 21: ClassInfo(21, "int", None)})
    payload = (b"\x01\x01\x01\x00\x02" + b"\x14\x02" + b"\x05\x03\x03abc" + b"\x86\x01\x01"
               + b"\x15\x01" + b"\x07\xff\x01")
    event = bytes([len(payload) + 2, 1]) + payload
    walked, entries, _, visits, _ = kernels.checkpoints(bytes(68) + event + b"\x00",
                                                     program_for(md, {20: (True, ())}))
    if walked != {70: [(20, 0, 2)]} or [m.tolist() for m in entries] != [[5, 134], [78, 85],
                                                                         [1, 2], [78, 85]] \
            or visits[0].tolist() != [] or visits[1] != 68 + len(event):
        raise RuntimeError(f"{path.name} fails its self-check")


LOADER = native_build.Loader(SOURCE, FLAGS, "jfr", Kernels, _self_check, "Python",
                             "compiled walk")
get = LOADER.get            # the compiled walk, or None: see native_build.Loader
describe = LOADER.describe


if __name__ == "__main__":     # make's install step: build now, never fail the install
    print(f"JFR checkpoint walk: {describe()}")
