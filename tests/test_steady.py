"""Issue 32: a class per cell repetition (flat, warmup, slowdown, no-steady-state).

Synthetic requests of known shape (a seeded generator below: 200 requests a second for 60 s,
latencies around 5 ms) go through a whole build twice: as `.hlog` cells (recorded into 1 s
intervals the way the harness's log is) and as a load tool's per-request file (a plain CSV of
send time, latency and status). Each shape's class is known by construction, and the steady
part's figures are checked against a nearest rank over the requests sent in it, computed here
from the samples, not from our output.
"""
from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from analysis.derive import steady
from analysis.paths import find_data
from analysis.read.hdr.histogram import layout_for
from analysis.read.hdr.log_writer import hlog_text
from analysis.read.loadtools.record import record_samples
from analysis.read.loadtools.results import RequestSamples, ToolInfo
from tests.conftest import REPO

RATE = 200
WINDOW_S = 60
BASE_MS = 5.0
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(
    [str(REPO)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []))}


def _base(rng, n):
    return BASE_MS * np.exp(rng.normal(0.0, 0.15, n))


def shape(name: str, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """(send times in s from the window's start, latencies in ms) of one known shape."""
    rng = np.random.default_rng(seed)
    t = np.arange(RATE * WINDOW_S) / RATE
    lat = _base(rng, len(t))
    if name == "gc-pauses":
        # a 150 ms stop-the-world pause every 10 s: requests sent in it wait for its end
        phase = t % 10.0
        lat = lat + np.where((phase >= 5.0) & (phase < 5.15), (5.15 - phase) * 1000.0, 0.0)
    elif name == "backlog":
        # a backlog that drains over the first fifth of the window (12 s): 2 s late at first
        lat = lat + np.maximum(0.0, 2000.0 * (1.0 - t / 12.0))
    elif name == "step":
        lat = np.where(t >= 30.0, lat * 3.0, lat)
    elif name == "queue":
        # a queue that grows to the end: each second 40 ms more
        lat = lat + 40.0 * t
    return t, lat


EXPECTED = {"flat": ("flat", None), "gc-pauses": ("flat", None), "backlog": ("warmup", 12.0),
            "step": ("slowdown", 30.0), "queue": ("no-steady-state", None)}


# -- the classifier on its own ------------------------------------------------------------------

def _series(t, lat) -> steady.Series:
    seconds = np.floor(t).astype(int)
    rows_t, p50, p99 = [], [], []
    for s in range(WINDOW_S):
        v = np.sort(lat[seconds == s])
        rows_t.append(float(s))
        p50.append(float(v[max(1, math.ceil(0.5 * len(v))) - 1]))
        p99.append(float(v[max(1, math.ceil(0.99 * len(v))) - 1]))
    return steady.Series(rows_t, p50, p99, answered=[RATE] * WINDOW_S)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_shape_gets_its_class(name):
    state = steady.classify(_series(*shape(name)), window_s=WINDOW_S, offered_rate=RATE)
    cls, start = EXPECTED[name]
    assert state.cls == cls, state.sentence
    if start is None:
        assert state.steady_from_s is None
    else:
        assert abs(state.steady_from_s - start) <= 2.0, state.steady_from_s


def test_a_backlog_drained_early_gives_the_headline_and_a_late_one_does_not():
    early = steady.classify(_series(*shape("backlog")), window_s=WINDOW_S, offered_rate=RATE)
    assert early.from_steady_part and not early.not_steady
    t, lat = shape("flat")
    late = lat + np.maximum(0.0, 2000.0 * (1.0 - t / 40.0))   # drains over 2/3 of the window
    state = steady.classify(_series(t, late), window_s=WINDOW_S, offered_rate=RATE)
    assert state.cls == "warmup" and state.not_steady and not state.from_steady_part


def test_in_flight_evidence_tells_a_backlog_from_a_flat_window():
    t, lat = shape("flat")
    series = _series(t, lat)
    flat_flight = [RATE * BASE_MS / 1000.0] * WINDOW_S
    drained = [max(1.0, 3000.0 * (1 - s / 10.0)) for s in range(WINDOW_S)]
    a = steady.classify(steady.Series(series.t_s, series.p50_ms, series.p99_ms, flat_flight),
                        window_s=WINDOW_S, offered_rate=RATE)
    b = steady.classify(steady.Series(series.t_s, series.p50_ms, series.p99_ms, drained),
                        window_s=WINDOW_S, offered_rate=RATE)
    assert a.cls == "flat"
    assert b.cls == "warmup" and 8.0 <= b.steady_from_s <= 12.0


def test_a_spike_of_one_second_is_not_a_change():
    t, lat = shape("flat")
    lat = np.where((t >= 20) & (t < 21), lat * 50, lat)
    assert steady.classify(_series(t, lat), window_s=WINDOW_S, offered_rate=RATE).cls == "flat"


def test_too_few_seconds_are_not_known():
    state = steady.classify(steady.Series([0.0, 1.0], [1.0, 1.0], [2.0, 2.0]), window_s=2)
    assert state.cls is None and "not known" in state.sentence


def test_running_median_keeps_a_step_and_removes_a_burst_at_the_start():
    y = np.array([9.0, 9.0, 1, 1, 1, 1, 5, 5, 5, 5, 5])
    out = steady.running_median(y)
    assert list(out[:6]) == [1.0] * 6 and list(out[7:]) == [5.0] * 4


# -- through a whole build ------------------------------------------------------------------------

RUN_HEAD = """\
title: Shapes
date: 2026-11-28
description: Synthetic requests of known shape (tests/test_steady.py).
value_unit: us
systems:
""" + "".join(f"  - {{id: {n}, label: {n}}}\n" for n in sorted(EXPECTED)) + f"""\
load_points:
  - {{id: r{RATE}, offered_rate: {RATE}, duration_s: {WINDOW_S}}}
"""


def _samples(t, lat) -> RequestSamples:
    n = len(t)
    return RequestSamples(
        path="shape", info=ToolInfo(format="plain-csv", tool="test", measure="send to reply"),
        start_ms=1_795_000_000_000.0 + np.round(t * 1000),
        latency_ns=np.round(lat * 1000).astype(np.int64) * 1000,
        ok=np.ones(n, bool), timed_out=np.zeros(n, bool), native_unit="us", epoch=True)


def _write_shape_files(run: Path, name: str) -> None:
    t, lat = shape(name)
    (run / name).mkdir(parents=True)
    rec = record_samples(_samples(t, lat), "us")
    (run / name / "r200.hlog").write_text(hlog_text(rec.intervals, 1000.0), encoding="utf-8")
    lines = ["ts,latency,status"] + [f"{1_795_000_000_000 + round(x * 1000)},"
                                        f"{round(v * 1000)},200" for x, v in zip(t, lat)]
    (run / name / "requests.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("steady") / "site"
    for sub in ("_includes", "_layouts"):
        shutil.copytree(REPO / sub, site / sub)
    shutil.copy(REPO / "_config.yml", site / "_config.yml")
    hlog_run, csv_run = site / "runs" / "shapes-hlog", site / "runs" / "shapes-csv"
    for name in EXPECTED:
        _write_shape_files(hlog_run, name)
    shutil.copytree(hlog_run, csv_run)
    (hlog_run / "run.yml").write_text(RUN_HEAD + "cells:\n" + "".join(
        f"  - {{system: {n}, load: r{RATE}}}\n" for n in sorted(EXPECTED)), encoding="utf-8")
    (csv_run / "run.yml").write_text(
        RUN_HEAD + "load_generator: {model: open}\ncells:\n" + "".join(
            f"  - {{system: {n}, load: r{RATE}, results: {n}/requests.csv, format: csv, options: "
            f"{{timestamp_unit: ms, latency_unit: us}}}}\n" for n in sorted(EXPECTED)),
        encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "analysis", "build", "--runs", "runs", "-q"],
                          cwd=site, env=ENV, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return site


def _cells(site: Path, run_id: str) -> dict:
    doc = yaml.safe_load(find_data(site, run_id).read_text(encoding="utf-8"))
    return doc["cells"][f"r{RATE}"]


def _nearest_rank_bucket_ms(values, p):
    ordered = np.sort(values)
    v = int(round(ordered[max(1, math.ceil(p / 100.0 * len(ordered))) - 1] * 1000))
    layout = layout_for(1, 2, 3)
    idx = layout.index_of(np.array([v]))
    return (int(layout.lowest_value_at(idx)[0]) / 1000.0,
            int(layout.highest_value_at(idx)[0]) / 1000.0)


@pytest.mark.parametrize("run_id", ["shapes-hlog", "shapes-csv"])
def test_every_shape_is_classified_through_a_build(site, run_id):
    cells = _cells(site, run_id)
    for name, (cls, start) in EXPECTED.items():
        rep = cells[name]["repetition_steadiness"][0]
        assert rep["steady_state"]["class"] == cls, (name, rep)
        got = rep["steady_state"]["steady_from_s"]
        assert (got is None) if start is None else abs(got - start) <= 2.0, (name, got)
        assert cells[name]["steady_counts"] == {cls: 1}


@pytest.mark.parametrize("run_id", ["shapes-hlog", "shapes-csv"])
def test_a_warmup_cell_reports_its_steady_part(site, run_id):
    cell = _cells(site, run_id)["backlog"]
    start = cell["repetition_steadiness"][0]["steady_state"]["steady_from_s"]
    t, lat = shape("backlog")
    part = lat[t >= start]
    assert cell["count"] == len(part)
    for p, key in ((50, "p50_ms"), (99, "p99_ms")):
        lo, hi = _nearest_rank_bucket_ms(part, p)
        assert lo <= cell[key] <= hi, (key, cell[key], lo, hi)
    # the whole window's figures beside them: the backlog's
    lo, hi = _nearest_rank_bucket_ms(lat, 99)
    assert lo <= cell["whole_window"]["p99_ms"] <= hi
    assert not cell["not_steady"]


def test_the_page_marks_the_cells(site):
    page = (site / "_reports" / "shapes-hlog.html").read_text(encoding="utf-8")
    assert "warm-up: steady from" in page and "whole window:" in page
    assert 'id="steady-state"' in page and "slowdown from" in page
    # the growing queue is saturated, and says it once
    assert "the queue grows to the end: no steady state" in page


def test_a_long_window_is_judged_in_blocks_at_a_bounded_cost():
    n = 7200                       # two hours: 12-second blocks
    rng = np.random.default_rng(5)
    t = np.arange(n, dtype=float)
    p50 = BASE_MS * np.exp(rng.normal(0.0, 0.1, n)) + np.maximum(0.0, 900.0 * (1 - t / 1800))
    series = steady.Series(list(t), list(p50), list(p50 * 2), answered=[RATE] * n)
    state = steady.classify(series, window_s=n, offered_rate=RATE)
    assert state.cls == "warmup" and abs(state.steady_from_s - 1800) <= 60, state
    assert len(steady.binned(series, 12).t_s) == 600
