"""The build's compiled stat walk (analysis/pipeline/_walk.c, native_walk.py): a run folder's
listing, which its input key is made from, is byte for byte the Python walk's, or left to
Python; an edited file changes it; the outputs' size check answers as os.stat does."""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from analysis.pipeline import cache, native_walk
from analysis.pipeline.runner import Build

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def walker():
    found = native_walk.get()
    if found is None:
        pytest.skip(f"no compiled walk: {native_walk.describe()}")
    return found


def make_run(folder: Path) -> Path:
    # names whose byte order differs from a naive one: '-' and '.' sort before letters, capitals
    # before small letters, a file beside a folder of a near name, a folder emptied
    for rel, text in {"run.yml": "a", "B.hlog": "b", "a-b/x.hlog": "c", "a/z.jfr": "d",
                      "a/deeper/y": "e", "_under": "f", "a.b": "g", "a/deeper/Z/w": "h",
                      "empty/.keep": ""}.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    (folder / "empty" / ".keep").unlink()
    return folder


def test_the_listing_is_the_python_walks(walker, tmp_path):
    run = make_run(tmp_path / "r1")
    listing = walker.listing(str(run))
    assert listing == native_walk.python_listing(str(run))
    assert listing.split(b"\0")[0:-1:4] == sorted_walk(run)
    bundled = REPO / "runs" / "pool-vs-virtual"
    assert walker.listing(str(bundled)) == native_walk.python_listing(str(bundled))


def sorted_walk(run: Path) -> list[bytes]:
    """The files in os.walk's order with sorted names, as a plain walk gives them."""
    found = []
    for dirpath, dirnames, filenames in os.walk(run):
        dirnames.sort()
        folder = os.path.relpath(dirpath, run)
        found += [(name if folder == "." else f"{folder}/{name}").encode()
                  for name in sorted(filenames)]
    return found


def test_a_file_edited_in_place_changes_the_listing(walker, tmp_path):
    run = make_run(tmp_path / "r1")
    before = walker.listing(str(run))
    path = run / "a" / "z.jfr"
    stamp = path.stat().st_mtime_ns
    path.write_text("D")                         # same size, same inode, same folder mtime
    os.utime(path, ns=(stamp + 1_000_000, stamp + 1_000_000))
    after = walker.listing(str(run))
    assert after != before and after == native_walk.python_listing(str(run))


@pytest.mark.parametrize("odd", ["file link", "folder link", "fifo", "not ascii"])
def test_what_python_decides_is_left_to_it(walker, tmp_path, odd):
    run = make_run(tmp_path / "r1")
    if odd == "file link":
        os.symlink("run.yml", run / "a" / "link")
    elif odd == "folder link":
        os.symlink("a", run / "linked")
    elif odd == "fifo":
        os.mkfifo(run / "a" / "deeper" / "pipe")
    else:
        (run / "a" / "caf\u00e9").write_text("x")
    assert walker.listing(str(run)) is None
    # the key is the Python walk's: none for a link to a file or a FIFO (such a run is hashed
    # in full), a listing without the folder link, or with the name
    expected = native_walk.python_listing(str(run))
    assert (expected is None) == (odd in ("file link", "fifo"))
    stamp = cache._stat_stamp(run, tmp_path, "code")
    assert (stamp is None) == (expected is None)


def test_a_listing_longer_than_the_first_buffer(walker, tmp_path, monkeypatch):
    run = make_run(tmp_path / "r1")
    monkeypatch.setattr(native_walk, "ROOM", 16)
    fresh = native_walk.Walker(walker.lib)
    assert fresh.listing(str(run)) == native_walk.python_listing(str(run))


def test_the_outputs_size_check_answers_as_os_stat(walker, tmp_path, monkeypatch):
    site = tmp_path
    (site / "assets" / "r1").mkdir(parents=True)
    (site / "assets" / "r1" / "a.svg").write_text("12345")
    (site / "_reports").mkdir()
    (site / "_reports" / "r1.html").write_text("")
    os.symlink("r1.html", site / "_reports" / "linked.html")
    outputs = {"assets/r1/a.svg": 5, "_reports/r1.html": 0, "_reports/linked.html": 0}
    build = Build(site / "runs", site, quiet=True, force=False, jobs=1)
    for changed, expected in [({}, True), ({"assets/r1/a.svg": 6}, False),
                              ({"assets/r1/gone.svg": 1}, False), ({"_reports/r1.html": 1}, False)]:
        entry = {"outputs": {**outputs, **changed}}
        assert walker.sizes_match(f"{site}/", entry["outputs"]) is expected
        assert build.outputs_intact(entry) is expected
        monkeypatch.setattr(native_walk, "get", lambda: None)     # the Python check
        assert build.outputs_intact(entry) is expected
        monkeypatch.undo()
    assert walker.sizes_match(f"{site}/", {}) is True


def test_many_runs_outputs_are_checked_on_the_builds_threads(walker, tmp_path, monkeypatch):
    site = tmp_path
    entries = []
    for i in range(80):
        (site / "assets" / f"r{i}").mkdir(parents=True)
        (site / "assets" / f"r{i}" / "a.svg").write_text("x" * i)
        entries.append({"outputs": {f"assets/r{i}/a.svg": i}})
    entries[7]["outputs"]["assets/r7/a.svg"] = 8                # a size changed
    entries[61]["outputs"]["assets/r61/gone.svg"] = 1            # a file gone
    threads = set()
    real = native_walk.Walker.sizes_match

    def sizes_match(self, root, outputs):
        threads.add(threading.get_ident())
        time.sleep(0.001)        # (so that the first chunk is not done before the second starts)
        return real(self, root, outputs)
    monkeypatch.setattr(native_walk.Walker, "sizes_match", sizes_match)
    build = Build(site / "runs", site, quiet=True, force=False, jobs=2)
    expected = [i not in (7, 61) for i in range(80)]
    assert list(build.all_outputs_intact(entries)) == expected
    assert len(threads) == 2
    threads.clear()
    one = Build(site / "runs", site, quiet=True, force=False, jobs=1)
    assert list(one.all_outputs_intact(entries)) == expected
    assert list(build.all_outputs_intact(entries[:40])) == expected[:40]   # (too few for two)
    assert len(threads) == 1
