"""The flame graph stage's cost per run (issue 25): analyse each run of --runs as the build does,
then time drawing its flame graphs and differential graphs (flame_cells), best of --repeat, and
count the SVG files and bytes they make. Writes nothing.

    .venv/bin/python bench/perf/flame_stage.py [--runs runs] [--repeat 3] [--profile]

The load average is printed beside the figures (the machine is shared).
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from analysis.derive.analyse import analyse_run  # noqa: E402
from analysis.read.manifest import load_manifest  # noqa: E402
from analysis.write.charts import flame_cells, flamegraph  # noqa: E402


def clear_caches() -> None:
    """Each timing starts cold: flamegraph's fill and escape caches would otherwise carry the
    first repetition's work into the next (a build's worker starts each run with what it has)."""
    for name in ("_fills", "_xml"):     # (_xml: escaped names, since issue 25's last round)
        cache = getattr(flamegraph, name, None)
        if cache is not None:
            cache.cache_clear()


def flame_stage(run):
    graphs = flame_cells.flame_graphs(run)
    return graphs, flame_cells.flame_diffs(run, graphs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", default="runs")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", action="store_true", help="cProfile the stage, top 25 by tottime")
    args = ap.parse_args()
    runs_root = Path(args.runs)
    total = 0.0
    prof = cProfile.Profile() if args.profile else None
    for run_dir in sorted(p for p in runs_root.iterdir() if (p / "run.yml").is_file()):
        manifest = load_manifest(run_dir, runs_root)
        if getattr(manifest, "kind", "load") == "jmh":
            continue
        run = analyse_run(manifest, REPO)
        best = float("inf")
        for _ in range(args.repeat):
            clear_caches()
            t0 = time.perf_counter()
            if prof:
                prof.enable()
            graphs, diffs = flame_stage(run)
            if prof:
                prof.disable()
            best = min(best, time.perf_counter() - t0)
        total += best
        n = lambda gs: 2 * len(gs)  # noqa: E731 - wide and phone
        size = lambda gs: sum(len(g.svg_bytes) + len(g.narrow_bytes) for g in gs)  # noqa: E731
        print(f"{run_dir.name}: {best:.3f} s; {n(graphs)} cell SVGs {size(graphs):,} B, "
              f"{n(diffs)} diff SVGs {size(diffs):,} B")
    print(f"total {total:.3f} s (best of {args.repeat} per run), load average "
          f"{os.getloadavg()[0]:.2f}")
    if prof:
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
