"""hgrm's compiled inner loops (analysis/read/hdr/_native.c) against the numpy code they stand
in for: the same batches, the same refusals, the same running percentiles; hostile input on both
paths; and with the kernels forced off (LOADCURVE_NATIVE=0), or unbuildable, every hgrm golden
still byte-identical."""
from __future__ import annotations

import os
import shutil

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tests.test_hlog_codec as codec_tests
from analysis.read.hdr import native
from analysis.read.hdr.batch import decode_part
from analysis.read.hdr.histogram import Histogram, layout_for
from analysis.read.hdr.payload import V2_MAX_WORD_SIZE, DecodedPayload
from tests.fuzz.targets import TARGETS
from tests.helpers import (CASES, summary_by_batches, summary_by_histograms,
                           assert_goldens_in_fresh_interpreter, encode, log_line, write_log,
                           zigzag_leb128)

pytestmark = pytest.mark.slow     # (make check leaves it out; make test runs it)

KERNELS = native.get()
needs_kernels = pytest.mark.skipif(KERNELS is None, reason=native.describe())


@pytest.fixture
def numpy_only(monkeypatch):
    monkeypatch.setattr(native, "get", lambda: None)


def test_kernels_are_built_wherever_there_is_a_compiler():
    """So that a silent fallback (and a 2x slower hgrm) cannot go unnoticed."""
    if os.environ.get("LOADCURVE_NATIVE") == "0" or not (os.environ.get("CC")
                                                          or shutil.which("cc")):
        pytest.skip("no C compiler, or the kernels are switched off")
    assert KERNELS is not None, native.describe()


NUMPY_ONLY = """
from analysis.read.hdr import native
assert native.get() is None, native.describe()
"""


def test_goldens_on_the_numpy_path(tmp_path):
    assert_goldens_in_fresh_interpreter(tmp_path, NUMPY_ONLY, {"LOADCURVE_NATIVE": "0"})


def test_goldens_when_the_compiler_fails(tmp_path):
    cache = tmp_path / "cache"
    assert_goldens_in_fresh_interpreter(tmp_path, NUMPY_ONLY + "assert 'failed' in "
                                        "native.describe(), native.describe()\n",
                                        {"CC": "false", "LOADCURVE_NATIVE_CACHE": str(cache)})


def test_an_unloadable_object_means_the_numpy_path(tmp_path, monkeypatch):
    broken = tmp_path / "broken.so"
    broken.write_bytes(b"not an ELF file")
    monkeypatch.setattr(native.LOADER, "build", lambda: broken)
    monkeypatch.setattr(native.LOADER, "loaded", [])
    assert native.get() is None
    assert native.describe().startswith("numpy")


# -- the decoder ---------------------------------------------------------------------------

LAYOUT = layout_for(1, 10**5, 2)         # 1,408 counts: zero runs easily overrun it
varint_values = st.one_of(st.integers(1, 300), st.just(0), st.integers(-3000, -1),
                          st.integers(1, 2**62), st.integers(-(2**63), 2**63 - 1),
                          st.sampled_from([-(2**31 - 1), -(2**31), 2**31, 2**61, 2**62]))


@st.composite
def bodies(draw):
    body = b"".join(zigzag_leb128(v) for v in draw(st.lists(varint_values, max_size=40)))
    how = draw(st.integers(0, 5))
    if how == 0 and body:                 # truncated anywhere
        body = body[:draw(st.integers(0, len(body) - 1))]
    elif how == 1:                        # a continuation byte, or a 9-byte varint, at the end
        body += draw(st.sampled_from([b"\x80", b"\xff" * 8 + b"\x01", b"\x80" * 9]))
    return body


def _decode(payload_bodies):
    """decode_part's batch of V2 payloads: (line, total, indices, counts) per kept row, and
    the refusals."""
    n = len(payload_bodies)
    items = [(k + 1, None, float(k), 1.0, 0, 1000, 0.0, None) for k in range(n)]
    payloads = [DecodedPayload(LAYOUT, V2_MAX_WORD_SIZE, body) for body in payload_bodies]
    errors: dict[int, str] = {}
    stride_bits = max(int(LAYOUT.counts_array_length - 1).bit_length(), 6)
    batch = decode_part(items, list(range(n)), payloads, [None] * n, errors, stride_bits)
    rows = [] if batch is None else [
        (iv.line, iv.total_count, h.indices.tolist(), h.counts.tolist())
        for iv, h in zip(batch.intervals, batch.histograms())]
    return rows, errors


