"""The JFR reader's compiled checkpoint walk (analysis/read/jfr/_native.c) against the reader
without it: the same summaries, warnings and errors for every fixture, the fuzz corpus, damaged
and built recordings; the program's refusals; and the fallback when the walk cannot be built or
loaded. Run with LOADCURVE_NATIVE=0 too (the walk off: every JFR test on the Python path)."""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis.errors import JfrError
from analysis.derive.jvm_summary import summarize_jfr
from analysis.read.jfr import native
from analysis.read.jfr.metadata import ClassInfo, FieldInfo, Metadata
from analysis.read.jfr.wire import read_varint
from tests.conftest import REPO
from tests.helpers import (FUZZ_CORPUS, GC, META_AT, REAL, START_TICKS, chunk, event, gc_event,
                           varint)

FIXTURES = REPO / "tests" / "fixtures" / "jfr"
KERNELS = native.get()
needs_kernels = pytest.mark.skipif(KERNELS is None, reason=native.describe())


def both_ways(monkeypatch, path, read=summarize_jfr, **kw):
    """(with the walk, without it): each read(path, **kw) or the JfrError's text."""
    out = []
    for use in (True, False):
        with monkeypatch.context() as m:
            if not use:
                m.setattr(native, "get", lambda: None)
            try:
                out.append(read(path, **kw))
            except JfrError as exc:
                out.append(str(exc))
    return out


def test_walk_is_built_wherever_there_is_a_compiler():
    """So that a silent fallback (and a 2x slower JFR reader) cannot go unnoticed."""
    if os.environ.get("LOADCURVE_NATIVE") == "0" or not (os.environ.get("CC")
                                                          or shutil.which("cc")):
        pytest.skip("no C compiler, or the walk is switched off")
    assert KERNELS is not None, native.describe()


@needs_kernels
@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.iterdir()
                                        if p.name not in ("src", "record")))
def test_fixtures_read_the_same(monkeypatch, name):
    with_walk, without = both_ways(monkeypatch, FIXTURES / name,
                                   attribution=[(r"java\..*", "jdk"), (r".*", "rest")])
    assert with_walk == without


@needs_kernels
def test_windowed_read_is_the_same(monkeypatch):
    s = summarize_jfr(FIXTURES / "jdk17-profile.jfr")
    start = int(s["start_epoch_s"] * 1e9)
    window = (start + 2 * 10**9, start + int(s["duration_s"] * 1e9) - 10**9)
    with_walk, without = both_ways(monkeypatch, FIXTURES / "jdk17-profile.jfr", window=window)
    assert with_walk == without and with_walk["samples"]["count"]


@needs_kernels
@pytest.mark.parametrize("path", sorted((FUZZ_CORPUS / "jfr").glob("*")), ids=lambda p: p.name)
def test_fuzz_corpus_reads_the_same(monkeypatch, path):
    with_walk, without = both_ways(monkeypatch, path)
    assert with_walk == without


@needs_kernels
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, len(REAL) - 1), st.integers(0, 255)),
                min_size=1, max_size=8),
       st.sampled_from(["anywhere", "metadata", "events"]), st.integers(0, len(REAL)))
def test_damaged_recordings_read_the_same(monkeypatch, tmp_path_factory, changes, region, cut):
    """Changed bytes anywhere (the walk must defer every checkpoint the Python reader warns
    about, and index the same entries of the others), and recordings cut short."""
    data = bytearray(REAL)
    for pos, value in changes:
        if region == "metadata":
            pos = META_AT + pos % 90_000
        elif region == "events":
            pos = 110_000 + pos % (len(REAL) - 110_000)
        data[pos] = value
    path = tmp_path_factory.mktemp("mut") / "m.jfr"
    path.write_bytes(bytes(data[:max(cut, 200)]))
    with_walk, without = both_ways(monkeypatch, path)
    assert with_walk == without


