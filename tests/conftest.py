"""Shared test helpers. Area-specific fixtures live in each area's own test files."""
from __future__ import annotations

import os
import random
import resource
import shutil
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# CI clones the repo with shared/ beside it; the oracle scripts live there.
SHARED = Path(os.environ.get("LOADCURVE_SHARED", REPO.parent / "shared"))
ORACLE = SHARED / "oracle"
CORPUS = SHARED / "corpus" / "hlog" / "public"


def need(ok: bool, what: str) -> None:
    """Skip a test whose tool or build is missing, but fail it in CI (CI set): CI installs and
    builds everything, so a skip there would hide a test that never ran."""
    if not ok:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs {what}")
        pytest.skip(f"needs {what}")


@pytest.fixture
def repo() -> Path:
    return REPO


def shared_tmp(tmp_path_factory) -> Path:
    """The temporary folder every worker of one `pytest` run sees (xdist gives each worker
    <run's temp>/popen-gwN); pytest removes it with the run's other old temporary folders."""
    root = tmp_path_factory.getbasetemp()
    return root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root


# shared_tmp of this run, for what tests/sitebuild.py builds once for any test that asks (the
# scenario fixture's analysis); None outside pytest. (Set here, not in sitebuild: a copy of
# the suite without the site tests, as tests/test_bench_url.py makes, has this conftest.)
SHARED_TMP: Path | None = None


@pytest.fixture(scope="session", autouse=True)
def builds_shared_by_the_workers(tmp_path_factory):
    global SHARED_TMP
    SHARED_TMP = shared_tmp(tmp_path_factory)


@pytest.fixture(scope="session")
def oracle() -> Path:
    """The Java reference tools; tests that need them live-skip only where shared/ is absent."""
    if not (ORACLE / "hlp").exists() or shutil.which("java") is None:
        pytest.skip("needs ../shared/oracle and java")
    return ORACLE


@pytest.fixture(scope="module")
def jekyll3_root() -> Path:
    """A Debian bullseye root with Jekyll 3 (scripts/jekyll3-root.sh), for chroot builds."""
    if not Path("/etc/debian_version").exists():
        pytest.skip("the Jekyll 3 build needs Debian (debootstrap a bullseye root)")
    if os.geteuid() != 0:
        pytest.skip("the Jekyll 3 build needs root (debootstrap, chroot)")
    result = subprocess.run(["bash", str(REPO / "scripts" / "jekyll3-root.sh")],
                            capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, result.stderr[-2000:]
    return Path(result.stdout.strip().splitlines()[-1])


# The marks of tests that build sites or runs, drive Java or a browser: seconds to minutes each.
HEAVY = {"slow", "site", "browser", "harness"}

# The longest files, longest first, by their --durations in a make test run (29 Nov 2026,
# docs/reliability.md; LOADCURVE_TEST_CPU gives their CPU): the build's faults and whole
# builds, the oracles, the harness's real-time runs, the browser, the site stamp's Jekyll
# builds. A file missing here, or one that got shorter, only changes the order.
LONGEST_FILES = ("test_faults.py", "test_build.py", "test_merge_generators.py",
                 "test_harness_url.py", "test_browser.py", "test_site_stamp.py",
                 "test_hdr_native.py", "test_phone_layout.py", "test_imported_runs.py",
                 "test_hgrm.py", "test_hardening_site.py", "test_site.py",
                 "test_fast_templates.py")


def pytest_collection_modifyitems(config, items):
    """The files holding heavy tests first, the longest of them first, each file's tests in
    their order: `make test` hands whole files to its two workers in this order (--dist
    loadfile), so a long file handed out last would leave one core idle while the other
    finishes it."""
    heavy = {item.path for item in items if HEAVY & {m.name for m in item.iter_markers()}}
    rank = {name: i for i, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: (item.path not in heavy,
                                 rank.get(item.path.name, len(LONGEST_FILES))))
    if ORDER:
        items[:] = reordered(items, ORDER)


# `LOADCURVE_TEST_ORDER=reverse` or `=shuffle:SEED` runs the files, and each file's tests, in
# another order (a file's tests stay together, so its module fixtures are made once): a test
# that leaves state behind for a later one in the same process (a module global, a signal
# handler, os.environ) shows up as a failure the usual order hides. The seed is fixed so that
# every xdist worker collects the same order, and a failure can be run again.
ORDER = os.environ.get("LOADCURVE_TEST_ORDER", "")


def reordered(items: list, order: str) -> list:
    files: dict = {}
    for item in items:
        files.setdefault(item.path, []).append(item)
    groups = list(files.values())
    if order == "reverse":
        return [item for group in reversed(groups) for item in reversed(group)]
    kind, _, seed = order.partition(":")
    if kind != "shuffle" or not seed.isdigit():
        raise pytest.UsageError(f"LOADCURVE_TEST_ORDER={order!r}: give reverse or shuffle:SEED")
    rng = random.Random(int(seed))
    rng.shuffle(groups)
    for group in groups:
        rng.shuffle(group)
    return [item for group in groups for item in group]


# `LOADCURVE_TEST_CPU=FILE pytest ...` appends each test's CPU seconds (its process's and the
# children it waited for: Jekyll, Java, the build) and wall seconds, setup and teardown
# included, to FILE.<worker>: where make test's CPU goes, which --durations (wall) does not
# tell on a machine shared with other work.
CPU_LOG = os.environ.get("LOADCURVE_TEST_CPU")


def cpu_seconds() -> float:
    return sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF),
                                                  resource.getrusage(resource.RUSAGE_CHILDREN)))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if not CPU_LOG:
        yield
        return
    cpu, wall = cpu_seconds(), time.monotonic()
    yield
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(f"{CPU_LOG}.{worker}", "a", encoding="utf-8") as log:
        log.write(f"{cpu_seconds() - cpu:.2f}\t{time.monotonic() - wall:.2f}\t{item.nodeid}\n")
