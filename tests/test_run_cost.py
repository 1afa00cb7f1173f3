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