@needs_kernels
def test_damaged_checkpoints_are_left_to_the_python_reader(monkeypatch, tmp_path):
    """Pools the walk cannot step through: of a type the metadata does not describe, or
    claiming more entries or items than bytes remain: the Python reader's warning stands."""
    cases = [event(1, varint(0) * 3 + b"\x00" + varint(1) + varint(9999) + varint(1) + b"\x01"),
             event(1, varint(0) * 3 + b"\x00" + varint(1) + varint(23) + varint(1 << 40)),
             event(1, varint(0) * 3 + b"\x00" + varint(1 << 50)),
             event(1, varint(0) * 3 + b"\x00" + varint(1) + varint(23) + varint(1) + varint(5)
                   + b"\x03" + varint(200) + b"abc"),
             event(1, varint(0) * 3)]
    for i, checkpoint in enumerate(cases):
        path = tmp_path / f"r{i}.jfr"
        path.write_bytes(chunk(checkpoint + gc_event(START_TICKS, 5, 5)))
        with_walk, without = both_ways(monkeypatch, path)
        assert with_walk == without and "checkpoint" in with_walk["warnings"][0], i


@needs_kernels
def test_events_are_listed_with_their_java_values():
    """A long, int or short is signed as the generated decoder makes it; a pool key or a byte
    as it is, and one of 2^63 or more (not an int64) is left to the Python decoder; so is an
    event whose fields run past its size. A string is listed as its offset."""
    md = Metadata({1: ClassInfo(1, "long", None), 2: ClassInfo(2, "int", None),
                   3: ClassInfo(3, "short", None), 4: ClassInfo(4, "boolean", None),
                   5: ClassInfo(5, "java.lang.String", None),
                   100: ClassInfo(100, "Ev", None, [
                       FieldInfo("a", 1, False, False), FieldInfo("s", 5, False, False),
                       FieldInfo("b", 2, False, False), FieldInfo("c", 3, True, False)]),
                   101: ClassInfo(101, "Flags", None, [FieldInfo("f", 4, False, False),
                                                       FieldInfo("h", 3, False, False)]),
                   102: ClassInfo(102, "Named", None, [FieldInfo("a", 1, False, False),
                                                       FieldInfo("s", 5, False, False)])})
    program = native.program_for(md, {}, {100: (0, 2, 3), 101: (0, 1), 102: (0, 1)})
    assert program.events == {100, 101, 102}
    events = [event(100, varint(2**64 - 1) + b"\x03\x01x" + varint(0xFFFFFFFF) + varint(5)),
              event(100, varint(7) + b"\x01" + varint(2**31 - 1) + varint(2**63)),
              event(101, b"\x01" + varint(0xFFFF)),
              event(100, varint(1) + b"\x03\x09x"),
              event(102, varint(3) + b"\x04\x02ab"),
              event(102, varint(3) + b"\x09\x02ab")]
    data = bytes(68) + b"".join(events) + b"\x00"
    listed_at, values = KERNELS.checkpoints(data, program)[2]
    at = [68 + sum(map(len, events[:i])) + 5 for i in range(len(events))]
    assert listed_at.tolist() == [at[0], at[2], at[4]]
    assert values.tolist() == [-1, -1, 5, 0] + [1, -1, 0, 0] + [3, at[4] + 1, 0, 0]


@needs_kernels
def test_walk_indexes_the_entries_and_defers_the_damaged():
    md = Metadata({20: ClassInfo(20, "java.lang.String", None),
                   21: ClassInfo(21, "int", None)})
    program = native.program_for(md, {20: (True, ())})
    good = event(1, varint(1) * 3 + b"\x00" + varint(2) + varint(20) + varint(2)
                 + varint(5) + b"\x03\x03abc" + varint(300) + b"\x01"
                 + varint(21) + varint(1) + varint(7) + varint(1 << 40), padded=False)
    bad = event(1, varint(1) * 3 + b"\x00" + varint(1) + varint(20) + varint(1)
                + varint(5) + b"\x07", padded=False)
    data = bytes(68) + good + bad + b"\x00"
    walked, entries, _, _, _ = KERNELS.checkpoints(data, program)
    p = 70
    # the offsets of the values, and as captures the same (where each string starts)
    assert walked == {p: [(20, 0, 2)]}
    assert [m.tolist() for m in entries] == [[5, 300], [p + 8, p + 15], [1, 2], [p + 8, p + 15]]
    # Types not given a program (here none: nothing kept) make the checkpoint deferred.
    assert KERNELS.checkpoints(data, native.program_for(Metadata({}), {}))[0] == {}


