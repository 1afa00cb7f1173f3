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
    """A pool that runs each task here and remembers what it was given, in order (the drawer
    and the page code's load only named: the drawer would wait for charts)."""

    def __init__(self):
        self.given = []

    def map(self, fn, *iterables):
        return map(fn, *iterables)

    def submit(self, fn, *args):
        from concurrent.futures import Future
        self.given.append(fn.__name__)
        future = Future()
        future.set_result(None if fn.__name__ in ("draw_handed_charts", "load_page_code")
                          else fn(*args))
        return future


def test_an_added_runs_page_goes_to_the_worker_that_is_not_drawing():
    from analysis.pipeline import one_run
    pool = _Recorder()
    reads = one_run.ForkAtFirstRead(lambda: pool)
    assert list(one_run.reads_then_drawer(reads)(abs, [-1, -2])) == [1, 2]

    def render_html():
        return "<p>"
    assert reads.render(render_html).result() == "<p>"
    # the drawer holds one worker until the charts are handed to it: the page code's load and
    # the page go to the other, and no other task loads the chart code
    assert pool.given == ["draw_handed_charts", "load_page_code", "render_html"]


WHO_LOADS_MATPLOTLIB = """
import importlib.abc, json, os, sys
from pathlib import Path
class Seen(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "matplotlib":
            with open("matplotlib-pids", "a") as f:
                f.write(f"{os.getpid()}\\n")
        return None
sys.meta_path.insert(0, Seen())
if os.environ.get("FAIL_AFTER_READS"):
    from analysis.errors import BuildError
    from analysis.write import load_files
    def run_files(run, site_root, in_feed):
        raise BuildError("the run failed after its reads")
    load_files.run_files = run_files
from analysis.pipeline.runner import Build
status = Build(Path("runs"), Path("."), quiet=True, force=False, jobs=2).run()
print(json.dumps({"status": status, "main": os.getpid()}))
"""


def _build_seen(site: Path, timeout: int = 600, **extra: str) -> tuple[dict, list[str], str]:
    env = {**os.environ, "PYTHONPATH": str(REPO),
           "LOADCURVE_NATIVE_CACHE": str(REPO / ".cache" / "native"), **extra}
    (site / "matplotlib-pids").unlink(missing_ok=True)
    out = subprocess.run([sys.executable, "-c", WHO_LOADS_MATPLOTLIB], cwd=site,
                         capture_output=True, text=True, timeout=timeout, env=env)
    assert out.returncode in (0, 1), out.stderr[-3000:]
    pids = (site / "matplotlib-pids").read_text().split() \
        if (site / "matplotlib-pids").exists() else []
    return json.loads(out.stdout.splitlines()[-1]), pids, out.stderr


def test_an_added_runs_charts_are_drawn_by_one_worker_that_alone_loads_matplotlib(tmp_path):
    site = _site(tmp_path / "corpus", ["wrk-v1"])
    _build(site)
    shutil.copytree(_site(tmp_path / "alone", ["wrk-v2"]) / "runs" / "wrk-v2",
                    site / "runs" / "wrk-v2")
    result, pids, _ = _build_seen(site)
    assert result["status"] == 0
    # one worker (not the main process) loaded matplotlib; before, both did
    assert len(pids) == 1 and pids[0] != str(result["main"])
    assert any(p.suffix == ".svg" for p in (site / "assets" / "charts" / "wrk-v2").iterdir())


def test_an_added_run_that_fails_after_its_reads_ends_the_build_with_its_error(tmp_path):
    site = _site(tmp_path / "corpus", ["wrk-v1"])
    _build(site)
    shutil.copytree(_site(tmp_path / "alone", ["wrk-v2"]) / "runs" / "wrk-v2",
                    site / "runs" / "wrk-v2")
    # the run fails while the drawer waits for its charts: the build lets it go and ends
    # (no hang at the pool's shutdown), the run's error listed
    result, pids, stderr = _build_seen(site, timeout=300, FAIL_AFTER_READS="1")
    assert result["status"] == 1 and len(pids) == 1
    assert "error: run wrk-v2: the run failed after its reads" in stderr
