"""Issue 23 end to end: a run whose cells are other load tools' files (run.yml `results:`)
builds like any other, and its numbers are the files' own.

The golden numbers are computed here from the raw files with the csv module (nearest rank over
the latency column, counts of status codes), never taken from our own output: a percentile
from the HdrHistogram intervals must lie in the 3-significant-digit bucket of the exact
nearest-rank value, counts must be equal. With ../shared/oracle, HistogramLogProcessor reads the
converted .hlog and must print the same percentiles as the data document.
"""
from __future__ import annotations

import csv
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from analysis.read.hdr.histogram import layout_for
from analysis.read.hdr.log import read_hlog
from analysis.paths import find_data
from tests.conftest import REPO

pytestmark = pytest.mark.slow     # (make check leaves it out; make test runs it)

FIXTURES = REPO / "tests" / "fixtures" / "loadtools"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(
    [str(REPO)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []))}

RUN_YML = """\
title: Four load tools against one server
date: 2026-11-26
description: vegeta, hey, wrk and wrk2 files read as they are.
service_time_ms: 1
systems:
  - {id: vegeta, label: vegeta}
  - {id: hey, label: hey}
  - {id: wrk, label: wrk}
  - {id: wrk2, label: wrk2}
load_points:
  - {id: r50, offered_rate: 50, duration_s: 5}
cells:
  - {system: vegeta, load: r50, results: files/results.csv}
  - {system: hey, load: r50, results: files/requests.csv}
  - {system: wrk, load: r50, results: files/wrk-latency.txt}
  - {system: wrk2, load: r50, results: files/wrk2-latency.txt, format: wrk2}
"""


def _build(site: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "analysis", "build", "--runs", "runs", "-q"],
                          cwd=site, env=ENV, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("imported") / "site"
    files = site / "runs" / "tools" / "files"
    files.mkdir(parents=True)
    for rel in ("vegeta/results.csv", "hey/requests.csv", "wrk/wrk-latency.txt",
                "wrk2/wrk2-latency.txt"):
        shutil.copy(FIXTURES / rel, files / Path(rel).name)
    (site / "runs" / "tools" / "run.yml").write_text(RUN_YML, encoding="utf-8")
    shutil.copytree(REPO / "_includes", site / "_includes")
    shutil.copytree(REPO / "_layouts", site / "_layouts")
    shutil.copy(REPO / "_config.yml", site / "_config.yml")
    proc = _build(site)
    assert proc.returncode == 0, proc.stderr
    return site


# The one-file runs of the tests below, by run id: (fixture, file name, run.yml after a common
# header). All are built in one site, once (`one_file_site`): one build's start and chart
# imports instead of one a test; each run's outputs are its own, whatever runs stand beside it.
ONE_FILE_RUNS: dict[str, tuple[str, str, str]] = {}


def one_file_run(run_id: str, fixture: str, name: str, manifest: str) -> str:
    """A run of the shared site: `fixture` copied to runs/<run_id>/files/<name>, `manifest` as
    its run.yml (after a common header)."""
    assert run_id not in ONE_FILE_RUNS, run_id
    ONE_FILE_RUNS[run_id] = (fixture, name, manifest)
    return run_id


def _write_one_file_run(site: Path, run_id: str) -> None:
    fixture, name, manifest = ONE_FILE_RUNS[run_id]
    files = site / "runs" / run_id / "files"
    files.mkdir(parents=True)
    shutil.copy(FIXTURES / fixture, files / name)
    (site / "runs" / run_id / "run.yml").write_text(
        "title: t\ndate: 2026-11-26\ndescription: d\n" + manifest, encoding="utf-8")


@pytest.fixture(scope="module")
def one_file_site(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """Every run of ONE_FILE_RUNS, and the closed loop whose wrk files agree, in one site
    built once."""
    site = tmp_path_factory.mktemp("one-file") / "site"
    for run_id in ONE_FILE_RUNS:
        _write_one_file_run(site, run_id)
    _write_wrk_run(site, WRK_AGREEING)
    for sub in ("_includes", "_layouts"):
        shutil.copytree(REPO / sub, site / sub)
    return site, _build(site)


def built_run(one_file_site: tuple[Path, subprocess.CompletedProcess], run_id: str) -> Path:
    """The shared site, once its build is known to have succeeded (every run of it)."""
    site, proc = one_file_site
    assert proc.returncode == 0, proc.stderr
    assert (site / "_reports" / f"{run_id}.html").is_file(), run_id
    return site


def _doc(site: Path) -> dict:
    return yaml.safe_load(find_data(site, "tools").read_text(encoding="utf-8"))


def _nearest_rank(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(p / 100.0 * len(ordered))) - 1]


