"""The pieces of a run's `data` and `charts` stages (issue 36), an older tree and this checkout
turn by turn in one worker-like process: CPU ms of each piece of a run after the worker's first.

    .venv/bin/python bench/perf/run_pieces.py --before main [--turns 20] [--reverse]
        [--run runs/pool-vs-virtual]

run_cost.py --turns says what a whole run costs each tree; a change of a few ms in one piece
is inside that figure's noise on a loaded machine, so this one times the pieces themselves
(wrappers on the functions analyse_task and chart_task call, installed on each tree's own
modules) in the same turns:
    page       the report page's Liquid render (pages.report_pages)
    yaml       the data document's text (dump_yaml)
    flame      the flame graphs' and differential graphs' SVGs (flame_cells)
    document   the data document (datafiles.run_document) and the PNG keys' pruning
    csv        the series, table and cell CSVs
    png        the og:image (matplotlib's draw and the PNG)
    svg        the rest of chart_task: the SVG charts
    model      the run's model (analyse_run: the logs, the recordings and the figures)
    other      the rest of `data` (the manifest and the inputs' checks, the chart plan, the
               files' commit, the settling between tasks)
    data       analyse_task less the model (run_cost.py's `data`)
    analyse, charts: the two tasks whole
Prints min / first quartile / median of each piece for each tree, and whether the two trees
wrote the same files on their first turn. The older tree's package is imported as
`analysis_before` (run_cost.package_as).

    .venv/bin/python bench/perf/run_pieces.py --before main --instructions [--pieces flame,yaml]

--instructions counts instead what a shared machine's CPU seconds cannot give steadily: the
instructions one pass of each piece executes in each tree (valgrind's callgrind: a process
with two passes less one with one; the first pass pays the parsing and the caches' filling, as
a worker's first run does), on the run model and data document this checkout makes of the run
(pickled once, read by both trees: the pieces are the writing, not the model). Pieces:
page, yaml, flame, csv, and files (load_files.run_files whole: every piece above, the
document and the chart plan, no commit). ~1-3 minutes a piece and tree under valgrind.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_cost import PY, REPO, package_as  # noqa: E402

CHILD = r"""
import gc, importlib, json, os, subprocess, sys, time
os.environ["MPLBACKEND"] = "Agg"
cpu = time.process_time
runs_root, sites, turns, reverse = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
PIECES = {      # piece: [(module, function)]
    "model": [("derive.analyse", "analyse_run")],
    "page": [("write.load_files", "pages.report_pages")],
    "yaml": [("write.load_files", "dump_yaml")],
    "flame": [("write.load_files", "flame_cells.flame_graphs"),
              ("write.load_files", "flame_cells.flame_diffs")],
    "document": [("write.load_files", "datafiles.run_document"),
                 ("write.load_files", "png_use.keep_pngs")],
    "csv": [("write.load_files", "datafiles.series_csv"), ("write.load_files", "datafiles.table_csv"),
            ("write.load_files", "cell_table.run_cells_csv"),
            ("write.load_files", "cell_table.run_spectra_csv")],
    "png": [("write.charts.render", n) for n in ("_reused_figure", "_draw_plot", "_write_figure",
                                                 "draw_panels")],
}

def tree(package):
    spent = {}
    for piece, names in PIECES.items():
        for module_name, dotted in names:
            owner = importlib.import_module(f"{package}.{module_name}")
            *path, name = dotted.split(".")
            for part in path:
                owner = getattr(owner, part)
            if not hasattr(owner, name):
                continue
            inner = getattr(owner, name)

            def wrapper(*a, _inner=inner, _piece=piece, **k):
                t = cpu()
                try:
                    return _inner(*a, **k)
                finally:
                    spent[_piece] = spent.get(_piece, 0.0) + cpu() - t
            setattr(owner, name, wrapper)
    stages = importlib.import_module(f"{package}.pipeline.stages")
    workers = importlib.import_module(f"{package}.pipeline.workers")
    if hasattr(workers, "IN_WORKER"):
        workers.IN_WORKER[0] = True
    return stages, spent

