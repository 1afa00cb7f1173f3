"""A chunk's methods named in the compiled code (_native.c: lc_jfr_method_names, names.py)
against Python's naming, the reference: the same frame names for every string encoding, odd
class names, missing entries and damaged pools, on hand-made pools and on recordings."""
from __future__ import annotations

import ctypes
import re
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis.derive.jvm_summary import summarize_and_fold
from analysis.read.jfr import names, native, read_jfr
from tests.conftest import REPO
from tests.helpers import jstring, varint
from tests.test_jfr_native import both_ways

KERNELS = native.get()
needs_kernels = pytest.mark.skipif(KERNELS is None, reason=native.describe())
FIXTURES = REPO / "tests" / "fixtures" / "jfr"
PROFILE = FIXTURES / "jdk17-profile.jfr"

TRACE, METHOD, CLASS, SYMBOL, STRING = 1, 2, 3, 4, 5
POOL_PLANS = {TRACE: ("jdk.types.StackTrace",), METHOD: ("jdk.types.Method",),
              CLASS: ("java.lang.Class",), SYMBOL: ("jdk.types.Symbol",),
              STRING: ("java.lang.String",)}
# plan.pool_lookup's lazy plans of the shapes every JDK writes (names.NATIVE_SHAPES)
LAZY_PLANS = {
    TRACE: ("jdk.types.StackTrace", None, (0, 1), 0, [(0, "raw", False), (1, "raw", True)]),
    METHOD: ("jdk.types.Method", None, (0, 1), None, [(0, "raw", False), (1, "raw", False)]),
    CLASS: ("java.lang.Class", None, (0,), None, [(0, "raw", False)]),
    SYMBOL: ("jdk.types.Symbol", None, (0,), None, [(0, "string", False)]),
    STRING: ("java.lang.String", None, (0,), None, [(0, "string", False)]),
}


class Pools:
    """Pool entries as the compiled walk indexes them: each entry's key and captures (a string
    as the offset of its bytes in `data`), in the walk's arrays."""

    def __init__(self):
        self.data = bytearray(b"\x00" * 8)
        self.entries = []           # (pool, key, captures)

    def string(self, encoded: bytes) -> int:
        at = len(self.data)
        self.data += encoded
        return at

    def add(self, pool, key, *captures):
        self.entries.append((pool, key, captures))

    def stacks(self, every_method: bool = False, pending: bool = False, asked=None,
               truncation_only=()):
        """[stack(key) or the error it raised, for every trace key]; the methods of those
        stacks named in C (or every method: every_method) unless native_names is patched.
        pending: the entries given as the walk's runs not yet indexed by key (a chunk's
        checkpoints after the last one the Python loop read), not as indexed ones."""
        n, caps = len(self.entries), [c for _p, _k, cs in self.entries for c in cs]
        keys = (ctypes.c_uint64 * max(n, 1))(*(k for _p, k, _c in self.entries))
        offsets = (ctypes.c_int64 * max(n, 1))()
        ends, total = (ctypes.c_int64 * max(n, 1))(), 0
        for e, (_p, _k, cs) in enumerate(self.entries):
            total += len(cs)
            ends[e] = total
        captured = (ctypes.c_uint64 * max(len(caps), 1))(*caps)
        entries = (native._view(keys, n, "Q"), native._view(offsets, n),
                   native._view(ends, n), native._view(captured, len(caps), "Q"))
        indexed = {pool: {} for pool in POOL_PLANS}
        runs: dict = {}
        for e, (pool, key, _c) in enumerate(self.entries):
            if not pending:
                indexed[pool][key] = e
            elif runs.get(pool) and runs[pool][-1][1] == e:
                runs[pool][-1] = (runs[pool][-1][0], e + 1)
            else:
                runs.setdefault(pool, []).append((e, e + 1))
        traces = sorted({k for p, k, _c in self.entries if p == TRACE}) if asked is None \
            else asked
        stack, _text, _when, truncation = names.stack_names(
            POOL_PLANS, LAZY_PLANS, {pool: {} for pool in POOL_PLANS}, indexed,
            bytes(self.data), entries, None if every_method else traces, runs,
            truncation_only)
        if truncation_only:
            return [truncation(key) for key in truncation_only]
        out = []
        for key in traces:
            try:
                out.append(stack(key))
            except Exception as exc:   # noqa: BLE001 (the Python reader's error, compared)
                out.append((type(exc).__name__, str(exc)))
        return out

    def named_in_c(self, every_method: bool = False, pending: bool = False) -> dict:
        got = {}
        real = names.native_names

        def spy(*args):
            got.update(real(*args) or {})
            return None
        names.native_names = spy
        try:
            self.stacks(every_method, pending)
        finally:
            names.native_names = real
        return got

    def both(self, monkeypatch):
        with_c = self.stacks()
        with monkeypatch.context() as m:
            m.setattr(names, "native_names", lambda *a: None)
            m.setattr(names, "native_stacks", lambda *a: None)
            without = self.stacks()
        return with_c, without


