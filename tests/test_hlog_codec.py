"""Payload codecs: hypothesis round trips, and fuzzed or hostile input.

The encoder below writes what HdrHistogram's Java encoders write (AbstractHistogram
.encodeIntoByteBuffer / encodeIntoCompressedByteBuffer, V1 and V0 word payloads, the
DoubleHistogram wrapper); the reader must give back exactly what was encoded. Hostile input
must end in the readable data or an HlogError naming file:line, within bounded memory.
"""
from __future__ import annotations

import base64
import struct
import tracemalloc
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis.errors import HlogError
from analysis.read.hdr.double import DoubleHistogram
from analysis.read.hdr.histogram import Histogram, layout_for
from analysis.read.hdr.log import read_hlog
from analysis.read.hdr.payload import (DHIST_COMPRESSED, V2_COMPRESSED, V2_COOKIE, PayloadError,
                                       decode_varints, histogram_from_raw)
from tests.conftest import REPO
from tests.helpers import encode, log_line, write_log, zigzag_leb128

pytestmark = pytest.mark.slow     # (make check leaves it out; make test runs it)

FIXTURES = REPO / "tests" / "fixtures" / "hlog"
LONG_MAX = 2**63 - 1


# -- a Java-faithful encoder (test side) ---------------------------------------------------


# -- round trips ---------------------------------------------------------------------------

int64s = st.integers(-(2**63), LONG_MAX)


@settings(max_examples=200)
@given(st.lists(st.one_of(int64s, st.integers(-200, 200)), max_size=50))
def test_varint_round_trip(values):
    data = b"".join(zigzag_leb128(v) for v in values)
    assert decode_varints(np.frombuffer(data, np.uint8)).tolist() == values


@st.composite
def histograms(draw, max_value=LONG_MAX):
    digits = draw(st.integers(0, 5))
    ldv = draw(st.sampled_from([1, 1, 2, 1000, 1024]))
    htv = draw(st.integers(2 * ldv, max_value))
    try:
        layout = layout_for(ldv, htv, digits)
    except ValueError:
        layout = layout_for(1, max(htv, 2), digits)
    top = layout.highest_trackable_value
    values = draw(st.lists(st.one_of(st.integers(0, min(top, 5000)), st.integers(0, top)),
                           max_size=40))
    counts = draw(st.lists(st.integers(1, 2**40), min_size=len(values), max_size=len(values)))
    return Histogram.from_values(layout, values, counts)


def _same(a: Histogram, b: Histogram) -> None:
    assert a.layout == b.layout
    assert a.indices.tolist() == b.indices.tolist()
    assert a.counts.tolist() == b.counts.tolist()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histograms(), st.booleans())
def test_v2_round_trip(h, compressed):
    _same(histogram_from_raw(encode(h, 2, compressed=compressed)), h)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histograms(max_value=10**7), st.sampled_from([2, 4, 8]))
def test_v1_round_trip(h, word_size):
    limit = 2 ** (8 * word_size - 1) - 1
    h = Histogram(h.layout, h.indices, np.minimum(h.counts, limit))
    _same(histogram_from_raw(encode(h, 1, word_size)), h)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histograms(max_value=10**6))
def test_v0_round_trip(h):
    _same(histogram_from_raw(encode(h, 0)), h)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 2**20), min_size=1, max_size=30), st.integers(-20, 20))
def test_double_histogram_wrapper_round_trip(values, shift):
    digits, configured = 3, 3_600_000
    internal_ratio = 1 << (configured.bit_length() + 1)
    layout = layout_for(1, 1024 * internal_ratio - 1, digits)
    integer = Histogram.from_values(layout, [v + 1024 for v in values])
    ratio = 2.0 ** shift
    raw = struct.pack(">iiq", DHIST_COMPRESSED, digits, configured) + encode(integer, ratio=ratio)
    h = histogram_from_raw(raw)
    assert isinstance(h, DoubleHistogram)
    _same(h.integer, integer)
    assert h.ratio == ratio
    assert h.value_at_percentile(100) == integer.max // 1 * ratio or h.total_count == len(values)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 300), st.lists(st.integers(0, 10**6), max_size=20)),
                min_size=1, max_size=40))
def test_whole_log_round_trip_with_many_tags(tmp_path, rows):
    layout = layout_for(1, 10**9, 3)
    lines, expected = [], []
    for k, (tag_no, values) in enumerate(rows):
        tag = None if tag_no == 0 else f"t{tag_no}"
        h = Histogram.from_values(layout, values)
        lines.append(log_line(encode(h), float(k), tag))
        expected.append((tag, h))
    path = tmp_path / "many.hlog"
    write_log(path, lines)
    log = read_hlog(path)
    assert log.warnings == []
    assert [(iv.tag, iv.histogram.indices.tolist(), iv.histogram.counts.tolist())
            for iv in log.intervals] == \
        [(t, h.indices.tolist(), h.counts.tolist()) for t, h in expected]


