"""hgrm's one-pass decode-and-add (_native.c's lc_add_bodies, running.add_undecoded): the
interval log, the distribution and the warnings are the numpy path's on logs whose plain
payloads hide every kind of body the compiled decoder leaves to the general one (truncated,
counts past the counts array, zero runs over 2^31-1, totals near 2^62), in any group, chosen
by the window or not; and the kernel leaves the accumulated counts as they were when it
refuses a group. Read with the second core's threads decoding ahead (ahead.py), the output is
the same whichever group a refused row falls in."""
from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis.read.hdr import native
from analysis.read.hdr.histogram import layout_for
from analysis.read.hdr.payload import V2_COMPRESSED, V2_COOKIE
from analysis.read.hdr.processor import process
from tests.helpers import write_log, zigzag_leb128
from tests.test_hgrm import HLOG_FIXTURES
from tests.test_hgrm_threads import CORPUS, _hgrm_both_ways

KERNELS = native.get()
needs_kernels = pytest.mark.skipif(KERNELS is None, reason=native.describe())
LAYOUTS = (layout_for(1, 10**5, 2), layout_for(1, 10**6, 2))    # 1,408 and 1,792 counts


def v2_line(body: bytes, start: float, layout=LAYOUTS[0], tag=None) -> str:
    """A compressed V2 payload of this counts body as a log line (the body as it is: Java's
    writer would never write a hostile one)."""
    import base64
    raw = struct.pack(">iiiiqqd", V2_COOKIE | 0x10, len(body), 0, layout.significant_digits,
                      layout.lowest_discernible_value, layout.highest_trackable_value, 1.0) + body
    packed = zlib.compress(raw)
    payload = struct.pack(">ii", V2_COMPRESSED | 0x10, len(packed)) + packed
    prefix = f"Tag={tag}," if tag else ""
    return f"{prefix}{start:.3f},1.000,0.000,{base64.b64encode(payload).decode()}"


plain_body = st.lists(st.one_of(st.integers(1, 5000), st.integers(-40, -1)), max_size=30)
# (no small counts beside huge ones: the distribution of a total whose few small counts
# round to 100% never ends, here as in HistogramLogProcessor)
hostile_body = st.sampled_from([
    [2**62, 2**62, 2**62],                # a total over 2^63-1
    [-(2**31 + 5), 1],                    # a zero run over 2^31-1
    [-(10**6), 1],                        # a count past the counts array
    [-1400, 3, 1, -50],                   # zero runs past it, harmless
    [2**30] * 3,
])


@st.composite
def log_lines(draw):
    lines = []
    for k in range(draw(st.integers(1, 14))):
        values = draw(st.one_of(plain_body, hostile_body))
        body = b"".join(zigzag_leb128(v) for v in values)
        if body and draw(st.integers(0, 9)) == 0:
            body = body[:-1] + bytes([body[-1] | 0x80])          # ends inside a varint
        lines.append(v2_line(body, float(k), LAYOUTS[draw(st.integers(0, 5)) == 0],
                             draw(st.sampled_from([None, None, "a"]))))
    return lines


def _outputs(path, parallel=False, **window):
    warnings: list[str] = []
    try:
        result = process(str(path), None, warnings, parallel=parallel, **window)
    except Exception as exc:      # (an HlogError: nothing matched)
        result = repr(exc)
    return result, warnings


@needs_kernels
@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(log_lines(), st.sampled_from([{}, {"tag": "a"}, {"start_s": 3.0}, {"end_s": 4.0}]),
       st.integers(1, 5))
def test_decoding_while_adding_gives_the_numpy_output(monkeypatch, tmp_path, lines, window,
                                                      group):
    from analysis.read.hdr import log, processor
    monkeypatch.setattr(log, "BATCH_LINES", group)
    monkeypatch.setattr(processor, "BATCH_LINES", group)
    path = tmp_path / "mixed.hlog"
    write_log(path, lines)
    compiled = _outputs(path, **window)
    assert _outputs(path, parallel=True, **window) == compiled
    with monkeypatch.context() as patch:
        patch.setattr(native, "get", lambda: None)
        assert compiled == _outputs(path, **window)