def _bucket_ms(value_ms: float, unit_per_ms: float) -> tuple[float, float]:
    """The lowest and highest value of the 3-digit HdrHistogram bucket holding value_ms."""
    layout = layout_for(1, 2, 3)
    v = int(round(value_ms * unit_per_ms))
    import numpy as np
    idx = layout.index_of(np.array([v]))
    lo = int(layout.lowest_value_at(idx)[0])
    hi = int(layout.highest_value_at(idx)[0])
    return lo / unit_per_ms, hi / unit_per_ms


def _vegeta_rows() -> list[list[str]]:
    with open(FIXTURES / "vegeta/results.csv", newline="") as f:
        return list(csv.reader(f))


def _cell(doc: dict, system: str) -> dict:
    return doc["cells"]["r50"][system]


def test_the_run_records_in_the_finest_native_unit(built):
    assert _doc(built)["value_unit"] == "ns"       # vegeta's nanoseconds; hey's 0.1 ms fit in


def test_vegeta_counts_are_the_files(built):
    rows = _vegeta_rows()
    codes = [int(r[1]) for r in rows]
    answered = sum(1 for c in codes if 200 <= c < 400)
    timeouts = sum(1 for r in rows if r[1] == "0" and ("Timeout" in r[5] or "deadline" in r[5]))
    cell = _cell(_doc(built), "vegeta")
    assert cell["sent"] == len(rows) == 250
    assert cell["completed"] == answered == 232
    assert cell["timed_out"] == timeouts == 3
    assert cell["errors"] == len(rows) - answered - timeouts == 15


def test_vegeta_percentiles_lie_in_the_bucket_of_the_exact_nearest_rank(built):
    rows = _vegeta_rows()
    answered_ms = [int(r[2]) / 1e6 for r in rows if 200 <= int(r[1]) < 400]
    population = len(answered_ms) + 3      # the 3 timeouts censor the top ranks
    cell = _cell(_doc(built), "vegeta")
    for name, p in (("p50", 50.0), ("p90", 90.0)):
        rank = max(1, math.ceil(p / 100.0 * population))
        exact = sorted(answered_ms)[rank - 1]
        lo, hi = _bucket_ms(exact, 1e6)
        assert lo - 0.0005 <= cell[f"{name}_ms"] <= hi + 0.0005, (name, exact, cell[f"{name}_ms"])  # data: 3 decimals
    # p99 of 235 ranks falls among the timeouts: only a lower bound
    assert cell["p99_ms"] is None and cell["p99_at_least_ms"] is not None


