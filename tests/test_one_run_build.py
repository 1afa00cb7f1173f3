"""A build that has one run to analyse on two workers (a run added to a corpus): the main process
reads the run's inputs on the workers and writes its files, and never loads the chart code
(matplotlib, ~0.6 s of its time before any worker started); the workers load it themselves,
and render its pages (pages.rendering_on).
The run's outputs are those of a build of it from nothing, byte for byte."""
from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import REPO
from tests.helpers import wrk_run

BUILD = """
import json, sys
from pathlib import Path
from analysis.pipeline.runner import Build
status = Build(Path("runs"), Path("."), quiet=True, force=False, jobs=2).run()
print(json.dumps({"status": status, "matplotlib": "matplotlib" in sys.modules,
                  "liquid": "liquid" in sys.modules}))
"""


def _build(site: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO),
           "LOADCURVE_NATIVE_CACHE": str(REPO / ".cache" / "native")}
    out = subprocess.run([sys.executable, "-c", BUILD], cwd=site, capture_output=True, text=True,
                         timeout=600, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.splitlines()[-1])


def _site(root: Path, runs: list[str]) -> Path:
    site = root / "site"
    for run_id in runs:
        wrk_run(site, run_id, run_id[-1])
        manifest = site / "runs" / run_id / "run.yml"   # (no series: no history to draw)
        doc = yaml.safe_load(manifest.read_text())
        del doc["series"], doc["version"]
        manifest.write_text(yaml.safe_dump(doc, sort_keys=False))
    for folder in ("_layouts", "_includes"):
        shutil.copytree(REPO / folder, site / folder)
    shutil.copy2(REPO / "_config.yml", site / "_config.yml")
    return site


def test_an_added_run_is_charted_by_the_workers_alone(tmp_path):
    site = _site(tmp_path / "corpus", ["wrk-v1", "wrk-v3"])
    first = _build(site)
    assert (first["status"], first["matplotlib"]) == (0, True)   # (two runs: loaded before the fork)
    wrk_site = _site(tmp_path / "alone", ["wrk-v2"])
    _build(wrk_site)

    shutil.copytree(wrk_site / "runs" / "wrk-v2", site / "runs" / "wrk-v2")
    # the page rendered on a worker: this process imports no python-liquid either
    assert _build(site) == {"status": 0, "matplotlib": False, "liquid": False}
    charts = sorted(p.name for p in (site / "assets" / "charts" / "wrk-v2").iterdir())
    assert charts and any(name.endswith(".svg") for name in charts)
    for top in ("assets/charts/wrk-v2", "assets/data/wrk-v2"):
        cmp = filecmp.dircmp(site / top, wrk_site / top)
        assert not (cmp.left_only or cmp.right_only or cmp.diff_files), top
        assert all(filecmp.cmp(site / top / name, wrk_site / top / name, shallow=False)
                   for name in cmp.common_files)
    for rel in ("_reports/wrk-v2.html", "_rundata/wrk-v2.yml"):
        assert (site / rel).read_bytes() == (wrk_site / rel).read_bytes()


FORK_SEES = """
import json, sys
from pathlib import Path
from analysis.pipeline import runner, workers
seen = []
fork = workers.pool
def pool(n):
    seen.append(sorted(m for m in ("analysis.derive.analyse", "analysis.read.hdr.log")
                       if m in sys.modules))
    return fork(n)
workers.pool = pool
status = runner.Build(Path("runs"), Path("."), quiet=True, force=False, jobs=2).run()
print(json.dumps({"status": status, "forks": seen}))
"""


def test_an_added_runs_workers_are_forked_with_its_readers_imported(tmp_path):
    site = _site(tmp_path / "corpus", ["wrk-v1"])
    _build(site)
    shutil.copytree(_site(tmp_path / "alone", ["wrk-v2"]) / "runs" / "wrk-v2",
                    site / "runs" / "wrk-v2")
    env = {**os.environ, "PYTHONPATH": str(REPO),
           "LOADCURVE_NATIVE_CACHE": str(REPO / ".cache" / "native")}
    out = subprocess.run([sys.executable, "-c", FORK_SEES], cwd=site, capture_output=True,
                         text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    # one pool, forked once the readers were imported here: its workers do not import them
    assert json.loads(out.stdout.splitlines()[-1]) == {
        "status": 0, "forks": [["analysis.derive.analyse", "analysis.read.hdr.log"]]}
    assert (site / "_reports" / "wrk-v2.html").is_file()


def _run_page() -> tuple[dict, dict]:
    front = {"layout": "report", "title": "T", "run": "r1", "date": "2026-01-02",
             "description": "d", "generated_by": "loadcurve"}
    doc = {"title": "T", "cells": []}
    return front, doc


def test_a_page_rendered_on_a_worker_is_the_page_rendered_here():
    from concurrent.futures import ProcessPoolExecutor
    from analysis.write import pages
    front, doc = _run_page()
    here = pages.page_text(REPO, front, doc, "/reports/r1/")
    with ProcessPoolExecutor(1) as pool, pages.rendering_on(pool.submit):
        there = pages.page_text(REPO, front, doc, "/reports/r1/")
        assert callable(there)
        assert there() == here and "<" in here


def test_a_broken_template_on_a_worker_is_the_same_error(tmp_path):
    from concurrent.futures import ProcessPoolExecutor
    import pytest
    from analysis.errors import BuildError
    from analysis.write import pages
    for folder in ("_layouts", "_includes"):
        shutil.copytree(REPO / folder, tmp_path / folder)
    (tmp_path / "_layouts" / "report.html").write_text("{% include no-such-include.html %}")
    front, doc = _run_page()
    with pytest.raises(BuildError) as here:
        pages.page_text(tmp_path, front, doc, "/reports/r1/")
    with ProcessPoolExecutor(1) as pool, pages.rendering_on(pool.submit):
        there = pages.page_text(tmp_path, front, doc, "/reports/r1/")
        with pytest.raises(BuildError) as raised:
            there()
    assert str(raised.value) == str(here.value)
    assert "report.html" in str(raised.value)


class _Recorder:
    """A pool that runs each task here and remembers what it was given, in order."""

    def __init__(self):
        self.given = []

    def map(self, fn, *iterables):
        return map(fn, *iterables)

    def submit(self, fn, *args):
        from concurrent.futures import Future
        self.given.append(fn.__name__)
        future = Future()
        future.set_result(fn(*args) if fn.__name__ != "load_chart_code" else None)
        return future


def test_an_added_runs_page_is_not_queued_behind_the_chart_code():
    from analysis.pipeline import runner
    pool = _Recorder()
    reads = runner.ForkAtFirstRead(lambda: pool)
    assert list(runner.reads_then_chart_code(reads, 2)(abs, [-1, -2])) == [1, 2]

    def render_html():
        return "<p>"
    assert reads.render(render_html).result() == "<p>"
    reads.render(render_html)
    # one worker loads the chart code during the main process's writes, the other takes the
    # page first, then loads it; every worker still gets the chart code once
    assert pool.given == ["load_chart_code", "render_html", "load_chart_code", "render_html"]
