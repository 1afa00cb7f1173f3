"""The compiled walk's float and double fields (ABI 11): listed as a C double's bits, read back
with native.floats_of, so that jdk.CPULoad's loads reach the summary a chunk's at once."""
from __future__ import annotations

import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.derive.jvm_summary import summarize_and_fold, summarize_jfr
from analysis.read.jfr import native
from analysis.read.jfr.metadata import ClassInfo, FieldInfo, Metadata
from tests.conftest import REPO
from tests.helpers import CPU, START_NS, START_TICKS, chunk, event, varint

KERNELS = native.get()
needs_kernels = pytest.mark.skipif(KERNELS is None, reason=native.describe())

# an event of a long, a float, a double and an int (the int not wanted)
MD = Metadata({1: ClassInfo(1, "long", None), 2: ClassInfo(2, "float", None),
               3: ClassInfo(3, "double", None), 4: ClassInfo(4, "int", None),
               100: ClassInfo(100, "Ev", None, [
                   FieldInfo("t", 1, False, False), FieldInfo("f", 2, False, False),
                   FieldInfo("n", 4, False, False), FieldInfo("d", 3, False, False)])})


def _same(listed: float, decoded: float) -> bool:
    """Equal as the summary sees them: the same number and sign, or both NaN."""
    if math.isnan(decoded):
        return math.isnan(listed)
    return listed == decoded and math.copysign(1, listed) == math.copysign(1, decoded)


@needs_kernels
@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, (1 << 32) - 1), st.integers(0, (1 << 64) - 1)),
                min_size=1, max_size=8),
       st.integers(0, 7))
def test_floats_and_doubles_are_listed_as_pythons_struct_reads_them(bits, cut):
    """Any float's and double's bits (NaNs, infinities, subnormals, -0.0) give the value
    struct's big-endian read gives; an event whose double runs past its size is not listed
    (the Python decoder warns about it)."""
    program = native.program_for(MD, {}, {100: (0, 1, 3)})
    assert program.events == {100}
    payloads = [varint(5 + i) + f.to_bytes(4, "big") + varint(9) + d.to_bytes(8, "big")
                for i, (f, d) in enumerate(bits)]
    events = [event(100, p) for p in payloads] + [event(100, payloads[0][:-1 - cut])]
    data = bytes(68) + b"".join(events) + b"\x00"
    listed_at, values = KERNELS.checkpoints(data, program)[2]
    assert len(listed_at) == len(bits)
    loads = native.floats_of(values)
    for i, (f, d) in enumerate(bits):
        row = i * native.EVENT_VALUES
        assert values[row] == 5 + i
        assert _same(loads[row + 1], struct.unpack(">f", f.to_bytes(4, "big"))[0])
        assert _same(loads[row + 2], struct.unpack(">d", d.to_bytes(8, "big"))[0])


def _cpu_event(ticks: int, user: float, system: float, machine: float) -> bytes:
    return event(CPU, varint(ticks) + struct.pack(">fff", user, system, machine))


@needs_kernels
def test_cpu_loads_come_a_chunks_at_once_with_the_same_summary(monkeypatch):
    """With the walk no jdk.CPULoad is decoded one at a time (the loop never meets one), in a
    window or not, and the summary is the one the Python reader gives; a chunk the JVM never
    finished reads them the same way."""
    from analysis.read.jfr.handlers import EventHandlers
    met = []
    one_at_a_time = EventHandlers._on_CPULoad
    monkeypatch.setattr(EventHandlers, "_on_CPULoad",
                        lambda self, v: met.append(v) or one_at_a_time(self, v))
    path = REPO / "runs" / "pool-vs-virtual" / "pool20" / "r25.1.jfr"
    s = summarize_jfr(path)
    start = int(s["start_epoch_s"] * 1e9)
    window = (start + 5 * 10**9, start + int(s["duration_s"] * 1e9) - 10**9)
    met.clear()
    with_walk = [summarize_and_fold(path), summarize_and_fold(path, window=window)]
    assert met == []
    with monkeypatch.context() as m:
        m.setattr(native, "get", lambda: None)
        assert with_walk == [summarize_and_fold(path), summarize_and_fold(path, window=window)]
    assert len(met) > 10 and with_walk[1][0]["cpu"]["samples"] > 0
    assert with_walk[1][0]["warmup"]["cpu"]["samples"] > 0


@needs_kernels
@pytest.mark.parametrize("finished", [True, False])
def test_cpu_loads_of_a_small_chunk_read_the_same(monkeypatch, tmp_path, finished):
    """Loads of odd floats (a NaN, an infinity, -0.0, a subnormal) in a made chunk, whole or
    never finished: the same summary with the walk and without."""
    loads = [(0.25, 0.5, 0.75), (math.nan, 0.1, 0.2), (math.inf, -0.0, 1e-40),
             (0.3, 0.6, 0.9)]
    data = chunk(b"".join(_cpu_event(START_TICKS + 10 * i, *v) for i, v in enumerate(loads)),
                 finished=finished)
    path = tmp_path / "cpu.jfr"
    path.write_bytes(data)
    window = (START_NS + 15, START_NS + 10**9)
    with_walk = [summarize_jfr(path), summarize_jfr(path, window=window)]
    monkeypatch.setattr(native, "get", lambda: None)
    assert with_walk == [summarize_jfr(path), summarize_jfr(path, window=window)]
    assert with_walk[0]["cpu"]["samples"] == 2     # (the infinity is no load)
