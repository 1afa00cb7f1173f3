"""A chunk's metadata event -> the type table, and decoders generated from it.

Every JFR chunk describes its own types (classes with ordered fields) in a metadata event; events
and constant-pool entries are just those fields written one after another with no tags. So the
reader builds, per metadata event, a decoder per class it needs and a skipper for the rest. The
decoders are generated Python functions (one per class, fields unrolled, the one-byte case of a
varint inlined) because a generic interpreter costs several times more per field; only field
*kinds* from a fixed set reach the generated source, never a name or string from the file.

Wire encoding (JFR 2.x, JDK 11 and later): byte and boolean are one raw byte; short, char, int
and long are unsigned LEB128 varints (7 bits a byte, the 9th byte contributes all 8 bits),
two's complement in 64 bits; float and double are big-endian IEEE; a string is an encoding byte
(0 null, 1 empty, 2 constant-pool key, 3 UTF-8, 4 char array, 5 Latin-1) then its data. A field
flagged `constantPool` holds a varint key into its type's pool; `dimension="1"` is an array (a
varint count, then the items); any other non-primitive field is a struct written inline.
"""
from __future__ import annotations

import re
import struct
import threading
from collections import OrderedDict

from analysis.read.jfr.wire import Damage, read_string, read_varint, skip_string

_FLOAT = struct.Struct(">f")
_DOUBLE = struct.Struct(">d")
# What generated codecs call; each codec's namespace starts as a copy of this.
_CODEC_ENV = {"read_varint": read_varint, "read_string": read_string,
              "skip_string": skip_string, "Damage": Damage,
              "FLOAT": _FLOAT.unpack_from, "DOUBLE": _DOUBLE.unpack_from}

PRIMITIVES = {"boolean", "byte", "char", "short", "int", "long", "float", "double",
              "java.lang.String"}

# Nesting of inline structs is a few levels in every JDK; a deeper chain is a damaged or hostile
# metadata event, refused rather than recursed into.
MAX_STRUCT_DEPTH = 16
MAX_ELEMENT_DEPTH = 32
# More classes than any JDK describes (about 200 event types and 100 other types in JDK 25).
MAX_CLASSES = 10_000


class _Fields:
    """A plain record: equal to one of its class with equal fields, shown as its fields.
    (Plain classes, not dataclasses: importing dataclasses and making the classes' methods cost
    the CLI ~0.01 s of start-up.)"""
    __slots__ = ()
    __hash__ = None

    def __eq__(self, other):
        return type(other) is type(self) and \
            all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    def __repr__(self):
        return f"{type(self).__name__}(" + ", ".join(repr(getattr(self, k))
                                                     for k in self.__slots__) + ")"


class FieldInfo(_Fields):
    __slots__ = ("name", "type_id", "constant_pool", "array")

    def __init__(self, name: str, type_id: int, constant_pool: bool, array: bool):
        self.name, self.type_id = name, type_id
        self.constant_pool, self.array = constant_pool, array


class ClassInfo(_Fields):
    __slots__ = ("type_id", "name", "super_type", "fields")

    def __init__(self, type_id: int, name: str, super_type: str | None,
                 fields: list[FieldInfo] | None = None):
        self.type_id, self.name, self.super_type = type_id, name, super_type
        self.fields = [] if fields is None else fields

    def field_index(self, name: str) -> int | None:
        for i, f in enumerate(self.fields):
            if f.name == name:
                return i
        return None


LEGACY_PREFIX = "com.oracle.jdk."


def canonical_name(name: str) -> str:
    """A type's JDK 11+ name: com.oracle.jdk.GarbageCollection -> jdk.GarbageCollection."""
    return "jdk." + name[len(LEGACY_PREFIX):] if name.startswith(LEGACY_PREFIX) else name


