"""A timeline of adding one run to a kept scale corpus: when each step of the build ran, in the
main process and in each worker (wall stamps), to find the add's critical path (issue 36).

    .venv/bin/python bench/perf/add_run_timeline.py DIR [--source SRC] [--turns 1]

DIR: a corpus kept by `site_scale.py --keep` (its runs already built by the code measured: else
the add rebuilds every run; `add_run_cost.py` warms a copy up). A turn adds one run
(site_scale.add_run), builds (`python -m analysis build --runs runs`, the code of SRC, default
this tree) with the steps below timed where they run, prints the timeline, then removes the run
and builds again (not timed), so that the corpus is as it was. The steps are timed by wrappers
put in as their modules are imported (an import hook), so no module is imported earlier than
the build imports it; a step that takes under half a millisecond is not listed.
"""
from __future__ import annotations

import argparse
import functools
import importlib.abc
import os
import runpy
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# module: the functions (or Class.method) timed in it
STEPS = {
    "analysis.cli": ["main"],
    "analysis.pipeline.runner": ["Build.load_state", "Build.all_outputs_intact", "Build._reduce",
                                 "Build._record", "Build.save_state", "Build.discover",
                                 "ForkAtFirstRead.get"],
    "analysis.pipeline.one_run": ["draw_handed_charts", "load_page_code"],
    "analysis.pipeline.cache": ["code_version", "templates_version"],
    "analysis.pipeline.stages": ["analyse_task", "chart_task", "commit"],
    "analysis.pipeline.workers": ["load_chart_code", "pool"],
    "analysis.write.charts.png_use": ["runs_in_posts"],
    "analysis.read.manifest": ["load_manifest"],
    "analysis.derive.analyse": ["analyse_run", "_read_repetition_task"],
    "analysis.derive.aggregate": ["build_run"],
    "analysis.write.load_files": ["run_files"],
    "analysis.write.charts.run_jobs": ["chart_plan"],
    "analysis.write.charts.flame_cells": ["flame_graphs", "flame_diffs"],
    "analysis.write.datafiles": ["run_document", "series_csv", "table_csv"],
    "analysis.write.yaml_text": ["dump_yaml"],
    "analysis.write.pages": ["report_pages", "render_html"],
    "analysis.corpus.cell_table": ["run_cells_csv", "run_spectra_csv"],
    "analysis.write.corpus_pages": ["reduce"],
    "analysis.write.charts.render": ["render_job"],
}
# modules whose import is listed (with what it imports in turn)
IMPORTS = {"analysis.pipeline.runner", "analysis.corpus.cell_table", "analysis.derive.analyse",
           "analysis.write.load_files", "analysis.write.charts.render", "analysis.write.pages",
           "analysis.write.liquid_pages", "analysis.write.corpus_pages", "pandas", "numpy",
           "matplotlib", "matplotlib.pyplot", "liquid", "yaml", "analysis.read.hdr.log"}
SHORTEST_S = 0.0005


def log(label: str, started: float, ended: float) -> None:
    if ended - started >= SHORTEST_S:
        line = f"{os.getpid()} {started:.6f} {ended:.6f} {label}\n"
        fd = os.open(os.environ["TIMELINE_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)


def timed(label: str, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        started = time.time()
        try:
            return fn(*args, **kwargs)
        finally:
            log(label, started, time.time())
    return wrapper


def put_in(module) -> None:
    for name in STEPS.get(module.__name__, ()):
        owner, _, attr = name.rpartition(".")
        holder = getattr(module, owner) if owner else module
        setattr(holder, attr, timed(f"{module.__name__.rsplit('.', 1)[-1]}.{name}",
                                    getattr(holder, attr)))


class Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in STEPS and name not in IMPORTS:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            started = time.time()
            run(module)
            if name in IMPORTS:
                log(f"import {name}", started, time.time())
            put_in(module)
        spec.loader.exec_module = exec_module
        return spec


def inner() -> None:
    """In the build's process: the hook, then `python -m analysis build --runs runs`."""
    log("python start to the timeline's hook", float(os.environ["TIMELINE_T0"]), time.time())
    sys.meta_path.insert(0, Hook())
    sys.argv = ["analysis", "build", "--runs", "runs"]
    runpy.run_module("analysis", run_name="__main__", alter_sys=True)


def show(log_path: Path, t0: float, main_pid: int) -> None:
    events = []
    for line in log_path.read_text().splitlines():
        pid, started, ended, label = line.split(" ", 3)
        events.append((float(started) - t0, float(ended) - t0, int(pid), label))
    roles = {main_pid: "main"}
    for _, _, pid, _ in sorted(events):
        roles.setdefault(pid, f"worker{len(roles)}")
    print(f"{'start':>7} {'end':>7} {'s':>6}  {'process':<8} step")
    for started, ended, pid, label in sorted(events):
        print(f"{started:7.3f} {ended:7.3f} {ended - started:6.3f}  {roles[pid]:<8} {label}")


def build(site: Path, source: Path, log_path: Path | None) -> tuple[float, int]:
    env = {**os.environ, "PYTHONPATH": f"{source}{os.pathsep}{REPO / 'bench' / 'perf'}"}
    t0 = time.time()
    if log_path is None:
        cmd = [sys.executable, "-m", "analysis", "build", "--runs", "runs", "-q"]
    else:
        env.update(TIMELINE_LOG=str(log_path), TIMELINE_T0=f"{t0:.6f}")
        cmd = [sys.executable, "-c", "import add_run_timeline as t; t.inner()"]
    proc = subprocess.Popen(cmd, cwd=site, env=env, stderr=subprocess.PIPE, text=True)
    _, err = proc.communicate()
    wall = time.time() - t0
    if proc.returncode != 0:
        sys.stdout.write(err[-3000:])
        raise SystemExit(f"error: the build exited {proc.returncode}")
    last = [line for line in err.splitlines() if line.startswith("built ")]
    if last:
        print(last[-1])
    return wall, proc.pid


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--source", type=Path, default=REPO,
                        help="the tree whose analysis builds (default: this one)")
    parser.add_argument("--turns", type=int, default=1)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO / "bench" / "perf"))
    import site_scale
    site = args.corpus.resolve()
    for _ in range(args.turns):
        ids = [int(p.name.split("-")[1]) for p in (site / "runs").iterdir()
               if p.name.startswith("scale-")]
        run_dir = site / "runs" / site_scale.add_run(site, max(ids, default=0) + 1)
        log_path = site / ".cache" / "timeline.log"
        log_path.unlink(missing_ok=True)
        try:
            before = site_scale.load()
            t0 = time.time()
            wall, pid = build(site, args.source.resolve(), log_path)
            print(f"add one run: wall {wall:.2f} s [{before} -> {site_scale.load()}]")
            show(log_path, t0, pid)
        finally:
            import shutil
            shutil.rmtree(run_dir, ignore_errors=True)
            build(site, args.source.resolve(), None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