def test_hundreds_of_tags(tmp_path):
    layout = layout_for(1, 10**9, 3)
    lines = [log_line(encode(Histogram.from_values(layout, [i + 1] * (i % 5 + 1))), i / 10,
                      f"tag{i:03d}") for i in range(400)]
    path = tmp_path / "tags.hlog"
    write_log(path, lines)
    log = read_hlog(path)
    assert len(log.tags()) == 400 and None not in log.tags()
    assert log.merged(tag="tag123").total_count == 123 % 5 + 1
    with pytest.raises(HlogError):
        log.merged()          # there are no untagged lines


def test_huge_values_up_to_long_max(tmp_path):
    layout = layout_for(1, LONG_MAX, 2)
    h = Histogram.from_values(layout, [1, LONG_MAX, 2**62], [3, 2, 1])
    path = tmp_path / "huge.hlog"
    write_log(path, [log_line(encode(h), 0.0)])
    got = read_hlog(path).merged()
    assert got.max == LONG_MAX and got.total_count == 6
    assert got.value_at_percentile(100) == LONG_MAX


# -- hostile input ---------------------------------------------------------------------------

def _read_or_error(path):
    """The only acceptable outcomes: a log, or an HlogError naming the file."""
    try:
        log = read_hlog(path)
    except HlogError as exc:
        assert str(exc).startswith(str(path))
        return None
    for w in log.warnings:
        assert w.startswith(f"{path}:")
    for iv in log.intervals:
        h = iv.histogram
        assert h.total_count >= 0
        h.value_at_percentile(99.9)
    return log


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=3000))
def test_random_bytes(tmp_path, data):
    path = tmp_path / "random.hlog"
    path.write_bytes(data)
    _read_or_error(path)


def _valid_lines():
    return (FIXTURES / "java-jHiccup-2.0.7S.logV2.hlog").read_text().splitlines()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(4, 65), st.integers(0, 2000), st.integers(0, 255), st.integers(0, 3))