class Metadata:
    """The classes of one metadata event, by id and by name, and lazily generated codecs."""

    def __init__(self, classes: dict[int, ClassInfo]):
        self.classes = classes
        self.by_name = {c.name: c for c in classes.values()}
        # JDK 9 and 10 (format 1.0) name the same types com.oracle.jdk.*; JDK 11 renamed them.
        for c in classes.values():
            self.by_name.setdefault(canonical_name(c.name), c)
        self._decoders: dict[int, object] = {}
        self._skippers: dict[int, object] = {}
        self._partial: dict = {}
        self._in_progress: set = set()
        self._width_in_progress: set = set()
        # One Metadata is shared by every recording of the same JVM build (metadata_for), and
        # an executor may run tasks in threads: generation (which tracks the types in progress
        # to refuse cycles) runs under this lock; reading a generated codec needs none.
        self._lock = threading.RLock()

    def decoder(self, type_id: int):
        """A function (data, pos) -> (tuple of field values, new pos)."""
        return self._codec(type_id, True)

    def skipper(self, type_id: int):
        """A function (data, pos) -> new pos, for values we only need to step over."""
        return self._codec(type_id, False)

    def partial_decoder(self, type_id: int, wanted: tuple[str, ...]):
        """A function (data, pos) -> (tuple of the `wanted` fields' values, in that order, None
        for a field this JDK does not have; pos after the last one read). Fields before the
        last wanted one that are not wanted are stepped over, not built; fields after it are
        not read at all (the event's size says where the next event starts)."""
        key = (type_id, wanted)
        fn = self._partial.get(key)
        if fn is not None:
            return fn
        with self._lock:
            return self._generate_partial(key)

    def _generate_partial(self, key):
        type_id, wanted = key
        fn = self._partial.get(key)
        if fn is not None:
            return fn
        cls = self.classes.get(type_id)
        if cls is None:
            raise Damage(f"type id {type_id} is used but not described by the metadata")
        index = {f.name: i for i, f in enumerate(cls.fields)}
        needed = {index[w] for w in wanted if w in index}
        last = max(needed, default=-1)
        env = dict(_CODEC_ENV)
        lines = ["def codec(data, pos):"]
        lines += self._fields_lines(cls.fields[:last + 1], needed, env)
        result = ", ".join(f"v{index[w]}" if w in index else "None" for w in wanted)
        lines.append(f"    return ({result}{',' if len(wanted) == 1 else ''}), pos")
        exec("\n".join(lines), env)  # noqa: S102 - source built only from fixed kinds
        fn = self._partial[key] = env["codec"]
        return fn

    def _codec(self, type_id: int, decode: bool):
        cache = self._decoders if decode else self._skippers
        fn = cache.get(type_id)
        if fn is not None:
            return fn
        with self._lock:
            fn = cache.get(type_id)
            if fn is not None:
                return fn
            if (type_id, decode) in self._in_progress:
                raise Damage(f"type id {type_id} contains itself inline (a cycle)")
            if len(self._in_progress) > MAX_STRUCT_DEPTH:
                raise Damage(f"inline structs nest deeper than {MAX_STRUCT_DEPTH}")
            self._in_progress.add((type_id, decode))
            try:
                fn = cache[type_id] = self._generate(type_id, decode)
            finally:
                self._in_progress.discard((type_id, decode))
            return fn

    def _skip_tokens(self, f: FieldInfo, depth: int = 0):
        """The run tokens that step over one value of field `f`, or None if its shape is not
        fixed (strings, arrays, deep or cyclic structs)."""
        if f.array or depth > MAX_STRUCT_DEPTH:
            return None
        if f.constant_pool:
            return ["varint"]
        cls = self.classes.get(f.type_id)
        if cls is None:
            return None
        if cls.name in PRIMITIVES:
            return {"boolean": ["byte"], "byte": ["byte"], "float": ["float"],
                    "double": ["double"], "java.lang.String": None}.get(cls.name, ["varint"])
        tokens = []
        for g in cls.fields:
            t = self._skip_tokens(g, depth + 1)
            if t is None:
                return None
            tokens += t
        return tokens

    def _min_width(self, f: FieldInfo) -> int:
        """Fewest bytes one value of this field can take (0 only for an empty inline struct)."""
        if f.array or f.constant_pool:
            return 1
        cls = self.classes.get(f.type_id)
        if cls is None:
            return 1
        if cls.name in PRIMITIVES:
            return 4 if cls.name == "float" else 8 if cls.name == "double" else 1
        if f.type_id in self._width_in_progress:
            return 1  # a cycle; _codec refuses it anyway
        self._width_in_progress.add(f.type_id)
        try:
            return sum(self._min_width(g) for g in cls.fields)
        finally:
            self._width_in_progress.discard(f.type_id)

    # -- code generation -------------------------------------------------------------------
    def _generate(self, type_id: int, decode: bool):
        cls = self.classes.get(type_id)
        if cls is None:
            raise Damage(f"type id {type_id} is used but not described by the metadata")
        env = dict(_CODEC_ENV)
        lines = ["def codec(data, pos):"]
        names = []
        if cls.name in PRIMITIVES:
            # A pool of a primitive type (java.lang.String is the only one in practice).
            lines += _primitive_lines(cls.name, "v0", decode)
            names.append("v0")
        names += [f"v{i}" for i in range(len(cls.fields))]
        lines += self._fields_lines(cls.fields, range(len(cls.fields)) if decode else (), env)
        if decode:
            lines.append(f"    return ({', '.join(names)}{',' if len(names) == 1 else ''}), pos")
        else:
            lines.append("    return pos")
        exec("\n".join(lines), env)  # noqa: S102 - source built only from the fixed kinds above
        return env["codec"]

    def _fields_lines(self, fields, decoded, env: dict):
        """Source lines that read `fields` in order: those whose index is in `decoded` into
        v0, v1, ...; the others are stepped over (a run of fixed-shape ones by one match)."""
        lines: list = []
        run: list = []
        for i, f in enumerate(fields):
            decode = i in decoded
            tokens = None if decode else self._skip_tokens(f)
            if tokens is not None:
                run += tokens
                continue
            lines += _flush_run(run, env)
            lines += self._value_lines(f, f"v{i}", decode, env)
        lines += _flush_run(run, env)
        return lines

    def _value_lines(self, f: FieldInfo, var: str, decode: bool, env: dict):
        """Source lines that read (decode) or step over (skip) one field, array or not."""
        item_lines = self._field_lines(f, var, decode, env)
        if not f.array:
            return item_lines
        # Every item takes at least one byte, so a count beyond the bytes left is damage, and
        # nested arrays cannot multiply into unbounded work.
        if self._min_width(FieldInfo(f.name, f.type_id, f.constant_pool, False)) < 1:
            raise Damage(f"field {f.name} is an array of empty structs")
        lines = ["    n, pos = read_varint(data, pos)",
                 "    if n > len(data) - pos: raise Damage('array of ' + str(n) + ' items "
                 "claims more bytes than remain')"]
        if decode:
            lines += ["    items = []", "    for _ in range(n):"]
            lines += ["    " + ln for ln in item_lines]
            lines += [f"        items.append({var})", f"    {var} = items"]
        else:
            lines += ["    for _ in range(n):"]
            lines += ["    " + ln for ln in item_lines] or ["        pass"]
        return lines

    def _field_lines(self, f: FieldInfo, var: str, decode: bool, env: dict):
        if f.constant_pool:
            return _varint_lines(var, decode)
        cls = self.classes.get(f.type_id)
        if cls is None:
            raise Damage(f"field {f.name} has type id {f.type_id}, not in the metadata")
        if cls.name in PRIMITIVES:
            return _primitive_lines(cls.name, var, decode)
        # An inline struct: call its own generated codec.
        sub = f"sub{f.type_id}_{int(decode)}"
        if sub not in env:
            env[sub] = self._codec(f.type_id, decode)
        if decode:
            return [f"    {var}, pos = {sub}(data, pos)"]
        return [f"    pos = {sub}(data, pos)"]


