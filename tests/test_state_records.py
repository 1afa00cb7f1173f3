"""A build's state records are cut from the state file a save wrote (pipeline/state_text.py), so
the first save after a load dumps only the records that changed; a state file that is not what
a save left is parsed whole, and every save's text is json.dumps of the state."""
from __future__ import annotations

import json
import os
from pathlib import Path

from analysis.pipeline import runner, state_text
from analysis.pipeline.runner import Build
from tests.test_build_state import record, reference_text


def made_state(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    (site / "runs").mkdir(parents=True)
    build = Build(site / "runs", site, quiet=True, force=False, jobs=1)
    state = build.load_state()
    for i, run_id in enumerate(["b", "a", "Zé-ünïcode", "ünï\u2028\"quoted\"", "10", "9"]):
        record(site, build, state, run_id, "x" * i)
    build.forget_failed(state)
    assert build.state_path.read_text() == reference_text(state)
    return site


def records_dumped(monkeypatch) -> list[dict]:
    dumped: list[dict] = []
    real = json.dumps

    def dumps(obj, *args, **kwargs):
        if isinstance(obj, dict) and "inputs" in obj:
            dumped.append(obj)
        return real(obj, *args, **kwargs)
    monkeypatch.setattr(runner.json, "dumps", dumps)
    return dumped


def test_the_first_save_after_a_load_dumps_only_the_changed_record(tmp_path, monkeypatch):
    site = made_state(tmp_path)
    build = Build(site / "runs", site, quiet=True, force=False, jobs=1)
    state = build.load_state()
    assert state == json.loads(build.state_path.read_text())
    dumped = records_dumped(monkeypatch)
    record(site, build, state, "a", "changed")
    build.failed.append("b")
    build.forget_failed(state)
    monkeypatch.undo()
    assert dumped == [state["runs"]["a"]]
    assert build.state_path.read_text() == reference_text(state)
    assert "b" not in state["runs"]

    # and again, from the file that save left
    build = Build(site / "runs", site, quiet=True, force=False, jobs=1)
    state = build.load_state()
    dumped = records_dumped(monkeypatch)
    record(site, build, state, "new", "y")
    build.forget_failed(state)
    monkeypatch.undo()
    assert dumped == [state["runs"]["new"]]
    assert build.state_path.read_text() == reference_text(state)


def test_a_state_file_no_save_left_is_parsed_whole(tmp_path, monkeypatch):
    site = made_state(tmp_path)
    path = site / ".cache" / "loadcurve" / "state.json"
    st = path.stat()
    # the same shape, a record spelled otherwise (spaces), written in place: not cut from
    text = path.read_text().replace('"inputs":', '"inputs": ', 1)
    with open(path, "r+") as f:
        f.write(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1000))
    assert state_text.records(path, text, runner.STATE_VERSION) is None
    build = Build(site / "runs", site, quiet=True, force=False, jobs=1)
    state = build.load_state()
    assert state == json.loads(text)
    dumped = records_dumped(monkeypatch)
    record(site, build, state, "a", "changed")
    build.forget_failed(state)
    monkeypatch.undo()
    assert len(dumped) == len(state["runs"])       # every record made again, as before
    assert path.read_text() == reference_text(state)

    # another writer's file (indented), and a stamp of another file: parsed whole
    path.write_text(json.dumps(state, indent=1))
    assert state_text.records(path, path.read_text(), runner.STATE_VERSION) is None
    assert Build(site / "runs", site, quiet=True, force=False, jobs=1).load_state() == state
    state_text.written(path)
    other = json.dumps({"runs": {"x": {"inputs": "1", "outputs": {}}}, "version": 1},
                       separators=(",", ":"))
    assert state_text.records(path, other, runner.STATE_VERSION) is None
