"""The build state (.cache/loadcurve/state.json, pipeline/runner.py): it is serialised only when
a run's record changed. At 1,000 runs one dump is ~8 MB of JSON, and a build that added one
run dumped it again after its one change only to find the text equal."""
from __future__ import annotations

import json
from pathlib import Path

from analysis.pipeline import runner
from analysis.pipeline.runner import Build


def counting_dumps(monkeypatch) -> list[int]:
    """Counts the serialisations of the whole state (Build._state_json)."""
    calls: list[int] = []
    real = Build._state_json

    def dumps(self, state):
        calls.append(1)
        return real(self, state)
    monkeypatch.setattr(Build, "_state_json", dumps)
    return calls


def test_the_state_is_dumped_once_per_change(tmp_path: Path, monkeypatch):
    site = tmp_path / "site"
    (site / "runs").mkdir(parents=True)
    out = site / "_rundata" / "r1.yml"
    out.parent.mkdir(parents=True)
    out.write_text("x: 1\n")
    build = Build(site / "runs", site, quiet=True, force=False, jobs=1)
    state = build.load_state()          # none yet: the first save writes it
    calls = counting_dumps(monkeypatch)
    build.forget_failed(state)
    assert len(calls) == 1 and json.loads(build.state_path.read_text())["runs"] == {}

    build = Build(site / "runs", site, quiet=True, force=False, jobs=1)
    state = build.load_state()
    build.forget_failed(state)          # nothing failed, nothing recorded
    assert len(calls) == 1
    build._record(state, "r1", "digest", ["_rundata/r1.yml"])
    build.forget_failed(state)          # (the build's last save)
    assert len(calls) == 2
    assert json.loads(build.state_path.read_text())["runs"]["r1"] == {
        "inputs": "digest", "outputs": {"_rundata/r1.yml": 5}}

    build.failed.append("r1")           # a failed run's record goes, and that is saved
    build.forget_failed(state)
    assert len(calls) == 3 and json.loads(build.state_path.read_text())["runs"] == {}
    assert not out.exists()


def reference_text(state) -> str:
    return json.dumps(state, sort_keys=True, separators=(",", ":"))


def record(site: Path, build: Build, state, run_id: str, content: str) -> None:
    out = site / "_rundata" / f"{run_id}.yml"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(content)
    build._record(state, run_id, f"digest of {content}", [f"_rundata/{run_id}.yml"])


def test_the_state_text_is_the_whole_dump_and_only_changed_records_are_serialised_again(
        tmp_path: Path, monkeypatch):
    site = tmp_path / "site"
    (site / "runs").mkdir(parents=True)
    build = Build(site / "runs", site, quiet=True, force=False, jobs=1)
    state = build.load_state()
    names = ["b", "a", "Zé-ünïcode", "a-2", "ünï\u2028\"quoted\"", "10", "9"]
    for i, run_id in enumerate(names):
        record(site, build, state, run_id, "x" * i)
    build.forget_failed(state)
    assert build.state_path.read_text() == reference_text(state)

    # a later build: loads the state, replaces one record, removes another
    build = Build(site / "runs", site, quiet=True, force=False, jobs=1)
    state = build.load_state()
    record(site, build, state, "a", "changed")
    build.failed.append("b")
    build.forget_failed(state)
    assert build.state_path.read_text() == reference_text(state)
    assert "b" not in state["runs"] and state["runs"]["a"]["outputs"] == {"_rundata/a.yml": 7}

    # its next saves make the text of the records changed since, and reuse the others'
    records: list[object] = []
    real = json.dumps

    def dumps(obj, *args, **kwargs):
        records.append(obj)
        return real(obj, *args, **kwargs)
    monkeypatch.setattr(runner.json, "dumps", dumps)
    record(site, build, state, "new", "y")
    record(site, build, state, "9", "replaced")
    build.save_state(state)
    monkeypatch.undo()
    assert build.state_path.read_text() == reference_text(state)
    # (sorted: a save within _record may have come between the two)
    assert sorted((r for r in records if isinstance(r, dict) and "inputs" in r),
                  key=lambda r: r["inputs"]) == [state["runs"]["9"], state["runs"]["new"]]

    # a state of another shape is dumped whole, the same way
    state["extra"] = {"k": [1, 2.5, None]}
    build._state_changed = True
    build.save_state(state)
    assert build.state_path.read_text() == reference_text(state)


def test_a_slow_state_write_is_made_less_often_during_a_build(tmp_path: Path, monkeypatch):
    site = tmp_path / "site"
    (site / "runs").mkdir(parents=True)
    clock = [100.0]
    monkeypatch.setattr(runner.time, "monotonic", lambda: clock[0])
    writes: list[float] = []
    real_write = runner.atomic.write_record

    def slow_write(path, text):
        writes.append(clock[0])
        clock[0] += 0.5              # the write of a large state on a busy disk
        return real_write(path, text)
    monkeypatch.setattr(runner.atomic, "write_record", slow_write)
    build = Build(site / "runs", site, quiet=True, force=False, jobs=1)
    state = build.load_state()
    for i in range(40):              # a run recorded every second
        record(site, build, state, f"r{i}", "x")
        clock[0] += 1.0
    # not 2 s after the last write ended but 20 times its 0.5 s: 10 s, each write 0.5 s long
    assert len(writes) == 4 and [b - a for a, b in zip(writes, writes[1:])] == [10.5] * 3
    build.forget_failed(state)       # the build's last save writes whatever is left
    assert len(state["runs"]) == 40
    assert json.loads(build.state_path.read_text()) == state