def test_program_refuses_what_the_python_reader_refuses():
    long_ = ClassInfo(1, "long", None)
    cyclic = ClassInfo(2, "Cyclic", None, [FieldInfo("self", 2, False, False)])
    empty = ClassInfo(3, "Empty", None)
    arrays_of_empty = ClassInfo(4, "Arrays", None, [FieldInfo("e", 3, False, True)])
    unknown = ClassInfo(5, "Unknown", None, [FieldInfo("x", 99, False, False)])
    fine = ClassInfo(6, "Fine", None, [FieldInfo("a", 1, False, False),
                                       FieldInfo("b", 3, False, False),
                                       FieldInfo("c", 1, True, True)])
    chain = [ClassInfo(10 + i, f"Nest{i}", None, [FieldInfo("n", 11 + i, False, False)])
             for i in range(native.MAX_NESTING + 1)]
    chain[-1].fields = [FieldInfo("a", 1, False, False)]
    md = Metadata({c.type_id: c for c in [long_, cyclic, empty, arrays_of_empty, unknown, fine,
                                          *chain]})
    program = native.program_for(md, {6: (False, ((0, -1),))})
    walked = set(program.type_ids[:program.n_types].tolist())
    assert {1, 3, 6} <= walked
    assert not walked & {2, 4, 5, 10}
    assert 11 in walked      # the chain less its first link nests MAX_NESTING deep
    assert program.slot_types == [6]
    # A pool kept but not indexable is not walked: its checkpoints go to the Python reader.
    refused = native.program_for(md, {6: None})
    assert 6 not in refused.type_ids[:refused.n_types].tolist() and refused.slot_types == []


def test_an_unloadable_object_means_the_python_reader(tmp_path, monkeypatch):
    broken = tmp_path / "broken.so"
    broken.write_bytes(b"not an ELF file")
    monkeypatch.setattr(native.LOADER, "build", lambda: broken)
    monkeypatch.setattr(native.LOADER, "loaded", [])
    assert native.get() is None
    assert native.describe().startswith("Python")


@pytest.mark.parametrize("env", [{"LOADCURVE_NATIVE": "0"}, {"CC": "false"}])
def test_python_reader_alone_in_a_fresh_interpreter(tmp_path, env):
    """Switched off, or the compiler failing: the Python reader alone, the same summary."""
    code = ("import json, sys\n"
            "from analysis.derive.jvm_summary import summarize_jfr\n"
            "from analysis.read.jfr import native\n"
            "assert native.get() is None, native.describe()\n"
            "print(json.dumps(summarize_jfr(sys.argv[1]), sort_keys=True))\n")
    full_env = {**os.environ, "LOADCURVE_NATIVE_CACHE": str(tmp_path / "cache"), **env}
    path = FIXTURES / "jdk25-default.jfr"
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                         text=True, cwd=REPO, env=full_env, check=True).stdout
    assert json.loads(out) == json.loads(json.dumps(summarize_jfr(path)))


@needs_kernels
def test_unpadded_events_and_a_gc_beside_checkpoints(monkeypatch, tmp_path):
    path = tmp_path / "r.jfr"
    checkpoint = event(1, varint(0) * 3 + b"\x00" + varint(1) + varint(23) + varint(1)
                       + varint(5) + b"\x03\x02ok", padded=False)
    path.write_bytes(chunk(checkpoint + event(GC, varint(START_TICKS) + varint(5) + varint(7)
                                              + b"\x02" + varint(5) + varint(5) + varint(5))))
    with_walk, without = both_ways(monkeypatch, path)
    assert with_walk == without and with_walk["gc"]["count"] == 1


