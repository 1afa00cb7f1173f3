"""JFR figures counted inside a cell's measured window (summarize_jfr(..., window=...)).

The first demo's virtual/r800 recording had a 57.93 ms GC pause 3.8 s before the window
opened, which its report showed under the cell; the re-recorded demo's windows come from each
cell's counts file, and no pause outside a window may count in it. The live referee is the
JDK's own `jfr print`, whose event times are turned into epoch nanoseconds here with plain
datetime arithmetic.
"""
from __future__ import annotations

import calendar
import json
import re
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.errors import JfrError
from analysis.read.counts import read_counts
from analysis.derive.jvm_summary import summarize_jfr
from tests.conftest import REPO

DEMO = REPO / "runs" / "pool-vs-virtual"
FIXTURES = REPO / "tests" / "fixtures" / "jfr"
WINDOW_S = 12


def demo_window(system, cell):
    """The cell repetition's window ("r800.1"), epoch ns, from its counts file."""
    return read_counts(DEMO / system / f"{cell}.counts.json").window_epoch_ns()


@pytest.mark.parametrize("system", ["pool20", "virtual"])
def test_pauses_outside_the_window_are_not_in_it(system):
    for path in sorted((DEMO / system).glob("r*.1.jfr")):
        window = demo_window(system, path.name[:-4])
        whole = summarize_jfr(path)
        cell = summarize_jfr(path, window=window)
        assert "window" not in whole and "warmup" not in whole
        assert all(window[0] / 1e9 <= t < window[1] / 1e9 for t, _ in cell["gc"]["pauses"])
        assert all(t < window[0] / 1e9 for t, _ in cell["warmup"]["gc"]["pauses"])
        assert cell["window"]["start_epoch_s"] == pytest.approx(window[0] / 1e9, abs=1e-3)
        assert cell["window"]["end_epoch_s"] == pytest.approx(window[1] / 1e9, abs=1e-3)
        assert cell["window"]["covered_s"] == 12.0
        # the recording's own figures stay whole-recording
        assert cell["duration_s"] == whole["duration_s"] and cell["jdk"] == whole["jdk"]
        # nothing counted twice: window + warm-up <= whole (the drain counts nowhere)
        for key in ("count", "pause_total_ms"):
            assert cell["gc"][key] + cell["warmup"]["gc"][key] <= whole["gc"][key] + 1e-9
        assert cell["cpu"]["samples"] + cell["warmup"]["cpu"]["samples"] <= \
            whole["cpu"]["samples"]
        assert cell["samples"]["count"] + cell["warmup"]["samples"]["count"] <= \
            whole["samples"]["count"]


def test_window_over_the_whole_recording_changes_nothing():
    path = FIXTURES / "jdk17-profile.jfr"
    whole = summarize_jfr(path)
    start = int(whole["start_epoch_s"] * 1e9) - 1_000_000_000
    cell = summarize_jfr(path, window=(start, start + 10 ** 12))
    for key in ("gc", "safepoint", "cpu", "threads", "samples", "hot_methods",
                "allocation_samples"):
        assert cell[key] == whole[key], key
    assert cell["warmup"]["gc"]["count"] == 0 and cell["warmup"]["samples"]["count"] == 0


def test_empty_window_counts_nothing():
    path = FIXTURES / "jdk17-profile.jfr"
    whole = summarize_jfr(path)
    after = int((whole["start_epoch_s"] + whole["duration_s"]) * 1e9) + 10 ** 9
    cell = summarize_jfr(path, window=(after, after + 10 ** 9))
    assert cell["gc"]["count"] == 0 and cell["samples"]["count"] == 0
    assert cell["window"]["covered_s"] == 0.0 and cell["allocation_rate_mb_s"] is None
    assert cell["warmup"]["gc"] == whole["gc"]


def test_export_and_recording_agree_in_a_window():
    whole = summarize_jfr(FIXTURES / "jdk17-default.jfr")
    start = int(whole["start_epoch_s"] * 1e9)
    window = (start + 500_000_000, start + int(whole["duration_s"] * 1e9 * 0.6))
    rec = summarize_jfr(FIXTURES / "jdk17-default.jfr", window=window)
    exp = summarize_jfr(FIXTURES / "jdk17-default-export.json", window=window)
    assert rec["gc"]["count"] == exp["gc"]["count"]
    assert rec["cpu"] == exp["cpu"]
    assert rec["warmup"]["gc"]["count"] == exp["warmup"]["gc"]["count"]


@pytest.mark.parametrize("window", [(5, 5), (10, 1), (1.5, 3), ("a", "b")])
def test_bad_window_is_a_clear_error(window):
    with pytest.raises(JfrError, match="window"):
        summarize_jfr(FIXTURES / "jdk17-default.jfr", window=window)