def test_hey_percentiles_and_counts(built):
    with open(FIXTURES / "hey/requests.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    ok_ms = [float(r["response-time"]) * 1000 for r in rows if int(r["status-code"]) < 400]
    cell = _cell(_doc(built), "hey")
    assert cell["sent"] == len(rows)
    assert cell["completed"] == len(ok_ms)
    assert cell["errors"] == len(rows) - len(ok_ms)
    exact = _nearest_rank(ok_ms, 50.0)
    lo, hi = _bucket_ms(exact, 1e6)
    assert lo - 0.0005 <= cell["p50_ms"] <= hi + 0.0005


def test_a_summary_shows_the_percentiles_its_file_printed_and_no_others(built):
    text = (FIXTURES / "wrk/wrk-latency.txt").read_text()
    cell = _cell(_doc(built), "wrk")
    assert "50%    2.38ms" in text and cell["p50_ms"] == pytest.approx(2.38)
    assert "99%   11.68ms" in text and cell["p99_ms"] == pytest.approx(11.68)
    assert cell["p95_ms"] is None and cell["p999_ms"] is None    # wrk printed neither


def test_the_wrk2_spectrum_is_the_cells_spectrum(built):
    doc = _doc(built)
    cell = _cell(doc, "wrk2")
    assert cell["p50_ms"] is not None and cell["p999_ms"] is not None


def test_the_converted_hlog_is_published_and_holds_the_answered_requests(built):
    hlog = built / "assets/data/tools/imported/files/results.csv.hlog"
    log = read_hlog(hlog)
    assert log.merged().total_count == 232
    assert log.merged(tag="error").total_count == 15
    assert log.merged(tag="timeout").total_count == 3
    page = (built / "_reports/tools.html").read_text(encoding="utf-8")
    assert "/assets/data/tools/imported/files/results.csv.hlog" in page
    assert "/runs/tools/files/results.csv" in page


def test_the_page_says_which_loop_each_tool_ran(built):
    page = (built / "_reports/tools.html").read_text(encoding="utf-8")
    assert "<strong>Closed loop: coordinated omission.</strong> hey; wrk:" in page
    assert "<strong>Open loop.</strong> vegeta; wrk2:" in page     # (labels name the tools)
    assert "Load tools" in page
    # what a tool's file leaves out is said beside it
    assert "hey&#39;s CSV leaves out the requests that got no answer" in page
    assert "resets its histogram after its calibration" in page
    doc = _doc(built)
    # the report's description (the tag feeds' summary) says it too
    front = (built / "_reports/tools.html").read_text(encoding="utf-8").split("---")[1]
    assert "coordinated omission" in front
    assert doc["load_curve_table"]["load_model"]["closed"] is True


def test_charts_a_summary_has_no_data_for_are_said_not_drawn(built):
    doc = _doc(built)
    gaps = doc["charts"]["gaps"]
    assert any(g.startswith("wrk at ") for g in gaps["latency_over_time"])
    assert any(g.startswith("wrk at ") for g in gaps["spectrum"])
    assert not any(g.startswith("wrk2 at ") for g in gaps["spectrum"])
    page = (built / "_reports/tools.html").read_text(encoding="utf-8")
    assert "holds no per-interval latencies" in page


def test_same_inputs_same_bytes(built, tmp_path):
    again = tmp_path / "site"
    shutil.copytree(built, again, ignore=shutil.ignore_patterns(".cache"))
    for sub in ("_data", "_rundata", "_reports", "assets"):
        shutil.rmtree(again / sub, ignore_errors=True)
    assert _build(again).returncode == 0
    for sub in ("_reports/tools.html", "assets/data/tools/imported/files/results.csv.hlog"):
        assert (again / sub).read_bytes() == (built / sub).read_bytes()


@pytest.mark.oracle
def test_histogram_log_processor_reads_the_converted_hlog_as_the_raw_file_says(
        built, oracle, tmp_path):
    """HdrHistogram's own HistogramLogProcessor on the published .hlog (its untagged intervals:
    the answered requests): its p50 lies in the bucket of the exact nearest rank over the raw
    file's answered latencies, its max in the bucket of their max, its count is theirs."""
    hlog = built / "assets/data/tools/imported/files/results.csv.hlog"
    out = tmp_path / "vegeta"
    subprocess.run([str(oracle / "hlp"), "-i", str(hlog), "-o", str(out),
                    "-outputValueUnitRatio", "1000000"], check=True, capture_output=True,
                   timeout=300)
    text = (tmp_path / "vegeta.hgrm").read_text()
    rows = [ln.split() for ln in text.splitlines()
            if ln.strip() and not ln.lstrip().startswith("#") and ln.split()[0][0].isdigit()]
    p50_row = next(r for r in rows if float(r[1]) == 0.5)
    answered_ms = [int(r[2]) / 1e6 for r in _vegeta_rows() if 200 <= int(r[1]) < 400]
    lo, hi = _bucket_ms(_nearest_rank(answered_ms, 50.0), 1e6)
    assert lo - 0.0005 <= float(p50_row[0]) <= hi + 0.0005
    assert int(rows[-1][2]) == len(answered_ms) == 232
    hlp_max = float(text.split("#[Max     =")[1].split(",")[0])
    lo, hi = _bucket_ms(max(answered_ms), 1e6)
    assert lo - 0.0005 <= hlp_max <= hi + 0.0005


def test_the_readme_example_is_a_valid_manifest(tmp_path):
    """The run.yml of README's "Bring your own results" loads as it stands."""
    from analysis.read.manifest import load_manifest
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Bring your own results", 1)[1]
    example = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    run = tmp_path / "example"
    run.mkdir()
    (run / "run.yml").write_text(example, encoding="utf-8")
    manifest = load_manifest(run)
    assert [c.hlog for c in manifest.cells] == ["jmeter/r500.jtl", "vegeta/r500.csv"]
    assert all(c.results and c.window == (30, 120) for c in manifest.cells)
    assert manifest.value_unit is None        # taken from the files' native units


@pytest.mark.parametrize("cell, message", [
    ("{system: a, load: r1, results: x.csv, hlog: y.hlog}", "not both"),
    ("{system: a, load: r1, results: x.csv, format: nope}", "unknown format 'nope'"),
    ("{system: a, load: r1, format: wrk}", "goes with `results:`"),
    ("{system: a, load: r1, results: x.csv, window: {skip_s: -1}}", "must be a number >= 0"),
    ("{system: a, load: r1, results: x.csv, co_correction: {}}", "expected_interval_ms: required"),
    ("{system: a, load: r1, results: ../x.csv}", "results"),
])
def test_results_cells_are_checked_with_the_line_they_are_on(tmp_path, cell, message):
    from analysis.errors import ManifestError
    from analysis.read.manifest import load_manifest
    run = tmp_path / "bad"
    run.mkdir()
    (run / "run.yml").write_text(
        "title: t\ndate: 2026-11-26\ndescription: d\nsystems: [{id: a, label: A}]\n"
        "load_points: [{id: r1, offered_rate: 1, duration_s: 1}]\n"
        f"cells:\n  - {cell}\n", encoding="utf-8")
    with pytest.raises(ManifestError) as err:
        load_manifest(run)
    assert message in str(err.value) and "line 7" in str(err.value)


def test_a_load_point_is_an_offered_rate_or_connections_not_both(tmp_path):
    from analysis.errors import ManifestError
    from analysis.read.manifest import load_manifest
    run = tmp_path / "both"
    run.mkdir()
    (run / "run.yml").write_text(
        "title: t\ndate: 2026-11-26\ndescription: d\nvalue_unit: ms\n"
        "systems: [{id: a, label: A}]\n"
        "load_points: [{id: c8, offered_rate: 1, connections: 8, duration_s: 1}]\n",
        encoding="utf-8")
    with pytest.raises(ManifestError, match="closed loop"):
        load_manifest(run)


CO_RUN = one_file_run(
    "co", "hey/requests.csv", "requests.csv",
    "systems: [{id: hey, label: hey}]\n"
    "load_points: [{id: r50, offered_rate: 50, duration_s: 2}]\n"
    "co_correction: {expected_interval_ms: 5}\n"
    "cells: [{system: hey, load: r50, results: files/requests.csv}]\n")


def test_the_coordinated_omission_correction_is_shown_beside_the_measured_numbers(one_file_site):
    site = built_run(one_file_site, CO_RUN)
    doc = yaml.safe_load(find_data(site, "co").read_text(encoding="utf-8"))
    cell = doc["load_curve_table"]["rows"][0]["cells"][0]
    with open(FIXTURES / "hey/requests.csv", newline="") as f:
        ok_ms = [float(r["response-time"]) * 1000 for r in csv.DictReader(f)
                 if int(r["status-code"]) < 400]
    # HdrHistogram's correction, done here on the raw column: beside each v > E also
    # v - E, v - 2E, ... while >= E (recordValueWithExpectedInterval)
    corrected = list(ok_ms)
    for v in ok_ms:
        missing = v - 5
        while missing >= 5:
            corrected.append(missing)
            missing -= 5
    assert len(corrected) > len(ok_ms)
    exact_p99 = _nearest_rank(corrected, 99.0)
    shown = float(cell["corrected_text"].split("p99 ")[1].split(",")[0])
    assert shown == pytest.approx(exact_p99, rel=0.01)       # printed to 3 figures
    assert shown > cell["latency"][2]["ms"]                     # above the measured p99
    page = (site / "_reports/co.html").read_text(encoding="utf-8")
    assert "coordinated-omission correction for an expected interval of 5 ms" in page
    assert cell["latency"][2]["ms"] == doc["cells"]["r50"]["hey"]["p99_ms"]


def test_throughput_is_the_replies_that_arrived_during_the_window(built):
    """As the harness counts it: replies of any status whose arrival (send + latency) falls in
    the window, per second of it; the window of a file without `window:` is its sends' span,
    N sends standing for N intervals (N / (N - 1) of first-to-last)."""
    rows = _vegeta_rows()
    sends = [int(r[0]) / 1e6 for r in rows]                     # ns -> ms
    first, n = min(sends), len(sends)
    duration_s = (max(sends) - first) / 1000.0 * n / (n - 1)
    arrived = sum(1 for r in rows if r[1] != "0"
                  and first <= int(r[0]) / 1e6 + int(r[2]) / 1e6 < first + duration_s * 1000)
    cell = _cell(_doc(built), "vegeta")
    assert cell["throughput_rps"] == pytest.approx(arrived / duration_s, abs=0.0005)
    assert cell["goodput_rps"] == pytest.approx(232 / duration_s, abs=0.0005)


K6_RUN = one_file_run(
    "k6", "k6/handmade-arrival-rate.ndjson", "points.ndjson",
    "systems: [{id: k6, label: k6}]\n"
    "load_points: [{id: r50, offered_rate: 50, duration_s: 5}]\n"
    "cells:\n  - system: k6\n    load: r50\n    results: files/points.ndjson\n"
    "    options: {executors: {steady: constant-arrival-rate}}\n")


def test_k6_executors_named_in_run_yml_give_the_load_model(one_file_site):
    """No k6 output names its executor: run.yml's `options: {executors: {...}}` does, and the
    cell's load model follows (constant-arrival-rate: open)."""
    site = built_run(one_file_site, K6_RUN)
    doc = yaml.safe_load(find_data(site, "k6").read_text(encoding="utf-8"))
    tools = doc["methodology"]["load_tools"]
    assert tools[0]["load_model_text"].startswith("open loop")
    assert "constant-arrival-rate" in tools[0]["load_model_text"]


LOCUST_RUN = one_file_run(
    "locust", "locust/locust_stats_history.csv", "history.csv",
    "systems: [{id: locust, label: Locust}]\n"
    "load_points: [{id: u8, users: 8, duration_s: 5}]\n"
    "cells: [{system: locust, load: u8, results: files/history.csv}]\n")


def test_a_locust_history_builds_with_its_intervals(one_file_site):
    """Locust's stats history: per-interval rows, drawn over time; each lasts until the next
    one and counts the growth of Locust's running total (read here with the csv module)."""
    site = built_run(one_file_site, LOCUST_RUN)
    with open(FIXTURES / "locust/locust_stats_history.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["Name"] == "Aggregated"]
    totals = [int(r["Total Request Count"]) for r in rows]
    series = (site / "assets/data/locust/locust-u8.csv").read_text().splitlines()
    counts = [int(line.split(",")[3]) for line in series[1:]]
    assert counts == [b - a for a, b in zip([0] + totals, totals)]
    assert (site / "assets/charts/locust/latency-u8.svg").is_file()


HGRM_RUN = one_file_run(
    "hgrm", "hgrm/jhiccup-v1.hgrm", "run.hgrm",
    "load_generator: {model: open}\n"
    "systems: [{id: jhiccup, label: jHiccup}]\n"
    "load_points: [{id: r50, offered_rate: 50, duration_s: 5}]\n"
    "cells: [{system: jhiccup, load: r50, results: files/run.hgrm}]\n")


def test_a_spectrums_upper_bounds_print_as_such_and_the_methodology_says_so(one_file_site):
    """An .hgrm with no row at 0.99 or 0.999 (jhiccup-v1.hgrm): the load-curve table prints
    p99 and p99.9 as "≤" the first row above (1283.46 and 1837.11 in the file)."""
    site = built_run(one_file_site, HGRM_RUN)
    doc = yaml.safe_load(find_data(site, "hgrm").read_text(encoding="utf-8"))
    cell = doc["cells"]["r50"]["jhiccup"]
    assert (cell["p99_ms"], cell["p999_ms"]) == (1283.46, 1837.11)
    assert cell["upper_bounds"] == ["p99", "p999"]
    page = (site / "_reports/hgrm.html").read_text(encoding="utf-8")
    assert "≤ 1,283" in page and "≤ 1,837" in page
    assert page.count("and X is its first row above it, the most that the file states") == 1


@pytest.mark.parametrize("load, message", [
    ("{id: r8, offered_rate: 8}", "duration_s"),          # an open loop's is always needed
    ("{id: r8, connections: 8}", "load point 'r8' needs duration_s: its cell"),   # an .hlog's
])
def test_duration_s_may_be_left_out_only_for_a_closed_loop_of_tool_files(tmp_path, load, message):
    from analysis.errors import ManifestError
    from analysis.read.manifest import load_manifest
    run = tmp_path / "nodur"
    run.mkdir()
    (run / "run.yml").write_text(
        "title: t\ndate: 2026-11-26\ndescription: d\nvalue_unit: ms\n"
        f"systems: [{{id: a, label: A}}]\nload_points: [{load}]\n", encoding="utf-8")
    with pytest.raises(ManifestError, match=re.escape(message)):
        load_manifest(run)


def _write_wrk_run(site: Path, fixtures: list[str]) -> None:
    """A closed-loop run without duration_s: one wrk file per repetition of one cell."""
    files = site / "runs" / "wrk" / "files"
    files.mkdir(parents=True)
    cells = []
    for i, fixture in enumerate(fixtures, 1):
        shutil.copy(FIXTURES / "wrk" / fixture, files / fixture)
        cells.append(f"  - {{system: wrk, load: c8, repetition: {i}, results: files/{fixture}}}")
    (site / "runs" / "wrk" / "run.yml").write_text(
        "title: t\ndate: 2026-11-26\ndescription: d\n"
        "systems: [{id: wrk, label: wrk}]\n"
        "load_points: [{id: c8, connections: 8}]\ncells:\n" + "\n".join(cells) + "\n",
        encoding="utf-8")


# wrk printed "in 3.02s", "in 3.06s", "in 3.07s": within 0.5 s, so 3.06 s, their median
WRK_AGREEING = ["wrk-latency.txt", "wrk-non2xx.txt", "wrk-plain.txt"]


def test_a_closed_loops_duration_comes_from_its_files_when_they_agree(one_file_site):
    texts = [(FIXTURES / "wrk" / f).read_text() for f in WRK_AGREEING]
    assert [t.count(s) for t, s in zip(texts, ("in 3.02s", "in 3.06s", "in 3.07s"))] == [1] * 3
    site = built_run(one_file_site, "wrk")
    doc = yaml.safe_load(find_data(site, "wrk").read_text(encoding="utf-8"))
    (point,) = doc["load_points"]
    assert point["duration_s"] == 3.06
    (tool,) = doc["methodology"]["load_tools"]
    assert tool["duration_text"].endswith("(the median of theirs): 8 connections: 3.06 s")


def test_a_closed_loops_files_that_disagree_on_the_duration_are_named(tmp_path):
    # "in 3.02s" and "in 5.03s": no duration to take
    site = tmp_path / "site"
    _write_wrk_run(site, ["wrk-latency.txt", "wrk-seconds.txt"])
    for sub in ("_includes", "_layouts"):
        shutil.copytree(REPO / sub, site / sub)
    proc = _build(site)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "load point 'c8' has no duration_s, and its files disagree" in proc.stderr
    assert "wrk-latency.txt 3.02 s" in proc.stderr and "wrk-seconds.txt 5.03 s" in proc.stderr
    assert "give duration_s for c8 in run.yml" in proc.stderr


MIX_RUN = one_file_run(
    "mix", "wrk/wrk-latency.txt", "wrk.txt",
    "systems: [{id: wrk, label: wrk}]\n"
    "load_points: [{id: c8, connections: 8, duration_s: 3}]\n"
    "window: {skip_s: 1, duration_s: 1}\nco_correction: {expected_interval_ms: 1}\n"
    "cells: [{system: wrk, load: c8, results: files/wrk.txt}]\n")


def test_a_runs_window_and_correction_leave_a_summary_whole_and_say_so(one_file_site):
    site = built_run(one_file_site, MIX_RUN)
    doc = yaml.safe_load(find_data(site, "mix").read_text(encoding="utf-8"))
    (tool,) = doc["methodology"]["load_tools"]
    assert tool["window_text"].startswith("not cut: the wrk summary holds no times")
    assert tool["correction_text"] is None
    assert doc["cells"]["c8"]["wrk"]["count"] == 8211       # the whole file, as wrk printed it


JM_RUN = one_file_run(
    "jm", "jmeter/jmeter5-date-us.jtl", "results.jtl",
    "systems: [{id: jm, label: JMeter}]\n"
    "load_points: [{id: r50, offered_rate: 50, duration_s: 6}]\n"
    "cells:\n  - system: jm\n    load: r50\n    results: files/results.jtl\n"
    "    options: {timestamp_format: \"MM/dd/yyyy HH:mm:ss.SSS\"}\n")


def test_a_jmeter_csv_with_date_timestamps_builds_with_its_pattern_from_run_yml(one_file_site):
    """JMeter 5.6.3 with timestamp_format=MM/dd/yyyy HH:mm:ss.SSS: the file cannot say whether
    11/29 is day/month or month/day, run.yml's options can; every sample counts (JMeter's own
    summariser line of that run)."""
    site = built_run(one_file_site, JM_RUN)
    summary = (FIXTURES / "jmeter/jmeter5-date-us.summariser.txt").read_text()
    sent = int(re.search(r"^summary =\s+(\d+) in", summary, re.MULTILINE)[1])
    cell = yaml.safe_load(find_data(site, "jm").read_text(encoding="utf-8"))["cells"]["r50"]["jm"]
    assert cell["sent"] == sent == 416