def test_the_pools_the_summary_resolves_are_captured():
    """A JDK's stack traces, methods, classes, symbols and strings are read back from what the
    walk captured, not decoded again (which would be correct but slower)."""
    from analysis.read.jfr.chunks import iter_chunks
    from analysis.read.jfr.reader import ChunkReader
    from analysis.read.jfr.summary import Summary
    for fixture in ("jdk17-profile.jfr", "jdk25-default.jfr"):
        reader = ChunkReader(Summary(None, None))
        for c in iter_chunks(FIXTURES / fixture):
            reader.read(c)
        captured = {plan[0]: plan[4] is not None for plan in reader.lazy_plans.values()}
        assert set(captured) == {"jdk.types.StackTrace", "jdk.types.Method", "java.lang.Class",
                                 "jdk.types.Symbol", "jdk.types.GCWhen", "java.lang.String"}
        assert all(captured.values()), captured


UNREAD = 60     # an event type no summary reads (a GC phase, say): stepped over by its size


@needs_kernels
def test_the_python_loop_sees_only_what_the_summary_reads():
    """The walk lists where each wanted event starts, so that the events no summary reads
    (millions of GC phases in a profile recording) never reach the Python loop; a batched
    type's events are handed over by type instead, none of them visited; a checkpoint the walk
    read is not visited (its entries are in `walked`), nor is a listed event whose kept value
    is not among those wanted (`keep`)."""
    from analysis.read.jfr.chunks import HEADER_SIZE
    from analysis.read.jfr.metadata import metadata_for
    unread = event(UNREAD, varint(1) * 6)
    checkpoint = event(1, varint(0) * 3 + b"\x00" + varint(0))
    gcs = [gc_event(START_TICKS + 10 * i, 5 + i, 3) for i in range(2)]
    parts = [unread, unread, gcs[0], unread, checkpoint, unread, gcs[1], unread]
    data = chunk(b"".join(parts))
    md_event = data[HEADER_SIZE:HEADER_SIZE + len(data) - len(b"".join(parts)) - HEADER_SIZE]
    md = metadata_for(data, HEADER_SIZE + 5, HEADER_SIZE + len(md_event))
    start = HEADER_SIZE + len(md_event)
    at = [start + sum(map(len, parts[:i])) for i in range(len(parts))]
    program = native.program_for(md, {}, {GC: (0, 4, 5)})
    walked, _, _, (visits, stop), batched = KERNELS.checkpoints(data, program, {GC})
    assert visits.tolist() == [at[2], at[6]] and stop == len(data) and batched == {}
    assert list(walked) == [at[4] + 5]
    _, _, listed, (visits, stop), batched = KERNELS.checkpoints(data, program, {GC}, {GC})
    assert visits.tolist() == [] and listed[0].tolist() == []
    assert batched[GC].tolist() == [START_TICKS, 5, 3, 0, START_TICKS + 10, 6, 3, 0]
    # keep: only the GC whose second value (sumOfPauses) is 6 or 9
    _, _, listed, (visits, _), _ = KERNELS.checkpoints(data, program, {GC}, (),
                                                       {GC: (1, [9, 6])})
    assert visits.tolist() == [at[6]] and listed[0].tolist() == [at[6] + 5]
    _, _, _, _, batched = KERNELS.checkpoints(data, program, {GC}, {GC}, {GC: (1, [5])})
    assert batched[GC].tolist() == [START_TICKS, 5, 3, 0]


