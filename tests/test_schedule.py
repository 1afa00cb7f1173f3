"""tests/conftest.py's order of the collected tests, which is the order `make test` hands whole
files to its workers (--dist loadfile)."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tests import conftest


def item(name: str, test: str, *marks: str):
    return SimpleNamespace(path=Path("tests") / name, name=test,
                           iter_markers=lambda: [SimpleNamespace(name=m) for m in marks])


def test_heavy_files_first_the_longest_first_each_files_tests_in_order():
    longest, second = conftest.LONGEST_FILES[:2]
    items = [item("test_a_light.py", "t1"), item("test_b_heavy.py", "t1", "site"),
             item(second, "t1", "harness"), item(longest, "t1"), item("test_b_heavy.py", "t2"),
             item(longest, "t2", "site"), item(second, "t2"), item("test_a_light.py", "t2")]
    conftest.pytest_collection_modifyitems(None, items)
    assert [(i.path.name, i.name) for i in items] == [
        (longest, "t1"), (longest, "t2"), (second, "t1"), (second, "t2"),
        ("test_b_heavy.py", "t1"), ("test_b_heavy.py", "t2"),
        ("test_a_light.py", "t1"), ("test_a_light.py", "t2")]


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