def odd_pools() -> tuple[Pools, dict[int, str], set[int]]:
    """Pools of every case the naming meets: (pools, method key -> its name, the method keys
    whose text is left to Python)."""
    p = Pools()
    expected, left = {}, set()
    symbol_key = iter(range(100, 1000))

    def symbol(encoded: bytes) -> int:
        key = next(symbol_key)
        p.add(SYMBOL, key, p.string(encoded))
        return key

    def method(key, cls_symbol, name_symbol, label, in_c=True, cls_key=None):
        cls_key = cls_key if cls_key is not None else key + 5000
        if cls_symbol is not None:
            p.add(CLASS, cls_key, cls_symbol)
        p.add(METHOD, key, cls_key, name_symbol)
        expected[key] = label
        if not in_c:
            left.add(key)

    hash_map = symbol(jstring("java/util/HashMap"))
    method(1, hash_map, symbol(jstring("get")), "java.util.HashMap.get")
    method(2, symbol(jstring("com/acme/App$$Lambda/0x0000000801001234")),
           symbol(jstring("run")), "com.acme.App$$Lambda.0x0000000801001234.run")
    method(3, symbol(jstring("a/Caf\xe9", 5)), symbol(jstring("gr\xfc\xdfe", 5)),
           "a.Caf\xe9.gr\xfc\xdfe")
    method(4, symbol(jstring("b/Gr\xfc\xdfe\u20ac", 4)), symbol(jstring("plain", 4)),
           "b.Gr\xfc\xdfe\u20ac.plain")
    method(5, symbol(jstring("c/\u00e9t\u00e9/\U0001d518")), symbol(jstring("\u4e2d")),
           "c.\u00e9t\u00e9.\U0001d518.\u4e2d")
    # a surrogate pair in a char array, Java's modified UTF-8 (a NUL, a supplementary
    # character as two 3-byte surrogates), bytes that are no UTF-8: Python's decoders decide
    method(6, symbol(jstring("d/\U0001d518", 4)), symbol(jstring("x")), "d.\U0001d518.x",
           in_c=False)
    method(7, symbol(b"\x03\x04a\xc0\x80b"), symbol(jstring("y")), "a\ufffd\ufffdb.y",
           in_c=False)
    method(8, symbol(b"\x03\x06\xed\xa0\xb4\xed\xb4\x98"), symbol(jstring("z")),
           "\ufffd" * 6 + ".z", in_c=False)
    method(9, hash_map, symbol(b"\x04\x02" + varint(0xD800) + b"q"), "java.util.HashMap.\ufffdq",
           in_c=False)
    method(10, hash_map, symbol(b"\x05\x02a\x00"), "java.util.HashMap.a\x00", in_c=False)
    # None and "" are the placeholders, in any encoding
    method(11, symbol(jstring(None)), symbol(jstring("")), "<unknown class>.<unknown>")
    method(12, symbol(b"\x03\x00"), symbol(b"\x04\x00"), "<unknown class>.<unknown>")
    method(13, hash_map, symbol(b"\x05\x00"), "java.util.HashMap.<unknown>")
    # a symbol held in the String pool (encoding 2), that pool's entry missing or itself a
    # reference
    p.add(STRING, 7, p.string(jstring("viaPool")))
    p.add(STRING, 8, p.string(b"\x02" + varint(7)))
    method(14, hash_map, symbol(b"\x02" + varint(7)), "java.util.HashMap.viaPool")
    method(15, hash_map, symbol(b"\x02" + varint(99)), "java.util.HashMap.<unknown>")
    method(16, hash_map, symbol(b"\x02" + varint(8)), "java.util.HashMap.<unknown>")
    method(17, symbol(b"\x02" + varint(7)), symbol(jstring("m")), "viaPool.m")
    # what is not in the pools: a class, a symbol, a class's symbol, a method
    method(18, None, symbol(jstring("m")), "<unknown class>.m", cls_key=4242)
    method(19, hash_map, 9999, "java.util.HashMap.<unknown>")
    method(20, 9999, symbol(jstring("m")), "<unknown class>.m")
    expected[21] = "<unknown class>.<unknown>"
    # a key given twice: the later entry counts, as in the reader's dict
    method(22, hash_map, symbol(jstring("old")), "java.util.HashMap.new")
    p.add(METHOD, 22, 5022, symbol(jstring("new")))
    # big keys (a uint64's top bit)
    method(1 << 63, hash_map, symbol(jstring("top")), "java.util.HashMap.top",
           cls_key=(1 << 64) - 1)
    p.add(METHOD, 30, 5001, hash_map)           # in no stack
    p.add(TRACE, 1, 0, len(expected), *expected)
    p.add(TRACE, 2, 1, 2, 1, 21)
    return p, expected, left


