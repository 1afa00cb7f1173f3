"""tests/sitebuild.py's sharing: what the site and browser tests build once per pytest run is
made once however many workers ask for it at the same moment, and the sources that leave the
runs' raw files out still hold the fixture runs."""
from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

import pytest

from tests import sitebuild


def _count_and_take_time(folder: Path) -> None:
    with open(folder.parent / "made", "a") as made:
        made.write(f"{multiprocessing.current_process().name}\n")
    time.sleep(0.3)        # long enough for the other processes to arrive while it runs
    (folder / "output").write_text("the build")


def _ask(folder: Path, answers) -> None:
    answers.put(str(sitebuild._built_once(folder, _count_and_take_time)))


def test_a_shared_build_is_made_once_for_every_process_that_asks(tmp_path):
    context = multiprocessing.get_context("fork")
    answers = context.Queue()
    folder = tmp_path / "shared"
    askers = [context.Process(target=_ask, args=(folder, answers)) for _ in range(3)]
    for asker in askers:
        asker.start()
    got = [answers.get(timeout=60) for _ in askers]
    for asker in askers:
        asker.join(60)
    assert got == [str(folder)] * 3
    assert len((tmp_path / "made").read_text().splitlines()) == 1
    assert (folder / "output").read_text() == "the build"


def test_a_build_that_failed_half_way_is_made_again(tmp_path):
    folder = tmp_path / "shared"

    def fails(into: Path) -> None:
        (into / "half").write_text("")
        raise RuntimeError("the build failed")
    with pytest.raises(RuntimeError):
        sitebuild._built_once(folder, fails)
    assert sitebuild._built_once(folder, _count_and_take_time) == folder
    assert sorted(p.name for p in folder.iterdir()) == ["built", "output"]


def test_a_source_without_the_raw_runs_keeps_the_fixture_runs(tmp_path, monkeypatch):
    # (the scenario fixture's analysis is left out here: the site tests copy its run in)
    monkeypatch.setattr(sitebuild, "_add_scenario_run", lambda dest: None)
    monkeypatch.setattr(sitebuild, "tag_feeds", lambda: type("NoFeeds", (), {
        "write": staticmethod(lambda dest: None)}))
    source = sitebuild.assemble(tmp_path / "src", raw_runs=False)
    real = sorted(p.name for p in (sitebuild.REPO / "runs").iterdir() if p.is_dir())
    assert real and not any((source / "runs" / name).exists() for name in real)
    placeholders = sorted(p.relative_to(source).as_posix() for p in (source / "runs").rglob("*")
                          if p.is_file())
    assert placeholders and all(p.startswith("runs/injection/") for p in placeholders)
    assert (source / "_reports" / "injection.md").exists()
    assert (source / "_data" / "runs" / "injection.yml").exists()
    assert (source / "_layouts" / "default.html").exists()
