"""runner.Build.run_outputs (every generated file of a run that exists: what a failed run or a
re-recorded one must lose) lists the run's folders with os.scandir and strings since issue 36;
its answer is still the pathlib one's, links included, and _record still removes what a run
no longer writes."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from analysis.paths import REPORTS_DIR, data_path, report_path
from analysis.pipeline.runner import Build


def pathlib_outputs(site: Path, run_id: str) -> set[str]:
    """The answer as the pathlib code before issue 36 gave it."""
    found = {data_path(run_id), data_path(run_id, in_posts=False), report_path(run_id),
             report_path(run_id)[:-len(".html")] + ".md"}
    for top in ("assets/charts", "assets/data", REPORTS_DIR):
        folder = site / top / run_id
        if folder.is_dir() and not folder.is_symlink():
            found |= {f"{top}/{run_id}/{p.name}" for p in folder.iterdir()}
    return {rel for rel in found if (site / rel).is_file()}


def odd_site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    outside = tmp_path / "outside"
    (outside / "folder").mkdir(parents=True)
    (outside / "file.svg").write_text("<svg/>")
    charts = site / "assets" / "charts" / "r1"
    charts.mkdir(parents=True)
    (charts / "a.svg").write_text("<svg/>")
    (charts / ".hidden.svg").write_text("<svg/>")
    (charts / "sub").mkdir()                                   # a folder: not a file
    (charts / "sub" / "deep.svg").write_text("<svg/>")         # not listed: one level only
    (charts / "to-file.svg").symlink_to(outside / "file.svg")  # followed: a file
    (charts / "to-folder").symlink_to(outside / "folder")      # followed: not a file
    (charts / "dangling.svg").symlink_to(tmp_path / "gone")
    (charts / "loop-a").symlink_to(charts / "loop-b")
    (charts / "loop-b").symlink_to(charts / "loop-a")
    os.mkfifo(charts / "fifo")                                 # not a regular file
    # the run's data folder is a link to a folder: not looked into
    (site / "assets" / "data").mkdir(parents=True)
    (site / "assets" / "data" / "r1").symlink_to(outside)
    (site / REPORTS_DIR / "r1").mkdir(parents=True)
    (site / REPORTS_DIR / "r1" / "scenario.html").write_text("x")
    (site / REPORTS_DIR / "r1.html").write_text("x")
    (site / REPORTS_DIR / "r1.md").symlink_to(tmp_path / "gone")
    (site / "_rundata").mkdir()
    (site / "_rundata" / "r1.yml").symlink_to(outside / "file.svg")
    (site / "_data" / "runs" / "r1.yml").mkdir(parents=True)   # a folder by a file's name
    return site


@pytest.mark.parametrize("run_id", ["r1", "absent"])
def test_a_runs_outputs_are_the_files_pathlib_finds(tmp_path, run_id):
    site = odd_site(tmp_path)
    build = Build(site / "runs", site, quiet=True, force=False, jobs=1)
    assert build.run_outputs(run_id) == pathlib_outputs(site, run_id)
    if run_id == "r1":
        assert build.run_outputs(run_id) == {
            "assets/charts/r1/a.svg", "assets/charts/r1/.hidden.svg",
            "assets/charts/r1/to-file.svg", f"{REPORTS_DIR}/r1/scenario.html",
            f"{REPORTS_DIR}/r1.html", "_rundata/r1.yml"}


def test_a_rerecorded_run_loses_the_outputs_it_no_longer_writes(tmp_path):
    site = tmp_path / "site"
    (site / "runs").mkdir(parents=True)
    charts = site / "assets" / "charts" / "r1"
    charts.mkdir(parents=True)
    for name in ("kept.svg", "stale.svg", "never-recorded.svg"):
        (charts / name).write_text(name)
    (site / "_data" / "runs").mkdir(parents=True)
    (site / "_data" / "runs" / "r1.yml").write_text("moved: to _rundata\n")
    (site / "_rundata").mkdir()
    (site / "_rundata" / "r1.yml").write_text("a: 1\n")
    build = Build(site / "runs", site, quiet=True, force=False, jobs=1)
    state = {"version": 1, "runs": {"r1": {"inputs": "old", "outputs": {
        "assets/charts/r1/kept.svg": 8, "assets/charts/r1/stale.svg": 9}}}}
    build._record(state, "r1", "new", ["_rundata/r1.yml", "assets/charts/r1/kept.svg"])
    assert sorted(p.name for p in charts.iterdir()) == ["kept.svg"]
    assert not (site / "_data" / "runs" / "r1.yml").exists()
    assert state["runs"]["r1"] == {"inputs": "new", "outputs": {
        "_rundata/r1.yml": 5, "assets/charts/r1/kept.svg": 8}}


def test_a_failed_runs_files_are_found_and_removed_recorded_or_not(tmp_path):
    site = tmp_path / "site"
    (site / "runs").mkdir(parents=True)
    data = site / "assets" / "data" / "r1"
    data.mkdir(parents=True)
    (data / "written-before-it-failed.csv").write_text("x\n")
    (site / "_rundata").mkdir()
    (site / "_rundata" / "r1.yml").write_text("a: 1\n")
    build = Build(site / "runs", site, quiet=True, force=False, jobs=1)
    state = {"version": 1, "runs": {"r1": {"inputs": "old", "outputs": {"_rundata/r1.yml": 5}}}}
    build.failed.append("r1")
    build.forget_failed(state)
    assert state["runs"] == {} and not data.exists()
    assert not (site / "_rundata" / "r1.yml").exists()