@needs_kernels
def test_methods_are_named_in_c_as_python_names_them(monkeypatch):
    pools, expected, left = odd_pools()
    with_c, without = pools.both(monkeypatch)
    assert with_c == without
    assert with_c[0] == (tuple(expected.values()), False)
    assert with_c[1] == (("java.util.HashMap.get", "<unknown class>.<unknown>"), True)
    # every indexed method but those whose text Python's decoders make (a missing one, 21,
    # is named by Python on first use)
    named = pools.named_in_c()
    assert set(named) == set(expected) - left - {21}
    assert all(named[k] == expected[k] for k in named)
    # asked for no stacks in particular, C names every method the walk indexed (a method's
    # name keeps its '/': only a class's become '.')
    assert pools.named_in_c(every_method=True) == {**named,
                                                   30: "java.util.HashMap.java/util/HashMap"}


@needs_kernels
@pytest.mark.parametrize("pending", [False, True], ids=["indexed", "pending"])
def test_stack_traces_are_read_in_c_as_python_reads_them(monkeypatch, pending):
    """The wanted stack traces read in C (names.native_stacks) are the ones Python's lookups
    give: a key given twice (the later entry), truncation values 1, 0 and 2, a stack of no
    frames, frames of a missing method, a key not in the pool (None), the same key asked
    twice; and the truncation alone of keys whose frames are not asked."""
    p = Pools()
    p.add(SYMBOL, 1, p.string(jstring("k/C")))
    p.add(SYMBOL, 2, p.string(jstring("m")))
    p.add(CLASS, 50, 1)
    p.add(METHOD, 7, 50, 2)
    p.add(TRACE, 1, 0, 2, 7, 7)
    p.add(TRACE, 2, 1, 1, 7)
    p.add(TRACE, 3, 2, 0)
    p.add(TRACE, 4, 0, 2, 7, 99)
    p.add(TRACE, 1, 1, 1, 99)                   # key 1 again: this entry counts
    asked = [1, 2, 3, 4, 5, 2]
    both = []
    for without_c in (False, True):
        with monkeypatch.context() as m:
            if without_c:
                m.setattr(names, "native_stacks", lambda *a: None)
            both.append((p.stacks(pending=pending, asked=asked),
                         p.stacks(pending=pending, asked=[2], truncation_only=[1, 2, 3, 5])))
    assert both[0] == both[1]
    stacks, truncations = both[0]
    assert stacks == [(("<unknown class>.<unknown>",), True), (("k.C.m",), True),
                      ((), False), (("k.C.m", "<unknown class>.<unknown>"), False), None,
                      (("k.C.m",), True)]
    assert truncations == [True, True, False, None]
    read = []
    real = names.native_stacks
    monkeypatch.setattr(names, "native_stacks", lambda *a: read.append(real(*a)) or read[-1])
    p.stacks(pending=pending, asked=asked)
    assert read and read[0] is not None