@needs_kernels
@settings(max_examples=400, deadline=None)
@given(st.lists(bodies(), min_size=1, max_size=12))
def test_decoder_gives_the_numpy_batches_and_refusals(payload_bodies):
    compiled = _decode(payload_bodies)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(native, "get", lambda: None)
        assert compiled == _decode(payload_bodies)


@needs_kernels
def test_decoder_checks_its_arguments():
    lib = KERNELS.lib
    buf = np.frombuffer(b"\x02\x02", np.uint8).copy()
    keys, counts = np.empty(2, np.int64), np.empty(2, np.int64)
    rows, totals, status = np.empty(2, np.int64), np.empty(1, np.int64), np.empty(1, np.uint8)
    cal = np.array([10], np.int64)
    import ctypes
    for offsets, length in (([0, 3], 2), ([0, 2], 3), ([1, 2], 2), ([0, 2], -1)):
        bits = ctypes.c_int64(6)
        assert lib.lc_decode_v2(buf, length, np.array(offsets, np.int64), 1, cal, keys, counts,
                                2, rows, totals, status, ctypes.byref(bits)) == -1
    bits = ctypes.c_int64(6)
    assert lib.lc_decode_v2(buf, 2, np.array([0, 2], np.int64), 1, cal, keys, counts, 2, rows,
                            totals, status, ctypes.byref(bits)) == 2



@needs_kernels
def test_a_kernel_takes_only_contiguous_arrays_of_its_type():
    """The argument types pass an array's data address: what ndpointer refused, they refuse
    (a wrong dtype, a strided view, a list), and a view's own start is the one passed."""
    import ctypes
    lib = KERNELS.lib
    keys, counts = np.empty(2, np.int64), np.empty(2, np.int64)
    rows, totals, status = np.empty(2, np.int64), np.empty(1, np.int64), np.empty(1, np.uint8)
    offsets, cal = np.array([0, 2], np.int64), np.array([10], np.int64)

    def decode(buf, offsets=offsets, keys=keys):
        return lib.lc_decode_v2(buf, 2, offsets, 1, cal, keys, counts, 2, rows, totals, status,
                                ctypes.byref(ctypes.c_int64(6)))
    for bad in (np.zeros(2, np.int8), np.zeros(4, np.uint8)[::2], [2, 2], b"\x02\x02"):
        with pytest.raises(ctypes.ArgumentError):
            decode(bad)
    with pytest.raises(ctypes.ArgumentError):
        decode(np.frombuffer(b"\x02\x02", np.uint8), offsets=offsets.astype(np.int32))
    with pytest.raises(ctypes.ArgumentError):
        decode(np.frombuffer(b"\x02\x02", np.uint8), keys=np.empty((2, 2), np.int64)[:, 0])
    # a view that starts inside its array: the count 1, a run of 2 zeros, a count of 2
    buf = np.frombuffer(b"\xff\x02\x03\x04", np.uint8)[1:]
    keys, counts = np.empty(3, np.int64), np.empty(3, np.int64)
    assert lib.lc_decode_v2(buf, 3, np.array([0, 3], np.int64), 1, cal, keys, counts, 3,
                            rows, totals, status, ctypes.byref(ctypes.c_int64(6))) == 2
    keys, counts = keys[:2], counts[:2]
    assert keys.tolist() == [0, 3] and counts.tolist() == [1, 2]


# -- the running percentiles ------------------------------------------------------------------

@needs_kernels
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.lists(st.one_of(st.integers(0, 3000), st.integers(0, 10**9)),
                                   max_size=60),
                          st.integers(1, 2**40), st.booleans()),
                min_size=1, max_size=30),
       st.integers(1, 9))