# Stepping over fields one by one costs a Python call per multi-byte varint (timestamps,
# addresses, sizes are 5-9 bytes). A run of consecutive fields of fixed shape (varints, bytes,
# floats, constant-pool keys, inline structs of those) is instead stepped over by one compiled
# regular expression match, in C.
_VARINT_RE = rb"(?:[\x80-\xff]{8}[\x00-\xff]|[\x80-\xff]{0,7}[\x00-\x7f])"
_TOKEN_RE = {"varint": _VARINT_RE, "byte": rb"[\x00-\xff]", "float": rb"[\x00-\xff]{4}",
             "double": rb"[\x00-\xff]{8}"}
_RUN_CACHE: dict[tuple, object] = {}


def _run_matcher(tokens: tuple[str, ...]):
    m = _RUN_CACHE.get(tokens)
    if m is None:
        parts = []
        i = 0
        while i < len(tokens):  # collapse repeats: (?:VARINT){5}
            j = i
            while j < len(tokens) and tokens[j] == tokens[i]:
                j += 1
            parts.append(b"(?:" + _TOKEN_RE[tokens[i]] + b"){%d}" % (j - i))
            i = j
        m = _RUN_CACHE[tokens] = re.compile(b"".join(parts)).match
    return m


def _flush_run(tokens: list, env: dict) -> list[str]:
    if not tokens:
        return []
    if tokens == ["varint"]:
        lines = _varint_lines("_", False)
    else:
        name = f"run{len(env)}"
        env[name] = _run_matcher(tuple(tokens))
        lines = [f"    m = {name}(data, pos)",
                 "    if m is None: raise IndexError('fields run past the data')",
                 "    pos = m.end()"]
    tokens.clear()
    return lines