@needs_kernels
def test_a_stack_past_the_first_room_is_read_again(monkeypatch):
    """A stack of more frames than the first call's room (64 a key and 1,024) is read in a
    second call with room for all: the same frames, each method named once."""
    p = Pools()
    p.add(SYMBOL, 1, p.string(jstring("k/C")))
    for m in range(40):
        p.add(SYMBOL, 10 + m, p.string(jstring(f"m{m}")))
        p.add(METHOD, 100 + m, 50, 10 + m)
    p.add(CLASS, 50, 1)
    frames = [100 + (i * 7) % 40 for i in range(1500)]
    p.add(TRACE, 1, 0, len(frames), *frames)
    calls = []
    real = native.Kernels.stacks
    monkeypatch.setattr(native.Kernels, "stacks",
                        lambda self, *a: calls.append(a[-1]) or real(self, *a))
    with_c, without = p.both(monkeypatch)
    assert with_c == without and len(with_c[0][0]) == 1500
    assert with_c[0][0][:2] == ("k.C.m0", "k.C.m7") and calls == [1]
    assert len(names.native_stacks(*_one_chunk(p))[3]) == 40


def _one_chunk(p):
    """native_stacks's arguments for Pools p's entries (indexed), asking for its traces."""
    n, caps = len(p.entries), [c for _p, _k, cs in p.entries for c in cs]
    keys = (ctypes.c_uint64 * n)(*(k for _p, k, _c in p.entries))
    ends, total = (ctypes.c_int64 * n)(), 0
    for e, (_p, _k, cs) in enumerate(p.entries):
        total += len(cs)
        ends[e] = total
    captured = (ctypes.c_uint64 * len(caps))(*caps)
    entries = (native._view(keys, n, "Q"), native._view((ctypes.c_int64 * n)(), n),
               native._view(ends, n), native._view(captured, len(caps), "Q"))
    indexed = {pool: {} for pool in POOL_PLANS}
    for e, (pool, key, _c) in enumerate(p.entries):
        indexed[pool][key] = e
    traces = [k for pool, k, _c in p.entries if pool == TRACE]
    return (POOL_PLANS, LAZY_PLANS, {pool: {} for pool in POOL_PLANS}, indexed,
            bytes(p.data), entries, traces)


@needs_kernels
def test_entries_left_unindexed_name_as_indexed_ones(monkeypatch):
    """The walk's entries after the last checkpoint the Python loop read are handed to C as
    the walk's runs, not indexed by key in Python first: the same stacks and the same C
    names (a key given twice: the later entry), asked for some stacks or for every method."""
    pools, expected, left = odd_pools()
    assert pools.stacks(pending=True) == pools.stacks()
    for every_method in (False, True):
        assert pools.named_in_c(every_method, pending=True) == pools.named_in_c(every_method)
    assert pools.named_in_c(pending=True)[22] == expected[22] == "java.util.HashMap.new"
    with monkeypatch.context() as m:
        m.setattr(names, "native_names", lambda *a: None)
        assert pools.stacks(pending=True) == pools.stacks()


