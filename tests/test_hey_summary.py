"""hey's CSV and its summary from one run (issue 32): bench/outside/record.sh has hey print its
report of the run through our template (bench/outside/hey-csv-and-summary.tmpl) as a CSV in
`hey -o csv`'s columns and the summary lines the build reads, and a run's hey cell names the
summary beside the CSV (`summary:`), so that its failed requests, which the CSV leaves out, are
counted from a file of the same run.

Golden counts come from the target's own rule (bench/loadtools_target.py: every 97th request
outlasts the 1 s timeout, every 17th answers 500), never from our output."""
from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from analysis.paths import find_data
from analysis.read.loadtools import detect_format, hey
from tests.conftest import REPO, need

sys.path.insert(0, str(REPO / "bench" / "outside"))
import hey_split  # noqa: E402  (bench/outside/, just above)

FIXTURES = REPO / "tests" / "fixtures" / "loadtools" / "hey"
TEMPLATE = REPO / "bench" / "outside" / "hey-csv-and-summary.tmpl"
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_one_hey_run_prints_the_csv_and_the_summary_of_the_same_requests(tmp_path):
    need(shutil.which("hey") is not None, "hey (apt-get install hey)")
    port = _free_port()
    target = subprocess.Popen([sys.executable, str(REPO / "bench" / "loadtools_target.py"),
                               str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(50):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        out = subprocess.run(["hey", "-n", "200", "-c", "4", "-t", "1", "-o",
                              TEMPLATE.read_text(encoding="utf-8"), f"http://127.0.0.1:{port}/"],
                             capture_output=True, timeout=60, check=True).stdout
    finally:
        target.kill()
        target.wait()
    csv_part, text_part = hey_split.split(out)
    (tmp_path / "r.csv").write_bytes(csv_part)
    (tmp_path / "r.txt").write_bytes(text_part)
    assert detect_format(tmp_path / "r.csv") == "hey-csv"
    assert detect_format(tmp_path / "r.txt") == "hey-text"
    rows = hey.read(str(tmp_path / "r.csv"), "hey-csv", {})
    summary = hey.read(str(tmp_path / "r.txt"), "hey-text", {})
    # 200 requests: 2 (97th, 194th) time out, 11 multiples of 17 answer 500
    assert len(rows) == summary.answered == 198
    assert (summary.requests, summary.timeouts) == (200, 2)
    assert int((rows.status == 500).sum()) == 11 == summary.errors - 2
    # the CSV part: `-o csv`'s header, then one line of its eight columns per answer
    lines = csv_part.decode().split("\n")
    assert lines[0] == hey.CSV_HEADER and lines[-1] == "" and len(lines) == 198 + 2
    assert {len(line.split(",")) for line in lines[1:-1]} == {8}
    # the summary part: its Slowest is the CSV's largest response-time (one report), and it
    # ends with the error distribution, one line for both timeouts (one message), one newline
    slowest = max((line.split(",")[0] for line in lines[1:-1]), key=float)
    assert text_part.startswith(b"Summary:\n  Total:\t")
    assert f"\n  Slowest:\t{slowest} secs\n".encode() in text_part
    errors = text_part.partition(b"\n\nError distribution:\n")[2]
    assert re.fullmatch(rb"  \[2\]\t[^\n]*Client\.Timeout exceeded[^\n]*\n", errors), text_part


def test_output_without_the_marker_is_refused():
    with pytest.raises(ValueError, match="no summary marker line"):
        hey_split.split(b"response-time,DNS+dialup\n0.1,0,0,0,0,0,200,0.0\n")


def _add_run(site: Path, run_id: str, cell: str, files: dict[str, str]) -> None:
    run = site / "runs" / run_id
    (run / "hey").mkdir(parents=True)
    for name, fixture in files.items():
        shutil.copy(FIXTURES / fixture, run / "hey" / name)
    (run / "run.yml").write_text(
        "title: t\ndate: 2026-11-29\ndescription: d\n"
        "systems: [{id: hey, label: hey}]\n"
        "load_points: [{id: r50, offered_rate: 50, duration_s: 5}]\n"
        "load_generator: {timeout_s: 1}\n"
        f"cells: [{cell}]\n", encoding="utf-8")


def _build(site: Path, runs: dict[str, tuple[str, dict[str, str]]]) -> subprocess.CompletedProcess:
    """A site of these runs (run id -> its cell and its files), built once for the tests
    below: one build's start and chart imports for several runs (each run's outputs and error
    lines are its own)."""
    for run_id, (cell, files) in runs.items():
        _add_run(site, run_id, cell, files)
    for sub in ("_includes", "_layouts"):
        shutil.copytree(REPO / sub, site / sub)
    return subprocess.run([sys.executable, "-m", "analysis", "build", "--runs", "runs", "-q"],
                          cwd=site, env=ENV, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def good_site(tmp_path_factory) -> Path:
    """The runs that build: a cell with its summary (`with-summary`), one without
    (`no-summary`)."""
    site = tmp_path_factory.mktemp("hey-good") / "site"
    proc = _build(site, {
        "with-summary": ("{system: hey, load: r50, results: hey/r50.csv, summary: hey/r50.txt}",
                         {"r50.csv": "same-run.csv", "r50.txt": "same-run.txt"}),
        "no-summary": ("{system: hey, load: r50, results: hey/r50.csv}",
                       {"r50.csv": "same-run.csv"}),
    })
    assert proc.returncode == 0, proc.stderr
    return site


@pytest.fixture(scope="module")
def bad_build(tmp_path_factory) -> subprocess.CompletedProcess:
    """The runs whose summary is refused, each for its own reason, in one build."""
    return _build(tmp_path_factory.mktemp("hey-bad") / "site", {
        # requests.csv and summary.txt are two runs of one command: 396 rows, 395 answered
        "another-run": ("{system: hey, load: r50, results: hey/r50.csv, summary: hey/r50.txt}",
                        {"r50.csv": "requests.csv", "r50.txt": "summary.txt"}),
        "missing": ("{system: hey, load: r50, results: hey/r50.csv, summary: hey/gone.txt}",
                    {"r50.csv": "same-run.csv"}),
        "not-hey": ("{system: hey, load: r50, results: hey/r50.csv, summary: hey/r50.csv}",
                    {"r50.csv": "same-run.csv"}),
    })


def _failures_text(site: Path, run_id: str) -> str:
    doc = yaml.safe_load(find_data(site, run_id).read_text(encoding="utf-8"))
    return doc["methodology"]["load_tools"][0]["failures_text"]


def test_a_cell_with_its_summary_says_how_many_failed_and_from_which_file(good_site):
    assert _failures_text(good_site, "with-summary") == (
        "From hey's own summary of the same run, kept beside each file (1 of 1; whole runs, "
        "warm-up included): 4 of 400 requests failed without an answer (4 timed out) "
        "(50 req/s: 4). The file leaves them out: up to that many of a cell's not-sent requests "
        "were sent and failed, and its errors count only answers with a status of 400 or more.")
    page = (good_site / "_reports" / "with-summary.html").read_text(encoding="utf-8")
    assert "<dt>Failed requests</dt><dd>From hey&#39;s own summary of the same run" in page


def test_without_a_summary_the_page_says_the_failures_cannot_be_checked(good_site):
    assert "cannot be checked from the run's files" in _failures_text(good_site, "no-summary")
    assert _failures_text(good_site, "no-summary").startswith(
        "This run keeps no hey summary beside its files")


def test_a_summary_of_another_run_is_one_error_naming_it(bad_build):
    proc = bad_build
    assert proc.returncode == 1
    assert "runs/another-run/hey/r50.txt: counts 395 answered requests where " \
           "runs/another-run/hey/r50.csv has 396 rows: not the same run" in proc.stderr, \
        proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_summary_that_is_missing_or_not_heys_is_one_error_naming_it(bad_build):
    proc = bad_build
    assert proc.returncode == 1
    assert "runs/missing/hey/gone.txt: not found" in proc.stderr, proc.stderr
    assert "runs/not-hey/hey/r50.csv: not a hey summary" in proc.stderr, proc.stderr