def test_running_percentiles_equal_numpy_and_the_histograms(tmp_path, intervals, batch_size):
    """Leading empty intervals, batches of several sizes, large counts, and now and then an
    interval in a finer layout than the first one's (those batches take the numpy path: the
    compiled one resumes after them)."""
    layouts = (layout_for(1, 10**12, 2), layout_for(1, 10**12, 3))
    histograms = [Histogram.from_values(layouts[k > 0 and finer], values, [count] * len(values))
                  for k, (values, count, finer) in enumerate(intervals)]
    path = tmp_path / f"run-{batch_size}.hlog"
    write_log(path, [log_line(encode(h), float(k)) for k, h in enumerate(histograms)])
    compiled = summary_by_batches(path, batch_size)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(native, "get", lambda: None)
        assert compiled == summary_by_batches(path, batch_size)
    assert compiled == summary_by_histograms(histograms)


@needs_kernels
def test_totals_near_two_to_the_63_take_the_numpy_path(tmp_path):
    layout = layout_for(1, 10**12, 3)
    histograms = [Histogram.from_values(layout, [1000 + k, 5 * 10**8], [2**59, 2**59])
                  for k in range(7)]           # the total reaches 2^62 at the 4th
    path = tmp_path / "big.hlog"
    write_log(path, [log_line(encode(h), float(k)) for k, h in enumerate(histograms)])
    assert summary_by_batches(path, 2) == summary_by_histograms(histograms)


@needs_kernels
def test_running_checks_its_arguments():
    keys = np.array([3, 5], np.int64)
    counts = np.array([1, 1], np.int64)
    dense, blocks = np.zeros(64, np.int64), np.zeros(2, np.int64)
    requested = np.array([50.0, 90.0, 50.0, 90.0, 99.0, 99.9, 99.99])

    def run(starts, ends, mask=63, dense=dense, state=None):
        state = np.array([-1] * 5 + [0] * 6, np.int64) if state is None else state
        return KERNELS.running(keys, counts, np.array(starts), np.array(ends), mask, dense,
                               blocks, state, requested)

    for starts, ends, mask in (([0], [3], 63), ([-1], [2], 63), ([2], [1], 63), ([0], [2], 64),
                               ([0], [2], -1)):
        with pytest.raises(RuntimeError):
            run(starts, ends, mask)
    with pytest.raises(RuntimeError):
        run([0], [2], 31, dense=np.zeros(48, np.int64))      # not whole blocks
    with pytest.raises(RuntimeError):
        run([0], [2], 63, dense=np.zeros(128, np.int64))     # blocks for 64 entries only
    with pytest.raises(RuntimeError):
        run([0], [2], state=np.array([5, 3, 6, 7, 8] + [0] * 6, np.int64))   # out of order
    assert not dense.any()                   # nothing was added by the refused calls
    out = run([0], [2])
    assert out[0].tolist() == [2, 3, 5, 5, 2, 3, 5, 5, 5, 5]
    assert dense[3] == dense[5] == 1 and blocks.tolist() == [2, 0]


# -- hostile input on the numpy path (the same tests run on the compiled one) -----------------

@pytest.mark.parametrize("test", [codec_tests.test_random_bytes, codec_tests.test_mutated_lines,
                                  codec_tests.test_every_truncation_of_a_payload,
                                  codec_tests.test_trailing_zero_run_beyond_the_range_is_harmless],
                         ids=lambda t: t.__name__)
def test_hostile_input_on_the_numpy_path(numpy_only, tmp_path, test):
    test(tmp_path)


@pytest.mark.parametrize("counts,reason", [
    ([2**62, 2**62, 2**62], "total count exceeds"),
    ([-(2**31 + 5), 1], "zero counts exceeds 2^31-1"),
    ([-(10**6), 1], "beyond its histogram's range"),
])
def test_refusals_on_the_numpy_path(numpy_only, tmp_path, counts, reason):
    codec_tests.test_counts_that_cannot_be_real_are_refused(tmp_path, counts, reason)


@pytest.mark.parametrize("path", [p for t, p in CASES if t == "hlog"], ids=lambda p: p.name)
def test_fuzz_corpus_on_the_numpy_path(numpy_only, path):
    TARGETS["hlog"](path.read_bytes())