@needs_kernels
def test_a_refused_group_leaves_the_accumulated_counts_as_they_were():
    layout = LAYOUTS[0]
    good = b"".join(zigzag_leb128(v) for v in (3, -5, 2, 1, -200, 7))
    bad = b"".join(zigzag_leb128(v) for v in (1, -(10**6), 1))      # past the counts array
    requested = np.array([50.0, 90.0, 50.0, 90.0, 99.0, 99.9, 99.99])
    dense = np.zeros(2048, np.int64)
    dense[[3, 700]] = [4, 9]
    blocks = dense.reshape(-1, 32).sum(axis=1)
    state = np.array([-1] * 5 + [0] * 5 + [13], np.int64)
    before = (dense.copy(), blocks.copy(), state.copy())
    bodies = good * 2 + bad
    lengths = np.array([len(good), len(good), len(bad)], np.int64)
    cals = np.full(3, layout.counts_array_length, np.int64)
    for chosen in ([1, 1, 1], [1, 0, 0], [0, 1, 0]):
        assert KERNELS.add_bodies(bodies, lengths, np.array(chosen, bool), cals, dense, blocks,
                                  state, requested) is None
        assert [x.tolist() for x in (dense, blocks, state)] == [x.tolist() for x in before]
    out = KERNELS.add_bodies(good * 2, lengths[:2], np.array([1, 1], bool), cals[:2], dense,
                             blocks, state, requested)
    assert out[:, 0].tolist() == [13, 13] and out[:, 4].tolist() == [26, 39]
    assert dense[[0, 6, 7, 208]].tolist() == [6, 4, 2, 14] and blocks.sum() == 39


@needs_kernels
@pytest.mark.parametrize("group", [1, 2, 3, 7])
def test_totals_reaching_two_to_the_62_take_the_numpy_path(monkeypatch, tmp_path, group):
    from analysis.read.hdr import log
    monkeypatch.setattr(log, "BATCH_LINES", group)
    body = b"".join(zigzag_leb128(v) for v in (-(1000), 2**59, -(300), 2**59))
    path = tmp_path / "big.hlog"
    write_log(path, [v2_line(body, float(k)) for k in range(7)])   # 2^62 at the 4th
    compiled = _outputs(path)
    assert "T:4611686018427387904" in compiled[0][0]
    with monkeypatch.context() as patch:
        patch.setattr(native, "get", lambda: None)
        assert compiled == _outputs(path)


# -- the second core's threads decoding ahead (ahead.py) ---------------------------------------

@pytest.fixture(params=[1, 2, 3])
def tiny_groups(request, monkeypatch):
    """Groups of 1 to 3 lines: a group that the fused decoder refuses falls in either
    thread."""
    from analysis.read.hdr import processor
    monkeypatch.setattr(processor, "BATCH_LINES", request.param)


@pytest.mark.parametrize("flags", [(), ("-tag", "read", "-start", "2")])
@pytest.mark.parametrize("fixture", sorted(p.name for p in HLOG_FIXTURES.glob("*.hlog")))
def test_two_threads_give_the_serial_output_group_by_group(monkeypatch, tmp_path, tiny_groups,
                                                           fixture, flags):
    serial, threaded = _hgrm_both_ways(monkeypatch, tmp_path, HLOG_FIXTURES / fixture, flags)
    assert threaded == serial


@pytest.mark.parametrize("name", sorted(p.name for p in CORPUS.glob("*")))
def test_two_threads_give_the_serial_output_group_by_group_on_the_fuzz_corpus(
        monkeypatch, tmp_path, tiny_groups, name):
    serial, threaded = _hgrm_both_ways(monkeypatch, tmp_path, CORPUS / name)
    assert threaded == serial