@needs_kernels
def test_damaged_captures_are_left_to_python_with_its_errors(monkeypatch):
    """A string offset past the data, a length past it, an unknown encoding, a method with one
    capture: C names none of them, and Python's error (or name) stands."""
    p = Pools()
    p.add(SYMBOL, 1, p.string(jstring("k/C")))
    p.add(SYMBOL, 2, 10**9)
    p.add(SYMBOL, 3, p.string(b"\x03\x7f" + b"ab"))
    p.add(SYMBOL, 4, p.string(b"\x09\x01a"))
    p.add(SYMBOL, 5, p.string(b"\x04\x02\x81"))
    p.add(CLASS, 50, 1)
    for key, name_symbol in ((11, 2), (12, 3), (13, 4), (14, 5)):
        p.add(METHOD, key, 50, name_symbol)
        p.add(TRACE, key, 0, 1, key)
    p.add(METHOD, 15, 50)
    p.add(TRACE, 15, 0, 1, 15)
    with_c, without = p.both(monkeypatch)
    assert with_c == without
    assert [type(s) for s in without] == [tuple] * 5 and without[0][0] == "IndexError"
    assert without[1][0] == "Damage" and without[2][0] == "Damage"
    assert p.named_in_c() == {}


_encoded = st.one_of(
    st.text(max_size=12).map(lambda s: jstring(s.replace("\x00", "") or None)),
    st.text(max_size=12).map(lambda s: jstring(s, 4)),
    st.text(alphabet=st.characters(max_codepoint=255), max_size=12).map(lambda s: jstring(s, 5)),
    st.lists(st.integers(0, 0x1FFFF), max_size=6).map(
        lambda units: b"\x04" + varint(len(units)) + b"".join(varint(u) for u in units)),
    st.tuples(st.sampled_from([3, 5]), st.binary(max_size=12)).map(
        lambda t: bytes([t[0]]) + varint(len(t[1])) + t[1]),
    st.integers(0, 12).map(lambda k: b"\x02" + varint(k)),
    st.binary(max_size=6),
)


@needs_kernels
@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_encoded, min_size=1, max_size=10), st.lists(_encoded, max_size=4),
       st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12), st.integers(0, 12)),
                min_size=1, max_size=12))
def test_any_pool_strings_name_the_same(monkeypatch, symbols, strings, methods):
    """Symbols and String pool entries of any bytes, methods of any (possibly missing) class
    and symbol keys: the same names or the same error."""
    p = Pools()
    for key, encoded in enumerate(symbols):
        p.add(SYMBOL, key, p.string(encoded))
    for key, encoded in enumerate(strings):
        p.add(STRING, key, p.string(encoded))
    for key, (cls_symbol, name_symbol, class_key) in enumerate(methods):
        p.add(CLASS, class_key, cls_symbol)
        p.add(METHOD, key, class_key, name_symbol)
    p.add(TRACE, 1, 0, len(methods) + 1, *range(len(methods) + 1))
    with_c, without = p.both(monkeypatch)
    assert with_c == without


def _method_name_calls(path) -> tuple[int, dict]:
    calls = []

    def count(frame, event, _arg):
        if event == "call" and frame.f_code.co_name == "method_name" and \
                frame.f_code.co_filename == names.__file__:
            calls.append(1)
    sys.setprofile(count)
    try:
        _summary, folds = summarize_and_fold(path)
    finally:
        sys.setprofile(None)
    return len(calls), folds


@needs_kernels
@pytest.mark.parametrize("path", [PROFILE, REPO / "runs" / "pool-vs-virtual" / "virtual" /
                                  "r25.2.jfr"], ids=lambda p: p.name)
