"""bench/perf/run_cost.py --turns: the older tree's package, renamed, imports only itself, so
the two trees measured in one process are each their own code."""
from __future__ import annotations

import runpy
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_the_renamed_package_imports_none_of_the_checkouts(tmp_path):
    shutil.copytree(REPO / "analysis", tmp_path / "analysis",
                    ignore=shutil.ignore_patterns("__pycache__"))
    runpy.run_path(str(REPO / "bench/perf/run_cost.py"))["package_as"](tmp_path, "analysis_before")
    probe = ("import sys, analysis_before.pipeline.stages, analysis_before.kinds as k\n"
             "for kind in k.KINDS.values():\n"
             "    for step in ('schema', 'inputs', 'derive', 'outputs'):\n"
             "        k.step(kind, step)\n"
             "import analysis_before.read.loadtools as tools\n"
             "for name in tools.READER_MODULES:\n"
             "    tools._module(name)\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] == 'analysis'))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True,
                         text=True, env={"PYTHONPATH": str(tmp_path), "MPLBACKEND": "Agg"})
    assert out.returncode == 0, out.stderr[-800:]
    assert out.stdout.strip() == "[]"


def test_a_builds_worker_tasks_are_each_recorded_inside_the_workers_cpu(tmp_path):
    """--tasks: every analyse and chart task of a real two-worker build is recorded once, by
    the worker that ran it, and the tasks' CPU is part of the workers' own CPU (the wrappers
    reach the forked workers, pickled by the stages' names)."""
    bench = runpy.run_path(str(REPO / "bench/perf/run_cost.py"))
    build = bench["build_cpu"](REPO, REPO / "runs" / "jmh-actors-streams", 3, tmp_path,
                               tasks=True)
    records = [r for worker in build["tasks"].values() for r in worker]
    assert sorted(r["phase"] for r in records) == ["analyse"] * 3 + ["charts"] * 3
    assert all(r["cpu"] > 0 and len(r["collections"]) == 3 for r in records)
    inside = sum(r["cpu"] for r in records)
    worker_cpu = sum(worker[-1]["process_cpu"] for worker in build["tasks"].values())
    assert inside <= worker_cpu <= build["workers"]
    assert "built 3 of 3 runs" in build["phases"]