@needs_kernels
def test_a_checkpoint_left_to_the_python_reader_is_read_in_its_place(monkeypatch):
    """Every other checkpoint the walk read handed to the Python reader instead (as one it
    leaves is): the loop visits those and indexes the walk's others before and after them, in
    the chunk's order, so the summary and the stacks are the same as without the walk."""
    from analysis.derive.jvm_summary import summarize_and_fold
    walk = native.Kernels.checkpoints
    left = []

    def leaving_some(self, data, program, visit=(), batch=(), keep=None):
        walked, entries, listed, (visits, stop), batched = walk(self, data, program, visit,
                                                                batch, keep)
        give = {p for k, p in enumerate(walked) if k % 2}
        left.extend(give)
        # a checkpoint's visit is where its size prefix starts; walked is keyed by its payload
        starts, pos = {}, 68
        while pos < stop:
            size, p = read_varint(data, pos)
            starts[p + 1] = pos
            pos += size
        visits = sorted([*visits.tolist(), *(starts[p] for p in give)])
        return ({p: g for p, g in walked.items() if p not in give}, entries, listed,
                (visits, stop), batched)

    s = summarize_jfr(FIXTURES / "jdk17-profile.jfr")
    start = int(s["start_epoch_s"] * 1e9)
    window = (start + 10**9, start + int(s["duration_s"] * 1e9) - 10**9)
    kw = {"read": summarize_and_fold, "window": window,
          "attribution": [(r"java\..*", "jdk"), (r".*", "rest")]}
    with monkeypatch.context() as m:
        m.setattr(native.Kernels, "checkpoints", leaving_some)
        changed = both_ways(monkeypatch, FIXTURES / "jdk17-profile.jfr", **kw)[0]
    assert left and changed == both_ways(monkeypatch, FIXTURES / "jdk17-profile.jfr", **kw)[1]
    assert changed[0]["samples"]["count"] and changed[1]["jdk.ThreadPark"]["stacks"]


@needs_kernels
@pytest.mark.parametrize("size", [0, 1, 10**6, 2**63 + 5, "short"])
def test_a_corrupt_size_prefix_stops_the_walk_where_the_python_reader_stops(
        monkeypatch, tmp_path, size):
    """An unread event whose size prefix is damaged: too small, past the data, beyond any
    int64, or too short (what follows is read as events from the middle of this one). Every
    size the walk steps by is bounds-checked: it stops where the Python reader does, with its
    words, keeping what came before; never past the data."""
    payload = varint(2**40) * 6
    bad = event(UNREAD, payload)
    if size == "short":
        bad = varint(3, width=4) + bad[4:]
    else:
        bad = varint(size, width=4) + bad[4:]
    events = gc_event(START_TICKS, 5, 5) + bad + gc_event(START_TICKS + 9, 5, 5)
    path = tmp_path / "r.jfr"
    path.write_bytes(chunk(events))
    with_walk, without = both_ways(monkeypatch, path)
    assert with_walk == without
    if size == "short":
        assert with_walk["gc"]["count"] >= 1
    else:
        assert with_walk["gc"]["count"] == 1 and with_walk["truncated"]
        assert f"event claims {size} bytes, impossible here" in with_walk["damage"]


@pytest.mark.skipif(native.get() is None, reason=native.describe())
@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
def test_the_walks_scratch_memory_is_a_forked_process_own():
    scratch = native._scratch("test-fork", native.ctypes.c_int64, 16)
    scratch[0] = 1
    pid = os.fork()
    if pid == 0:
        try:
            scratch[0] = 2
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert scratch[0] == 1