def _varint_lines(var: str, decode: bool):
    if decode:
        # Type ids, durations and sizes mostly take one or two bytes: both inline.
        return ["    b = data[pos]",
                f"    if b < 128: {var} = b; pos += 1",
                f"    elif data[pos + 1] < 128: {var} = b & 127 | data[pos + 1] << 7; pos += 2",
                f"    else: {var}, pos = read_varint(data, pos)"]
    return ["    if data[pos] < 128: pos += 1",
            "    else: pos = read_varint(data, pos)[1]"]


def _primitive_lines(type_name: str, var: str, decode: bool):
    if type_name in ("boolean", "byte"):
        return [f"    {var} = data[pos]; pos += 1"] if decode else ["    data[pos]; pos += 1"]
    if type_name in ("char", "short", "int", "long"):
        lines = _varint_lines(var, decode)
        if decode and type_name == "long":
            lines.append(f"    if {var} >= 0x8000000000000000: {var} -= 0x10000000000000000")
        elif decode and type_name in ("int", "short"):
            bits = 32 if type_name == "int" else 16
            lines += [f"    {var} &= {(1 << bits) - 1}",
                      f"    if {var} >= {1 << (bits - 1)}: {var} -= {1 << bits}"]
        return lines
    if type_name == "float":
        return [f"    {var} = FLOAT(data, pos)[0]; pos += 4"] if decode else ["    pos += 4"]
    if type_name == "double":
        return [f"    {var} = DOUBLE(data, pos)[0]; pos += 8"] if decode else ["    pos += 8"]
    # java.lang.String
    if not decode:
        return ["    pos = skip_string(data, pos)"]
    # Settings, thread and class names are short ASCII strings: UTF-8 (3), a char array (4)
    # and Latin-1 (5) of ASCII are the bytes themselves, read here without read_string's call;
    # anything else, or a length read_string refuses, goes to read_string.
    return ["    sb = data[pos]",
            "    if 3 <= sb <= 5 and data[pos + 1] < 128 and \\",
            "            data[pos + 1] <= len(data) - pos - 2:",
            "        sv = data[pos + 2:pos + 2 + data[pos + 1]]",
            "        if sv.isascii():",
            f"            {var} = sv.decode('ascii'); pos += 2 + len(sv)",
            f"        else: {var}, pos = read_string(data, pos)",
            f"    else: {var}, pos = read_string(data, pos)"]


