"""analysis/atomic.py: which writes reach the disk before they return, and in what order."""
from __future__ import annotations

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