@needs_kernels
def test_the_loop_meets_no_setting_unreported_and_no_listed_park(monkeypatch):
    """A recording's ~400 settings (every event type's) reach the Python loop only for the
    event types the summary and the stacks report, and the folding reader's parks and the
    execution samples come a chunk's at once (_batch_*): the same summary and stacks as one
    event at a time."""
    from analysis.derive.jvm_summary import summarize_and_fold
    from analysis.read.jfr.handlers import EventHandlers
    from analysis.read.jfr.stacks import FoldingReader
    met = []
    listed, decoded = EventHandlers._on_ActiveSetting_listed, EventHandlers._on_ActiveSetting
    park = FoldingReader._on_ThreadPark

    def meeting(what, handler):
        return lambda self, v: met.append((what, v[1] in self.setting_events)) or \
            handler(self, v)
    # (patched where they are written: a batch handler, or the settings' kept types, apply
    # where the `_on_` handler is written beside them)
    monkeypatch.setattr(EventHandlers, "_on_ActiveSetting_listed", meeting("listed", listed))
    monkeypatch.setattr(EventHandlers, "_on_ActiveSetting", meeting("decoded", decoded))
    monkeypatch.setattr(FoldingReader, "_on_ThreadPark", meeting("park", park))
    monkeypatch.setattr(EventHandlers, "_on_ExecutionSample",
                        meeting("sample", EventHandlers._on_ExecutionSample))
    # a cell at 25 requests/s: its pool threads park for 40 ms between requests
    path = REPO / "runs" / "pool-vs-virtual" / "pool20" / "r25.1.jfr"
    s = summarize_jfr(path)
    start = int(s["start_epoch_s"] * 1e9)
    window = (start + 5 * 10**9, start + int(s["duration_s"] * 1e9) - 10**9)
    met.clear()
    with_walk = summarize_and_fold(path, window=window)
    walked = list(met)
    met.clear()
    monkeypatch.setattr(native, "get", lambda: None)
    assert with_walk == summarize_and_fold(path, window=window)
    parks = with_walk[1]["jdk.ThreadPark"]["events"]
    assert parks and with_walk[0]["threads"]["park_events"] == parks
    # with the walk: no park, no execution sample and only the reported types' settings;
    # without: all of them
    assert walked and set(walked) == {("listed", True)}
    assert met.count(("decoded", False)) > 10 * len(walked)
    assert met.count(("park", False)) > parks + with_walk[0]["warmup"]["threads"]["park_events"]
    assert met.count(("sample", False)) >= with_walk[0]["samples"]["count"] > 0


_TICKS = st.integers(-(1 << 63), (1 << 63) - 1)


def _parks_tallied(rows, window, tps, in_c):
    """FoldingReader._batch_ThreadPark of `rows` (ticks, duration, stack key, -) in a chunk
    of `tps` ticks a second with `window` (ticks [lo, hi) or None) -> its tallies."""
    import ctypes
    from analysis.read.jfr.stacks import FoldingReader, FoldingSummary
    reader = FoldingReader(FoldingSummary(None, None if window is None else (0, 1)))
    reader._clock, reader._window_ticks = (0, 0, tps), window
    reader._parks = {7: [5, 1]}          # (a park the Python loop read before: added to)
    values = (ctypes.c_int64 * max(len(rows) * 4, 1))(*[x for row in rows for x in row])
    with _tally_asked(in_c) as calls:
        reader._batch_ThreadPark(native._view(values, len(rows) * 4))
    return reader._parks, reader._warmup_parks, bool(calls)


@contextlib.contextmanager
def _tally_asked(in_c: bool):
    """native.Kernels.tally with its calls counted (the list yielded), answered by C when
    `in_c`, else refused (None), so that the caller sums in Python."""
    calls = []
    real = native.Kernels.tally

    def tally(self, *args):
        calls.append(1)
        return real(self, *args) if in_c else None
    native.Kernels.tally = tally
    try:
        yield calls
    finally:
        native.Kernels.tally = real


@needs_kernels
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(st.tuples(st.integers(-50, 50) | _TICKS, st.integers(-10**6, 10**6) | _TICKS,
                               st.sampled_from([0, 1, 7, -1, 1 << 62]) | _TICKS, st.just(0)),
                     max_size=40),
       window=st.none() | st.tuples(st.integers(-60, 60), st.integers(-60, 60)),
       tps=st.sampled_from([1, 3, 1_000_000_000, 1_000_000_007]) | st.integers(1, 1 << 62))