@needs_kernels
def test_decoder_reuses_its_arrays_only_once_nothing_refers_to_them():
    kernels = native.Kernels(KERNELS.lib)            # (a pool of its own)
    body = [b"\x02\x04\x03" * 300] * 8            # 1,200 of the layout's 1,408 counts
    first = kernels.decode_v2(body, [LAYOUT.counts_array_length] * 8, 20)
    kept = first[1][10:20]                           # a view, as a Histogram would keep
    del first
    second = kernels.decode_v2(body, [LAYOUT.counts_array_length] * 8, 20)
    assert not np.shares_memory(kept, second[1])
    assert kept.tolist() == [1, 2] * 5
    address = kept.base.ctypes.data
    del kept
    third = kernels.decode_v2(body, [LAYOUT.counts_array_length] * 8, 20)
    assert not np.shares_memory(third[0], second[0])  # (second is still held here)
    assert third[1].base.ctypes.data == address       # the first batch's arrays, free again


def _decode_group(payload_bodies, packed: bool):
    """decode_batch of V2 payloads as the read-ahead worker hands them over, joined
    (worker.pack_payloads) or one DecodedPayload each: (line, total, indices, counts) per row,
    and the warnings."""
    from analysis.read.hdr.batch import decode_batch
    from analysis.read.hdr.worker import pack_payloads, unpack_payloads
    n = len(payload_bodies)
    items = [(k + 1, None, float(k), 1.0, 0, 1000, 0.0, None) for k in range(n)]
    payloads = [DecodedPayload(LAYOUT, V2_MAX_WORD_SIZE, body) for body in payload_bodies]
    inflated = (payloads, [None] * n, {})
    if packed:
        joined = pack_payloads(payloads)
        assert joined is not None
        inflated = unpack_payloads(joined)
    warnings: list[str] = []
    batch = decode_batch(items, "x.hlog", warnings, inflated)
    rows = [] if batch is None else [
        (iv.line, iv.total_count, h.indices.tolist(), h.counts.tolist())
        for iv, h in zip(batch.intervals, batch.histograms())]
    return rows, warnings


@pytest.mark.parametrize("compiled", [True, False])
@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(bodies().filter(lambda b: not b or b[-1] < 0x80), min_size=1, max_size=12))
def test_joined_bodies_from_the_worker_decode_as_separate_ones(monkeypatch, compiled,
                                                               payload_bodies):
    """Rows the compiled decoder leaves (huge runs, counts past the array, truncation) fall
    back to the general path with their own bodies: same rows, same refusals."""
    if not compiled:
        monkeypatch.setattr(native, "get", lambda: None)
    elif native.get() is None:
        pytest.skip("no compiled kernels")
    assert _decode_group(payload_bodies, True) == _decode_group(payload_bodies, False)


@needs_kernels
@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 63), st.integers(1, 10**6)), max_size=20),
                min_size=1, max_size=8))
def test_running_given_the_row_counts_equals_running_summing_them(rows):
    """lc_running's row_counts (the decoder's totals) stand for its own per-row sums."""
    keys, counts, starts, ends = [], [], [], []
    for r, entries in enumerate(rows):
        starts.append(len(keys))
        for index, count in sorted(dict(entries).items()):
            keys.append(r << 6 | index)
            counts.append(count)
        ends.append(len(keys))
    keys, counts = np.array(keys, np.int64), np.array(counts, np.int64)
    sums = np.array([counts[a:b].sum() for a, b in zip(starts, ends)], np.int64)
    requested = np.array([50.0, 90.0, 50.0, 90.0, 99.0, 99.9, 99.99])
    results = []
    for row_counts in (None, sums):
        dense, blocks = np.zeros(64, np.int64), np.zeros(2, np.int64)
        state = np.array([-1] * 5 + [0] * 6, np.int64)
        out = KERNELS.running(keys, counts, np.array(starts), np.array(ends), 63, dense, blocks,
                              state, requested, row_counts)
        results.append((out.tolist(), dense.tolist(), blocks.tolist(), state.tolist()))
    assert results[0] == results[1]
