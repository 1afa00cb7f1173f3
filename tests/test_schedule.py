"""tests/conftest.py's order of the collected tests, which is the order `make test` hands whole
files to its workers (--dist loadfile)."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import conftest


def item(name: str, test: str, *marks: str):
    return SimpleNamespace(path=Path("tests") / name, name=test,
                           iter_markers=lambda: [SimpleNamespace(name=m) for m in marks])


def test_heavy_files_first_the_longest_first_each_files_tests_in_order(monkeypatch):
    monkeypatch.setattr(conftest, "ORDER", "")     # (as `make test` runs: no other order asked)
    longest, second = conftest.LONGEST_FILES[:2]
    items = [item("test_a_light.py", "t1"), item("test_b_heavy.py", "t1", "site"),
             item(second, "t1", "harness"), item(longest, "t1"), item("test_b_heavy.py", "t2"),
             item(longest, "t2", "site"), item(second, "t2"), item("test_a_light.py", "t2")]
    conftest.pytest_collection_modifyitems(None, items)
    assert [(i.path.name, i.name) for i in items] == [
        (longest, "t1"), (longest, "t2"), (second, "t1"), (second, "t2"),
        ("test_b_heavy.py", "t1"), ("test_b_heavy.py", "t2"),
        ("test_a_light.py", "t1"), ("test_a_light.py", "t2")]


def test_another_order_keeps_each_files_tests_together_and_is_the_same_every_time(monkeypatch):
    """LOADCURVE_TEST_ORDER: every xdist worker must collect the same order, and a file's
    module fixtures are made once only while its tests stay together."""
    items = [item(f"test_{f}.py", f"t{t}") for f in "abcd" for t in range(5)]
    names = [(i.path.name, i.name) for i in items]
    assert [(i.path.name, i.name) for i in conftest.reordered(items, "reverse")] == names[::-1]
    shuffled = [(i.path.name, i.name) for i in conftest.reordered(items, "shuffle:7")]
    assert shuffled == [(i.path.name, i.name) for i in conftest.reordered(items, "shuffle:7")]
    assert sorted(shuffled) == names and shuffled != names
    files = [name for name, _ in shuffled]
    assert len([f for k, f in enumerate(files) if k == 0 or files[k - 1] != f]) == 4
    with pytest.raises(pytest.UsageError, match="reverse or shuffle:SEED"):
        conftest.reordered(items, "shuffle")
    monkeypatch.setattr(conftest, "ORDER", "reverse")
    conftest.pytest_collection_modifyitems(None, items)
    assert [(i.path.name, i.name) for i in items] == names[::-1]


def test_make_test_hands_out_files_in_the_collected_order():
    """pytest-xdist reorders files by their number of tests unless told not to, which would
    undo the order above: the site-building files have few tests and went out last."""
    makefile = (conftest.REPO / "Makefile").read_text(encoding="utf-8")
    pytest_line = next(line for line in makefile.splitlines() if line.startswith("PYTEST :="))
    assert "--dist loadfile" in pytest_line and "--no-loadscope-reorder" in pytest_line


def test_make_test_runs_more_workers_than_the_machine_has_cores():
    """A third of the tests' wall is spent waiting (the harness's real-time runs, Chromium):
    with a worker per core of the 2-core machine, a core sat idle through it."""
    makefile = (conftest.REPO / "Makefile").read_text(encoding="utf-8")
    pytest_line = next(line for line in makefile.splitlines() if line.startswith("PYTEST :="))
    workers = pytest_line.split(" -n ", 1)[1].split()[0]
    if workers == "$(TEST_WORKERS)":
        workers = next(line.split("?=")[1] for line in makefile.splitlines()
                       if line.startswith("TEST_WORKERS ?="))
    assert int(workers) > 2, pytest_line