def test_parks_tallied_in_c_as_in_python(rows, window, tps):
    """The folding reader's parks, a chunk's at once, summed by stack trace key in C: the same
    sums and counts as Python's integers give (the window's ends, the warm-up's, negative and
    huge durations: a sum past 64 bits is left to Python)."""
    with_c = _parks_tallied(rows, window, tps, in_c=True)
    assert with_c[2] or not rows
    assert with_c[:2] == _parks_tallied(rows, window, tps, in_c=False)[:2]


_BATCHED_SUMS = ("_batch_ObjectAllocationSample", "_batch_SafepointBegin", "_batch_ThreadPark")


def _summed(rows, window, tps, batch, in_c):
    """ChunkReader's `batch` handler of `rows` (ticks, value, -, -) in a chunk of `tps` ticks
    a second with `window` (ticks [lo, hi) or None) -> the window's and the warm-up's figures,
    and whether C was asked."""
    import ctypes
    from analysis.read.jfr.reader import ChunkReader
    from analysis.read.jfr.summary import Summary
    reader = ChunkReader(Summary(None, None if window is None else (0, 1)))
    reader._clock, reader._window_ticks = (0, 0, tps), window
    values = (ctypes.c_int64 * max(len(rows) * 4, 1))(*[x for row in rows for x in row])
    with _tally_asked(in_c) as calls:
        getattr(reader, batch)(native._view(values, len(rows) * 4))

    def figures(s):
        return None if s is None else (s.allocation_events, s.allocation_weight,
                                       s.safepoint_count, s.safepoint_total_ns, s.park_count,
                                       s.park_ns)
    return figures(reader.summary), figures(reader.summary.warmup), bool(calls)


@needs_kernels
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(st.tuples(st.integers(-50, 50) | _TICKS, st.integers(-10**6, 10**6) | _TICKS,
                               st.just(0), st.just(0)), max_size=40),
       window=st.none() | st.tuples(st.integers(-60, 60), st.integers(-60, 60)),
       tps=st.sampled_from([1, 3, 1_000_000_000, 1_000_000_007]) | st.integers(1, 1 << 62),
       batch=st.sampled_from(_BATCHED_SUMS))
def test_allocations_safepoints_and_parks_summed_in_c_as_in_python(rows, window, tps, batch):
    """The summary reader's allocation samples (~8k a run, each a Python tuple before),
    safepoints and parks, a chunk's at once, summed in C: the same counts and sums, window's
    and warm-up's, as Python's integers give (a sum past 64 bits is left to Python)."""
    with_c = _summed(rows, window, tps, batch, in_c=True)
    assert with_c[2] or not rows
    assert with_c[:2] == _summed(rows, window, tps, batch, in_c=False)[:2]


@needs_kernels
def test_tallies_make_no_ctypes_class():
    """A chunk's rows of each new length are tallied without a ctypes array class of that
    length (ctypes keeps those only weakly: the collector frees them, and a run's ~100 tallies
    made each one again, each a class made in Python, every run)."""
    import ctypes
    import gc
    kernels = native.get()
    rows = (ctypes.c_int64 * 4 * 40)(*[(ctypes.c_int64 * 4)(t, 10, t % 3, 0) for t in range(40)])
    view = native._view(rows, 160)
    kernels.tally(view[4:4 + 4 * 37], None, 1_000_000_000)     # (the scratch arrays made)
    gc.collect()
    gc.disable()        # (no class made before is freed meanwhile: the count only grows)
    try:
        classes = len(ctypes.Array.__subclasses__())
        tallied = [kernels.tally(view[4:4 + 4 * n], None, 1_000_000_000) for n in range(1, 38)]
        assert len(ctypes.Array.__subclasses__()) == classes
    finally:
        gc.enable()
    # a slice's rows from its first (the address of the slice, not of the array)
    assert tallied[1] == ([(1, 10, 1), (2, 10, 1)], (0, 0))
