"""A chunk's stacks named: each stack trace key as its frames' "pkg.Class.method" names.

The names are made once per method a chunk (a run's chunk: ~14k frames, ~1,500 methods). With
the compiled walk (native.py) every method the walk indexed is named in C from the chunk's
Method, Class, Symbol and String pools (_native.c: lc_jfr_method_names) and Python receives
the names, not the pool entries; a method whose text only Python's decoders make exactly (a
symbol that is not strictly valid UTF-8, as Java's modified UTF-8 of a NUL, a char array with
a surrogate), a pool of an unusual shape, or any entry the Python reader decoded itself (a
checkpoint the walk left) is named here, by method_name, which is the reference: both give
the same text (tests/test_jfr_names.py).
"""
from __future__ import annotations

from array import array
from itertools import chain

from analysis.read.jfr import native
from analysis.read.jfr.plan import index_walked, pool_lookup
from analysis.read.jfr.summary import method_label
from analysis.read.jfr.wire import StringRef

_INT_ONLY = frozenset((int,))

# The captures the C naming reads of each pool's entry (plan.pool_lookup's steps: (position
# wanted, how read, frames?) in field order): a method's class and name keys, a class's name
# symbol key, a symbol's string, a String pool entry's string, as every JDK writes them.
NATIVE_SHAPES = {
    "jdk.types.Method": [(0, "raw", False), (1, "raw", False)],
    "java.lang.Class": [(0, "raw", False)],
    "jdk.types.Symbol": [(0, "string", False)],
    "java.lang.String": [(0, "string", False)],
}

# The captures of a StackTrace pool entry the C reading of stacks takes (plan.pool_lookup's
# `trace`): its truncation, and its frames' method keys.
_TRACE_SHAPE = [(0, "raw", False), (1, "raw", True)]


class _Names(dict):
    """Method key -> its frame name, named on first use."""

    def __init__(self, name_of):
        super().__init__()
        self._name_of = name_of

    def __missing__(self, key):
        name = self[key] = self._name_of(key)
        return name


def stack_names(pool_plans, lazy_plans, pools, offsets, data, entries, wanted=None,
                pending=None, truncation_only=()):
    """-> (stack(key): (frames "pkg.Class.method" leaf first, truncated) or None when the
    chunk has no such stack trace; text(value): a string field's text; GCWhen's lookup;
    truncation(key): stack(key)'s truncated, or None, without naming its frames).
    pools, offsets: the chunk's entries by pool type id, decoded or indexed by the walk
    (ChunkReader.read); entries: the walk's arrays, or None; wanted: the stack trace keys
    that will be asked for (their methods are named in C), or None: every method; pending:
    {pool type id: [(first, end) entries of the walk's arrays]}, entries that come after
    all of `pools` and `offsets` (a later one of a key wins), indexed into `offsets` when
    the pool is first looked up (most pools never are: C names the methods);
    truncation_only: stack trace keys whose truncation(key) will be asked (with `wanted`,
    C reads them with the wanted ones)."""
    pending = {tid: ranges for tid, ranges in (pending or {}).items() if ranges}
    by_name = {}
    for type_id, (name, *_rest) in pool_plans.items():
        by_name[name] = _lookup(type_id, pools, offsets, data, entries,
                                lazy_plans.get(type_id), pending)
    missing = {}.get
    strings = by_name.get("java.lang.String", missing)

    def text(v):
        if isinstance(v, StringRef):
            v = strings(v.key) if type(v.key) is int else None
        return v if isinstance(v, str) else None

    symbols = by_name.get("jdk.types.Symbol", missing)
    classes = by_name.get("java.lang.Class", missing)
    methods = by_name.get("jdk.types.Method", missing)
    traces = by_name.get("jdk.types.StackTrace", missing)
    class_names: dict = {}

    def method_name(key):
        if type(key) is not int:
            return "<unknown method>"
        m = methods(key)
        cls_key = m[0] if m and type(m[0]) is int else None
        if cls_key in class_names:       # (a class's methods are many)
            cls_name = class_names[cls_key]
        else:
            cls_sym = classes(cls_key) if cls_key is not None else None
            cls_name = text(symbols(cls_sym)) if type(cls_sym) is int else None
            class_names[cls_key] = cls_name
        meth = symbols(m[1]) if m and type(m[1]) is int else None
        if type(meth) is not str:        # (a symbol is a str but in damaged recordings)
            meth = text(meth)
        return method_label(cls_name, meth)

    # A chunk's stacks share most of their frames: the frames are named by one map() over a
    # dict whose misses name the method, so a frame already named costs no Python call.
    method_names = _Names(method_name)

    def frames():
        """The method keys of the stacks that will be named (a chunk's pools hold those of
        every stack recorded: twice as many in the runs' recordings)."""
        keys = set()
        for key in wanted:
            trace = traces(key) if type(key) is int else None
            if trace is not None:
                keys.update(trace[1])
        return keys

    # With the walk, the wanted stacks are read in C (native_stacks): their frames' method
    # keys and truncation, and the methods to name, without a Python entry for each.
    read = None if wanted is None else native_stacks(pool_plans, lazy_plans, pools, offsets,
                                                     data, entries, wanted, truncation_only,
                                                     pending)
    if read is not None:
        spans, truncated_of, frame_keys, to_name = read
        named = native_names(pool_plans, lazy_plans, pools, offsets, data, entries,
                             lambda: to_name, pending) if to_name else None
    else:
        spans = truncated_of = {}
        named = native_names(pool_plans, lazy_plans, pools, offsets, data, entries,
                             None if wanted is None else frames, pending)
    if named:
        method_names.update(named)
    name_of = method_names.__getitem__

    def stack(key):
        if type(key) is int:
            span = spans.get(key, spans)
            if span is not spans:
                if span is None:
                    return None
                return tuple(map(name_of, frame_keys[span[0]:span[1]])), span[2]
        trace = traces(key) if type(key) is int else None
        if trace is None:
            return None
        frames = trace[1]
        # Keys equal to an int but of another type (True, 1.0: a damaged metadata's field
        # types) must not take an int's name: those are named one call each.
        names = map(method_names.__getitem__, frames) \
            if _INT_ONLY.issuperset(map(type, frames)) else map(method_name, frames)
        return tuple(names), trace[0] == 1

    def truncation(key):
        """stack(key)[1] without naming the frames; None as stack(key)."""
        if type(key) is int:
            truncated = truncated_of.get(key, truncated_of)
            if truncated is not truncated_of:
                return truncated
        trace = traces(key) if type(key) is int else None
        return None if trace is None else trace[0] == 1

    return stack, text, by_name.get("jdk.types.GCWhen", missing), truncation


