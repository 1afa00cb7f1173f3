"""Faults a real build meets (issue 22): killed or interrupted at several points, the disk
filling up, a read-only output or cache folder, a log still being recorded, `make serve` beside
`make site`. After each: the previous outputs are whole or the new ones complete, the error is
one `error:` line saying what to do, and the next build recovers by itself, its outputs
byte-identical to a clean build's."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.test_build import ENV, build, make_site, snapshot

RUNS = ("run-a", "run-b", "run-c")


def change_inputs(site: Path) -> None:
    """A change that rewrites every output of every run."""
    for run_id in RUNS:
        manifest = site / "runs" / run_id / "run.yml"
        manifest.write_text(manifest.read_text().replace("offered_rate: 100",
                                                         "offered_rate: 120"))


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    """(a site built from the first inputs, the clean build's outputs of the changed inputs)"""
    old = make_site(tmp_path_factory.mktemp("old"), *RUNS, mini=True)
    out = build(old, "-q", "--jobs", "2")
    assert out.returncode == 0, out.stderr
    clean = make_site(tmp_path_factory.mktemp("clean"), *RUNS, mini=True)
    change_inputs(clean)
    out = build(clean, "-q", "--jobs", "2")
    assert out.returncode == 0, out.stderr
    return old, snapshot(clean)


def copy_of(site: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "site"
    shutil.copytree(site, copy, symlinks=True)
    return copy


def children(pid: int) -> set[int]:
    found = set()
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def running(pids: set[int]) -> set[int]:
    """Those of `pids` still running (a zombie has finished; its parent has not reaped it)."""
    alive = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.add(pid)
    return alive


class Build:
    """`python -m analysis build --jobs 2` running on `site`, its stderr read as it comes (a
    thread: workers that outlive the build would hold the pipe open)."""

    def __init__(self, site: Path):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "analysis", "build", "--runs", "runs", "--jobs", "2"],
            cwd=site, stderr=subprocess.PIPE, text=True, start_new_session=True, env=ENV)
        self.lines: list[str] = []
        self.reader = threading.Thread(target=lambda: self.lines.extend(self.proc.stderr),
                                       daemon=True)
        self.reader.start()

    def wait_for(self, marker: str, within_s: float = 60) -> None:
        deadline = time.monotonic() + within_s
        while not any(marker in line for line in self.lines):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the build ended before {marker!r}: {self.stderr}")
            time.sleep(0.01)

    def workers(self) -> set[int]:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:   # (a pool forks at its first task)
            if found := children(self.proc.pid):
                return found
        pytest.fail("the build has no worker processes to test")

    def signal(self, sig: int, group: bool) -> None:
        """`sig` to the build's main process, or to its process group as a terminal's Ctrl-C."""
        assert self.proc.poll() is None, "the build ended before the signal"
        (os.killpg if group else os.kill)(self.proc.pid, sig)
        self.proc.wait(timeout=60)
        self.reader.join(timeout=5)

    @property
    def stderr(self) -> str:
        return "".join(self.lines)


def signal_at(site: Path, marker: str, sig: int, group: bool) -> tuple[Build, set[int]]:
    """A build of `site` sent `sig` once its progress shows `marker`; and its workers then."""
    running_build = Build(site)
    running_build.wait_for(marker)
    workers = running_build.workers()
    running_build.signal(sig, group)
    return running_build, workers


def assert_gone(pids: set[int], within_s: float = 5.0) -> None:
    deadline = time.monotonic() + within_s
    while running(pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = running(pids)
    for pid in left:   # (not left to hold the test's pipes and the site's lock)
        os.kill(pid, signal.SIGKILL)
    assert not left, f"workers outlived the build: {sorted(left)}"


def assert_recovers(site: Path, clean: dict[str, str]) -> None:
    out = build(site, "--jobs", "2")
    assert out.returncode == 0, out.stderr
    assert snapshot(site) == clean


# the build's stages as its progress shows them: analysing, drawing charts, the corpus step
POINTS = ("run-a: analyse", "run-a: charts", "corpus:")


@pytest.mark.parametrize("point", POINTS)
def test_kill_9_of_the_build_leaves_no_worker_and_no_lock(sites, tmp_path, point):
    old, clean = sites
    site = copy_of(old, tmp_path)
    change_inputs(site)
    killed, workers = signal_at(site, point, signal.SIGKILL, group=False)
    assert killed.proc.returncode == -signal.SIGKILL
    assert_gone(workers)
    assert_recovers(site, clean)


@pytest.mark.parametrize("group", (False, True), ids=("the-build", "its-group"))
@pytest.mark.parametrize("point", POINTS)
def test_ctrl_c_stops_the_build_with_one_error_line(sites, tmp_path, point, group):
    old, clean = sites
    site = copy_of(old, tmp_path)
    change_inputs(site)
    stopped, workers = signal_at(site, point, signal.SIGINT, group=group)
    stderr = stopped.stderr
    assert stopped.proc.returncode == 130, stderr
    assert "Traceback" not in stderr and stderr.splitlines()[-1] == "error: interrupted"
    assert_gone(workers, within_s=1.0)   # stopped, not waited for
    assert_recovers(site, clean)


def test_the_lock_names_a_live_holder_and_what_to_do(tmp_path):
    """A second build while one runs: the error names the running build's pid, which is alive,
    and how to stop it."""
    site = make_site(tmp_path, *RUNS, mini=True)
    running_build = Build(site)
    running_build.wait_for(": charts")
    try:
        out = build(site)
    finally:
        running_build.signal(signal.SIGKILL, group=True)
    proc = running_build.proc
    assert out.returncode == 1
    assert out.stderr.splitlines() == [
        f"error: {Path('.cache/loadcurve/build.lock')}: another build is running on this tree "
        f"(pid {proc.pid}) (wait for it to finish, or stop it with `kill {proc.pid}`, then "
        f"build again)"]