def test_a_recordings_methods_are_named_in_c(path):
    """Python names no method of these recordings (their symbols are plain UTF-8)."""
    calls, folds = _method_name_calls(path)
    assert calls == 0 and sum(f["events"] for f in folds.values()) > 100


@needs_kernels
@pytest.mark.parametrize("windowed", [False, True], ids=["whole", "window"])
def test_python_indexes_no_pool_that_c_names_from(monkeypatch, windowed):
    """Of a run's recording (~1,300 entries of the Method, Class, Symbol and String pools a
    chunk, ~3,000 stack traces) Python indexes by key only the GC causes it looks up itself:
    C reads the wanted stack traces (and the warm-up's truncations) and names their methods
    from the walk's arrays as they are."""
    indexed: dict[str, int] = {}
    real = names.pool_lookup

    def counted(decoded, offsets, data, entries, plan):
        if plan is not None:
            indexed[plan[0]] = indexed.get(plan[0], 0) + len(offsets)
        return real(decoded, offsets, data, entries, plan)
    monkeypatch.setattr(names, "pool_lookup", counted)
    path = REPO / "runs" / "pool-vs-virtual" / "virtual" / "r25.2.jfr"
    window = None
    if windowed:
        whole = read_jfr(path)
        third = (whole.covered_until_ns - whole.start_ns) // 3
        window = (whole.start_ns + third, whole.covered_until_ns - third)
    summary, folds = summarize_and_fold(path, window=window)
    assert sum(f["events"] for f in folds.values()) > 100
    if windowed:
        assert summary["warmup"]["samples"]["count"] > 0
    assert {pool for pool, n in indexed.items() if n} <= {"jdk.types.GCWhen"}


def _both_folds(monkeypatch, path):
    return both_ways(monkeypatch, path, read=summarize_and_fold)


# Class name symbols of the profile recording (the JDK writes symbols as UTF-8, encoding 3):
# where each one's text starts, and its length.
_SYMBOLS = [(m.start(2), len(m.group(2))) for m in
            re.finditer(rb"\x03([\x04-\x7f])((?:java|jdk|sun)/[A-Za-z/$]+)", PROFILE.read_bytes())
            if m.group(1)[0] == len(m.group(2))]


@needs_kernels
def test_a_symbol_made_non_ascii_is_named_in_c_and_the_same(monkeypatch, tmp_path):
    data = bytearray(PROFILE.read_bytes())
    for at, n in _SYMBOLS:
        data[at + n - 2:at + n] = "\xe9".encode()      # two bytes for two: "...é"
    path = tmp_path / "accents.jfr"
    path.write_bytes(bytes(data))
    with_c, without = _both_folds(monkeypatch, path)
    assert with_c == without
    frames = [f for fold in with_c[1].values() for stack in fold["stacks"] for f in stack]
    assert any("\xe9." in f for f in frames)
    assert _method_name_calls(path)[0] == 0


@needs_kernels
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, len(_SYMBOLS) - 1), st.integers(-2, 40),
                          st.integers(0, 255)), min_size=1, max_size=6),
       st.sampled_from([None, 0.5, 0.9]))
def test_damaged_symbols_read_the_same(monkeypatch, tmp_path_factory, changes, cut):
    """Bytes of the recording's class name symbols changed (their encoding, length or text:
    invalid UTF-8, a NUL, a length past the data) and the recording cut: the summary and
    every fold are the Python reader's, or its error."""
    data = bytearray(PROFILE.read_bytes())
    for which, offset, value in changes:
        at, n = _SYMBOLS[which]
        data[at + min(offset, n - 1)] = value
    if cut is not None:
        data = data[:int(len(data) * cut)]
    path = tmp_path_factory.mktemp("sym") / "s.jfr"
    path.write_bytes(bytes(data))
    with_c, without = _both_folds(monkeypatch, path)
    assert with_c == without