# Every chunk a JVM writes carries a metadata event, and every JVM of one build writes the same
# one (about 110 KB: the type descriptions, not measurements). Parsing it and generating its
# codecs costs about 0.1 s, more than reading a benchmark's events, so one Metadata is kept per
# distinct event bytes for the life of the process (a worker reads many runs' recordings).
# Keyed by the bytes themselves (equality: no digest collision can share types between
# different events), least recently used first out. A lookup compares the event's bytes with
# the few cached ones (a length check, then memcmp) instead of hashing them: a dict lookup
# hashes all ~110 KB anew for every recording (a new bytes object each), ~4x the comparison.
METADATA_CACHE_SIZE = 8
_metadata_cache: OrderedDict[bytes, Metadata] = OrderedDict()
_metadata_cache_lock = threading.Lock()


def metadata_for(data, pos: int, end: int) -> Metadata:
    """parse_metadata(data, pos, end), or the Metadata already parsed from the same bytes (the
    event's start time and duration, which differ in every chunk, excluded)."""
    _start_time, q = read_varint(data, pos)
    _duration, q = read_varint(data, q)
    key = bytes(data[q:end])
    with _metadata_cache_lock:
        for known, md in _metadata_cache.items():
            if known == key:
                _metadata_cache.move_to_end(known)
                return md
    md = parse_metadata(data, pos, end)
    with _metadata_cache_lock:
        _metadata_cache[key] = md
        while len(_metadata_cache) > METADATA_CACHE_SIZE:
            _metadata_cache.popitem(last=False)
    return md


def parse_metadata(data, pos: int, end: int) -> Metadata:
    """Parse the metadata event whose payload (after size and type id) starts at `pos`."""
    _start_time, pos = read_varint(data, pos)
    _duration, pos = read_varint(data, pos)
    _metadata_id, pos = read_varint(data, pos)
    count, pos = read_varint(data, pos)
    if count > end - pos:
        raise Damage(f"metadata string table claims {count} strings in {end - pos} bytes")
    strings = []
    for _ in range(count):
        s, pos = read_string(data, pos)
        strings.append(s if isinstance(s, str) else "")  # a pool reference here is damage
    root, pos = _read_element(data, pos, end, strings, 0)
    if pos > end:
        raise Damage("metadata event runs past its size")
    classes: dict[int, ClassInfo] = {}
    for metadata_element in _children(root, "metadata"):
        for c in _children(metadata_element, "class"):
            attrs = c[1]
            try:
                type_id = int(attrs["id"])
                cls = ClassInfo(type_id, attrs["name"], attrs.get("superType"))
                for fe in _children(c, "field"):
                    fa = fe[1]
                    cls.fields.append(FieldInfo(fa["name"], int(fa["class"]),
                                                fa.get("constantPool") == "true",
                                                fa.get("dimension") == "1"))
            except (KeyError, ValueError, TypeError) as exc:
                raise Damage(f"metadata class element without a valid {exc}") from None
            classes[type_id] = cls
            if len(classes) > MAX_CLASSES:
                raise Damage(f"metadata describes more than {MAX_CLASSES} classes")
    return Metadata(classes)


def _children(element, name):
    return [c for c in element[2] if c[0] == name]


def _read_element(data, pos, end, strings, depth):
    """An element: name index, attributes (key index, value index), children. -> (name, attrs,
    children)."""
    if depth > MAX_ELEMENT_DEPTH:
        raise Damage(f"metadata elements nest deeper than {MAX_ELEMENT_DEPTH}")
    n = len(strings)
    name_index, pos = read_varint(data, pos)
    attr_count, pos = read_varint(data, pos)
    if attr_count > end - pos:
        raise Damage("metadata element claims more attributes than bytes remain")
    attrs = {}
    for _ in range(attr_count):
        k, pos = read_varint(data, pos)
        v, pos = read_varint(data, pos)
        if k >= n or v >= n:
            raise Damage("metadata attribute refers past the string table")
        attrs[strings[k]] = strings[v]
    child_count, pos = read_varint(data, pos)
    if child_count > end - pos:
        raise Damage("metadata element claims more children than bytes remain")
    children = []
    for _ in range(child_count):
        child, pos = _read_element(data, pos, end, strings, depth + 1)
        children.append(child)
    if name_index >= n:
        raise Damage("metadata element name refers past the string table")
    return (strings[name_index], attrs, children), pos