trees = [("before",) + tree("analysis_before"), ("this",) + tree("analysis")]
gc.freeze()
if reverse:
    trees.reverse()

def checked(result):
    if not result["ok"]:
        sys.exit(result["error"])
    return result

def one(stages, spent, name, site):
    spent.clear()
    t0 = cpu()
    r = checked(stages.analyse_task(os.path.join(runs_root, name), runs_root, site, False))
    t1 = cpu()
    checked(stages.chart_task(r["run"], r["chart_jobs"], site))
    t2 = cpu()
    out = {k: v * 1000 for k, v in spent.items()}
    out["analyse"], out["charts"] = (t1 - t0) * 1000, (t2 - t1) * 1000
    out["svg"] = out["charts"] - out.get("png", 0.0)
    out["data"] = out["analyse"] - out.get("model", 0.0)
    out["other"] = out["data"] - sum(out.get(p, 0.0) for p in ("page", "yaml", "flame", "document",
                                                               "csv"))
    return out

names = sorted(os.listdir(runs_root))
for label, stages, spent in trees:      # a worker's first run: its set-up
    one(stages, spent, names[0], os.path.join(sites, label))
got = {label: [] for label, _, _ in trees}
same = None
for i in range(turns):
    name = names[1 + i % (len(names) - 1)]
    for label, stages, spent in trees:
        got[label].append(one(stages, spent, name, os.path.join(sites, label)))
    if same is None:
        same = subprocess.run(["diff", "-rq", os.path.join(sites, "before"),
                               os.path.join(sites, "this")], capture_output=True).returncode == 0
print(json.dumps({"got": got, "same": same}))
"""

CAPTURE = r"""
import os, pickle, sys, tempfile
os.environ["MPLBACKEND"] = "Agg"
from analysis.pipeline import stages
from analysis.write import load_files
got = {}
report_pages = load_files.pages.report_pages
def capture(site_root, run, doc):
    got["run"], got["doc"] = run, doc
    return report_pages(site_root, run, doc)
load_files.pages.report_pages = capture
run_dir, out = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory() as site:
    r = stages.analyse_task(run_dir, os.path.dirname(run_dir), site, False)
    if not r["ok"]:
        sys.exit(r["error"])
with open(out, "wb") as f:
    pickle.dump((got["run"], got["doc"]), f)
"""

# one piece `passes` times on the captured run (run in each tree, PYTHONPATH=that tree)
PASSES = r"""
import os, pickle, sys, tempfile
os.environ["MPLBACKEND"] = "Agg"
captured, piece, passes = sys.argv[1], sys.argv[2], int(sys.argv[3])
from analysis.corpus import cell_table
from analysis.write import datafiles, load_files, pages
from analysis.write.charts import flame_cells
from analysis.write.yaml_text import dump_yaml
with open(captured, "rb") as f:
    run, doc = pickle.load(f)
site = tempfile.mkdtemp()

def csvs():
    for c in run.cells():
        datafiles.series_csv([r.series for r in c.repetitions])
    for scenario in run.scenarios:
        datafiles.table_csv(run, scenario)
    cell_table.run_cells_csv(run)
    cell_table.run_spectra_csv(run)

def flame():
    flame_cells.flame_diffs(run, flame_cells.flame_graphs(run))

work = {"page": lambda: pages.report_pages(site, run, doc), "yaml": lambda: dump_yaml(doc),
        "flame": flame, "csv": csvs, "files": lambda: load_files.run_files(run, site, False)}
for _ in range(passes):
    work[piece]()
