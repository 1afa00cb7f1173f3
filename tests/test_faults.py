"""Faults a real build meets (issue 22): killed or interrupted at several points, the disk
filling up, a read-only output or cache folder, a log still being recorded, `make serve` beside
`make site`. After each: the previous outputs are whole or the new ones complete, the error is
one `error:` line saying what to do, and the next build recovers by itself, its outputs
byte-identical to a clean build's."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.helpers import ENV, build, make_site, snapshot

pytestmark = pytest.mark.slow     # (make check leaves it out; make test runs it)

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


def _default_ctrl_c() -> None:
    """The build answers Ctrl-C as from a terminal, even when this test runs where SIGINT is
    ignored (a background job of a shell without job control): it would inherit that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Build:
    """`python -m analysis build --jobs 2` running on `site`, its stderr read as it comes (a
    thread: workers that outlive the build would hold the pipe open)."""

    def __init__(self, site: Path):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "analysis", "build", "--runs", "runs", "--jobs", "2"],
            cwd=site, stderr=subprocess.PIPE, text=True, start_new_session=True, env=ENV,
            preexec_fn=_default_ctrl_c)
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


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_ctrl_c_python_swallows_still_stops_the_build(tmp_path, monkeypatch):
    """A Ctrl-C landing in a weakref callback or a __del__ is dropped by Python ("Exception
    ignored in ..."); a CI run saw the build then finish with status 0. The build remembers it
    and stops at its next step, before recording the runs' state."""
    import json
    from concurrent.futures import ThreadPoolExecutor

    import analysis.pipeline.runner as runner

    class InterruptedWhileFreed:
        def __del__(self):
            signal.raise_signal(signal.SIGINT)

    site = make_site(tmp_path, "run-a", mini=True)
    real_reduce = runner.Build._reduce

    def reduce_then_swallowed_ctrl_c(self, *args):
        real_reduce(self, *args)
        InterruptedWhileFreed()   # (freed at once: the KeyboardInterrupt is printed, dropped)

    monkeypatch.setattr(runner.Build, "_reduce", reduce_then_swallowed_ctrl_c)
    # (an xdist worker ignores SIGINT; whatever the handler was, the build gives it back)
    handler_before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with ThreadPoolExecutor(1) as pool, pytest.raises(KeyboardInterrupt):
            runner.Build(site / "runs", site, quiet=True, force=False, jobs=1,
                         executor=pool).run()
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, handler_before)
    state = site / runner.CACHE_DIR / "state.json"
    assert not state.exists() or "run-a" not in json.loads(state.read_text())["runs"]
    # the Ctrl-C is not remembered past its build: the process's next build, or a Build's
    # methods called alone (tests/test_build_state.py, later in the same xdist worker), run
    other = runner.Build(site / "runs", site, quiet=True, force=False, jobs=1)
    other.forget_failed(other.load_state())


def test_the_lock_names_a_live_holder_and_what_to_do(tmp_path):
    """A second build while one runs: the error names the running build's pid, which is alive,
    and how to stop it."""
    site = make_site(tmp_path, *RUNS, mini=True)
    running_build = Build(site)
    running_build.wait_for(": charts")
    # held still, so that it still holds the lock when the second build (a Python start-up
    # later) asks: a mini site's charts are drawn in well under a second, and the build had
    # ended first (in a quiet CI rehearsal, and under load); a stopped process is alive
    os.killpg(running_build.proc.pid, signal.SIGSTOP)
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


@pytest.fixture
def mount_point(tmp_path):
    """A function mounting a file system at a folder, undone after the test; skips where this
    process may not mount (the tests run as root in CI)."""
    mounted = []

    def mount(target: Path, *args: str) -> None:
        out = subprocess.run(["mount", *args, str(target)], capture_output=True, text=True)
        if out.returncode and any(words in out.stderr.lower() for words in (
                "permission denied", "not permitted", "superuser", "only root")):
            pytest.skip(f"cannot mount ({out.stderr.strip()}): this test needs root's "
                        f"CAP_SYS_ADMIN")
        assert out.returncode == 0, out.stderr
        mounted.append(target)

    yield mount
    for target in reversed(mounted):
        subprocess.run(["umount", "-l", str(target)], check=False)


