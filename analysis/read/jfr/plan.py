"""What the chunk reader decodes, planned from a chunk's metadata: the events and fields the
summary reads (EVENT_FIELDS), the constant pools it resolves (POOL_FIELDS), and per metadata
the decoders, what the compiled walk lists and captures, and how a pool entry is made when the
summary looks it up (pool_lookup) from the walk's captures or its bytes.

A plan is the same for every recording of a JVM build (one Metadata is shared by them:
metadata_for), so it is made once per Metadata (metadata_plan).
"""
from __future__ import annotations

import threading

from analysis.read.jfr.metadata import PRIMITIVES, Metadata, canonical_name
from analysis.read.jfr.summary import SETTINGS_REPORTED
from analysis.read.jfr.wire import DECODE_ERRORS, read_string

# Event types the summary reads, and the fields it takes from each (by name, looked up in each
# chunk's metadata, so a field added or moved by a newer JDK is still found).
EVENT_FIELDS = {
    "jdk.GarbageCollection": ("startTime", "sumOfPauses", "longestPause"),
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

# Events whose start time the summary uses (the GC pause timeline); for the others it is
# decoded only to know how far a damaged chunk reaches.
USES_START_TIME = {"jdk.GarbageCollection", "jdk.GCPhasePause"}

# Constant pools the summary resolves: name -> fields kept from each entry.
POOL_FIELDS = {
    "jdk.types.StackTrace": ("truncated", "frames"),
    "jdk.types.Method": ("type", "name"),
    "java.lang.Class": ("name",),
    "jdk.types.Symbol": ("string",),
    "jdk.types.GCWhen": ("when",),
    "java.lang.String": (),
}


class MetadataPlan:
    """What ChunkReader._plan derives from a chunk's metadata: the same for every recording of
    a JVM build (one Metadata is shared by them: metadata_for), so made once per Metadata."""

    def __init__(self, md: Metadata, event_fields: dict, settings_reported: frozenset):
        # Event type id -> (name, decoder with startTime, decoder without it where unused).
        self.events = {}
        self.listed = {}
        self.listed_strings = {}
        self.listed_floats = {}
        for name, wanted in event_fields.items():
            cls = md.by_name.get(name)
            if cls is None:
                continue
            timed = md.partial_decoder(cls.type_id, wanted)
            untimed = timed if name in USES_START_TIME else \
                md.partial_decoder(cls.type_id, ("",) + wanted[1:])
            self.events[cls.type_id] = (name, timed, untimed)
            # The compiled walk lists the values of events whose wanted fields are all there
            # (and varints, bytes, floats or strings: native.program_for checks), with
            # startTime: a handler that does not use it (untimed) is given it all the same.
            fields = [cls.field_index(f) for f in wanted]
            if None not in fields and fields == sorted(set(fields)):
                self.listed[cls.type_id] = tuple(fields)
                # strings are listed as their offsets
                self.listed_strings[cls.type_id] = tuple(
                    k for k, i in enumerate(fields) if not cls.fields[i].constant_pool
                    and getattr(md.classes.get(cls.fields[i].type_id), "name", None)
                    == "java.lang.String")
                # floats and doubles are listed as a C double's bits (native.floats_of)
                self.listed_floats[cls.type_id] = tuple(
                    k for k, i in enumerate(fields) if not cls.fields[i].constant_pool
                    and getattr(md.classes.get(cls.fields[i].type_id), "name", None)
                    in ("float", "double"))
        self.pools = {}
        # Per pool, what the compiled walk captures of each entry (native.program_for), or
        # None: it must leave the pool's checkpoints to _checkpoint (a stack trace whose
        # frames are not structs would make keep_entry fail, and an entry decoded late must not
        # fail where the one decoded in its checkpoint would have).
        self.pool_captures = {}
        self.lazy_pools = {}
        for name, wanted in POOL_FIELDS.items():
            cls = md.by_name.get(name)
            if cls is None:
                continue
            idx = tuple(cls.field_index(f) for f in wanted)
            extra = None
            if name == "jdk.types.StackTrace" and idx[1] is not None:
                frame_cls = md.classes.get(cls.fields[idx[1]].type_id)
                extra = frame_cls.field_index("method") if frame_cls else None
            self.pools[cls.type_id] = (name, md.decoder(cls.type_id), idx, extra)
            if extra is None or _frames_are_structs(md, cls.fields[idx[1]]):
                captures, steps = _capture_plan(md, cls, name, idx, extra)
                self.pool_captures[cls.type_id] = captures
                self.lazy_pools[cls.type_id] = _lazy_plan(md, cls, name, wanted, idx, extra,
                                                          steps)
            else:
                self.pool_captures[cls.type_id] = None
        # Event type id -> its name, for the types whose settings the summary reports.
        self.setting_events = {}
        for c in md.classes.values():
            event_name = canonical_name(c.name)
            if event_name in settings_reported:
                self.setting_events[c.type_id] = event_name
        self.first_field_is_start_time = {
            c.type_id for c in md.classes.values()
            if c.fields and c.fields[0].name == "startTime" and c.super_type == "jdk.jfr.Event"}
        # Reader class -> what its readers make of this plan (reader.py: _Recipe).
        self.recipes: dict = {}


# (id(metadata), the events and settings read) -> (metadata, its plan)
_plans: dict[tuple, tuple[Metadata, MetadataPlan]] = {}
_plans_lock = threading.Lock()


def metadata_plan(md: Metadata, event_fields: dict = EVENT_FIELDS,
                  settings_reported: frozenset = SETTINGS_REPORTED) -> MetadataPlan:
    """The plan of `md` for a reader of `event_fields` (a subclass may read other events:
    stacks.py) that reports the settings of `settings_reported`."""
    key = (id(md), tuple(event_fields.items()), settings_reported)
    with _plans_lock:
        hit = _plans.get(key)
    if hit is not None and hit[0] is md:
        return hit[1]
    plan = MetadataPlan(md, event_fields, settings_reported)
    with _plans_lock:
        if len(_plans) >= 16:        # (Metadata objects are few: metadata_for keeps 8)
            _plans.clear()
        _plans[key] = (md, plan)
    return plan


# How a captured value becomes what the field's generated decoder gives: as it is (a pool key,
# a byte, a char), its offset read as a string, or the bits of a signed integer.
_CAPTURED = {"boolean": "raw", "byte": "raw", "char": "raw", "short": 16, "int": 32, "long": 64,
             "java.lang.String": "string"}


def _captured_as(md: Metadata, f):
    """How field `f`'s captured value is read (see _CAPTURED), or None: not captured (an array,
    a float, a struct)."""
    if f.array:
        return None
    if f.constant_pool:
        return "raw"
    cls = md.classes.get(f.type_id)
    return _CAPTURED.get(cls.name) if cls is not None and cls.name in PRIMITIVES else None


def _capture_plan(md: Metadata, cls, name, idx, frame_method):
    """-> (what the compiled walk captures of an entry, native.program_for's form; the steps
    that read the captures back: (wanted position, how read, a stack trace's frames?) in field
    order), or steps None when the fields keep_entry takes cannot all be captured: the entry is then
    decoded from its offset."""
    if cls.name in PRIMITIVES:
        return ((True, ()), [(0, "string", False)]) if cls.name == "java.lang.String" \
            else ((False, ()), None)
    marks, steps = [], []
    for k, i in enumerate(idx):
        if i is None:
            continue
        f = cls.fields[i]
        if name == "jdk.types.StackTrace" and k == 1:
            if frame_method is None or not f.array:
                continue                     # keep_entry takes no frames
            how = _captured_as(md, md.classes[f.type_id].fields[frame_method])
            mark = (i, frame_method)
        else:
            how = _captured_as(md, f)
            mark = (i, -1)
        if how is None or (mark[1] >= 0 and how == "string"):
            return (False, ()), None
        marks.append(mark)
        steps.append((i, k, how, mark[1] >= 0))
    steps.sort()
    return (False, tuple(sorted(marks))), [step[1:] for step in steps]


def _signed(value, how):
    if how == "raw":
        return value
    value &= (1 << how) - 1
    return value - (1 << how) if value >= 1 << (how - 1) else value


def _lazy_plan(md: Metadata, cls, name, wanted, idx, frame_method, steps):
    """How an indexed entry becomes what keep_entry gives: from its captures (steps), or decoded
    from its offset, only the fields keep_entry takes (a Method's type and name, not its
    descriptor, modifiers ...) unless a decoder of those cannot be made."""
    if steps is not None:
        return name, None, idx, frame_method, steps
    if cls.name in PRIMITIVES:
        return name, md.decoder(cls.type_id), idx, frame_method, None
    try:
        decode = md.partial_decoder(cls.type_id, wanted)
    except DECODE_ERRORS:
        return name, md.decoder(cls.type_id), idx, frame_method, None
    # The partial decoder gives the wanted fields in order, None for those this JDK lacks.
    return name, decode, tuple(None if i is None else k for k, i in enumerate(idx)), \
        frame_method, None


def index_walked(indexed, entries, pools, offsets):
    """The entries of a checkpoint the walk read (its [(pool type id, first entry, end)])
    indexed by key in `offsets`, replacing any the Python reader decoded before (`pools`)."""
    all_keys = entries[0]
    for tid, first, stop in indexed:
        keys = all_keys[first:stop]
        offsets[tid].update(zip(keys, range(first, stop)))
        decoded = pools[tid]
        if decoded:
            for key in keys:
                decoded.pop(key, None)


def pool_lookup(decoded: dict, indexed: dict, data, entries, plan):
    """A pool's `get`: an entry decoded in its checkpoint, or one the compiled walk indexed,
    made now from its captures or its bytes (and kept)."""
    if not indexed:
        return decoded.get
    name, decode, idx, frame_method, steps = plan
    _keys, at, ends, caps = entries

    def from_bytes(e):
        return keep_entry(name, decode(data, at[e])[0], idx, frame_method)

    def from_captures(e):
        a = ends[e - 1] if e else 0
        out = [None] * width
        for k, how, frames in steps:
            v = caps[a]
            a += 1
            if frames:
                out[k] = tuple(caps[a:a + v]) if how == "raw" else \
                    tuple(_signed(m, how) for m in caps[a:a + v])
                a += v
            elif how == "raw":
                out[k] = v
            else:
                out[k] = read_string(data, v)[0] if how == "string" else _signed(v, how)
        if name == "jdk.types.StackTrace":
            return (0 if out[0] is None else out[0], () if out[1] is None else out[1])
        return (out[0], out[1]) if name == "jdk.types.Method" else out[0]

    width = max(len(idx), 1)
    # The shapes every JDK writes, read without from_captures' loop (a few thousand methods,
    # classes and symbols a run): one pool key, one string, a method's two keys, a stack
    # trace's truncation and frames' method keys (~1,300 traces a run named).
    def one_key(e):
        return caps[ends[e - 1] if e else 0]

    def one_string(e):
        return read_string(data, caps[ends[e - 1] if e else 0])[0]

    def two_keys(e):
        a = ends[e - 1] if e else 0
        return caps[a], caps[a + 1]

    def trace(e):
        a = ends[e - 1] if e else 0
        n = caps[a + 1]
        return caps[a], tuple(caps[a + 2:a + 2 + n])

    shape = [(k, how, frames) for k, how, frames in steps or ()]
    if steps is None:
        make = from_bytes
    elif name == "jdk.types.StackTrace" and shape == [(0, "raw", False), (1, "raw", True)]:
        make = trace
    elif name != "jdk.types.StackTrace" and shape == [(0, "raw", False)]:
        make = one_key
    elif name != "jdk.types.StackTrace" and shape == [(0, "string", False)]:
        make = one_string
    elif name == "jdk.types.Method" and shape == [(0, "raw", False), (1, "raw", False)]:
        make = two_keys
    else:
        make = from_captures

    def get(key):
        e = indexed.pop(key, None)
        if e is None:
            return decoded.get(key)
        value = decoded[key] = make(e)
        return value
    return get


def _frames_are_structs(md: Metadata, frames) -> bool:
    """Whether keep_entry can take the method of every frame of a stack trace: the frames are an
    array of (inline) structs."""
    cls = md.classes.get(frames.type_id)
    return frames.array and not frames.constant_pool and cls is not None and \
        cls.name not in PRIMITIVES


def keep_entry(name, value, idx, frame_method):
    """The part of a pool entry the summary uses (smaller than the whole decoded tuple)."""
    if name == "jdk.types.StackTrace":
        truncated = value[idx[0]] if idx[0] is not None else 0
        frames = value[idx[1]] if idx[1] is not None else []
        if not isinstance(frames, list) or frame_method is None:
            return (truncated, ())
        return (truncated, tuple(f[frame_method] for f in frames))
    if name == "java.lang.String":
        return value[0]
    if name == "jdk.types.Method":
        return (value[idx[0]] if idx[0] is not None else None,
                value[idx[1]] if idx[1] is not None else None)
    j = idx[0]
    return value[j] if j is not None else None
