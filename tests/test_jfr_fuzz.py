"""Hostile and random inputs for the JFR reader: any input gives readable data or one JfrError.

Three kinds of input: recordings built here from scratch (so hypothesis can vary every value
and check it comes back), real fixtures with random bytes changed or cut, and plain random
bytes. "Never" here means: no exception other than JfrError, no hang (hypothesis' deadline),
and no allocation driven by a claimed size (huge claims are refused).
"""
from __future__ import annotations

import json
import math
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis.errors import JfrError
from analysis.commands.jfr import render_text
from analysis.derive.jvm_summary import summarize_jfr
from analysis.read.jfr.wire import read_string, read_varint, skip_string
from tests.helpers import (CPU, GC, META_AT, REAL, START_NS, START_TICKS, TPS, chunk, event,
                           gc_event, jstring, varint)


# -- a tiny JFR writer (test-only) -----------------------------------------------------------


def cpu_event(start_ticks, user, system, machine):
    return event(CPU, varint(start_ticks) + struct.pack(">fff", user, system, machine))


# -- round trips ---------------------------------------------------------------------------

@given(st.integers(min_value=0, max_value=2**64 - 1), st.integers(min_value=1, max_value=9))
def test_varint_round_trip(n, width):
    raw = varint(n, width)
    value, pos = read_varint(raw + b"\xff", 0)
    assert value == n and pos == len(raw)


@given(st.text(max_size=40), st.sampled_from([3, 4]))
def test_string_round_trip(s, encoding):
    value, pos = read_string(jstring(s, encoding) + b"\x00", 0)
    assert value == (None if s is None else s)


def _outcome(fn, data):
    try:
        out = fn(data, 0)
    except Exception as exc:  # noqa: BLE001 - the type is what is compared
        return type(exc)
    return out[1] if isinstance(out, tuple) else out


@settings(max_examples=300)
@given(st.one_of(st.binary(max_size=24),
                 st.builds(lambda s, e, tail: jstring(s, e) + tail,
                           st.text(max_size=30), st.sampled_from([3, 4]), st.binary(max_size=3)),
                 st.builds(lambda e, n, body: bytes([e]) + varint(n) + body,
                           st.integers(0, 6), st.integers(0, 40), st.binary(max_size=40))))
def test_skip_string_steps_where_read_string_ends(data):
    # the same end position, or the same error, for any bytes (char arrays of ASCII take the
    # bytes-as-text path in both; others the varint loop)
    assert _outcome(skip_string, data) == _outcome(read_string, data)


gc_values = st.tuples(st.integers(0, 10**9), st.integers(0, 10**8), st.integers(0, 10**8))
cpu_values = st.tuples(*[st.floats(0, 1, width=32)] * 3)


@settings(max_examples=60, deadline=2000)
@given(st.lists(gc_values, max_size=30), st.lists(cpu_values, min_size=1, max_size=10))
def test_built_recording_round_trips(tmp_path_factory, gcs, cpus):
    events = b"".join(gc_event(START_TICKS + t, s, min(lp, s)) for t, s, lp in gcs)
    events += b"".join(cpu_event(START_TICKS + i, *v) for i, v in enumerate(cpus))
    path = tmp_path_factory.mktemp("built") / "r.jfr"
    path.write_bytes(chunk(events))
    out = summarize_jfr(path)
    assert out["truncated"] is False and out["chunks"] == 1
    assert out["gc"]["count"] == len(gcs)
    assert math.isclose(out["gc"]["pause_total_ms"], sum(s for _, s, _ in gcs) / 1e6,
                        abs_tol=1e-5)
    assert math.isclose(out["gc"]["pause_max_ms"],
                        max((min(lp, s) for _, s, lp in gcs), default=0) / 1e6, abs_tol=1e-6)
    assert sorted(p[0] for p in out["gc"]["pauses"]) == \
        sorted(round((START_NS + t) / 1e9, 6) for t, _, _ in gcs)
    assert math.isclose(out["cpu"]["machine"], sum(v[2] for v in cpus) / len(cpus),
                        abs_tol=1e-6)
    assert out["covered_until"] == round((START_NS + 10 * TPS) / 1e9, 6)


def test_unpadded_sizes_and_other_string_encodings_read(tmp_path):
    payload = (varint(START_TICKS) + varint(1000) + varint(7) + jstring("G1Old", 5)
               + varint(1000) + varint(1000))
    path = tmp_path / "r.jfr"
    path.write_bytes(chunk(event(GC, payload, padded=False) + gc_event(START_TICKS, 5, 5)))
    out = summarize_jfr(path)
    assert out["gc"]["count"] == 2 and out["gc"]["pause_total_ms"] == 0.001005


def test_metadata_after_the_events_as_jdk11_writes_it(tmp_path):
    path = tmp_path / "r.jfr"
    events = gc_event(START_TICKS, 5, 5) + cpu_event(START_TICKS, 0.5, 0.25, 0.75)
    path.write_bytes(chunk(events, metadata_last=True))
    out = summarize_jfr(path)
    assert out["gc"]["count"] == 1 and out["cpu"]["jvm_system"] == 0.25
    # Cut before the metadata: nothing describes the events, one clear error.
    path.write_bytes(chunk(events, metadata_last=True)[:-10])
    with pytest.raises(JfrError, match="no event could be read.*no readable metadata"):
        summarize_jfr(path)


