"""model.py and aggregate.build_run: the run model's shape, built once from run.yml."""
from __future__ import annotations

from analysis.derive import aggregate
from analysis.model import LatencyStats, Percentile
from analysis.read.manifest import load_manifest
from tests.conftest import REPO


def test_a_run_without_scenarios_is_one_implicit_scenario():
    run = aggregate.build_run(load_manifest(REPO / "runs" / "pool-vs-virtual", REPO / "runs"))
    assert [s.id for s in run.scenarios] == [None] and run.scenario is run.scenarios[0]
    assert [s.id for s in run.scenario.systems] == ["pool20", "virtual"]
    assert [s.index for s in run.scenario.systems] == [0, 1]
    rows = list(run.scenario.grid())
    assert [lp.id for lp, _ in rows][:2] == ["r25", "r50"]
    assert all(c is None for _, row in rows for _, c in row)   # the shape only: nothing read
    assert run.series is None and run.version is None and run.repetitions == 3   # schema 2


def test_a_censored_percentile_is_a_lower_bound_not_a_value():
    timeout = Percentile(at_least_ms=15_000.0)
    assert timeout.censored and timeout.value_ms is None
    assert not Percentile(12.5).censored
    stats = LatencyStats(3, {"p50": Percentile(1.0), "p99": timeout}, Percentile(2.0),
                         Percentile(1.5), 0.5)
    assert stats.value("p50_ms") == 1.0 and stats.value("p99_ms") is None
    assert stats.value("max_ms") == 2.0
