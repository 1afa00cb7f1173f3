"""history: change points in a synthetic series (tests/series_gen.py) - both injected changes
found at their version, none in untouched cells or in a flat series - in memory over many
seeds, and once end to end through genhlog logs and `python -m analysis build`."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import yaml

from analysis.corpus import cell_table, history
from tests import series_gen
from tests.conftest import REPO

pytestmark = pytest.mark.slow     # (make check leaves it out; make test runs it)


def changes_by_cell(df):
    return {(h.system, h.load): h.changes for h in history.series_history(df)}


def test_pelt_finds_a_clean_step_and_nothing_in_noise():
    rng = np.random.default_rng(0)
    y = np.concatenate([np.zeros(10), np.ones(10)]) + rng.normal(0, 0.1, 20)
    assert history.pelt(y, 0.1, 4 * np.log(20)) == [10]
    assert history.pelt(rng.normal(0, 0.1, 30), 0.1, 4 * np.log(30)) == []


def test_version_order_is_natural():
    assert sorted(["0.10", "0.9", "0.2"], key=history.version_key) == ["0.2", "0.9", "0.10"]


@pytest.mark.parametrize("seed", range(20))
def test_injected_changes_are_found_at_their_version(seed):
    found = changes_by_cell(cell_table.frame(series_gen.cell_rows(seed)))
    for system, load, version, factor in series_gen.CHANGES:
        (change,) = found.pop((system, load))
        assert change.version == series_gen.version_name(version)
        assert change.kind == ("regression" if factor > 1 else "improvement")
        assert change.size_pct == pytest.approx(100 * (factor - 1), abs=5)
    assert all(not c for c in found.values()), found        # the untouched cells


@pytest.mark.parametrize("seed", range(20))
def test_a_flat_series_has_no_change(seed):
    found = changes_by_cell(cell_table.frame(series_gen.cell_rows(seed, changes=())))
    assert all(not c for c in found.values()), found


def test_censored_and_host_busy_versions_are_marked():
    rows = series_gen.cell_rows(1, versions=6, changes=())
    rows[0]["p99_at_least_ms"], rows[0]["p99_ms"] = 15000.0, None
    rows[1]["host_busy"] = True
    (first, *_) = history.series_history(cell_table.frame(rows))
    assert first.points[0].censored and first.points[0].host_busy
    assert not first.points[1].censored


def test_series_end_to_end_through_genhlog_and_the_build(tmp_path, oracle):
    """30 versions written through genhlog, built by `python -m analysis build`: the cell table,
    the history data with both changes, the regressions feed's data and the pages."""
    series_gen.write_corpus(tmp_path, oracle, seed=7)
    out = subprocess.run([sys.executable, "-m", "analysis", "build", "--runs", "runs", "-q"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=900,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert out.returncode == 0, out.stderr[-3000:]
    cells = cell_table.read_csv(tmp_path / "assets/data/cells.csv")
    assert len(cells) == 30 * 2 * 4 * 3
    doc = yaml.safe_load((tmp_path / "_data/history/synthetic.yml").read_text())
    found = {(c["system"], c["load"]): [(x["version"], x["kind"]) for x in c["changes"]]
             for c in doc["cells"]}
    assert found.pop(("pool", "r200")) == [("0.12", "regression")]
    assert found.pop(("virtual", "r100")) == [("0.20", "improvement")]
    assert all(not v for v in found.values()), found
    feed = yaml.safe_load((tmp_path / "_data/regressions.yml").read_text())
    assert [e["url"] for e in feed["entries"]] == ["/history/synthetic/#virtual-r100",
                                                   "/history/synthetic/#pool-r200"]
    assert (tmp_path / "_series/synthetic.md").is_file()
    assert (tmp_path / "assets/history/synthetic/pool-r200.svg").is_file()


MINIMAL = """\
title: t
date: 2026-11-22
description: d
value_unit: us
systems: [{id: a, label: A}]
load_points: [{id: r1, offered_rate: 1, duration_s: 1}]
"""


@pytest.mark.parametrize("extra, series, version, problem", [
    ('series: nightly\nversion: "1.10"\n', "nightly", "1.10", None),
    ("version: 12\n", None, "12", None),
    ("version: 1.10\n", None, None, 'line 7: version: must be a string (quote it: "1.10")'),
    ("series: Night Ly\n", None, None, "line 7: series: 'Night Ly' must use only"),
])
def test_manifest_series_and_version(tmp_path, extra, series, version, problem):
    from analysis.errors import ManifestError
    from analysis.read.manifest import load_manifest
    run = tmp_path / "run1"
    run.mkdir()
    (run / "run.yml").write_text(MINIMAL + extra)
    if problem:
        with pytest.raises(ManifestError) as exc:
            load_manifest(run)
        assert problem in str(exc.value)
        return
    m = load_manifest(run)
    assert (m.series, m.version) == (series, version)