"""
INSTRUCTION_PIECES = ("page", "yaml", "flame", "csv", "files")


def instructions(tree: Path, captured: Path, piece: str) -> int:
    """Instructions one pass of `piece` executes in `tree` (callgrind: two passes less one)."""
    counts = []
    for passes in (1, 2):
        out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                              PY, "-c", PASSES, str(captured), piece, str(passes)],
                             capture_output=True, text=True, cwd=tree,
                             env={**os.environ, "PYTHONPATH": str(tree), "MPLBACKEND": "Agg"})
        found = re.search(r"Collected : (\d+)", out.stderr)
        if out.returncode != 0 or not found:
            sys.exit(f"error: {tree}: valgrind failed: {out.stderr.strip()[-400:]}")
        counts.append(int(found.group(1)))
    return counts[1] - counts[0]


def count_instructions(before: Path, run: Path, pieces: list[str], tmp: Path) -> None:
    captured = tmp / "run.pickle"
    subprocess.run([PY, "-c", CAPTURE, str(run.resolve()), str(captured)], check=True,
                   cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    print(f"{'instructions a pass':20s} {'before':>14s} {'this':>14s} {'change':>8s}")
    for piece in pieces:
        old, new = instructions(before, captured, piece), instructions(REPO, captured, piece)
        print(f"{piece:20s} {old:14,d} {new:14,d} {100.0 * (new - old) / old:+7.1f} %",
              flush=True)


ORDER = ("model", "page", "yaml", "flame", "document", "csv", "other", "data", "analyse", "png",
         "svg", "charts")


def quartiles(values: list[float]) -> tuple[float, float, float]:
    v = sorted(values)
    return v[0], v[len(v) // 4], v[len(v) // 2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="a commit to compare with")
    ap.add_argument("--turns", type=int, default=20)
    ap.add_argument("--reverse", action="store_true", help="this checkout first in each turn")
    ap.add_argument("--run", type=Path, default=REPO / "runs" / "pool-vs-virtual")
    ap.add_argument("--instructions", action="store_true",
                    help="count each piece's instructions a pass in each tree (valgrind)")
    ap.add_argument("--pieces", default=",".join(INSTRUCTION_PIECES),
                    help="with --instructions: which pieces (comma-separated)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="run-pieces-") as tmp_name:
        tmp = Path(tmp_name)
        before = tmp / "before"
        before.mkdir()
        archive = subprocess.run(["git", "-C", str(REPO), "archive", args.before],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(before)], input=archive, check=True)
        if args.instructions:
            pieces = args.pieces.split(",")
            unknown = set(pieces) - set(INSTRUCTION_PIECES)
            if unknown:
                sys.exit(f"error: no piece {', '.join(sorted(unknown))}; pieces: "
                         f"{', '.join(INSTRUCTION_PIECES)}")
            print(f"load {os.getloadavg()[0]:.2f} (instruction counts do not depend on it)")
            return count_instructions(before, args.run, pieces, tmp)
        package_as(before, "analysis_before")
        runs_root = tmp / "runs"
        for i in range(min(args.turns, 8) + 1):
            shutil.copytree(args.run.resolve(), runs_root / f"{args.run.name}-{i}",
                            copy_function=os.link)
        load = os.getloadavg()[0]
        out = subprocess.run([PY, "-c", CHILD, str(runs_root), str(tmp / "sites"),
                              str(args.turns), "1" if args.reverse else "0"],
                             capture_output=True, text=True, cwd=REPO,
                             env={**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{before}",
                                  "MPLBACKEND": "Agg"})
        if out.returncode != 0:
            sys.exit(f"error: the turns failed: {out.stderr.strip()[-600:]}")
        result = json.loads(out.stdout.strip().splitlines()[-1])
    first = "this checkout" if args.reverse else args.before
    print(f"{args.turns} turns, {first} first in each; load {load:.2f} -> "
          f"{os.getloadavg()[0]:.2f}; the two trees' files "
          f"{'equal' if result['same'] else 'DIFFER'}")
    print(f"{'CPU ms a run':12s} {args.before + ' min/q1/median':>26s} "
          f"{'this min/q1/median':>26s}")
    for piece in ORDER:
        cols = []
        for label in ("before", "this"):
            values = [turn.get(piece, 0.0) for turn in result["got"][label]]
            cols.append("%7.1f %7.1f %7.1f" % quartiles(values))
        print(f"{piece:12s} {cols[0]:>26s} {cols[1]:>26s}")


if __name__ == "__main__":
    main()
