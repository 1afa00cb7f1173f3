"""analysis/atomic.py: which writes reach the disk before they return, and in what order."""
from __future__ import annotations

import itertools
import os

import pytest

from analysis import atomic


@pytest.fixture
def disk_calls(monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(os, "fsync", lambda fd: calls.append("fsync"))
    monkeypatch.setattr(os, "sync", lambda: calls.append("sync"))
    return calls


def test_generated_outputs_are_not_flushed_one_by_one(tmp_path, disk_calls):
    assert atomic.write_text(tmp_path / "a" / "out.csv", "x\n")
    assert atomic.write_bytes(tmp_path / "chart.svg", b"<svg/>")
    assert (tmp_path / "a" / "out.csv").read_text() == "x\n"
    assert disk_calls == []


def test_a_record_follows_every_file_written_before_it_to_the_disk(tmp_path, disk_calls):
    atomic.write_text(tmp_path / "out.csv", "x\n")
    assert atomic.write_record(tmp_path / "state.json", "{}")
    assert disk_calls == ["sync", "fsync"]     # the outputs, then the record itself
    assert not atomic.write_record(tmp_path / "state.json", "{}")   # unchanged: no write
    assert disk_calls == ["sync", "fsync"]
    assert (tmp_path / "state.json").read_text() == "{}"


def test_a_draft_is_on_disk_before_it_appears(tmp_path, disk_calls):
    atomic.create_text(tmp_path / "draft.md", "text")
    assert disk_calls == ["fsync"]
    with pytest.raises(FileExistsError):
        atomic.create_text(tmp_path / "draft.md", "other")
    assert (tmp_path / "draft.md").read_text() == "text"
    assert [p.name for p in tmp_path.iterdir()] == ["draft.md"]   # no temporary file left


def test_a_write_makes_its_folders_and_leaves_a_readable_file_whatever_the_umask(tmp_path):
    old = os.umask(0o077)
    try:
        assert atomic.write_bytes(tmp_path / "new" / "deeper" / "chart.svg", b"<svg/>")
    finally:
        os.umask(old)
    path = tmp_path / "new" / "deeper" / "chart.svg"
    assert path.read_bytes() == b"<svg/>" and path.stat().st_mode & 0o777 == 0o644
    assert [p.name for p in path.parent.iterdir()] == ["chart.svg"]


def test_a_failed_write_names_the_output_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    def full(name, mode):     # (the last step before the rename)
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "chmod", full)
    monkeypatch.setattr(os, "fchmod", full)
    with pytest.raises(OSError) as caught:
        atomic.write_bytes(tmp_path / "chart.svg", b"<svg/>" * 10_000)
    assert caught.value.filename == str(tmp_path / "chart.svg")
    assert list(tmp_path.iterdir()) == []


def test_a_write_into_an_existing_folder_makes_no_folder(tmp_path, monkeypatch):
    # (a worker writes ~120 files a run into folders that exist after its first)
    def refused(*args, **kwargs):
        raise AssertionError("mkdir called")
    (tmp_path / "charts").mkdir()
    monkeypatch.setattr(os, "mkdir", refused)
    assert atomic.write_bytes(tmp_path / "charts" / "a.svg", b"<svg/>")
    assert (tmp_path / "charts" / "a.svg").read_bytes() == b"<svg/>"


def test_a_leftover_temporary_file_of_the_same_name_is_left_alone(tmp_path, monkeypatch):
    # a killed process of the same pid may have left the name this one would take next
    monkeypatch.setattr(atomic, "_COUNT", itertools.count(7))
    leftover = tmp_path / f".chart.svg.{os.getpid()}-7.tmp"
    leftover.write_bytes(b"half")
    assert atomic.write_bytes(tmp_path / "chart.svg", b"<svg/>")
    assert (tmp_path / "chart.svg").read_bytes() == b"<svg/>"
    assert leftover.read_bytes() == b"half"
    assert sorted(p.name for p in tmp_path.iterdir()) == [leftover.name, "chart.svg"]


def test_a_forked_worker_names_its_temporary_files_by_its_own_pid(tmp_path):
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:    # the child: what it would name, and whether its write lands
        try:
            ok = atomic.write_bytes(tmp_path / "w.svg", b"w") and atomic._PID[0] == os.getpid()
            os.write(write, b"1" if ok else b"0")
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    assert os.read(read, 1) == b"1"
    os.close(read)
    assert atomic._PID[0] == os.getpid()
    assert [p.name for p in tmp_path.iterdir()] == ["w.svg"]