def _lookup(type_id, pools, offsets, data, entries, plan, pending):
    """pool_lookup of one pool, made on its first call (its pending entries indexed then)."""
    get = None

    def lookup(key):
        nonlocal get
        if get is None:
            ranges = pending.pop(type_id, None)
            if ranges:
                index_walked([(type_id, a, b) for a, b in ranges], entries, pools, offsets)
            get = pool_lookup(pools[type_id], offsets[type_id], data, entries, plan)
        return get(key)
    return lookup


def _native_runs(type_id, shape, lazy_plans, pools, offsets, entries, pending):
    """The entries of pool `type_id` as C takes them (an array('q') of runs: first and end
    entry of each), or None when C may not read it: it holds entries the Python reader
    decoded, or entries of another shape than `shape`."""
    if pools[type_id] and type_id in pending:
        # (a later walked checkpoint may replace every entry Python decoded: as without
        # pending entries)
        index_walked([(type_id, a, b) for a, b in pending.pop(type_id)], entries, pools,
                     offsets)
    if pools[type_id]:
        return None
    plan = lazy_plans.get(type_id)
    steps = plan[4] if plan is not None else None
    ranges = pending.get(type_id, ())
    if (offsets[type_id] or ranges) and \
            (steps is None or [tuple(s) for s in steps] != shape):
        return None
    # As runs of entries (C indexes them by key, a later entry of a key winning: the
    # pending come last): an indexed entry is a run of one.
    indexed = offsets[type_id].values()
    return array("q", chain(chain.from_iterable((e, e + 1) for e in indexed),
                            chain.from_iterable(ranges)))


def native_stacks(pool_plans, lazy_plans, pools, offsets, data, entries, wanted,
                  truncation_only=(), pending=None):
    """The stack traces of the keys `wanted` and `truncation_only` read in C
    (native.Kernels.stacks) -> (spans, truncated_of, frame_keys, to_name): spans[key] is
    (first, end, truncated), the key's frames' method keys, leaf first, being
    frame_keys[first:end], or None when the chunk has no such stack trace (a key of `wanted`);
    truncated_of[key] is stack(key)[1] or None alike (every key); to_name: an array('Q') of
    the method keys of all those frames, once each. None when C does not apply (as
    native_names: no walk, or the StackTrace pool holds entries the Python reader decoded or
    is of another shape), so that stack_names looks the traces up in Python.
    pending: stack_names's (the StackTrace pool's are taken as they are)."""
    kernels = native.get()
    if kernels is None or entries is None:
        return None
    runs = array("q")
    for type_id, (name, *_rest) in pool_plans.items():
        if name == "jdk.types.StackTrace":
            runs = _native_runs(type_id, _TRACE_SHAPE, lazy_plans, pools, offsets, entries,
                                pending or {})
            if runs is None:
                return None
    keys = [k for k in dict.fromkeys(wanted) if type(k) is int]
    framed = len(keys)
    keys += [k for k in dict.fromkeys(truncation_only) if type(k) is int]
    try:
        asked = array("Q", keys)
    except OverflowError:
        return None
    read = kernels.stacks(data, entries, runs, asked, framed)
    if read is None:
        return None
    status, ends, frame_keys, to_name = read
    truncated_of = dict(zip(keys, status))
    spans = {}
    start = 0
    for key, truncated, end in zip(keys, status, ends):
        spans[key] = None if truncated is None else (start, end, truncated)
        start = end
    return spans, truncated_of, frame_keys, to_name


def native_names(pool_plans, lazy_plans, pools, offsets, data, entries,
                 frames=None, pending=None) -> dict | None:
    """{method key: its name} of the chunk's indexed methods (those whose keys are in
    `frames()`, unless it is None), named in C (those it leaves are not in it), or None when
    the C naming does not apply: no walk, or a pool it reads holds entries the Python reader
    decoded (the walk left their checkpoint) or is of another shape than NATIVE_SHAPES.
    pending: stack_names's (entries not in `offsets` yet, which C takes as they are)."""
    kernels = native.get()
    if kernels is None or entries is None:
        return None
    pending = pending or {}
    found = {}
    for type_id, (name, *_rest) in pool_plans.items():
        shape = NATIVE_SHAPES.get(name)
        if shape is None:
            continue
        runs = _native_runs(type_id, shape, lazy_plans, pools, offsets, entries, pending)
        if runs is None:
            return None
        found[name] = runs
    methods = found.get("jdk.types.Method")
    if not methods:
        return None
    wanted = None
    if frames is not None:
        try:
            wanted = array("Q", frames())
        except (TypeError, OverflowError):
            # (a frame of a stack the Python reader decoded that is no method key: stack()
            # names those one call each)
            return None
        if not wanted:
            return None
    return kernels.method_names(data, entries, *(
        found.get(name, array("q")) for name in NATIVE_SHAPES), wanted=wanted)
