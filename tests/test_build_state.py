"""The build state (.cache/loadcurve/state.json, pipeline/runner.py): it is serialised only when
a run's record changed. At 1,000 runs one dump is ~8 MB of JSON, and a build that added one
run dumped it again after its one change only to find the text equal."""
from __future__ import annotations

import json
from pathlib import Path

from analysis.pipeline import runner
from analysis.pipeline.runner import Build


def counting_dumps(monkeypatch) -> list[int]:
    calls: list[int] = []
    real = json.dumps

    def dumps(obj, *args, **kwargs):
        calls.append(1)
        return real(obj, *args, **kwargs)
    monkeypatch.setattr(runner.json, "dumps", dumps)
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