# -- huge claims -----------------------------------------------------------------------------

def test_event_claiming_a_huge_size_ends_the_data(tmp_path):
    good = gc_event(START_TICKS, 5, 5)
    bad = varint(1 << 62) + varint(GC)
    path = tmp_path / "r.jfr"
    path.write_bytes(chunk(good + bad + good))
    out = summarize_jfr(path)
    assert out["gc"]["count"] == 1 and out["truncated"]
    assert "impossible" in out["damage"] or "past the end" in out["damage"]


def test_string_claiming_a_huge_length_skips_that_event(tmp_path):
    payload = (varint(START_TICKS) + varint(5) + varint(7) + b"\x03" + varint(1 << 40)
               + varint(5) + varint(5))
    path = tmp_path / "r.jfr"
    path.write_bytes(chunk(event(GC, payload) + gc_event(START_TICKS, 5, 5)))
    out = summarize_jfr(path)
    assert out["gc"]["count"] == 1 and out["warning_count"] == 1
    assert "string claims" in out["warnings"][0] and "byte " in out["warnings"][0]


def test_checkpoint_claiming_a_huge_pool_is_skipped(tmp_path):
    checkpoint = event(1, varint(0) + varint(0) + varint(0) + b"\x00" + varint(1 << 50))
    path = tmp_path / "r.jfr"
    path.write_bytes(chunk(checkpoint + gc_event(START_TICKS, 5, 5)))
    out = summarize_jfr(path)
    assert out["gc"]["count"] == 1 and "checkpoint" in out["warnings"][0]


# -- random damage -------------------------------------------------------------------------


def outcome(path):
    """Summary or JfrError, never anything else."""
    try:
        out = summarize_jfr(path)
    except JfrError as exc:
        assert str(exc).startswith(str(path)), str(exc)
        return None
    assert out["gc"]["count"] is None or isinstance(out["gc"]["count"], int)
    # The text summary renders whatever came back.
    assert render_text(str(path), out, 10).startswith("recording")
    json.dumps(out)
    return out


@settings(max_examples=40, deadline=5000, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.data_too_large])
@given(st.lists(st.tuples(st.integers(0, len(REAL) - 1), st.integers(0, 255)),
                min_size=1, max_size=8),
       st.sampled_from(["anywhere", "header", "metadata", "events"]))
def test_changed_bytes_give_data_or_one_error(tmp_path_factory, changes, region):
    data = bytearray(REAL)
    for pos, value in changes:
        if region == "header":
            pos %= 68
        elif region == "metadata":
            pos = META_AT + pos % 90_000
        elif region == "events":
            pos = 110_000 + pos % (len(REAL) - 110_000)
        data[pos] = value
    path = tmp_path_factory.mktemp("mut") / "m.jfr"
    path.write_bytes(bytes(data))
    outcome(path)


@settings(max_examples=200, deadline=2000)
@given(st.binary(max_size=400), st.sampled_from([b"", b"FLR\0\x00\x02\x00\x01", b"\x1f\x8b",
                                                  b"{"]))
def test_random_bytes_give_one_error_or_data(tmp_path_factory, tail, prefix):
    path = tmp_path_factory.mktemp("rnd") / "r.jfr"
    path.write_bytes(prefix + tail)
    outcome(path)


@settings(max_examples=60, deadline=3000)
@given(st.binary(min_size=1, max_size=200), st.integers(0, 400))
def test_random_events_after_real_metadata(tmp_path_factory, junk, keep):
    events = gc_event(START_TICKS, 5, 5) * 3
    data = chunk(events[:keep % (len(events) + 1)] + junk)
    path = tmp_path_factory.mktemp("ev") / "r.jfr"
    path.write_bytes(data)
    out = outcome(path)
    assert out is not None  # the metadata is whole, so some summary always comes back
    assert out["gc"]["count"] <= 3 + len(junk) // 4


@pytest.mark.slow
def test_gzip_bomb_is_read_in_bounded_steps(tmp_path):
    import gzip
    # 200 MB of zeros compress to ~200 KB; not a chunk, so refused at the first header.
    path = tmp_path / "bomb.jfr.gz"
    with gzip.open(path, "wb") as f:
        for _ in range(200):
            f.write(b"\0" * (1 << 20))
    with pytest.raises(JfrError, match="no FLR magic"):
        summarize_jfr(path)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["type", "values", "startTime", "duration", "stackTrace", "frames",
                        "method", "name", "weight", "jvmUser", "when", "heapUsed",
                        "sumOfPauses", "longestPause"]), inner, max_size=5),
    max_leaves=30)
event_names = st.sampled_from(["jdk.GarbageCollection", "jdk.CPULoad", "jdk.ExecutionSample",
                               "jdk.GCHeapSummary", "jdk.ObjectAllocationSample", "x"])


@pytest.mark.slow
@settings(max_examples=150, deadline=2000)
@given(st.lists(st.fixed_dictionaries({"type": event_names, "values": json_values}),
                max_size=5) | json_values)
def test_random_json_exports_give_one_error_or_data(tmp_path_factory, events):
    path = tmp_path_factory.mktemp("json") / "e.json"
    doc = {"recording": {"events": events}} if isinstance(events, list) else events
    path.write_text(json.dumps(doc))
    outcome(path)


def test_deeply_nested_json_is_one_error(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"recording": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(JfrError, match="not a `jfr print --json` export"):
        summarize_jfr(path)
