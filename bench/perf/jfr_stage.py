"""The JFR stage of one run's build (issue 36: the largest per-run stage, 36 recordings of
runs/pool-vs-virtual): CPU seconds of the summarize_and_fold calls analyse_task makes, with the
windows it gives them, in a worker-like process, for this checkout and, with --before REV, the
code at REV, turn by turn in both orders.

    .venv/bin/python bench/perf/jfr_stage.py [--run runs/pool-vs-virtual] [--before main]
        [--repeat 3] [--passes 10] [--profile] [--instructions]

The calls are captured once (this checkout's analyse_task, the recordings' paths, attribution
and windows), then each measurement is a fresh process of one tree: one pass to warm what a
worker keeps between runs (the parsed metadata, the compiled walk), gc.freeze() as
workers.pool does, then --passes timed passes; the best and the median pass are printed with
the 1-minute load average read before that process. run_cost.py's `jfr` row is the same stage
inside the whole run; this one leaves the other stages' noise out. --profile prints cProfile's
top functions of this checkout's stage. --instructions adds what a shared machine's CPU
seconds cannot give steadily: the instructions a pass executes in each tree (valgrind's
callgrind: a process with 3 timed passes less one with 1, halved; ~1 CPU minute a tree), the
same at any load.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PY = sys.executable

CAPTURE = r"""
import os, pickle, sys, tempfile
import analysis.derive.analyse as analyse
import analysis.pipeline.stages as stages
calls = []
inner = analyse.summarize_and_fold
def recorded(path, attribution=None, window=None):
    calls.append((str(path), attribution, window))
    return inner(path, attribution, window=window)
analyse.summarize_and_fold = recorded
run = os.path.abspath(sys.argv[1])
r = stages.analyse_task(run, os.path.dirname(run), tempfile.mkdtemp(dir=sys.argv[3]), False)
if not r["ok"]:
    sys.exit(r["error"])
with open(sys.argv[2], "wb") as f:
    pickle.dump(calls, f)
"""

TIMED = r"""
import gc, json, pickle, statistics, sys, time
from analysis.derive.jvm_summary import summarize_and_fold
with open(sys.argv[1], "rb") as f:
    calls = pickle.load(f)
passes, profile = int(sys.argv[2]), sys.argv[3] == "1"
def stage():
    for path, attribution, window in calls:
        summarize_and_fold(path, attribution, window=window)
stage()
gc.freeze()
if profile:
    import cProfile, pstats
    p = cProfile.Profile()
    p.runcall(lambda: [stage() for _ in range(passes)])
    pstats.Stats(p, stream=sys.stderr).sort_stats("tottime").print_stats(25)
spent = []
for _ in range(passes):
    t = time.process_time()
    stage()
    spent.append(time.process_time() - t)
print(json.dumps({"best": min(spent), "median": statistics.median(spent), "calls": len(calls)}))
"""


def export(rev: str, into: Path) -> Path:
    """The analysis package of commit `rev` (git archive)."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "analysis"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def measure(code: Path, calls: Path, passes: int, profile: bool = False) -> dict:
    load = os.getloadavg()[0]
    out = subprocess.run([PY, "-c", TIMED, str(calls), str(passes), "1" if profile else "0"],
                         capture_output=True, text=True, cwd=code,
                         env={**os.environ, "PYTHONPATH": str(code)})
    if out.returncode != 0:
        sys.exit(f"error: {code}: the timed stage failed: {out.stderr.strip()[-400:]}")
    if profile:
        print(out.stderr)
    return {**json.loads(out.stdout.strip().splitlines()[-1]), "load": load}


def instructions(code: Path, calls: Path) -> int:
    """Instructions one pass of the stage executes in tree `code` (callgrind's count)."""
    counts = []
    for passes in (1, 3):
        out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                              PY, "-c", TIMED, str(calls), str(passes), "0"],
                             capture_output=True, text=True, cwd=code,
                             env={**os.environ, "PYTHONPATH": str(code)})
        found = re.search(r"Collected : (\d+)", out.stderr)
        if out.returncode != 0 or not found:
            sys.exit(f"error: {code}: valgrind failed: {out.stderr.strip()[-400:]}")
        counts.append(int(found.group(1)))
    return (counts[1] - counts[0]) // 2


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path, default=REPO / "runs" / "pool-vs-virtual")
    ap.add_argument("--before", metavar="REV", help="also time the code at git revision REV")
    ap.add_argument("--repeat", type=int, default=3, help="turns (each tree once a turn)")
    ap.add_argument("--passes", type=int, default=10, help="timed passes in each process")
    ap.add_argument("--profile", action="store_true", help="cProfile this checkout's stage")
    ap.add_argument("--instructions", action="store_true",
                    help="also count each tree's instructions a pass (valgrind)")
    args = ap.parse_args()
    if args.instructions and shutil.which("valgrind") is None:
        print("error: --instructions needs valgrind on PATH", file=sys.stderr)
        return 2
    if not (args.run / "run.yml").is_file():
        print(f"error: {args.run}: no run.yml (give a run folder)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        calls = tmp / "calls.pickle"
        subprocess.run([PY, "-c", CAPTURE, str(args.run), str(calls), str(tmp)], cwd=REPO,
                       env={**os.environ, "PYTHONPATH": str(REPO), "MPLBACKEND": "Agg"},
                       check=True)
        trees = {"this checkout": REPO}
        if args.before:
            trees = {args.before: export(args.before, tmp / "before"), **trees}
        if args.profile:
            measure(REPO, calls, args.passes, profile=True)
        results: dict[str, list[dict]] = {label: [] for label in trees}
        order = list(trees)
        for turn in range(args.repeat):   # both orders, turn by turn
            for label in order if turn % 2 == 0 else order[::-1]:
                results[label].append(measure(trees[label], calls, args.passes))
        counted = {label: instructions(code, calls) for label, code in trees.items()} \
            if args.instructions else {}
    n = results["this checkout"][0]["calls"]
    print(f"JFR stage of one run ({args.run.name}: {n} recordings), CPU ms a run: best and "
          f"median of {args.passes} passes in each of {args.repeat} fresh processes "
          f"[1-min load average before it]")
    for label, rs in results.items():
        cells = "  ".join(f"{r['best'] * 1e3:.1f} / {r['median'] * 1e3:.1f} [{r['load']:.1f}]"
                          for r in rs)
        print(f"{label[:24]:<24} {cells}")
    if args.before:
        best = {label: min(r["best"] for r in rs) for label, rs in results.items()}
        print(f"best of all: {args.before} {best[args.before] * 1e3:.1f} ms, this checkout "
              f"{best['this checkout'] * 1e3:.1f} ms "
              f"({best['this checkout'] / best[args.before]:.2f}x the CPU)")
        med = {label: statistics.median(r["best"] for r in rs) for label, rs in results.items()}
        print(f"median of the processes' best: {med[args.before] * 1e3:.1f} -> "
              f"{med['this checkout'] * 1e3:.1f} ms")
    for label, n in counted.items():
        print(f"instructions a pass, {label[:24]}: {n / 1e6:.1f} M")
    if args.before and counted:
        print(f"instructions: {counted['this checkout'] / counted[args.before]:.2f}x "
              f"{args.before}'s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