# -- live referee: the JDK's jfr tool -----------------------------------------------------------

def _epoch_ns(text):
    """'2026-11-22T00:25:20.532074894Z' -> epoch ns (the JDK prints UTC)."""
    m = re.fullmatch(r"(\d+)-(\d+)-(\d+)T(\d+):(\d+):(\d+)(?:\.(\d+))?Z", text)
    y, mo, d, h, mi, s, frac = m.groups()
    whole = calendar.timegm((int(y), int(mo), int(d), int(h), int(mi), int(s)))
    return whole * 10 ** 9 + int((frac or "0").ljust(9, "0")[:9])


def _seconds(text):
    return float(re.fullmatch(r"PT([\d.]+)S", text).group(1)) if text else 0.0


@pytest.mark.jdk
@pytest.mark.parametrize("cell", [("virtual", "r800.1"), ("pool20", "r800.1"),
                                  ("pool20", "r100.1")])
def test_window_figures_match_jfr_print(cell):
    jfr = shutil.which("jfr")
    if jfr is None:
        pytest.skip("needs the JDK's jfr tool")
    path = DEMO / cell[0] / f"{cell[1]}.jfr"
    out = subprocess.run(
        [jfr, "print", "--json", "--events",
         "jdk.GarbageCollection,jdk.CPULoad,jdk.ExecutionSample,jdk.SafepointBegin", str(path)],
        capture_output=True, text=True, timeout=120, check=True).stdout
    events = json.loads(out)["recording"]["events"]
    w0, w1 = demo_window(*cell)

    def inside(kind):
        return [e["values"] for e in events if e["type"] == kind
                and w0 <= _epoch_ns(e["values"]["startTime"]) < w1]
    gc, cpu = inside("jdk.GarbageCollection"), inside("jdk.CPULoad")
    ours = summarize_jfr(path, window=(w0, w1))
    assert ours["gc"]["count"] == len(gc)
    assert ours["gc"]["pause_max_ms"] == pytest.approx(
        max([_seconds(v["longestPause"]) * 1000 for v in gc], default=0.0), abs=1e-6)
    assert ours["cpu"]["samples"] == len(cpu)
    assert ours["cpu"]["machine"] == pytest.approx(
        sum(v["machineTotal"] for v in cpu) / len(cpu), abs=1e-6)
    assert ours["samples"]["count"] == len(inside("jdk.ExecutionSample"))
    assert ours["safepoint"]["count"] == len(inside("jdk.SafepointBegin"))


@settings(max_examples=300, deadline=None)
@given(start_nanos=st.integers(0, 1 << 62), start_ticks=st.integers(0, 1 << 62),
       tps=st.one_of(st.sampled_from([1, 1000, 10 ** 9, 1_000_000_007, 3_000_000_000]),
                     st.integers(1, 1 << 40)),
       offset=st.integers(-(1 << 40), 1 << 40))
def test_window_ends_in_ticks_place_every_tick_as_its_epoch_time_would(start_nanos, start_ticks,
                                                                      tps, offset):
    """The reader routes events on their ticks against the window's ends turned into ticks once
    a chunk (issue 25: one conversion a chunk, not one an event); around the tick found, each
    tick is on the side its epoch time (_epoch_ns) is."""
    from analysis.read.jfr.reader import ChunkReader
    reader = ChunkReader(None)
    reader._clock = (start_nanos, start_ticks, tps)
    edge = start_nanos + offset
    first = reader._first_tick_at(edge)
    for t in range(first - 3, first + 4):
        assert (reader._epoch_ns(t) >= edge) == (t >= first), t


@pytest.mark.parametrize("system", ["pool20", "virtual"])
def test_the_warmups_samples_are_counted_without_naming_their_stacks(system):
    """No figure of the warm-up names a method, so its samples are counted (count, unresolved,
    truncated stacks: the same as a window over the warm-up gives) and their stacks, half a
    run's distinct ones, are not named."""
    from analysis.derive.jvm_summary import summarize_and_fold
    from analysis.read.jfr import read_jfr
    from analysis.read.jfr.stacks import FoldingReader, FoldingSummary
    path = DEMO / system / "r200.1.jfr"
    window = demo_window(system, "r200.1")
    record = read_jfr(path, None, window, summary=FoldingSummary(None, window),
                      reader=FoldingReader)
    assert record.warmup.sample_count > 2 and record.self_counts
    assert not record.warmup.self_counts and not record.warmup.total_counts
    start = int(summarize_jfr(path)["start_epoch_s"] * 1e9) - 10**9
    before = summarize_jfr(path, window=(start, window[0]))
    summary, _ = summarize_and_fold(path, window=window)
    assert summary["warmup"]["samples"] == before["samples"]
    assert summary["samples"] == summarize_jfr(path, window=window)["samples"]