def fill(disk: Path, leave_kb: int) -> Path:
    """A file taking all of `disk`'s free space but `leave_kb`."""
    st = os.statvfs(disk)
    filler = disk / "filler"
    with open(filler, "wb") as f:
        f.truncate(0)
        block = b"\0" * 4096
        for _ in range(max(0, (st.f_bavail * st.f_frsize - leave_kb * 1024) // len(block))):
            f.write(block)   # (written, not sparse: tmpfs counts written pages only)
    return filler


def only_error_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, stderr
    return errors[0]


def test_a_disk_full_mid_build_keeps_the_site_and_the_next_build_recovers(sites, tmp_path,
                                                                        mount_point):
    """The disk fills while a changed tree is rebuilt: the build stops with one error naming
    the file and the fix; every output is whole, old or new (before: each run failed on its
    own, and as a failed run it lost its pages from earlier builds); space freed, the next
    build gives the clean build's bytes."""
    old, clean = sites
    disk = tmp_path / "disk"
    disk.mkdir()
    mount_point(disk, "-t", "tmpfs", "-o", "size=4m", "tmpfs")
    site = disk / "site"
    shutil.copytree(old, site, symlinks=True)
    before = snapshot(site)
    change_inputs(site)
    filler = fill(disk, leave_kb=8)
    out = build(site, "--jobs", "2")
    assert out.returncode == 1, out.stderr
    line = only_error_line(out.stderr)
    assert line.endswith(": No space left on device (free space on that disk, then build again)")
    now = snapshot(site)
    assert set(now) == set(before), "outputs lost or half-named files left"
    assert all(now[rel] in (before[rel], clean[rel]) for rel in now), "an output is neither " \
                                                                      "the old nor the new"
    filler.unlink()
    assert_recovers(site, clean)


def test_a_read_only_cache_is_one_error_and_the_next_build_recovers(sites, tmp_path,
                                                                   mount_point):
    """.cache/ on a read-only file system (a bind mount: root ignores mode bits): the build
    says so and what to do, writes nothing; writable again, the build recovers."""
    old, clean = sites
    site = copy_of(old, tmp_path)
    before = snapshot(site)
    change_inputs(site)
    cache = site / ".cache"
    mount_point(cache, "--bind", str(cache))
    mount_point(cache, "-o", "remount,ro,bind")
    out = build(site, "--jobs", "2")
    assert out.returncode == 1
    assert out.stderr.splitlines() == [
        f"error: {Path('.cache/loadcurve/build.lock')}: Read-only file system (the folder is "
        f"on a read-only file system: make it writable (or build a copy of the tree "
        f"elsewhere), then build again)"]
    assert snapshot(site) == before
    subprocess.run(["umount", str(cache)], check=True)
    subprocess.run(["umount", str(cache)], check=False)
    assert_recovers(site, clean)


def test_a_read_only_output_folder_stops_the_build_and_keeps_its_pages(sites, tmp_path,
                                                                      mount_point):
    """The same for the folder the charts go to: one error, no run loses its pages."""
    old, clean = sites
    site = copy_of(old, tmp_path)
    before = snapshot(site)
    change_inputs(site)
    charts = site / "assets" / "charts"
    mount_point(charts, "--bind", str(charts))
    mount_point(charts, "-o", "remount,ro,bind")
    out = build(site, "--jobs", "2")
    assert out.returncode == 1
    line = only_error_line(out.stderr)
    assert line.startswith("error: assets/charts/run-")
    assert line.endswith(": Read-only file system (the folder is on a read-only file system: "
                         "make it writable (or build a copy of the tree elsewhere), then build "
                         "again)")
    now = snapshot(site)
    assert set(now) == set(before)
    assert all(now[rel] in (before[rel], clean[rel]) for rel in now)
    subprocess.run(["umount", str(charts)], check=True)
    subprocess.run(["umount", str(charts)], check=False)
    assert_recovers(site, clean)


class Recorder:
    """A run still being recorded: a thread appending intervals to `log` (copies of its own,
    one a second later each), each write ending half-way through the next line, as a
    buffered writer leaves a file between its writes."""

    def __init__(self, log: Path):
        self.log = log
        self.lines = [line for line in log.read_text().splitlines(keepends=True)
                      if line[:1].isdigit()]
        self.next_s = float(self.lines[-1].split(",")[0]) + 1
        self.stop = threading.Event()
        self.written = 0
        self.thread = threading.Thread(target=self.record, daemon=True)
        self.thread.start()

    def line(self) -> str:
        text = f"{self.next_s:.3f},{self.lines[self.written % len(self.lines)].split(',', 1)[1]}"
        self.next_s += 1
        self.written += 1
        return text

    def record(self) -> None:
        with open(self.log, "a") as f:
            rest = self.line()
            while not self.stop.is_set():
                following = self.line()
                f.write(rest + following[:len(following) // 2])
                f.flush()
                rest = following[len(following) // 2:]
                time.sleep(0.002)
            f.write(rest)

    def end(self) -> None:
        self.stop.set()
        self.thread.join()


def test_a_log_appended_to_while_the_build_reads_it(tmp_path):
    """The build reads a log still being recorded: it reads the whole lines there are, says the
    last one was cut and why; once the recording ends, the next build rebuilds the run by
    itself and gives a clean build's bytes."""
    site = make_site(tmp_path / "live", "run-a", mini=True)
    log = site / "runs" / "run-a" / "virtual" / "r100.hlog"
    recorder = Recorder(log)
    try:
        time.sleep(0.2)
        out = build(site, "--jobs", "2")
    finally:
        recorder.end()
    assert out.returncode == 0, out.stderr
    assert recorder.written > 100, "the log did not grow during the build"
    warnings = [line for line in out.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "r100.hlog:" in warnings[0], out.stderr
    assert warnings[0].endswith("; line skipped (the file ends inside this line: is the run "
                                "still being recorded? build again once it ends)")
    out = build(site, "--jobs", "2")
    assert out.returncode == 0 and "warning" not in out.stderr, out.stderr
    assert "built 1 of 1 runs" in out.stderr
    clean = make_site(tmp_path / "clean", "run-a", mini=True)
    shutil.copy(log, clean / "runs" / "run-a" / "virtual" / "r100.hlog")
    assert build(clean, "--jobs", "2").returncode == 0
    assert snapshot(site) == snapshot(clean)


def test_a_last_line_without_a_line_end_is_read_when_whole(tmp_path):
    """Only a cut line is called unfinished: a whole last line without a line end is read."""
    from analysis.read.hdr.log import read_hlog
    source = (REPO / "tests/fixtures/runs/oracle-demo/virtual/r100.hlog").read_text()
    whole = tmp_path / "whole.hlog"
    whole.write_text(source.rstrip("\n"))
    log = read_hlog(whole)
    assert len(log.intervals) == 45 and log.warnings == []
    cut = tmp_path / "cut.hlog"
    cut.write_text(source.rstrip("\n")[:-20])
    log = read_hlog(cut)
    assert len(log.intervals) == 44
    assert [w.split(": ", 1)[0] for w in log.warnings] == [f"{cut}:50"]
    assert log.warnings[0].endswith("(the file ends inside this line: is the run still being "
                                    "recorded? build again once it ends)")


def site_copy(dest: Path) -> Path:
    """The repository's site sources (what `git ls-files` lists; runs/ hard-linked)."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        if rel.split("/", 1)[0] in ("tests", "bench", "docs", ".ci"):
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (os.link if rel.startswith("runs/") else shutil.copy2)(REPO / rel, dest / rel)
    return dest


def status(url: str) -> int:
    import urllib.error
    import urllib.request
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0


@pytest.mark.parametrize("given", [[], ["--destination", ".cache/other"], ["-d", "_site"]])
def test_serve_gives_jekyll_an_absolute_destination(tmp_path, given):
    """jekyll serve hands its web server the destination as given, and Jekyll's reader changes
    the process's directory while it regenerates: with a relative root the preview answered 404
    for files it had, now and then (seen in CI). The jekyll here records its arguments."""
    src = tmp_path / "src"
    for rel in ("scripts/build-site.sh", "scripts/jekyll.sh", "scripts/mirror_static.py", "_config.yml"):
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, src / rel)
    tools = tmp_path / "bin"
    tools.mkdir()
    # bundle fails `bundle check`, so scripts/jekyll.sh runs the jekyll on PATH: this recorder
    (tools / "bundle").write_text("#!/bin/sh\nexit 1\n")
    (tools / "jekyll").write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$ARGS_OUT"\n')
    for tool in tools.iterdir():
        tool.chmod(0o755)
    out = tmp_path / "args.txt"
    env = {**os.environ, "PY": sys.executable, "ARGS_OUT": str(out),
           "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"}
    run = subprocess.run(["bash", "scripts/build-site.sh", "serve", *given], cwd=src, env=env,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    args = out.read_text().split("\n")
    expected = str(src / (given[1] if given else ".cache/preview"))
    assert args[0] == "serve"
    dests = [args[i + 1] for i, a in enumerate(args) if a in ("-d", "--destination")]
    assert dests == [expected], args


@pytest.mark.skipif(not os.environ.get("LOADCURVE_SLOW"),
                    reason="about 60 s: set LOADCURVE_SLOW=1 (make serve beside make site)")
def test_make_serve_keeps_serving_while_make_site_rebuilds(tmp_path):
    """`make serve` (build-site.sh serve) runs while `make site` rebuilds (build-site.sh): the
    preview keeps every chart (before: 404 for the ~5 s of the rebuild's Jekyll, which held
    them out of the one _site/ both wrote), and the rebuilt _site/ is complete."""
    if shutil.which("jekyll") is None and shutil.which("bundle") is None:
        pytest.skip("needs Jekyll (make jekyll-deps)")
    src = site_copy(tmp_path / "src")
    env = {**os.environ, "PY": sys.executable}
    script = ["bash", "scripts/build-site.sh"]
    first = subprocess.run(script, cwd=src, env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    chart = sorted((src / "assets" / "charts").rglob("*.svg"))[0].relative_to(src).as_posix()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    serve = subprocess.Popen(script + ["serve", "--host", "127.0.0.1", "--port", str(port)],
                             cwd=src, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}/{chart}"
    try:
        deadline = time.monotonic() + 120
        while status(url) != 200:
            assert serve.poll() is None and time.monotonic() < deadline, "serve did not start"
            time.sleep(0.5)
        (src / "_data" / "regressions.yml").touch()   # a change Jekyll must rebuild for
        seen = []
        rebuild = subprocess.Popen(script, cwd=src, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
        while rebuild.poll() is None:
            seen.append(status(url))
            time.sleep(0.1)
        output = rebuild.stdout.read()
    finally:
        os.killpg(serve.pid, signal.SIGTERM)
        serve.wait(timeout=30)
    assert rebuild.returncode == 0, output
    assert "nothing it reads changed" not in output   # Jekyll did run
    assert len(seen) > 10 and set(seen) == {200}, seen
    assert (src / "_site" / chart).is_file() and (src / "_site" / "feed.xml").is_file()


def test_a_read_only_site_folder_is_one_error_and_left_whole(tmp_path, mount_point):
    """`make site`'s Jekyll step with _site/ read-only: one error line before anything moves
    (before: thousands of `mv: cannot remove` lines, the mirrored trees copied out and back);
    writable again, the next build makes the site."""
    src = site_copy(tmp_path / "src")
    page = src / "_site" / "index.html"
    page.parent.mkdir()
    page.write_text("the previous site\n")
    mount_point(page.parent, "--bind", str(page.parent))
    mount_point(page.parent, "-o", "remount,ro,bind")
    env = {**os.environ, "PY": sys.executable}
    out = subprocess.run(["bash", "scripts/build-site.sh"], cwd=src, env=env,
                         capture_output=True, text=True)
    assert out.returncode == 1
    placeholder_warning = ("*", "WARNING", "  ")
    assert [line for line in out.stderr.splitlines()
            if not line.startswith(placeholder_warning)] == ["error: _site: cannot write there (a read-only file system?); the site in it is left "
            "as it was: make it writable, or give another folder with --destination, then build "
            "again"]
    assert sorted(p.name for p in page.parent.iterdir()) == ["index.html"]
    assert page.read_text() == "the previous site\n"
    if shutil.which("jekyll") is None and shutil.which("bundle") is None:
        return   # (the recovery needs Jekyll)
    subprocess.run(["umount", str(page.parent)], check=True)
    subprocess.run(["umount", str(page.parent)], check=False)
    out = subprocess.run(["bash", "scripts/build-site.sh"], cwd=src, env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert (src / "_site" / "feed.xml").is_file() and page.read_text() != "the previous site\n"