def test_mutated_lines(tmp_path, line_no, position, byte, how):
    lines = _valid_lines()
    line = lines[line_no]
    position %= len(line)
    if how == 0:       # flip a character
        line = line[:position] + chr(byte % 94 + 33) + line[position + 1:]
    elif how == 1:     # truncate
        line = line[:position]
    elif how == 2:     # corrupt the decoded payload bytes, then re-encode as valid base64
        head, payload = line.rsplit(",", 1)
        raw = bytearray(base64.b64decode(payload))
        raw[position % len(raw)] = byte
        line = f"{head},{base64.b64encode(bytes(raw)).decode()}"
    else:              # duplicate a fragment
        line = line[:position] + line[position // 2:]
    lines[line_no] = line
    path = tmp_path / "mutated.hlog"
    path.write_text("\n".join(lines) + "\n")
    log = _read_or_error(path)
    assert log is not None
    # every other line is still read
    assert len(log.intervals) >= 61


def test_every_truncation_of_a_payload(tmp_path):
    lines = _valid_lines()
    head, payload = lines[4].rsplit(",", 1)
    path = tmp_path / "trunc.hlog"
    for cut in range(0, len(payload)):
        write_log(path, [f"{head},{payload[:cut]}", lines[5]])
        log = read_hlog(path)
        assert len(log.intervals) in (1, 2)
        assert log.intervals[-1].line == 5


def _peak_memory(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_payload_claiming_a_huge_length_is_refused_without_allocating(tmp_path):
    # header: 2^31-1 payload bytes, the widest layout; then 10 real bytes
    raw = struct.pack(">iiiiqqd", V2_COOKIE | 0x10, 2**31 - 1, 0, 5, 1, LONG_MAX, 1.0) + b"\x02" * 10
    packed = zlib.compress(raw)
    payload = struct.pack(">ii", V2_COMPRESSED | 0x10, len(packed)) + packed
    with pytest.raises(PayloadError, match="header says"):
        histogram_from_raw(payload)
    path = tmp_path / "claims.hlog"
    write_log(path, [log_line(payload, 0.0), log_line(payload, 1.0)])
    peak = _peak_memory(lambda: _read_or_error(path))
    assert peak < 20 * 2**20


def test_zlib_bomb_is_inflated_only_as_far_as_the_header_allows(tmp_path):
    # ~1 GB of zeros behind a header that allows 50 bytes of counts
    header = struct.pack(">iiiiqqd", V2_COOKIE | 0x10, 50, 0, 3, 1, 10**9, 1.0)
    squeeze = zlib.compressobj(9)
    chunk = b"\0" * (1 << 20)
    packed = squeeze.compress(header + b"\x02" * 50)
    for _ in range(1024):
        packed += squeeze.compress(chunk)
    packed += squeeze.flush()
    payload = struct.pack(">ii", V2_COMPRESSED | 0x10, len(packed)) + packed
    h = None

    def decode():
        nonlocal h
        h = histogram_from_raw(payload)

    peak = _peak_memory(decode)
    assert h.total_count == 50            # the 50 counted bytes, nothing of the bomb
    assert peak < 20 * 2**20


@pytest.mark.parametrize("counts,reason", [
    ([2**62, 2**62, 2**62], "total count exceeds"),
    ([-(2**31 + 5), 1], "zero counts exceeds 2^31-1"),
    ([-(10**6), 1], "beyond its histogram's range"),
])
def test_counts_that_cannot_be_real_are_refused(tmp_path, counts, reason):
    body = b"".join(zigzag_leb128(c) for c in counts)
    raw = struct.pack(">iiiiqqd", V2_COOKIE | 0x10, len(body), 0, 3, 1, 10**6, 1.0) + body
    packed = zlib.compress(raw)
    payload = struct.pack(">ii", V2_COMPRESSED | 0x10, len(packed)) + packed
    good = encode(Histogram.from_values(layout_for(1, 10**6, 3), [5]))
    path = tmp_path / "counts.hlog"
    write_log(path, [log_line(good, 0.0), log_line(payload, 1.0), log_line(good, 2.0)])
    log = read_hlog(path)
    assert [iv.line for iv in log.intervals] == [4, 6]
    assert len(log.warnings) == 1
    assert log.warnings[0].startswith(f"{path}:5: ") and reason in log.warnings[0]


def test_trailing_zero_run_beyond_the_range_is_harmless(tmp_path):
    # Java only skips zero runs, so a trailing run past the counts array is not an error
    body = b"".join(zigzag_leb128(c) for c in [0, 7, -(10**6)])
    raw = struct.pack(">iiiiqqd", V2_COOKIE | 0x10, len(body), 0, 3, 1, 10**6, 1.0) + body
    packed = zlib.compress(raw)
    payload = struct.pack(">ii", V2_COMPRESSED | 0x10, len(packed)) + packed
    path = tmp_path / "tail.hlog"
    write_log(path, [log_line(payload, 0.0)])
    (iv,) = read_hlog(path).intervals
    assert iv.histogram.indices.tolist() == [1] and iv.histogram.counts.tolist() == [7]


@pytest.mark.parametrize("field,ok", [("nan", False), ("inf", False), ("-Infinity", False),
                                      ("1_000", False), ("0x10", False), ("1e5", True),
                                      (" 2.5 ", True), ("+3", True), ("1e3", True)])
def test_numbers_in_a_line_follow_javas_rules_on_the_fast_path_too(tmp_path, field, ok):
    """Plain numbers are parsed in one step; anything else goes through the exact rules."""
    raw = encode(Histogram.from_values(layout_for(1, 10**9, 3), [5]))
    payload = base64.b64encode(raw).decode()
    path = tmp_path / "fields.hlog"
    write_log(path, [f"0.000,1.000,0.000,{payload}", f"1.000,{field},0.000,{payload}",
                     f"2.000,1.000,{field},{payload}", f"{field},1.000,0.000,{payload}"])
    log = read_hlog(path)
    if ok:
        assert log.warnings == [] and len(log.intervals) == 4
    else:
        assert len(log.intervals) == 1
        assert [w.split(": ", 1)[1] for w in log.warnings] == \
            [f"{field.strip()!r} is not a finite number; line skipped"] * 3


def test_headers_that_differ_only_in_length_are_each_checked(tmp_path):
    """The parsed-header cache ignores only the payload length field, which is still checked."""
    layout = layout_for(1, 10**9, 3)
    good = encode(Histogram.from_values(layout, [1, 2, 3]), compressed=False)
    negative = good[:4] + struct.pack(">i", -1) + good[8:]
    short = good[:4] + struct.pack(">i", len(good) - 40 + 1) + good[8:]
    other = good[:16] + struct.pack(">q", 2) + good[24:]       # another lowest value
    path = tmp_path / "headers.hlog"
    write_log(path, [log_line(r, float(k)) for k, r in enumerate([good, negative, short, other])])
    log = read_hlog(path)
    assert [iv.line for iv in log.intervals] == [4, 7]
    assert [w.split(": ", 1)[1] for w in log.warnings] == [
        "negative payload length -1; line skipped",
        f"payload holds {len(good) - 40} bytes of counts but its header says "
        f"{len(good) - 40 + 1}; line skipped"]
    assert log.intervals[1].histogram.layout.lowest_discernible_value == 2
